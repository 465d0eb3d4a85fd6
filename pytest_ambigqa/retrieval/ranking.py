"""Ranking arithmetic shared by the retrievers: top-k with stable ties, and rank fusion."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ..schema import Passage
from .corpus import Corpus

if TYPE_CHECKING:
    import numpy as np

RRF_K = 60  # Cormack, Clarke & Buettcher (2009), "Reciprocal rank fusion outperforms ..."


def top(scores: np.ndarray, depth: int) -> list[tuple[int, float]]:
    """Indices of the ``depth`` highest scores, best first, ties broken by lower index."""
    import numpy as np  # here: a run whose system searches nothing never loads it

    depth = min(depth, len(scores))
    if depth <= 0:
        return []
    candidates = (
        np.argpartition(-scores, depth - 1)[:depth] if depth < len(scores) else np.arange(len(scores))
    )
    # argpartition may cut through a tie at the boundary: widen to every tied score, then sort.
    candidates = np.flatnonzero(scores >= scores[candidates].min())
    order = candidates[np.lexsort((candidates, -scores[candidates]))][:depth]
    return [(int(i), float(scores[i])) for i in order]


def reciprocal_rank_fusion(rankings: Sequence[Sequence[int]], k: int = RRF_K) -> list[tuple[int, float]]:
    """Fuse ranked lists of passage indices: score(d) = sum over lists of 1 / (k + rank of d).

    Ranks start at 1; a passage missing from a list gets nothing from it. The result is
    sorted by score, ties by lower index, so it does not depend on the order of the lists.
    """
    parts: dict[int, list[float]] = {}
    for ranking in rankings:
        for rank, index in enumerate(ranking, start=1):
            parts.setdefault(index, []).append(1.0 / (k + rank))
    # fsum is exactly rounded, so the sum, and the order, cannot depend on list order.
    fused = {index: math.fsum(values) for index, values in parts.items()}
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))


def to_passages(corpus: Corpus, ranked: Sequence[tuple[int, float]]) -> list[Passage]:
    return [replace(corpus.passages[i], score=score) for i, score in ranked]
