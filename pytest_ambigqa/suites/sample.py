"""``--ambig-sample=N`` (or a fraction): a seeded sample of the selected suites' items,
stratified by suite and ambiguity type, whose scores the scorecard weighs back to every item
(``stats/strata.py``).

Allocation is proportional (Cochran 1977, "Sampling Techniques", section 5.5): stratum h of
N_h items among N gets n·N_h/N of the n, rounded by largest remainder, and at least one item
(a stratum left out would leave its items out of the estimate: a sample smaller than the
number of strata is refused). Within a stratum the items drawn are those with the smallest
SHA-256 of (seed, item key): the same items on every machine and in every xdist worker,
whatever the file order, the platform or ``PYTHONHASHSEED``.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..schema import AmbigItem

Stratum = tuple[str, str | None]  # (suite, ambiguity type)


@dataclass(frozen=True)
class Sample:
    """What was drawn: ``size`` of the ``population`` items, and per stratum (N_h, n_h)."""

    size: int
    population: int
    seed: int
    asked: int | float  # what --ambig-sample said: a count or a fraction
    strata: dict[Stratum, tuple[int, int]]

    @property
    def counts(self) -> dict[Stratum, int]:
        """N_h by stratum: the weights the scorecard's estimates use."""
        return {h: big for h, (big, _) in self.strata.items()}

    def to_json(self) -> dict[str, Any]:
        return {
            "items": self.size,
            "population": self.population,
            "seed": self.seed,
            "asked": self.asked,
            "design": "stratified by suite and ambiguity type, proportional allocation (at least "
            "one item a stratum), drawn without replacement",
            "estimator": "stratified mean (Cochran 1977, sec. 5.3) with finite-population correction; "
            "ratios and DR by weighted means with a stratified bootstrap interval",
            "strata": [
                {"suite": suite, "type": kind, "population": big, "sampled": small}
                for (suite, kind), (big, small) in self.strata.items()
            ],
        }


def allocate(size: int, sizes: Sequence[int]) -> list[int]:
    """n_h for each stratum of ``sizes`` (N_h): proportional by largest remainder, each at least
    one and at most N_h, summing to ``size`` (``len(sizes) <= size <= sum(sizes)``)."""
    total = sum(sizes)
    if not len(sizes) <= size <= total:
        raise ValueError(f"cannot draw {size} items from {len(sizes)} strata of {total} items")
    quotas = [size * n / total for n in sizes]
    counts = [min(n, max(1, math.floor(q))) for n, q in zip(sizes, quotas, strict=True)]
    while sum(counts) < size:  # the largest remainder among strata with room gets one more
        h = max((h for h in range(len(sizes)) if counts[h] < sizes[h]), key=lambda h: quotas[h] - counts[h])
        counts[h] += 1
    while sum(counts) > size:  # the minimum of one pushed the sum over: the most over-allocated give one
        h = min((h for h in range(len(sizes)) if counts[h] > 1), key=lambda h: quotas[h] - counts[h])
        counts[h] -= 1
    return counts


def draw(items: Sequence[AmbigItem], asked: int | float, seed: int) -> tuple[list[AmbigItem], Sample | None]:
    """The sampled items, in their order, and what was drawn; all items and None when the
    sample would hold them all. ValueError (a usage error) when it cannot hold every stratum."""
    total = len(items)
    size = asked if isinstance(asked, int) else max(1, math.floor(asked * total + 0.5))
    if size >= total:
        return list(items), None
    groups: dict[Stratum, list[AmbigItem]] = {}
    for item in items:
        groups.setdefault((item.suite, item.ambiguity_type), []).append(item)
    strata = sorted(groups, key=lambda h: (h[0], h[1] or ""))
    if size < len(strata):
        names = ", ".join(f"{suite}/{kind or 'untyped'}" for suite, kind in strata)
        raise ValueError(
            f"{size} items cannot hold one of each of the {len(strata)} strata (suite and ambiguity "
            f"type: {names}); ask for at least {len(strata)}"
        )
    counts = allocate(size, [len(groups[h]) for h in strata])
    chosen: set[str] = set()
    for h, n in zip(strata, counts, strict=True):
        ranked = sorted(groups[h], key=lambda item: seeded_rank(seed, item.key))
        chosen.update(item.key for item in ranked[:n])
    sample = Sample(
        size=size,
        population=total,
        seed=seed,
        asked=asked,
        strata={h: (len(groups[h]), n) for h, n in zip(strata, counts, strict=True)},
    )
    return [item for item in items if item.key in chosen], sample


def seeded_rank(seed: int, key: str) -> str:
    """An item's place in the order drawn from ``seed`` (the sample's draw, the sequential
    gate's order): its key and the seed alone, whatever the hash seed or the data's order."""
    return hashlib.sha256(f"{seed}\x1f{key}".encode()).hexdigest()
