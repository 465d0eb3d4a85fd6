"""The interactive clarification protocol (``protocol.py``): episodes (``episodes.py``),
simulated users (``users.py``), one episode played (``play.py``), its result
(``scoring.py``), the scorecard section (``section.py``: action sequences, costs,
reference policies, steerability) and that section as the report shows it (``view.py``).

Berant, Chen, Fisch et al. 2025, "Learning Steerable Clarification Policies with
Collaborative Self-play": an episode puts one gold interpretation i of a query q to a
simulated user, who sends q; the assistant answers, answers every interpretation at once
(multi-answer), or asks a clarifying question the user answers (section 3.1, Table 1);
after an answer the user writes the final answer a from the assistant's text and i alone.
The paper's cost grid is alpha in {0, 2, 20}, beta in {0.1, 0.7, 5.0} (section 4.2); the
metrics are in ``metrics/interactive.py``; steerability follows Appendix D.
"""

from .episodes import COST_GRID, SPLITS, Episode, cost_text, episodes, parse_costs, sequence
from .play import PLANS, play
from .protocol import Interactive
from .scoring import group_of, split_of
from .section import optimal_sequences, section, steerability
from .users import LLMUser, OfflineUser, User, ignores, leaks

__all__ = [
    "COST_GRID",
    "PLANS",
    "SPLITS",
    "Episode",
    "Interactive",
    "LLMUser",
    "OfflineUser",
    "User",
    "cost_text",
    "episodes",
    "group_of",
    "ignores",
    "leaks",
    "optimal_sequences",
    "parse_costs",
    "play",
    "section",
    "sequence",
    "split_of",
    "steerability",
]
