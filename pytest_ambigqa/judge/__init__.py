"""The LLM judge: the chat client (``models/chat.py``) every judged metric (and the LLM
reader) goes through, with the judge's cache file and samples; the prompts live per suite
(``march.py``: MARCH's 0-5 criteria, ``asqa.py``: ASQA's 1-5 utility, ``geval.py``:
CondAmbigQA's G-Eval).

One :class:`Judge` per process wraps the client (cache, retries, JSON checks, cost). With
``samples`` K > 1 every judgement is made K times with seeds seed, seed+1, ... and the item
score is their mean; the spread between samples is kept to report judge variance. A judge of
several models is a panel (``panel.py``): each scores every criterion, and their scores make
the item's; the first model alone reads (``--ambig-reader=llm``) and plays the user.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ModelUnavailable
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
    def __init__(
        self,
        settings: ChatSettings | Sequence[ChatSettings],
        cache_dir: Path | None,
        samples: int = 1,
        panel: str = "mean",
        disagreement: float = 0.4,
    ) -> None:
        cache = CallCache(cache_dir / CACHE_FILE) if cache_dir is not None else None
        every = [settings] if isinstance(settings, ChatSettings) else list(settings)
        self.clients = [ChatClient(s, cache) for s in every]
        self.client = self.clients[0]
        self.samples = samples
        self.panel = panel  # how a panel's scores make the item's (panel.AGGREGATE)
        self.disagreement = disagreement  # a panel's spread flagged, as a share of a metric's range

    def _members(self) -> list[Judge]:
        """One judge per model of the panel, sharing this one's samples."""
        members = []
        for client in self.clients:
            member = copy.copy(self)
            member.clients, member.client = [client], client
            members.append(member)
        return members

    @property
    def models(self) -> list[str]:
        return [c.settings.model for c in self.clients]

    def warm(self, geval: bool) -> None:
        """Import the client (and deepeval's G-Eval) now, in the calling thread."""
        for client in self.clients:
            client.client  # noqa: B018 - builds the OpenAI client, importing openai and httpx
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
        described = {
            "model": settings.model,
            "base_url": redact(self.client.base_url),
            "templates": {"march": march.TEMPLATE_HASH, "asqa": asqa.TEMPLATE_HASH, "geval": GEVAL_HASH},
            "deepeval": deepeval_fingerprint(),
            "samples": self.samples,
            "seed": settings.seed,
            "prices_per_million": [settings.price_in, settings.price_out],
        }
        if len(self.clients) > 1:
            described["panel"] = {
                "aggregation": self.panel,
                "disagreement": self.disagreement,
                "judges": [
                    {
                        "model": c.settings.model,
                        "base_url": redact(c.base_url),
                        "prices_per_million": [c.settings.price_in, c.settings.price_out],
                    }
                    for c in self.clients
                ],
            }
        return described

    def _judged(self, judge: Callable[[Judge], Judgement]) -> Judgement:
        """``judge`` by this model, or by each of the panel's, whose judgements are combined."""
        if len(self.clients) == 1:
            return judge(self)
        from ..models.batch import Deferrals
        from .panel import combine

        judged = []
        deferrals = Deferrals()  # batch judging records every judge's calls in one round
        for member in self._members():
            try:
                judged.append(deferrals.call(judge, member))
            except ModelUnavailable as exc:  # the panel needs every judge: name the one that failed
                raise type(exc)(f"panel judge {member.client.settings.model}: {exc}") from None
        deferrals.close()
        return combine(judged, self.panel)

    def march(self, item: AmbigItem, text: str, usage: Usage) -> Judgement:
        """MARCH's four criteria for ``text`` (``march.py``)."""
        from .march import judgement

        return self._judged(lambda judge: judgement(judge, item, text, usage))

    def asqa(self, item: AmbigItem, text: str, usage: Usage) -> Judgement:
        """The utility of ``text`` for ASQA's question, 1-5 (``asqa.py``)."""
        from .asqa import judgement

        return self._judged(lambda judge: judgement(judge, item, text, usage))

    def condambigqa(
        self, setting: Setting, item: AmbigItem, pairs: tuple[GeneratedInterpretation, ...], usage: Usage
    ) -> Judgement:
        """CondAmbigQA's pair matching by G-Eval under ``setting`` (``condambigqa.py``)."""
        from .condambigqa import judgement

        return self._judged(lambda judge: judgement(judge, setting, item, pairs, usage))

    def geval(
        self, which: dict[str, Any], source: str, actual: str, expected: str, seed: int, usage: Usage
    ) -> float:
        """One G-Eval score (0-1) of ``actual`` against ``expected`` for the input ``source``."""
        from .geval import GEvalScorer

        return GEvalScorer(self.client).score(which, source, actual, expected, seed, usage)
