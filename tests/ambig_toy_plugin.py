"""A third-party extension of pytest-ambigqa, written as another package would write it: one
suite with two settings and a loader option of its own, one metric (which the built-in MARCH reports too) and one report writer, added
through the plugin hooks (``pytest_ambigqa.hookspecs``) without editing pytest-ambigqa.
Used by tests/test_layout.py."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_ambigqa.errors import DataError
from pytest_ambigqa.metrics import MetricSpec, Scored, Scorer
from pytest_ambigqa.metrics.text import normalize_answer
from pytest_ambigqa.report.writers import Writer
from pytest_ambigqa.schema import AmbigItem, Interpretation, Passage
from pytest_ambigqa.suites import LoaderOption, Setup, Suite

# The toy suite's own loader option: the key a file's answers are under (the plugin adds the
# option itself, pytest_addoption below; the run reads it because the suite declares it).
ANSWERS = LoaderOption(
    "--ambig-toy-answers",
    "toy_answers",
    lambda text: text or "answers",
    "the toy answers' key (--ambig-toy-answers)",
)


def pytest_addoption(parser):
    parser.getgroup("ambigqa").addoption(
        "--ambig-toy-answers", metavar="KEY", help="toy suite: the key its file's answers are under (answers)"
    )


def word_recall(golds: list[str], text: str) -> float:
    """Share of the gold answers' words present in the answer text, 0-1."""
    wanted = {w for gold in golds for w in normalize_answer(gold).split()}
    found = set(normalize_answer(text).split())
    return len(wanted & found) / len(wanted) if wanted else 0.0


class Toy(Suite):
    name = "toy"
    title = "Toy"
    metrics = ("word_recall", "length")
    sample_file = "ambig_toy_sample.json"
    settings = ("plain", "hinted")  # hinted: the gold answers handed over as a passage
    loader_options = (*Suite.loader_options, ANSWERS)

    def sample_path(self) -> Path:
        return Path(__file__).with_name(self.sample_file)

    def inputs(self, item, scorers):
        hinted = self.setting(scorers) == "hinted"
        return {"passages": [Passage("hint", "", item.long_answers[0])] if hinted else [], "conditions": []}

    def protocol(self, scorers, inputs, has_passages):
        """What each setting promises an item: the plain one nothing (closed book), so a
        system that reads passages runs there too, and gets none."""
        if self.setting(scorers) == "hinted":
            return Setup("hinted", "hinted: the gold answer as a passage", evidence="passages")
        return Setup("plain", "plain: the question only", evidence="none")

    def parse(self, path, text, options):
        key = options.get(ANSWERS)
        rows = json.loads(text)
        for n, row in enumerate(rows, 1):
            if key not in row:
                raise DataError(f"{path}: item {n} has no '{key}' (--ambig-toy-answers names the key)")
        return [
            (
                f"{path}: item {n}",
                AmbigItem(
                    suite=self.name,
                    id=row["id"],
                    question=row["question"],
                    interpretations=tuple(Interpretation(None, (a,)) for a in row[key]),
                    long_answers=(" and ".join(row[key]),),
                ),
            )
            for n, row in enumerate(rows, 1)
        ]


def _summary(card, duration):
    return "".join(
        f"{suite.name} {metric}: {summary.mean}\n"
        for suite in card.suites
        for metric, summary in suite.metrics.items()
    )


def pytest_ambigqa_suites():
    return [Toy()]


def _score(item, answer, scorers, usage) -> Scored:
    golds = [a for i in item.interpretations for a in i.short_answers]
    return Scored({"word_recall": word_recall(golds, answer.text)})


def pytest_ambigqa_metrics():
    return [
        MetricSpec(
            "word_recall",
            "Word recall",
            "toy plugin: share of gold answer words in the answer",
            factor=100,
            scorer=Scorer("word-recall", _score),
            suites=("march",),
        )
    ]


def pytest_ambigqa_writers():
    return [Writer("summary", "scorecard.txt", _summary)]
