"""Episodes: one per (item, interpretation, cost pair), named in the test id; the cost grid
(section 4.2) and the 2 : 1 ambiguous to unambiguous queries (section 4.1)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...options import number, refuse
from ...schema import AmbigItem

COST_GRID: tuple[tuple[float, float], ...] = tuple((a, b) for a in (0.0, 2.0, 20.0) for b in (0.1, 0.7, 5.0))


ACTIONS = ("clarify", "answer", "multi-answer")


AMBIGUOUS_TO_ONE = 2  # the paper keeps ambiguous : unambiguous queries at 2 : 1 (section 4.1)


SPLITS = ("ambiguous", "unambiguous")


# Ties between equally good sequences go to the first of these (fewest turns and words first).
SEQUENCES = ("QAF", "QCRAF", "QMF", "QCRMF")


def cost_text(value: float) -> str:
    """A cost as node ids spell it: plain decimals, at most six places (0.1, 20, 0.000001)."""
    return f"{value:.6f}".rstrip("0").rstrip(".") or "0"


@dataclass(frozen=True)
class Episode:
    """One (query, interpretation, cost pair): one test, enumerated, never sampled."""

    item: str  # the item's key
    interpretation: int  # index into the item's interpretations
    ambiguous: bool  # False: the query is one gold clarified question (one interpretation)
    question: str  # what the user sends
    alpha: float
    beta: float
    max_clarifications: int = 1  # the paper's setting

    @property
    def suffix(self) -> str:
        """What the episode adds to its item's key: reading, then costs."""
        kind = "i" if self.ambiguous else "u"
        return f"{kind}{self.interpretation}-a{cost_text(self.alpha)}-b{cost_text(self.beta)}"

    @property
    def key(self) -> str:
        return f"{self.item}-{self.suffix}"

    @property
    def query(self) -> str:
        """The query the episode belongs to (the same for every interpretation and cost)."""
        return f"{self.item}-{'amb' if self.ambiguous else f'u{self.interpretation}'}"

    def describe(self) -> dict[str, Any]:
        return {
            "item": self.item,
            "query": self.query,
            "interpretation": self.interpretation,
            "ambiguous": self.ambiguous,
            "question": self.question,
            "alpha": self.alpha,
            "beta": self.beta,
            "max_clarifications": self.max_clarifications,
        }


_SUFFIX = re.compile(r"-(?P<kind>[iu])(?P<n>\d+)-a(?P<alpha>[^-]+)-b(?P<beta>[^-]+)$")


def from_key(key: str, question: str = "") -> Episode | None:
    """The episode an episode item's key names (for results that never reported)."""
    found = _SUFFIX.search(key)
    if found is None:
        return None
    return Episode(
        key[: found.start()],
        int(found["n"]),
        found["kind"] == "i",
        question,
        float(found["alpha"]),
        float(found["beta"]),
    )


def episodes(
    items: Sequence[AmbigItem],
    costs: Sequence[tuple[float, float]] = COST_GRID,
    max_clarifications: int = 1,
) -> list[Episode]:
    """Every episode of ``items``: each interpretation of each ambiguous query, and
    unambiguous queries made from gold clarified questions, one per interpretation, as many
    as keep the 2 : 1 ratio (taken round-robin over the items, in file order)."""
    ambiguous = [item for item in items if len(item.interpretations) > 1]
    clarified = [
        (item, n)
        for depth in range(max((len(i.interpretations) for i in items), default=0))
        for item in items
        for n, interpretation in enumerate(item.interpretations)
        if n == depth and (interpretation.question or interpretation.condition)
    ]
    wanted = -(-len(ambiguous) // AMBIGUOUS_TO_ONE)  # ceil, in integers (a float ratio rounds up 10 / 2)
    out = []
    for alpha, beta in costs:
        for item in ambiguous:
            for n in range(len(item.interpretations)):
                out.append(Episode(item.key, n, True, item.question, alpha, beta, max_clarifications))
        for item, n in clarified[:wanted]:
            reading = item.interpretations[n]
            question = reading.question or f"{item.question} ({reading.condition})"
            out.append(Episode(item.key, n, False, question, alpha, beta, max_clarifications))
    return out


def sequence(actions: Sequence[str]) -> str:
    """The action sequence as the paper writes it: Q, then C R per clarification, then A
    (answer) or M (multi-answer), then F: QAF, QCRAF, QMF, QCRMF."""
    letters = {"clarify": "CR", "answer": "A", "multi-answer": "M"}
    return "Q" + "".join(letters[a] for a in actions) + "F"


def parse_costs(text: str | None) -> tuple[tuple[float, float], ...]:
    """``--ambig-costs``: ALPHA:BETA pairs, each cost at least 0, no pair twice."""
    if not text:
        return COST_GRID
    pairs: list[tuple[float, float]] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        alpha, sep, beta = part.partition(":")
        if not sep:
            refuse(f"--ambig-costs: expected ALPHA:BETA, got '{part}'")
        pair = (
            float(number("--ambig-costs", alpha.strip(), low=0, high=1e6)),
            float(number("--ambig-costs", beta.strip(), low=0, high=1e6)),
        )
        spelled = [(cost_text(a), cost_text(b)) for a, b in pairs]
        if (cost_text(pair[0]), cost_text(pair[1])) in spelled:
            refuse(f"--ambig-costs: {part} is given twice (costs count to 6 decimal places)")
        pairs.append(pair)
    if not pairs:
        refuse("--ambig-costs: no cost pair given")
    return tuple(pairs)
