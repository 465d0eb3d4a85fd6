"""CondAmbigQA's condition-then-answer pipeline (Li et al. 2025, arXiv 2502.01523, section 4.2
and its released code): find the conditions under which the question's answer differs, then
answer once per condition, citing the fragments; the answer's interpretations are the
released output's condition / answer / citation triples.

The setting is read from what the protocol hands over: the gold conditions (the
gold-conditions setting: no finding step), the fragments (main), or nothing (closed book:
conditions and answers from the model's own knowledge). ``condambigqa-no-conditions``
answers and cites without conditions (section 5.5's comparison).
"""

from __future__ import annotations

from typing import Any

from pytest_ambigqa.schema import Answer

from . import prompts
from .methods import check_answer, to_answer
from .model import Model
from .planned import _strings


def check_conditions(data: Any) -> str | None:
    if not isinstance(data, dict) or not _strings(data.get("conditions")):
        return "conditions must be a list of strings"
    return None


def condambigqa(question: str, passages: list, conditions: list, *, model: Model) -> Answer:
    episode = model.episode()
    setting = "gold-conditions" if conditions else ("main" if passages else "closed-book")
    found = list(conditions)
    if setting == "main":
        user = prompts.conditional_prompt(question, passages, []).rsplit("Find the conditions", 1)[0]
        found = episode.ask(
            "find conditions",
            prompts.CONDITION_FINDER,
            user + prompts.form(prompts.CONDITIONS_FORM),
            check_conditions,
        )["conditions"]
    user = prompts.conditional_prompt(question, passages if passages else None, found)
    data = episode.ask("answer per condition", prompts.CONDITIONAL_ANSWERER, user, check_answer)
    metadata = episode.metadata(setting=setting, conditions=found, retrieved=[p.id for p in passages])
    return to_answer(data, list(passages), metadata)


def condambigqa_no_conditions(question: str, passages: list, *, model: Model) -> Answer:
    episode = model.episode()
    user = prompts.answer_prompt(question, passages if passages else None, prompts.ANSWER_FORM)
    data = episode.ask("answer", prompts.ANSWERER, user, check_answer)
    metadata = episode.metadata(setting="no-conditions", retrieved=[p.id for p in passages])
    return to_answer(data, list(passages), metadata)
