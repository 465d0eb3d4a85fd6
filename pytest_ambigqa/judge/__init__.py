"""The LLM judge: the chat client (``models/chat.py``) every judged metric (and the LLM
reader) goes through, with the judge's cache file and samples; the prompts live per suite
(``march.py``: MARCH's 0-5 criteria, ``asqa.py``: ASQA's 1-5 utility, ``geval.py``:
CondAmbigQA's G-Eval).

One :class:`Judge` per process wraps the client (cache, retries, JSON checks, cost). With
``samples`` K > 1 every judgement is made K times with seeds seed, seed+1, ... and the item
score is their mean; the spread between samples is kept to report judge variance.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..models.cache import CallCache
from ..models.chat import ChatClient, ChatSettings
from ..models.usage import Usage
from .judgement import Judgement

if TYPE_CHECKING:
    from ..metrics.conditional import Setting
    from ..schema import AmbigItem, GeneratedInterpretation

__all__ = ["Judge", "Judgement", "Usage"]

CACHE_FILE = "judge.sqlite"


class Judge:
    def __init__(self, settings: ChatSettings, cache_dir: Path | None, samples: int = 1) -> None:
        cache = CallCache(cache_dir / CACHE_FILE) if cache_dir is not None else None
        self.client = ChatClient(settings, cache)
        self.samples = samples

    def warm(self, geval: bool) -> None:
        """Import the client (and deepeval's G-Eval) now, in the calling thread."""
        self.client.client  # noqa: B018 - builds the OpenAI client, importing openai and httpx
        if geval:
            from .geval import load_geval

            load_geval()

    @property
    def seeds(self) -> list[int]:
        return [self.client.settings.seed + k for k in range(self.samples)]

    def describe(self) -> dict[str, Any]:
        from ..output import redact
        from . import asqa, march
        from .geval import TEMPLATE_HASH as GEVAL_HASH
        from .geval import deepeval_fingerprint

        settings = self.client.settings
        return {
            "model": settings.model,
            "base_url": redact(self.client.base_url),
            "templates": {"march": march.TEMPLATE_HASH, "asqa": asqa.TEMPLATE_HASH, "geval": GEVAL_HASH},
            "deepeval": deepeval_fingerprint(),
            "samples": self.samples,
            "seed": settings.seed,
            "prices_per_million": [settings.price_in, settings.price_out],
        }

    def march(self, item: AmbigItem, text: str, usage: Usage) -> Judgement:
        """MARCH's four criteria for ``text`` (``march.py``)."""
        from .march import judgement

        return judgement(self, item, text, usage)

    def asqa(self, item: AmbigItem, text: str, usage: Usage) -> Judgement:
        """The utility of ``text`` for ASQA's question, 1-5 (``asqa.py``)."""
        from .asqa import judgement

        return judgement(self, item, text, usage)

    def condambigqa(
        self, setting: Setting, item: AmbigItem, pairs: tuple[GeneratedInterpretation, ...], usage: Usage
    ) -> Judgement:
        """CondAmbigQA's pair matching by G-Eval under ``setting`` (``condambigqa.py``)."""
        from .condambigqa import judgement

        return judgement(self, setting, item, pairs, usage)

    def geval(
        self, which: dict[str, Any], source: str, actual: str, expected: str, seed: int, usage: Usage
    ) -> float:
        """One G-Eval score (0-1) of ``actual`` against ``expected`` for the input ``source``."""
        from .geval import GEvalScorer

        return GEvalScorer(self.client).score(which, source, actual, expected, seed, usage)
