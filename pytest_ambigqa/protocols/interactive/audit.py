"""The simulated users' audit: labelled (clarifying question, reading, expected reply kind)
cases, and a user's precision and recall on them.

The paper's user answers a clarifying question only from its reading and says it does not
know otherwise (Berant, Chen, Fisch et al. 2025, "Learning Steerable Clarification Policies
with Collaborative Self-play", section 3.1 and Appendix E.2). A reward earned by clarifying
is only as good as that user, so each of ours is measured against this set: "answer" is the
positive class; precision is the share of its answers that the question called for, recall
the share of called-for answers it gave.

Per ambiguous item and reading, :func:`cases` asks questions of several kinds: irrelevant
ones, another item's readings offered, all of the item's readings offered, its own reading
or another of the item's named (yes or no), "which one do you mean?", and the questions
written for the bundled samples in ``user_audit.json`` (the aspect the readings differ in,
"which film?", and aspects they do not decide, "the lead or a supporting role?"). Only a
reading that adds something to the question can answer ("answer" else "do not know").

``pytest-ambigqa audit-user --model M --base-url URL`` measures the LLM user against a
server (the bundled samples, and any data files given).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ...schema import AmbigItem
from .episodes import Episode
from .users import DO_NOT_KNOW, User, distinguishing, says_do_not_know

# Questions no reading of any item answers: the paper's "hard cover or soft cover?" and ours.
IRRELEVANT = (
    "What is your favourite colour?",
    "Do you mean hard cover or soft cover?",
    "Would you like the answer in French?",
    "Is this for a school assignment?",
    "Do you want a short answer or a long one?",
)


@dataclass(frozen=True)
class Case:
    item: AmbigItem
    interpretation: int
    question: str
    kind: str
    answer: bool  # expected: an answer (True) or "I do not know" (False)

    @property
    def episode(self) -> Episode:
        """The ambiguous episode of this reading that the question is asked in."""
        return Episode(self.item.key, self.interpretation, True, self.item.question, 0, 0)


def written() -> dict[str, dict[str, dict[str, list[str]]]]:
    """The questions written for the bundled samples: suite, item id, expected kind."""
    return json.loads(resources.files(__package__).joinpath("user_audit.json").read_text("utf-8"))


def _offer(options: Sequence[str]) -> str:
    return f"Do you mean {', '.join(options[:-1])} or {options[-1]}?" if len(options) > 1 else ""


def _said(item: AmbigItem) -> list[str]:
    """What tells each reading apart, as the offline user would say it."""
    return [
        distinguishing(item, Episode(item.key, n, True, item.question, 0, 0))
        for n in range(len(item.interpretations))
    ]


def cases(items: Sequence[AmbigItem], questions: dict[str, dict[str, list[str]]] | None = None) -> list[Case]:
    """The labelled cases of ``items`` (their ambiguous ones), with ``questions`` (item id:
    expected kind: questions) written for them."""
    ambiguous = [item for item in items if len(item.interpretations) > 1]
    out: list[Case] = []
    for position, item in enumerate(ambiguous):
        said = _said(item)
        offered = [s for s in said if s != DO_NOT_KNOW]
        other = ambiguous[(position + 1) % len(ambiguous)]
        theirs = [s for s in _said(other) if s != DO_NOT_KNOW] if other is not item else []
        own_questions = (questions or {}).get(item.id, {})
        for n, words in enumerate(said):
            adds = words != DO_NOT_KNOW
            asked = [(q, "irrelevant", False) for q in IRRELEVANT]
            asked.append((_offer(theirs), "offers another item's readings", False))
            asked.append((_offer(offered), "offers the readings", adds))
            asked.append((f"Do you mean {words}?" if adds else "", "names its reading", adds))
            another = said[(n + 1) % len(said)]
            asked.append(
                (f"Do you mean {another}?" if another != DO_NOT_KNOW else "", "names another reading", adds)
            )
            asked.append(("Which one do you mean?", "which one", adds))
            asked += [(q, "written: answer", adds) for q in own_questions.get("answer", [])]
            asked += [(q, "written: do not know", False) for q in own_questions.get("do not know", [])]
            out += [Case(item, n, q, kind, answer) for q, kind, answer in asked if q]
    return out


def measure(user: User, audit: Sequence[Case]) -> dict[str, float | int]:
    """``user``'s precision and recall of "answer" on ``audit``, and how many cases (and
    which were missed: expected an answer and declined, or answered one it could not)."""
    pairs = [(not says_do_not_know(user.reply(c.item, c.episode, c.question)), c.answer) for c in audit]
    hits = sum(said and wanted for said, wanted in pairs)
    return {
        "cases": len(audit),
        "answer cases": sum(wanted for _, wanted in pairs),
        "precision": hits / max(1, sum(said for said, _ in pairs)),
        "recall": hits / max(1, sum(wanted for _, wanted in pairs)),
        "answered wrongly": sum(said and not wanted for said, wanted in pairs),
        "declined wrongly": sum(wanted and not said for said, wanted in pairs),
    }


def llm_audit(model: str, base_url: str | None, data: Sequence[str]) -> int:
    """Measure the LLM user against a server: the bundled samples' audit, and the cases
    generated from each ``SUITE=PATH`` data file (``pytest-ambigqa audit-user``)."""
    from ...errors import UsageError
    from ...models.chat import ChatClient, ChatSettings
    from ...suites import SUITES, LoadOptions
    from .users import LLMUser

    bundled = written()  # the suites whose samples have written audit cases, in the registry's order
    sources: list[tuple[str, Path | None]] = [(name, None) for name in SUITES if name in bundled]
    for spec in data:
        name, _, path = spec.partition("=")
        if name.lower() not in SUITES or not path:
            raise UsageError(f"--data {spec}: write SUITE=PATH, SUITE one of {', '.join(sorted(SUITES))}")
        sources.append((name.lower(), Path(path)))
    user = LLMUser(ChatClient(ChatSettings(model, base_url, role="user"), None))
    for name, file in sources:
        items = SUITES[name].load(file, LoadOptions()).items
        audit = cases(items, bundled.get(name) if file is None else None)
        print(name, file or "bundled sample", json.dumps(measure(user, audit)))
    return 0
