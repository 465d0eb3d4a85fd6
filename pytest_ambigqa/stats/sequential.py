"""An anytime-valid confidence sequence for the mean of a finite set of bounded scores, seen
one by one in a random order, and the gate decision it licenses at any time.

Waudby-Smith and Ramdas 2023, "Estimating means of bounded random variables by betting",
JRSS-B (arXiv 2010.09686): the hedged capital process (section 4, Theorem 3) with the
predictable-mixture bets of section 3 (Remark 1: lambda_t from the running variance, truncated
at 1/2 of what keeps the capital positive), for sampling without replacement from N values
(section 6: the mean still unseen, (N m - S_{t-1}) / (N - t + 1), replaces m), inverted on a
grid of candidate means. These are the defaults of the authors' package, ``confseq``
(``betting.betting_cs`` with ``N``, theta 1/2, trunc_scale 1/2, 1000 breaks), and the numbers
here are theirs step for step (``tests/test_sequential.py`` says how that was checked).

Why it may be looked at after every item: the capital is a nonnegative martingale for the
true mean, so by Ville's inequality the chance that it ever crosses 1/alpha is at most alpha.
The mean of all N is therefore outside the sequence at some time, under any rule for stopping,
with chance at most alpha; a gate that stops when the sequence lies wholly on one side of its
bound decides about the mean of all N as knowing it would, except with chance at most alpha
(``session/sequential.py`` says what that is for each gate). Without replacement
the sequence closes on the exact mean when every value is seen, so a gate is always decided
by the end.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

BREAKS = 1000  # the grid of candidate means: 0, 1/1000, ..., 1
THETA = 0.5  # the weight of the capital betting the mean is higher (the hedge)
TRUNCATION = 0.5  # bets kept to half of what would risk all the capital


@dataclass(frozen=True)
class Bounds:
    """The sequence at one time: the mean of all N lies in [lower, upper] (0-1 scale)."""

    n: int
    lower: float
    upper: float


class ConfidenceSequence:
    """The sequence for N values in [0, 1], updated one value at a time (O(grid) each).

    ``running``: the running intersection of the intervals (still a confidence sequence,
    Waudby-Smith and Ramdas, section 2), so that an interval never widens again.
    """

    def __init__(self, population: int, alpha: float, running: bool = True) -> None:
        if population < 1:
            raise ValueError("population must be at least 1")
        if not 0 < alpha < 1:
            raise ValueError("alpha must be in (0, 1)")
        self.population = population
        self.alpha = alpha
        self.running = running
        import numpy as np  # on the controller only, once a gate is tracked

        self._np = np
        self._grid = np.arange(0, 1 + 1 / BREAKS, step=1 / BREAKS)
        self._up = np.ones(len(self._grid))  # the capital betting the mean is above m
        self._down = np.ones(len(self._grid))  # and below
        self._t = 0
        self._sum = 0.0  # of the values seen
        self._mean = 0.5  # the regularised running mean, one fake observation of 1/2
        self._squares = 0.25  # the regularised sum of squared deviations, one fake observation
        self._variance = 0.25  # the running variance the next bet uses
        self._log = math.log(1 / (alpha * THETA))  # both sides bet at alpha/2 (confseq's default)
        self.lower, self.upper = 0.0, 1.0

    @property
    def n(self) -> int:
        return self._t

    def bounds(self) -> Bounds:
        return Bounds(self._t, self.lower, self.upper)

    def update(self, x: float) -> Bounds:
        """Take the next value (in [0, 1]; a ValueError otherwise) and return the sequence."""
        if not (0.0 <= x <= 1.0):
            raise ValueError(f"a value of the sequence must be in [0, 1], not {x!r}")
        if self._t >= self.population:
            raise ValueError(f"all {self.population} values have been seen")
        self._t += 1
        t, big_n, np = self._t, self.population, self._np
        bet = math.sqrt(2 * self._log / (t * math.log(1 + t) * self._variance))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            left = (big_n * self._grid - self._sum) / (big_n - (t - 1))  # the unseen values' mean
            up = np.maximum(np.minimum(bet, TRUNCATION / left), -TRUNCATION / (1 - left))
            down = np.maximum(np.minimum(bet, TRUNCATION / (1 - left)), -TRUNCATION / left)
            self._up *= 1 + up * (x - left)
            self._down *= 1 - down * (x - left)
        capital = np.maximum(THETA * self._up, (1 - THETA) * self._down)
        capital[np.isnan(capital)] = 0.0
        capital[(left < 0) | (left > 1)] = math.inf  # an m the values seen already rule out
        kept = np.flatnonzero(capital <= 1 / self.alpha)
        lower, upper = (0.0, 1.0) if len(kept) == 0 else (self._grid[kept[0]], self._grid[kept[-1]])
        lower, upper = max(0.0, lower - 1 / BREAKS), min(1.0, upper + 1 / BREAKS)
        self._sum += x
        # What the values seen fix whatever the rest are (the "logical" sequence).
        lower, upper = max(lower, self._sum / big_n), min(upper, 1 - (t - self._sum) / big_n)
        upper = max(upper, lower)  # 1 - (1 - x) can round below x: the point itself, not an empty set
        if self.running:
            lower, upper = max(lower, self.lower), min(upper, self.upper)
        self.lower, self.upper = float(lower), float(upper)
        self._mean = min((0.5 + self._sum) / (t + 1), 1.0)
        self._squares += (x - self._mean) ** 2
        self._variance = self._squares / (t + 1)
        return self.bounds()


def decide(bounds: Bounds, bound: float) -> str | None:
    """ "pass" when the whole sequence is at or above ``bound``, "fail" when it is below it,
    None while it straddles it (0-1 scale)."""
    if bounds.lower >= bound:
        return "pass"
    if bounds.upper < bound:
        return "fail"
    return None


class Trend:
    """Kendall's S between the order the items were asked in and their values, kept as values
    come (O(n) each), and its two-sided p-value: the normal approximation with the values'
    ties corrected for, which with no ties in the order (each item has its own place) is the
    Mann-Kendall trend test and ``scipy.stats.kendalltau``'s asymptotic p (tau-b).

    What it is for: the confidence sequence assumes an item's score does not depend on when it
    is asked (the values are a random draw in a random order). A system whose answers degrade
    as calls go on (a quota, a cache that fills, a rate limit that bites) breaks that; a trend
    of score against call order shows it, and the gate then leaves the decision to the full run.
    """

    def __init__(self, population: int) -> None:
        import numpy as np

        self._np = np
        self._order = np.empty(population, dtype=float)
        self._values = np.empty(population, dtype=float)
        self._ties: dict[float, int] = {}
        self.n = 0
        self.s = 0  # concordant - discordant pairs

    def add(self, order: float, value: float) -> None:
        np, n = self._np, self.n
        if n:
            self.s += int(np.sum(np.sign(order - self._order[:n]) * np.sign(value - self._values[:n])))
        self._order[n], self._values[n] = order, value
        self._ties[value] = self._ties.get(value, 0) + 1
        self.n += 1

    def p(self) -> float:
        """The two-sided p-value of no trend (1.0 while fewer than 3 values, or all equal)."""
        n = self.n
        if n < 3:
            return 1.0
        variance = (
            n * (n - 1) * (2 * n + 5) - sum(t * (t - 1) * (2 * t + 5) for t in self._ties.values())
        ) / 18
        if variance <= 0:
            return 1.0
        return math.erfc(abs(self.s) / math.sqrt(variance) / math.sqrt(2))

    def p_toward(self, falling: bool) -> float:
        """The one-sided p-value of no trend against a falling trend (``falling``) or a rising one."""
        p = self.p()
        toward = self.s < 0 if falling else self.s > 0
        return p / 2 if toward else 1 - p / 2

    def tau(self) -> float:
        """Kendall's tau-b of the values seen (0 while undefined)."""
        n = self.n
        pairs = n * (n - 1) / 2
        tied = sum(t * (t - 1) / 2 for t in self._ties.values())
        return self.s / math.sqrt(pairs * (pairs - tied)) if pairs > tied else 0.0
