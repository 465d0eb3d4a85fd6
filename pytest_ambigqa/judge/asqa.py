"""The ASQA utility judge: how useful the answer is for the question, 1-5.

The human evaluation of ALCE (Gao et al. 2023, "Enabling Large Language Models to Generate
Text with Citations", arXiv 2305.14627) asks annotators to rate the
utility of an answer for the question on a 1-5 Likert scale; its released ratings of ASQA
outputs are what ``--ambig-human-labels`` calibrates this judge against (docs/how-to/judges.md,
"Calibration against human labels"). The wording below is ours, after that criterion; the
judge sees the question and the answer only, as the annotators rating utility did.
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

SYSTEM = (
    "You are an impartial judge of answers to questions that may be ambiguous. Rate how useful "
    "the answer is to a person who asked the question, with an integer from 1 to 5: 1 not useful at "
    "all (off-topic, wrong or no answer), 2 slightly useful, 3 somewhat useful (partly answers it), "
    "4 useful, 5 very useful (answers the question fully, covering its plausible readings). Reply "
    'with only a JSON object: {"utility": int}.'
)

TEMPLATE = """Question: {question}

Answer: {answer}"""

# The reply's JSON schema, asked with the server's structured output as the methods ask theirs.
SCHEMA = {
    "title": "asqa_utility",
    "type": "object",
    "properties": {"utility": {"type": "integer", "minimum": 1, "maximum": 5}},
    "required": ["utility"],
}

TEMPLATE_HASH = hashlib.sha256((SYSTEM + TEMPLATE).encode()).hexdigest()[:16]


def messages(item: AmbigItem, answer: str) -> list[dict[str, str]]:
    user = TEMPLATE.format(question=item.question, answer=answer or "(empty)")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def check(data: Any) -> str | None:
    """None when ``data`` holds ``utility`` as an integer 1-5, else what is wrong."""
    if not isinstance(data, dict):
        return "it is not a JSON object"
    value = data.get("utility")
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 5:
        return "'utility' must be an integer from 1 to 5"
    return None


def judgement(judge: Judge, item: AmbigItem, text: str, usage: Usage) -> Judgement:
    """The utility of ``text``, once per judge seed (judge variance with K samples)."""
    samples = []
    deferrals = Deferrals()  # batch judging records every seed's call in one round
    for seed in judge.seeds:
        reply = deferrals.call(
            judge.client.chat_json, messages(item, text), check, usage, seed=seed, schema=SCHEMA
        )
        if reply is not None:
            samples.append(float(reply[0]["utility"]))
    deferrals.close()
    return Judgement({"judge_utility": samples})
