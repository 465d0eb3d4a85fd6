"""The MARCH LLM judge: four criteria, 0-5 each (Park et al. 2025,
"MARCH: Evaluating the Intersection of Ambiguity Interpretation and Multi-hop Inference",
section 5, Table 9, Appendix F).

The judge sees the question, each clarified question with its gold short answers, the
gold long answer, and the system's long answer; it scores Relevance, Faithfulness,
Informativeness and Correctness with integers 0-5. The paper reports their mean.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from ..models.batch import Deferrals
from ..models.usage import Usage
from ..schema import AmbigItem
from .judgement import Judgement

if TYPE_CHECKING:
    from . import Judge

# Table 9 of the MARCH paper: the human protocol the LLM judge is validated against (F.1).
CRITERIA = {
    "relevance": "Does the long answer fully address both clarified queries and include all relevant "
    "short answers, without digression?",
    "faithfulness": "Is the answer consistent with the intent and facts in the original query, clarified "
    "queries, and short answers?",
    "informativeness": "Does the answer provide additional useful background, explanations, or actionable "
    "guidance to fulfill the user's needs?",
    "correctness": "Are all facts accurate, with no errors or omissions in the key information?",
}

SYSTEM = (
    "You are an impartial judge of answers to ambiguous multi-hop questions. Score the candidate "
    "long answer on each criterion with an integer from 0 (worst) to 5 (best), using the reference "
    "material. Reply with only a JSON object: "
    '{"relevance": int, "faithfulness": int, "informativeness": int, "correctness": int}.'
)

TEMPLATE = """Question: {question}

Clarified questions and their gold short answers:
{interpretations}

Gold long answer: {long_answer}

Candidate long answer: {answer}

Criteria:
{criteria}"""

# The reply's JSON schema, asked with the server's structured output as the methods ask theirs.
SCHEMA = {
    "title": "march_criteria",
    "type": "object",
    "properties": {name: {"type": "integer", "minimum": 0, "maximum": 5} for name in CRITERIA},
    "required": list(CRITERIA),
}

TEMPLATE_HASH = hashlib.sha256((SYSTEM + TEMPLATE + repr(sorted(CRITERIA.items()))).encode()).hexdigest()[:16]


def messages(item: AmbigItem, answer: str) -> list[dict[str, str]]:
    interpretations = "\n".join(
        f"{n}. {i.question} -> {' / '.join(i.short_answers)}" for n, i in enumerate(item.interpretations, 1)
    )
    criteria = "\n".join(f"- {name}: {text}" for name, text in CRITERIA.items())
    user = TEMPLATE.format(
        question=item.question,
        interpretations=interpretations,
        long_answer=item.long_answers[0] if item.long_answers else "(none)",
        answer=answer or "(empty)",
        criteria=criteria,
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def check(data: Any) -> str | None:
    """None when ``data`` has the four criteria as integers 0-5, else what is wrong."""
    if not isinstance(data, dict):
        return "it is not a JSON object"
    problems = [
        f"'{name}' must be an integer from 0 to 5"
        for name in CRITERIA
        if isinstance(data.get(name), bool) or not isinstance(data.get(name), int) or not 0 <= data[name] <= 5
    ]
    return "; ".join(problems) or None


def scores(data: dict[str, int]) -> dict[str, float]:
    """Item scores on the 0-5 scale: each criterion, and ``judge``, their mean."""
    out = {f"judge_{name}": float(data[name]) for name in CRITERIA}
    out["judge"] = sum(out.values()) / len(CRITERIA)
    return out


def judgement(judge: Judge, item: AmbigItem, text: str, usage: Usage) -> Judgement:
    """The four criteria for ``text``, once per judge seed (judge variance with K samples)."""
    samples: dict[str, list[float]] = {}
    deferrals = Deferrals()  # batch judging records every seed's call in one round
    for seed in judge.seeds:
        reply = deferrals.call(
            judge.client.chat_json, messages(item, text), check, usage, seed=seed, schema=SCHEMA
        )
        if reply is None:
            continue
        for metric, value in scores(reply[0]).items():
            samples.setdefault(metric, []).append(value)
    deferrals.close()
    return Judgement(samples)
