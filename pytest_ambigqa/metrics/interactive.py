"""The interactive clarification protocol's episode metrics (Berant, Chen, Fisch et al.
2025, "Learning Steerable Clarification Policies with Collaborative Self-play",
sections 3.1 and 4.3): reward R = acc - alpha * clarifications - beta *
words, acc = 100 x token F1 of the user's final answer (SQuAD normalisation, best alias),
and the shares of episodes with a clarification and with a multi-answer, and words per
final answer, reported by ambiguous and unambiguous queries (Tables 2 and 3).

Item values are per episode; reward is on its printed scale (it has no upper "100 %"),
F1 and the rates are fractions printed x100 like every percentage metric here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .qa import best_over_aliases
from .spec import MetricSpec, count

SOURCE = "Berant, Chen, Fisch et al. 2025 (steerable clarification), section 4.3"


def accuracy(answer: str, golds: Sequence[str]) -> float:
    """acc(a, a*): 100 x token F1 against the best gold alias (SQuAD normalisation)."""
    return 100 * best_over_aliases(answer, golds)[0] if golds else 0.0


def words(text: str) -> int:
    """Whitespace-separated words of the assistant's final answer (section 4.3)."""
    return len(text.split())


def reward(acc: float, clarifications: int, final_words: int, alpha: float, beta: float) -> float:
    """R = acc - alpha * clarifications - beta * words (section 3.1)."""
    return acc - alpha * clarifications - beta * final_words


SPECS = (
    MetricSpec(
        "reward",
        "Reward",
        f"{SOURCE}: 100 x F1 - alpha x clarifications - beta x words",
        item_range=(-math.inf, 100),
        failed_as="worst",  # the worst reward its row scored at its cost pair (interactive/scoring.py)
    ),
    MetricSpec("episode_f1", "F1", f"{SOURCE}: token F1 of the user's final answer", factor=100),
    MetricSpec("clarify_rate", "% Clar.", f"{SOURCE}: episodes with a clarification", 100, False, None),
    MetricSpec("multi_answer_rate", "% MA", f"{SOURCE}: episodes ending in a multi-answer", 100, False, None),
    count("answer_words", "Words", f"{SOURCE}: words of the assistant's final answer", None, better=False),
)
METRIC_NAMES = tuple(spec.name for spec in SPECS)
