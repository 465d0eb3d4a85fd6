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

import bisect
import math
from dataclasses import dataclass
from typing import Any

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
    """The sequence for N values in [0, 1], updated one value at a time.

    ``running``: the running intersection of the intervals (still a confidence sequence,
    Waudby-Smith and Ramdas, section 2), so that an interval never widens again.

    What a gate pays per item (issue 44, target 6): the grid's update is the same floating-
    point operations as ever, to the last bit (``tests/test_sequential.py``), but
    (1) only over the candidate means not ruled out for good: a mean m below ``S / N`` (S the
    sum seen, which never falls), or one whose unseen values would have to average more than 1
    (``N m > S + N - t + 1``, whose right side never rises; dropped with a margin of 1 that the
    sums' rounding cannot cross), is ruled out at every later time, so its capital is never
    read again; and (2) :meth:`look` defers it while the sequence provably still straddles the
    gate's bound, then makes the deferred updates at once, a row per value (:meth:`_catch_up`).
    The proof: two candidate means kept at the last computed time, one low enough and one high
    enough that while both stay kept and the values' own bounds (``S / N``) stay on their side,
    the bounds straddle the gate's; each capital grows at most by ``1 + bet`` a value (the bets
    lie in [0, bet] and ``|x - m'|`` in [0, 1] for a candidate not ruled out), so a candidate
    whose capital times those factors stays within ``1 / alpha`` stays kept.
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
        self._scaled = population * self._grid  # N m, as the update computed it
        self._up = np.ones(len(self._grid))  # the capital betting the mean is above m
        self._down = np.ones(len(self._grid))  # and below
        self._end = len(self._grid)  # the grid from here on is ruled out for good
        self._t = 0
        self._sum = 0.0  # of the values seen
        self._mean = 0.5  # the regularised running mean, one fake observation of 1/2
        self._squares = 0.25  # the regularised sum of squared deviations, one fake observation
        self._variance = 0.25  # the running variance the next bet uses
        self._log = math.log(1 / (alpha * THETA))  # both sides bet at alpha/2 (confseq's default)
        self._lower, self._upper = 0.0, 1.0
        # The values taken whose update of the grid is deferred: (x, bet, S before, N - t + 1).
        self._pending: list[tuple[float, float, float, int]] = []
        self._last: tuple[int, Any, Any] | None = None  # (start, capital, kept) at the last update
        self._witness: _Witness | None = None

    @property
    def n(self) -> int:
        return self._t

    @property
    def lower(self) -> float:
        self._catch_up()
        return self._lower

    @property
    def upper(self) -> float:
        self._catch_up()
        return self._upper

    def bounds(self) -> Bounds:
        self._catch_up()
        return Bounds(self._t, self._lower, self._upper)

    def update(self, x: float) -> Bounds:
        """Take the next value (in [0, 1]; a ValueError otherwise) and return the sequence."""
        self._take(x)
        self._witness = None  # its ceilings follow the looks alone
        return self.bounds()

    def look(self, x: float, bound: float) -> Bounds | None:
        """:meth:`update`, for a gate at ``bound``: None where the sequence provably straddles
        it now (:func:`decide` would say None), its update then deferred."""
        bet = self._take(x)
        witness = self._witness
        if witness is not None and witness.bound == bound and len(self._pending) < DEFERRED:
            if witness.holds(self, x, bet):
                return None
        found = self.bounds()
        self._witness = _Witness.find(self, bound)
        return found

    def _take(self, x: float) -> float:
        """The value's part of the sequence that is not the grid: its bet, the sums, the
        variance the next bet uses; its update of the grid is left pending. Returns its bet."""
        if not (0.0 <= x <= 1.0):
            raise ValueError(f"a value of the sequence must be in [0, 1], not {x!r}")
        if self._t >= self.population:
            raise ValueError(f"all {self.population} values have been seen")
        self._t += 1
        t = self._t
        bet = math.sqrt(2 * self._log / (t * math.log(1 + t) * self._variance))
        self._pending.append((x, bet, self._sum, self.population - (t - 1)))
        self._sum += x
        self._mean = min((0.5 + self._sum) / (t + 1), 1.0)
        self._squares += (x - self._mean) ** 2
        self._variance = self._squares / (t + 1)
        return bet

    def _catch_up(self) -> None:
        """The pending values' updates of the grid, a row each, and the bounds after each."""
        pending, np = self._pending, self._np
        if not pending:
            return
        self._pending = []
        xs, bets, sums, unseen = (np.array(column, dtype=float) for column in zip(*pending, strict=True))
        first_sum, first_unseen = pending[0][2], pending[0][3]
        # The candidates m not ruled out for good: N m >= S (else the unseen mean is negative)
        # and N m <= S + unseen + 1 (beyond, it is above 1 now and at every later time).
        start = int(np.searchsorted(self._scaled, first_sum, "left"))
        end = min(self._end, int(np.searchsorted(self._scaled, first_sum + first_unseen + 1, "right")))
        last_sum, last_unseen = pending[-1][2], pending[-1][3]
        self._end = min(end, int(np.searchsorted(self._scaled, last_sum + last_unseen + 1, "right")))
        found: list[tuple[float, float] | None] = [None] * len(pending)
        if start < end:
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                left = self._scaled[None, start:end] - sums[:, None]
                left /= unseen[:, None]  # the unseen values' mean
                inverse = TRUNCATION / left
                complement = np.subtract(1, left)
                np.divide(TRUNCATION, complement, out=complement)
                up = np.maximum(np.minimum(bets[:, None], inverse), -complement)
                down = np.minimum(bets[:, None], complement)
                np.maximum(down, np.negative(inverse, out=inverse), out=down)
                step = np.subtract(xs[:, None], left, out=complement)
                up *= step
                up += 1
                down *= step
                np.subtract(1, down, out=down)
                # Each capital times its factors in turn, as one value at a time did.
                up[0] *= self._up[start:end]
                down[0] *= self._down[start:end]
                np.multiply.accumulate(up, axis=0, out=up)
                np.multiply.accumulate(down, axis=0, out=down)
            self._up[start:end], self._down[start:end] = up[-1], down[-1]
            # max(THETA up, (1 - THETA) down) <= 1 / alpha, a NaN kept (as capital 0): THETA is
            # 1/2, so halving is exact and the test is max(up, down) > 2 / alpha.
            capital = np.maximum(up, down, out=inverse)
            kept = ~(capital > 2 * (1 / self.alpha)) & (left >= 0) & (left <= 1)
            self._last = (start, capital[-1], kept[-1])
            lowest, highest = kept.argmax(axis=1), kept.shape[1] - 1 - kept[:, ::-1].argmax(axis=1)
            for row in np.flatnonzero(kept.any(axis=1)):
                found[row] = (self._grid[start + lowest[row]], self._grid[start + highest[row]])
        else:
            self._last = None
        big_n, t = self.population, self._t - len(pending)
        for (x, _, before, _), at in zip(pending, found, strict=True):
            t += 1
            lower, upper = (0.0, 1.0) if at is None else at
            lower, upper = max(0.0, lower - 1 / BREAKS), min(1.0, upper + 1 / BREAKS)
            after = before + x
            # What the values seen fix whatever the rest are (the "logical" sequence).
            lower, upper = max(lower, after / big_n), min(upper, 1 - (t - after) / big_n)
            upper = max(upper, lower)  # 1 - (1 - x) can round below x: the point itself, not an empty set
            if self.running:
                lower, upper = max(lower, self._lower), min(upper, self._upper)
            self._lower, self._upper = float(lower), float(upper)


DEFERRED = 64  # values whose update of the grid may wait (each a row of the catch-up's arrays)


class _Witness:
    """Why a sequence straddles ``bound`` (:meth:`ConfidenceSequence.look`): a kept candidate
    low enough that the lower bound stays under ``bound`` while it is kept, and one high
    enough that the upper bound stays at or over it, each with a ceiling on its capital."""

    def __init__(self, bound: float, low: int, high: int, ceilings: list[float], limit: float) -> None:
        self.bound, self.low, self.high, self.ceilings, self.limit = bound, low, high, ceilings, limit

    @classmethod
    def find(cls, sequence: ConfidenceSequence, bound: float) -> _Witness | None:
        """The candidates of least capital on each side, where the bounds straddle ``bound``
        now; None where they do not, or no candidate is kept on a side."""
        np, last = sequence._np, sequence._last
        if last is None or not (sequence._lower < bound <= sequence._upper) or not 0 < bound <= 1:
            return None
        start, capital, kept = last
        grid = sequence._grid[start : start + len(capital)]
        usable = kept & ~np.isnan(capital)
        chosen = []
        for side in (usable & (grid - 1 / BREAKS < bound), usable & (grid + 1 / BREAKS >= bound)):
            if not side.any():
                return None
            chosen.append(int(np.where(side, capital, np.inf).argmin()))
        limit = 2 * (1 / sequence.alpha)
        return cls(bound, start + chosen[0], start + chosen[1], [float(capital[c]) for c in chosen], limit)

    def holds(self, sequence: ConfidenceSequence, x: float, bet: float) -> bool:
        """Whether, after the value just taken (``x``, with ``bet``), the bounds still straddle."""
        x_, _, before, unseen = sequence._pending[-1]
        growth = 1.0 + bet
        for n, candidate in enumerate((self.low, self.high)):
            left = (float(sequence._scaled[candidate]) - before) / unseen
            if not 0 <= left <= 1:  # ruled out now: its capital is no longer bounded so
                return False
            self.ceilings[n] *= growth
            if not self.ceilings[n] <= self.limit:
                return False
        after, big_n = before + x_, sequence.population
        return after / big_n < self.bound and 1 - (sequence._t - after) / big_n >= self.bound


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
    come, and its two-sided p-value: the normal approximation with the values' ties corrected
    for, which with no ties in the order (each item has its own place) is the Mann-Kendall
    trend test and ``scipy.stats.kendalltau``'s asymptotic p (tau-b).

    What it is for: the confidence sequence assumes an item's score does not depend on when it
    is asked (the values are a random draw in a random order). A system whose answers degrade
    as calls go on (a quota, a cache that fills, a rate limit that bites) breaks that; a trend
    of score against call order shows it, and the gate then leaves the decision to the full run.

    Each value adds its pairs with those before it in O(log n) and a few list moves (issue 44,
    target 6; it was O(n)): as if every earlier value were asked before it, the values below it
    less those above it (a sorted list), corrected for the few asked after it (a result that
    came early and waited for its place in the order), usually none.
    """

    def __init__(self, population: int) -> None:
        self._orders: list[float] = []  # the orders seen, sorted
        self._by_order: list[float] = []  # their values, in that order
        self._values: list[float] = []  # the values seen, sorted
        self._ties: dict[float, int] = {}
        self.n = 0
        self.s = 0  # concordant - discordant pairs

    def add(self, order: float, value: float) -> None:
        values, orders = self._values, self._orders
        if self.n:
            s = bisect.bisect_left(values, value) - (self.n - bisect.bisect_right(values, value))
            same, after = bisect.bisect_left(orders, order), bisect.bisect_right(orders, order)
            for n, earlier in enumerate(self._by_order[same:], start=same):
                # An equal order makes no pair (sign 0); a later one turns the pair's sign.
                s -= (1 if n < after else 2) * ((value > earlier) - (value < earlier))
            self.s += s
        else:
            after = 0
        orders.insert(after, order)
        self._by_order.insert(after, value)
        bisect.insort(values, value)
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
