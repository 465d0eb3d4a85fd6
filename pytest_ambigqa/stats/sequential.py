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
    read again, and a candidate whose capital provably stays over ``1 / alpha`` is left asleep
    (:meth:`_asleep`); and (2) :meth:`look` defers it while the sequence provably still straddles the
    gate's bound, then makes the deferred updates at once, a row per value (:meth:`_catch_up`).
    The proof: two candidate means kept at the last computed time, one low enough and one high
    enough that while both stay kept and the values' own bounds (``S / N``) stay on their side,
    the bounds straddle the gate's; their capitals are carried along value by value
    (:class:`_Witness`), so it is known whether they stay kept.
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
        # Candidates left asleep (:meth:`_asleep`): those below ``_awake[0]`` and from
        # ``_awake[1]`` on, each capital as of value ``_at``, with how far it may have fallen since.
        self._awake = (0, len(self._grid))
        self._at = np.zeros(len(self._grid), dtype=np.int64)
        # Each value's x, bet, S before, N - t + 1, and the log of that fall by each t, below and
        # above: grown as values come (:meth:`_reserve`), not made for all N at the start.
        self._rows = np.empty((0, 4))
        self._fall = np.zeros((2, 1))
        # log(2 / alpha), and a margin for the rounding of those falls and of the capitals' products
        # (about 1e-16 a value), many times over
        self._limit = math.log(2 * (1 / alpha)) + 1e-6
        self._t = 0
        self._sum = 0.0  # of the values seen
        self._mean = 0.5  # the regularised running mean, one fake observation of 1/2
        self._squares = 0.25  # the regularised sum of squared deviations, one fake observation
        self._variance = 0.25  # the running variance the next bet uses
        self._log = math.log(1 / (alpha * THETA))  # both sides bet at alpha/2 (confseq's default)
        self._lower, self._upper = 0.0, 1.0
        # The values taken whose update of the grid is deferred: (x, bet, S before, N - t + 1).
        self._pending: list[tuple[float, float, float, int]] = []
        self._last: tuple[int, Any, Any] | None = None  # (first awake, capital, kept) at the last update
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
        self._witness = None  # its capitals follow the looks alone
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
        """The pending values' updates of the grid, a row each, and the bounds after each
        (only the candidates that could be kept: :meth:`_asleep`)."""
        pending, np = self._pending, self._np
        if not pending:
            return
        self._pending = []
        rows = np.array(pending, dtype=float)  # x, bet, S before, N - t + 1: a row per value
        first, last = self._t - len(pending), self._t
        self._reserve(last)
        self._rows[first:last] = rows
        first_sum, first_unseen = pending[0][2], pending[0][3]
        # The candidates m not ruled out for good: N m >= S (else the unseen mean is negative)
        # and N m <= S + unseen + 1 (beyond, it is above 1 now and at every later time).
        start = int(np.searchsorted(self._scaled, first_sum, "left"))
        end = min(self._end, int(np.searchsorted(self._scaled, first_sum + first_unseen + 1, "right")))
        last_sum, last_unseen = pending[-1][2], pending[-1][3]
        self._end = min(end, int(np.searchsorted(self._scaled, last_sum + last_unseen + 1, "right")))
        low, high = self._asleep(start, end, rows, first, last)
        # The grid's bounds after each value: its lowest and highest kept candidate, (0, 1) where none is.
        lower, upper = np.zeros(len(pending)), np.ones(len(pending))
        self._last = None
        if low < high:
            up, down, left = self._grow(slice(low, high), rows, first)
            # max(THETA up, (1 - THETA) down) <= 1 / alpha, a NaN kept (as capital 0): THETA is
            # 1/2, so halving is exact and the test is max(up, down) > 2 / alpha.
            capital = np.maximum(up, down, out=up)
            kept = ~(capital > 2 * (1 / self.alpha)) & (left >= 0) & (left <= 1)
            self._last = (low, capital[-1], kept[-1])
            found = np.flatnonzero(kept.any(axis=1))
            grid = self._grid[low:high]
            lower[found] = grid[kept[found].argmax(axis=1)]
            upper[found] = grid[kept.shape[1] - 1 - kept[found, ::-1].argmax(axis=1)]
        # Widened by a step, then narrowed to what the values seen fix whatever the rest are (the
        # "logical" sequence): the same operations, element by element, as one value at a time.
        np.maximum(lower - 1 / BREAKS, 0.0, out=lower)
        np.minimum(upper + 1 / BREAKS, 1.0, out=upper)
        after = rows[:, 2] + rows[:, 0]
        seen = np.arange(first + 1, last + 1, dtype=float)
        np.maximum(lower, after / self.population, out=lower)
        np.minimum(upper, 1 - (seen - after) / self.population, out=upper)
        # 1 - (1 - x) can round below x: then the point itself, not an empty set
        np.maximum(upper, lower, out=upper)
        if self.running:  # the running intersection after the last value is that of them all
            self._lower = max(float(lower.max()), self._lower)
            self._upper = min(float(upper.min()), self._upper)
        else:
            self._lower, self._upper = float(lower[-1]), float(upper[-1])

    def _reserve(self, last: int) -> None:
        """Room in the history for ``last`` values, doubled as it fills (at most N)."""
        np, size = self._np, len(self._rows)
        if last > size:
            size = min(self.population, max(last, 2 * size, DEFERRED))
            rows, fall = np.empty((size, 4)), np.zeros((2, size + 1))
            rows[: len(self._rows)], fall[:, : self._fall.shape[1]] = self._rows, self._fall
            self._rows, self._fall = rows, fall

    def _asleep(self, start: int, end: int, rows: Any, first: int, last: int) -> tuple[int, int]:
        """The candidates to update for values ``first`` to ``last`` (``rows``): ``[low, high)``,
        every one of them brought up to ``first``; those in ``[start, low)`` and ``[high, end)``
        are asleep, each capital provably over ``1 / alpha`` until ``last``, so rejected.

        Why a sleeper's capital can be bounded without its update: below the awake candidates,
        its capital betting the mean is above m grows each value by a factor at least that of
        the highest sleeper (the edge): with m' the unseen values' mean (the edge's the larger),
        the bet min(bet, 1 / (2 m')) is the larger and the step x - m' the larger (Waudby-Smith
        and Ramdas, section 4: for x >= m' both factors are at least 1, below it the sleeper's
        loss bet (m' - x) is the smaller). Above them, the capital betting the mean is below m,
        against the lowest sleeper, likewise. So a sleeper's capital is at least its value when
        it fell asleep times the edge's factors since (``_fall``, a log per side), and it wakes,
        brought up to date with the same operations in the same order, only when that no longer
        proves it over the limit; most never do before they are ruled out for good.
        """
        np = self._np
        low, high = self._awake
        low = min(max(low, start), end)
        high = max(min(high, end), low)
        with np.errstate(divide="ignore", invalid="ignore"):
            # Awake ones fall asleep while their capital is over the limit by more than any
            # fall at all (1 - min(bet, 1/2) a value) in these values: from each end inwards.
            most = float(np.log1p(-np.minimum(rows[:, 1], 0.5)).sum())
            over = np.log(self._up[low:high]) + most > self._limit  # a NaN capital stays awake
            low += int(np.argmin(over)) if not over.all() else len(over)
            over = (np.log(self._down[low:high]) + most > self._limit)[::-1]
            high -= int(np.argmin(over)) if not over.all() else len(over)
            # How far each side's sleepers may fall in these values, bounded by the awake edge.
            for side, edge in ((0, low - 1), (1, high)):
                if start <= edge < end:
                    up, down, left = self._factors([edge], rows)
                    mean = left[:, 0]  # the edge's factor where it bets (0 < m' < 1), else the least
                    fall = np.where(
                        (mean > 0) & (mean < 1),
                        np.log((down if side else up)[:, 0]),
                        np.log1p(-np.minimum(rows[:, 1], 0.5)),
                    )
                    self._fall[side, first + 1 : last + 1] = self._fall[side, first] + np.cumsum(fall)
                else:
                    self._fall[side, first + 1 : last + 1] = self._fall[side, first]
            # Sleepers whose capital may no longer be over the limit by ``last`` wake, and every
            # candidate between them and the awake ones with them.
            fall = self._fall[:, last]
            below = np.log(self._up[start:low]) + (fall[0] - self._fall[0, self._at[start:low]])
            woken = np.flatnonzero(~(below > self._limit))
            if len(woken):
                low = start + int(woken[0])
            above = np.log(self._down[high:end]) + (fall[1] - self._fall[1, self._at[high:end]])
            woken = np.flatnonzero(~(above > self._limit))
            if len(woken):
                high = high + int(woken[-1]) + 1
        self._awake = (low, high)
        behind = low + np.flatnonzero(self._at[low:high] < first)
        if len(behind):
            at = self._at[behind]
            for since in np.unique(at):
                self._grow(behind[at == since], self._rows[since:first], int(since))
        return low, high

    def _grow(self, candidates: Any, rows: Any, first: int) -> tuple[Any, Any, Any]:
        """The capitals of ``candidates`` after each of ``rows`` (values ``first`` on), kept as
        theirs, with each row's unseen values' mean for them."""
        np = self._np
        up, down, left = self._factors(candidates, rows)
        with np.errstate(over="ignore", invalid="ignore"):
            # Each capital times its factors in turn, as one value at a time did.
            up[0] *= self._up[candidates]
            down[0] *= self._down[candidates]
            np.multiply.accumulate(up, axis=0, out=up)
            np.multiply.accumulate(down, axis=0, out=down)
        self._up[candidates], self._down[candidates] = up[-1], down[-1]
        self._at[candidates] = first + len(rows)
        return up, down, left

    def _factors(self, candidates: Any, rows: Any) -> tuple[Any, Any, Any]:
        """What each of ``rows`` multiplies the capitals of ``candidates`` by (betting the mean
        is above m, and below it), with the unseen values' mean for them: the update of section
        4 of Waudby-Smith and Ramdas, one value at a time, as rows of arrays."""
        np = self._np
        xs, bets, sums, unseen = (rows[:, i : i + 1] for i in range(4))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            left = self._scaled[candidates][None, :] - sums
            left /= unseen  # the unseen values' mean
            inverse = TRUNCATION / left
            complement = np.subtract(1, left)
            np.divide(TRUNCATION, complement, out=complement)
            up = np.maximum(np.minimum(bets, inverse), -complement)
            down = np.minimum(bets, complement)
            np.maximum(down, np.negative(inverse, out=inverse), out=down)
            step = np.subtract(xs, left, out=complement)
            up *= step
            up += 1
            down *= step
            np.subtract(1, down, out=down)
        return up, down, left


DEFERRED = 256  # values whose update of the grid may wait (each a row of the catch-up's arrays)


class _Witness:
    """Why a sequence straddles ``bound`` (:meth:`ConfidenceSequence.look`): a kept candidate
    low enough that the lower bound stays under ``bound`` while it is kept, and one high
    enough that the upper bound stays at or over it, each with its capitals carried along,
    value by value, with the grid's own operations (a handful on two numbers, where the grid's
    update is on every candidate not asleep)."""

    def __init__(self, bound: float, limit: float, candidates: list[list[float]]) -> None:
        self.bound, self.limit = bound, limit
        self.candidates = candidates  # [N m, capital up, capital down] of each

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
            at = start + int(np.where(side, capital, np.inf).argmin())
            chosen.append([float(v[at]) for v in (sequence._scaled, sequence._up, sequence._down)])
        # Kept while at most 2 / alpha (the halving of THETA, as in the grid's test), less a
        # margin far over any difference of rounding between these and the grid's arrays.
        return cls(bound, 2 * (1 / sequence.alpha) * (1 - 1e-9), chosen)

    def holds(self, sequence: ConfidenceSequence, x: float, bet: float) -> bool:
        """Whether, after the value just taken (``x``, with ``bet``), the bounds still straddle:
        both candidates still kept, and the values' own bounds (``S / N``) on their sides."""
        _, _, before, unseen = sequence._pending[-1]
        for candidate in self.candidates:
            left = (candidate[0] - before) / unseen  # the unseen values' mean, as in _grow
            if not 0 < left < 1:  # ruled out, or a bet the grid makes without these divisions
                return False
            inverse, complement = TRUNCATION / left, TRUNCATION / (1 - left)
            step = x - left
            candidate[1] *= max(min(bet, inverse), -complement) * step + 1
            candidate[2] *= 1 - max(min(bet, complement), -inverse) * step
            if not (candidate[1] <= self.limit and candidate[2] <= self.limit):
                return False
        after, big_n = before + x, sequence.population
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
        s = bisect.bisect_left(values, value) - (self.n - bisect.bisect_right(values, value))
        after = self.n
        if self.n and order <= orders[-1]:  # not asked after every value before it: rarely
            same, after = bisect.bisect_left(orders, order), bisect.bisect_right(orders, order)
            for n, earlier in enumerate(self._by_order[same:], start=same):
                # An equal order makes no pair (sign 0); a later one turns the pair's sign.
                s -= (1 if n < after else 2) * ((value > earlier) - (value < earlier))
        self.s += s
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
