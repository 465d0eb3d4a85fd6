"""What ``--ambig-sequential`` spends and how often it errs, by simulation: items needed to
decide a gate, and the wrong decisions, against watching a fixed-n 95% interval.

Populations of N binary scores (an exact-match metric) whose mean lies a given distance from
the gate's bound; each seed draws a random order; both rules look after every item and stop
at their first decision. Prints, per distance, the mean items used and the share of wrong
decisions (a pass for a mean under the bound, a fail for one over it).

    python bench/sequential.py [--items 500] [--seeds 300]
"""

from __future__ import annotations

import argparse

import numpy as np
from _common import ROOT  # noqa: F401 - puts the repository's fixtures on the path

from fixtures.watching import fixed_n_watched
from pytest_ambigqa.stats.sequential import ConfidenceSequence, decide

BOUND = 0.5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=500)
    parser.add_argument("--seeds", type=int, default=300)
    parser.add_argument("--alpha", type=float, default=0.05)
    args = parser.parse_args()
    n = args.items
    print(f"N={n} items, {args.seeds} seeds, alpha {args.alpha}, bound {BOUND}")
    print("true mean  right  sequential: items used, wrong  |  fixed-n watched: items used, wrong")
    for mean in (0.3, 0.4, 0.45, 0.48, 0.52, 0.55, 0.6, 0.7):
        ones = round(mean * n)
        population = np.array([1.0] * ones + [0.0] * (n - ones))
        right = "pass" if ones / n >= BOUND else "fail"
        used, wrong, naive_used, naive_wrong = [], 0, [], 0
        for seed in range(args.seeds):
            x = np.random.default_rng(seed).permutation(population)
            sequence, decision = ConfidenceSequence(n, args.alpha), None
            for v in x:
                decision = decide(sequence.update(float(v)), BOUND)
                if decision:
                    break
            used.append(sequence.n)
            wrong += decision != right
            said, at = fixed_n_watched(x, BOUND)
            naive_used.append(at)
            naive_wrong += said != right
        spent, watched = np.mean(used), np.mean(naive_used)
        print(
            f"{mean:9.2f}  {right:5}  {spent:10.0f} ({spent / n:4.0%}), {wrong / args.seeds:5.1%}"
            f"  |  {watched:10.0f} ({watched / n:4.0%}), {naive_wrong / args.seeds:5.1%}"
        )


if __name__ == "__main__":
    main()
