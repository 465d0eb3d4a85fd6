"""MARCH's LLM-judge metrics: the mean of four criteria and each criterion, 0-5 (Park et al.
2025, "MARCH: Evaluating the Intersection of Ambiguity Interpretation and Multi-hop
Inference", Table 9). The judge's MARCH prompt (``judge/march.py``) scores them, in one
call per item and seed."""

from __future__ import annotations

from .spec import Scored, Scorer, judged


def _judge(item, answer, scorers, usage) -> Scored:
    return scorers.judge.march(item, answer.text, usage).scored()


MARCH_JUDGE = Scorer("march-judge", _judge, needs="judge")

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
)
