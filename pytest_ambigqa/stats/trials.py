"""pass@k and pass^k from c passing of n trials of one item, and the spread of its trial scores.

- pass@k, the chance that at least one of k trials passes, by the unbiased estimator of Chen
  et al. 2021 ("Evaluating Large Language Models Trained on Code", arXiv 2107.03374, section
  2.1): 1 - C(n - c, k) / C(n, k);
- pass^k, the chance that all k trials pass (tau-bench, Yao et al. 2024, arXiv 2406.12045,
  section 3): C(c, k) / C(n, k), the same kind of unbiased estimator.

pass@1 = pass^1 = c / n; pass@k rises with k and pass^k falls; with c in {0, n} (trials that
always agree) pass@k = pass^k for every k. A suite's section of them is ``card/trials.py``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def pass_at_k(n: int, c: int, k: int) -> float:
    """Chen et al. 2021's unbiased estimator of pass@k from n trials of which c passed."""
    _check(n, c, k)
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k (tau-bench): the chance that k trials drawn from the n all pass, C(c, k) / C(n, k)."""
    _check(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def _check(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")


def variance(values: Sequence[float]) -> float:
    """The sample variance of one item's trial scores (n - 1 in the denominator; 0 for one)."""
    if len(values) < 2:
        return 0.0
    mean = math.fsum(values) / len(values)
    return math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1)
