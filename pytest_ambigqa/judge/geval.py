"""CondAmbigQA's condition and answer scores: deepeval G-Eval through our judge client.

The two metrics of CondAmbigQA Table 8 (Li et al. 2025, arXiv 2502.01523, Appendix D), with
their names, criteria and evaluation steps, as the released ``evaluator.py`` defines them.
deepeval drives G-Eval (its prompt, its 0-10 scale, its log-probability weighting when the server returns
log-probabilities); every model call goes through :class:`ChatClient`, so the cache,
retries, JSON checks and cost apply. ``measure`` is called directly, never ``evaluate()``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
from collections.abc import Callable
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest_ambigqa_gate

from ..errors import ModelUnavailable
from ..models.chat import ChatClient
from ..models.usage import Usage
from ..output import excerpt

if TYPE_CHECKING:
    from deepeval.models import DeepEvalBaseLLM
    from openai.types.chat import ChatCompletion
    from pydantic import BaseModel

pytest_ambigqa_gate.quiet()  # before deepeval is imported, also where the plugin is not loaded

CONDITION = {
    "name": "Condition Correctness",
    "criteria": (
        "Determine whether the actual condition is factually correct based on the expected condition."
    ),
    "evaluation_steps": [
        "Check whether the facts in 'actual condition' contradicts any facts in 'expected condition'.",
        "Heavily penalize omission of critical details in the condition.",
        "Ensure that the condition is clear and unambiguous.",
    ],
}
ANSWER = {
    "name": "Answer Correctness",
    "criteria": "Determine whether the actual answer is factually correct based on the expected answers.",
    "evaluation_steps": [
        "Check whether the facts in 'actual answer' contradicts any facts in 'expected answers'.",
        "Heavily penalize omission of critical details in the answer.",
        "Ensure that the answer directly addresses the question without introducing irrelevant information.",
    ],
}
TEMPLATE_HASH = hashlib.sha256(repr((CONDITION, ANSWER)).encode()).hexdigest()[:16]
RELEASED_WITH = "1.4.2"  # the deepeval the CondAmbigQA release pinned (experiment_code/requirements.txt)


@lru_cache(maxsize=1)
def deepeval_fingerprint() -> dict[str, str]:
    """deepeval's version and a hash of its G-Eval prompt templates, read without importing it.

    G-Eval's scores depend on deepeval's own prompts, which change between versions; the
    published numbers were produced with :data:`RELEASED_WITH`.
    """
    spec = importlib.util.find_spec("deepeval")
    if spec is None or not spec.submodule_search_locations:
        return {"version": "not installed", "released_with": RELEASED_WITH}
    root = Path(next(iter(spec.submodule_search_locations))) / "metrics" / "g_eval"
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.suffix in (".py", ".txt") and "templat" in str(path.relative_to(root)):
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return {
        "version": metadata.version("deepeval"),
        "geval_templates": digest.hexdigest()[:16],
        "released_with": RELEASED_WITH,
    }


# G-Eval's reply (deepeval's template: the reason, then an integer score from 0 to 10), asked
# with the server's structured output as the methods ask theirs.
REASON_SCORE = {
    "title": "reason_score",
    "type": "object",
    "properties": {"reason": {"type": "string"}, "score": {"type": "integer", "minimum": 0, "maximum": 10}},
    "required": ["reason", "score"],
}


def _check_reason_score(data: Any) -> str | None:
    if not isinstance(data, dict):
        return "it is not a JSON object"
    score = data.get("score")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 10:
        return "'score' must be a number from 0 to 10"
    if not isinstance(data.get("reason"), str):
        return "'reason' must be a string"
    return None


@lru_cache(maxsize=1)
def _model_class() -> Callable[[ChatClient, int, Usage], DeepEvalBaseLLM]:
    from deepeval.models import DeepEvalBaseLLM

    class JudgeModel(DeepEvalBaseLLM):
        """deepeval's model interface over our client, with one ``Usage`` per item."""

        def __init__(self, client: ChatClient, seed: int, usage: Usage) -> None:
            self.client, self.seed, self.usage = client, seed, usage
            super().__init__(model=client.settings.model)

        def load_model(self) -> JudgeModel:
            return self

        def get_model_name(self) -> str:
            return self.client.settings.model

        def supports_log_probs(self) -> bool:
            return True

        def generate(self, prompt: str, schema: type[BaseModel] | None = None) -> Any:
            """deepeval's reply as its pydantic ``schema`` asks, that schema sent and checked."""
            data, _ = self.client.chat_json(
                [{"role": "user", "content": prompt}],
                _check_any if schema is None else _validates(schema),
                self.usage,
                seed=self.seed,
                schema=None if schema is None else schema.model_json_schema(),
            )
            return schema(**data) if schema is not None else data

        async def a_generate(self, prompt: str, schema: type[BaseModel] | None = None) -> Any:
            return self.generate(prompt, schema)

        def generate_raw_response(
            self, prompt: str, top_logprobs: int = 20, **_: Any
        ) -> tuple[ChatCompletion, float]:
            from openai.types.chat import ChatCompletion

            _, raw = self.client.chat_json(
                [{"role": "user", "content": prompt}],
                _check_reason_score,
                self.usage,
                seed=self.seed,
                schema=REASON_SCORE,
                logprobs=True,
                top_logprobs=top_logprobs,
            )
            # Servers often leave out what deepeval never reads; its model still requires them.
            defaults = {"id": "", "object": "chat.completion", "created": 0, "model": self.get_model_name()}
            return ChatCompletion.model_validate({**defaults, **raw}), 0.0

        async def a_generate_raw_response(
            self, prompt: str, top_logprobs: int = 20, **kwargs: Any
        ) -> tuple[ChatCompletion, float]:
            return self.generate_raw_response(prompt, top_logprobs, **kwargs)

    return JudgeModel


def _check_any(data: Any) -> str | None:
    return None if isinstance(data, dict) else "it is not a JSON object"


def _validates(schema: type[BaseModel]) -> Callable[[Any], str | None]:
    """The check of a reply deepeval reads as the pydantic ``schema``."""
    from pydantic import ValidationError

    def check(data: Any) -> str | None:
        try:
            schema.model_validate(data)
        except ValidationError as exc:
            return f"it does not fit {schema.__name__}: {excerpt(exc, 200)}"
        return None

    return check


@lru_cache(maxsize=1)
def load_geval() -> tuple[Any, Any, Any]:
    """deepeval's G-Eval pieces: (GEval, LLMTestCase, the test-case parameters)."""
    from deepeval.metrics import GEval
    from deepeval.test_case import LLMTestCase

    try:
        from deepeval.test_case import SingleTurnParams as Params
    except ImportError:  # deepeval < 4
        from deepeval.test_case import LLMTestCaseParams as Params
    _model_class()
    return GEval, LLMTestCase, Params


class GEvalScorer:
    """Scores (generated, expected) pairs with the two G-Eval metrics, 0-1 each."""

    def __init__(self, client: ChatClient) -> None:
        self.client = client

    def score(
        self, which: dict[str, Any], question: str, actual: str, expected: str, seed: int, usage: Usage
    ) -> float:
        GEval, LLMTestCase, Params = load_geval()
        metric = GEval(
            name=which["name"],
            criteria=which["criteria"],
            evaluation_steps=which["evaluation_steps"],
            evaluation_params=[Params.INPUT, Params.ACTUAL_OUTPUT, Params.EXPECTED_OUTPUT],
            model=_model_class()(self.client, seed, usage),
            async_mode=False,
            verbose_mode=False,
        )
        case = LLMTestCase(input=question, actual_output=actual or "(none)", expected_output=expected)
        try:
            score = float(metric.measure(case, _show_indicator=False))
        except ModelUnavailable:
            raise
        except Exception as exc:  # noqa: BLE001 - deepeval's own failure: this judgement is unscored
            raise ModelUnavailable(f"G-Eval failed: {type(exc).__name__}: {excerpt(exc, 200)}") from None
        if not math.isfinite(score) or not 0 <= score <= 1:
            raise ModelUnavailable(f"G-Eval gave {score!r}, not a score from 0 to 1")
        return score
