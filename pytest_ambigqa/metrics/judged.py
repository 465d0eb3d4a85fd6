"""The LLM-judge metrics of MARCH and ASQA.

MARCH's: the mean of four criteria and each criterion, 0-5 (Park et al. 2025, "MARCH:
Evaluating the Intersection of Ambiguity Interpretation and Multi-hop Inference", Table 9),
scored by the judge's MARCH prompt (``judge/march.py``) in one call per item and seed.
ASQA's: the utility of the answer, 1-5, the criterion of ALCE's human evaluation (Gao et al.
2023; ``judge/asqa.py``); an item without an answer counts as 0, below the scale,
as every judged metric counts it (in the denominator, never dropped)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .spec import Scored, Scorer, judged

if TYPE_CHECKING:
    from ..models.usage import Usage
    from ..schema import AmbigItem, Answer
    from .scoring import Scorers


def _judge(item: AmbigItem, answer: Answer, scorers: Scorers, usage: Usage) -> Scored:
    """MARCH's four criteria and their mean, one judge call per seed (``judge/march.py``)."""
    return scorers.judge.march(item, answer.text, usage).scored()


MARCH_JUDGE = Scorer("march-judge", _judge, needs="judge")


def _utility(item: AmbigItem, answer: Answer, scorers: Scorers, usage: Usage) -> Scored:
    """ASQA's utility, 1-5, as ALCE's human evaluation rates it (``judge/asqa.py``)."""
    return scorers.judge.asqa(item, answer.text, usage).scored()


ASQA_JUDGE = Scorer("asqa-judge", _utility, needs="judge")

# The metrics of this module, by the names options and reports use.
SPECS = (
    judged("judge", "LLM judge", "MARCH Table 9, mean of the 4 criteria, 0-5", MARCH_JUDGE, scale=5),
    judged("judge_relevance", "Judge: relevance", "MARCH Table 9 criterion, 0-5", MARCH_JUDGE, scale=5),
    judged("judge_faithfulness", "Judge: faithfulness", "MARCH Table 9 criterion, 0-5", MARCH_JUDGE, scale=5),
    judged(
        "judge_informativeness",
        "Judge: informativeness",
        "MARCH Table 9 criterion, 0-5",
        MARCH_JUDGE,
        scale=5,
    ),
    judged("judge_correctness", "Judge: correctness", "MARCH Table 9 criterion, 0-5", MARCH_JUDGE, scale=5),
    judged(
        "judge_utility",
        "Judge: utility",
        "ALCE human-evaluation criterion (Gao et al. 2023), 1-5",
        ASQA_JUDGE,
        scale=5,
    ),
)
