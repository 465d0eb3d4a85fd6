"""The data the plugin moves around: benchmark items, system answers, per-item results.

Plain frozen dataclasses with no behaviour beyond (de)serialisation, so that loaders,
metrics, systems and reports agree on one vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from functools import lru_cache
from typing import Any, Literal

AMBIGUITY_TYPES = ("semantic", "syntactic", "constraint")
# MIRAGE ("Multi-hop Reasoning with Ambiguity Evaluation for Illusory Questions", the
# earlier version of MARCH) calls the constraint type "general".
_TYPE_ALIASES = {"general": "constraint"}


def safe_str(value: Any) -> str:
    """``str(value)`` that never raises (an exception whose ``__str__`` fails, say)."""
    try:
        return str(value)
    except Exception:  # noqa: BLE001 - anything at all: fall back to the type's name
        return f"<{type(value).__name__}: unprintable>"


def normalize_type(kind: str) -> str:
    """An ambiguity type in MARCH's taxonomy spelling (lower case, MIRAGE's "general" =
    MARCH's "constraint"); unknown types are returned lower-cased."""
    kind = kind.strip().lower()
    return _TYPE_ALIASES.get(kind, kind)


@dataclass(frozen=True)
class Passage:
    """A piece of evidence: a MARCH passage, a CondAmbigQA fragment, an ALCE doc."""

    id: str
    title: str
    text: str
    score: float | None = None


@dataclass(frozen=True)
class Interpretation:
    """One gold reading of an ambiguous question.

    MARCH: a clarified question with short answers and the passages that support it.
    ASQA: a disambiguated ``qa_pair``. CondAmbigQA: a property, i.e. a ``condition``
    with its ``groundtruth`` answer (kept as the single short answer) and cited fragments.
    """

    question: str | None
    short_answers: tuple[str, ...]
    passage_ids: tuple[str, ...] = ()
    condition: str | None = None
    context: str | None = None  # ASQA's qa_pair context: gold evidence, never given to systems


@dataclass(frozen=True)
class AmbigItem:
    """One benchmark item; becomes one test ``test_ambig[<suite>-<id>]``."""

    suite: str
    id: str
    question: str
    interpretations: tuple[Interpretation, ...]
    long_answers: tuple[str, ...] = ()
    passages: tuple[Passage, ...] = ()
    ambiguity_type: str | None = None
    hops: int | None = None
    index: int = 0  # position in its data file: the order every report keeps

    @property
    def key(self) -> str:
        """The test parameter id, unique across the selected suites."""
        return f"{self.suite}-{self.id}"

    @property
    def conditions(self) -> list[str]:
        return [i.condition for i in self.interpretations if i.condition]


@dataclass(frozen=True)
class GeneratedInterpretation:
    """One reading the system chose to answer (a clarified question or a condition)."""

    answer: str
    question: str | None = None
    condition: str | None = None
    citations: tuple[str, ...] = ()


@dataclass(frozen=True)
class Answer:
    """What a system returned for one item, normalised (see ``systems.to_answer``)."""

    text: str
    interpretations: tuple[GeneratedInterpretation, ...] = ()
    citations: tuple[str, ...] = ()
    is_ambiguous: bool | None = None
    ambiguity_type: str | None = None
    clarifying_question: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        # By hand rather than dataclasses.asdict, which deep-copies: this runs for every item.
        return {
            "text": self.text,
            "interpretations": [
                {
                    "answer": i.answer,
                    "question": i.question,
                    "condition": i.condition,
                    "citations": list(i.citations),
                }
                for i in self.interpretations
            ],
            "citations": list(self.citations),
            "is_ambiguous": self.is_ambiguous,
            "ambiguity_type": self.ambiguity_type,
            "clarifying_question": self.clarifying_question,
            "metadata": self.metadata,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Answer:
        interps = tuple(
            GeneratedInterpretation(
                answer=i["answer"],
                question=i.get("question"),
                condition=i.get("condition"),
                citations=tuple(i.get("citations") or ()),
            )
            for i in data.get("interpretations") or ()
        )
        return cls(
            text=data["text"],
            interpretations=interps,
            citations=tuple(data.get("citations") or ()),
            is_ambiguous=data.get("is_ambiguous"),
            ambiguity_type=data.get("ambiguity_type"),
            clarifying_question=data.get("clarifying_question"),
            metadata=dict(data.get("metadata") or {}),
        )


Status = Literal["ok", "error", "missing"]


# The key of ``ItemResult.details`` that says what an item lacked of the evidence its
# protocol promises (fewer passages than the setting gives each item); the scorecard counts them.
EVIDENCE_SHORT = "evidence_short"


@dataclass(frozen=True)
class ItemResult:
    """The outcome of one item: scores on the item scale, or why there are none.

    ``scores`` holds every metric that could be computed; ``unscored`` maps each metric
    that could not be to its reason. ``status == "error"`` means the system failed on
    this item; ``"missing"`` means the item was selected but never reported (for
    example a crashed xdist worker). ``units`` holds, for a metric the suite pools across
    items (CondAmbigQA closed-book answers), the item's per-unit values; ``scores`` then
    holds their mean.
    """

    suite: str
    item_id: str
    status: Status
    ambiguity_type: str | None = None
    scores: dict[str, float] = field(default_factory=dict)
    unscored: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    trace: str | None = None  # the system's own traceback, when it raised
    answer: Answer | None = None
    duration: float = 0.0
    evidence: dict[str, float] | None = None  # retrieval recall of gold passages, see retrieval/evidence.py
    samples: dict[str, list[float]] = field(default_factory=dict)  # judge metrics, one value per seed
    units: dict[str, list[float]] = field(default_factory=dict)  # pooled metrics: one value per unit
    details: dict[str, Any] = field(
        default_factory=dict
    )  # why the scores are what they are (reader spans, matches)
    usage: dict[str, Any] | None = None  # what the judge calls for this item cost
    index: int = 0  # the item's position in its data file
    cached: bool = False  # the answer came from the response store, not from the system
    reused: bool = False  # and its scores too, stored for the same scorers (--ambig-resume)
    panel: dict[str, list[float]] = field(default_factory=dict)  # judge metrics: each panel judge's score
    trial: int = 0  # which of the item's repeated trials this is (--ambig-repeats)
    trials: tuple[ItemResult, ...] = ()  # with --ambig-repeats: each trial's result; scores are their mean

    @property
    def key(self) -> str:
        return f"{self.suite}-{self.item_id}"

    def mentions(self, name: str) -> bool:
        """Whether ``name`` is a key of the details or of the answer's metadata: what a pass over
        every result asks before it reads either (a spooled result answers from memory)."""
        return name in self.details or (self.answer is not None and name in self.answer.metadata)

    def to_dict(self) -> dict[str, Any]:
        data = {name: getattr(self, name) for name in _result_fields()}
        data["answer"] = self.answer.to_dict() if self.answer else None
        if not self.reused:  # written only when true: a run that reused nothing records what it did
            del data["reused"]
        if not self.panel:  # written only for a panel of judges
            del data["panel"]
        if not self.trial:  # written only for a repeated trial, and trials for an item that has them
            del data["trial"]
        if self.trials:
            data["trials"] = [t.to_dict() for t in self.trials]
        else:
            del data["trials"]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ItemResult:
        answer = data.get("answer")
        return cls(
            suite=data["suite"],
            item_id=data["item_id"],
            status=data["status"],
            ambiguity_type=data.get("ambiguity_type"),
            scores={k: float(v) for k, v in (data.get("scores") or {}).items()},
            unscored=dict(data.get("unscored") or {}),
            error=data.get("error"),
            trace=data.get("trace"),
            answer=Answer.from_dict(answer) if answer else None,
            duration=float(data.get("duration") or 0.0),
            evidence=data.get("evidence"),
            samples={k: [float(x) for x in v] for k, v in (data.get("samples") or {}).items()},
            units={k: [float(x) for x in v] for k, v in (data.get("units") or {}).items()},
            panel={k: [float(x) for x in v] for k, v in (data.get("panel") or {}).items()},
            details=dict(data.get("details") or {}),
            usage=data.get("usage"),
            index=int(data.get("index") or 0),
            cached=bool(data.get("cached")),
            reused=bool(data.get("reused")),
            trial=int(data.get("trial") or 0),
            trials=tuple(cls.from_dict(t) for t in data.get("trials") or ()),
        )


@lru_cache(maxsize=1)
def _result_fields() -> tuple[str, ...]:
    return tuple(f.name for f in fields(ItemResult))
