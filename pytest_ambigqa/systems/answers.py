"""What a system returned, as an :class:`Answer` (or an interactive turn): a str, a dict or
an :class:`Answer`, checked against the contract; anything off it is a :class:`SystemFailure`
that says what was expected."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from ..errors import SystemFailure
from ..output import clean, clean_text
from ..schema import Answer, GeneratedInterpretation

ANSWER_FIELDS = (
    "text",
    "interpretations",
    "citations",
    "is_ambiguous",
    "ambiguity_type",
    "clarifying_question",
    "metadata",
)
EXPECTED_SHAPE = (
    "expected a str (the long answer), an Answer, or a dict with 'text' and optionally "
    + ", ".join(f"'{f}'" for f in ANSWER_FIELDS[1:])
)


def to_answer(raw: Any) -> Answer:
    """Normalise what a system returned; anything off-contract is a :class:`SystemFailure`.

    An :class:`Answer` is checked like a dict. Strings are made encodable (a lone surrogate
    becomes "?") and non-finite numbers in ``metadata`` become strings, so that no answer
    can make a report invalid.
    """
    if isinstance(raw, Answer):
        raw = _fields(raw)
    if isinstance(raw, str):
        return Answer(text=clean_text(raw))
    if not isinstance(raw, dict):
        raise SystemFailure(f"system returned {type(raw).__name__}; {EXPECTED_SHAPE}")
    if "action" in raw:  # an interactive system's turn: in a single-shot run only an answer will do
        if raw["action"] != "answer":
            raise SystemFailure(
                f"system chose action {raw['action']!r}; a single-shot run allows only 'answer' "
                "(--ambig-protocol=interactive allows clarify and multi-answer)"
            )
        raw = {k: v for k, v in raw.items() if k != "action"}
    unknown = sorted(set(raw) - set(ANSWER_FIELDS))
    if unknown:
        raise SystemFailure(
            f"system returned unknown field(s) {', '.join(map(repr, unknown))}; {EXPECTED_SHAPE} "
            "(put anything else under 'metadata')"
        )
    if not isinstance(raw.get("text"), str):
        raise SystemFailure(f"system returned a dict without a string 'text'; {EXPECTED_SHAPE}")
    raw = clean(raw)
    return Answer(
        text=raw["text"],
        interpretations=tuple(_interpretation(i, n) for n, i in enumerate(_list(raw, "interpretations"))),
        citations=_strings(raw, "citations"),
        is_ambiguous=_typed(raw, "is_ambiguous", bool),
        ambiguity_type=_typed(raw, "ambiguity_type", str),
        clarifying_question=_typed(raw, "clarifying_question", str),
        metadata=_metadata(raw),
    )


def to_turn(raw: Any, allowed: tuple[str, ...]) -> tuple[str, Answer]:
    """One interactive turn: ``{"action": ..., "text": ...}`` (any answer field besides),
    an :class:`Answer`, or a str, the last two being an answer. The action must be one of
    ``allowed``; the text is the clarifying question or the answer."""
    action = "answer"
    if isinstance(raw, dict) and "action" in raw:
        raw = dict(raw)
        action = raw.pop("action")
        if not isinstance(action, str) or action not in ("clarify", "answer", "multi-answer"):
            raise SystemFailure(
                f"system returned action {action!r}; expected 'clarify', 'answer' or 'multi-answer' "
                f"(this turn allows {', '.join(allowed)})"
            )
    answer = to_answer(raw)
    if action not in allowed:
        raise SystemFailure(
            f"system chose '{action}', which this turn does not allow (allowed: {', '.join(allowed)})"
        )
    return action, answer


def _fields(answer: Answer) -> dict[str, Any]:
    """An :class:`Answer`'s fields as the dict a system could have returned, whatever they hold."""
    data = {f: getattr(answer, f) for f in ANSWER_FIELDS}
    interps = data["interpretations"]
    if isinstance(interps, (list, tuple)):
        data["interpretations"] = [
            asdict(i) if isinstance(i, GeneratedInterpretation) else i for i in interps
        ]
    return data


def _list(raw: dict, key: str) -> list:
    value = raw.get(key)
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        raise SystemFailure(f"system returned '{key}' as {type(value).__name__}, expected a list")
    return list(value)


def _strings(raw: dict, key: str, where: str = "") -> tuple[str, ...]:
    values = _list(raw, key)
    if not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in values):
        raise SystemFailure(f"system returned {where}'{key}' with non-string entries, expected a list of str")
    return tuple(str(v) for v in values)


def _typed(raw: dict, key: str, kind: type) -> Any:
    value = raw.get(key)
    if value is not None and not isinstance(value, kind):
        raise SystemFailure(f"system returned '{key}' as {type(value).__name__}, expected {kind.__name__}")
    return value


def _interpretation(raw: Any, n: int) -> GeneratedInterpretation:
    where = f"interpretations[{n}]."
    if not isinstance(raw, dict) or not isinstance(raw.get("answer"), str):
        raise SystemFailure(
            f"system returned {where[:-1]} without a string 'answer'; each interpretation is "
            "{'answer': str, 'question' or 'condition': str, 'citations': [str]}"
        )
    for key in ("question", "condition"):
        if raw.get(key) is not None and not isinstance(raw[key], str):
            raise SystemFailure(f"system returned {where}{key} as {type(raw[key]).__name__}, expected str")
    return GeneratedInterpretation(
        answer=raw["answer"],
        question=raw.get("question"),
        condition=raw.get("condition"),
        citations=_strings(raw, "citations", where),
    )


def _metadata(raw: dict) -> dict[str, Any]:
    value = raw.get("metadata")
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SystemFailure(f"system returned 'metadata' as {type(value).__name__}, expected a dict")
    try:
        json.dumps(value)
    except (TypeError, ValueError) as exc:
        raise SystemFailure(f"system returned 'metadata' that is not JSON-serialisable: {exc}") from None
    return value
