"""Conformance with the official scorers on real data from ../shared/data (skipped without it)."""

from __future__ import annotations

import json

import pytest

from pytest_ambigqa.metrics.coverage import str_em_hits
from pytest_ambigqa.metrics.text import strip_alce_citations
from pytest_ambigqa.schema import Answer
from pytest_ambigqa.suites import SUITES, LoadOptions, Scorers


@pytest.fixture(scope="module")
def asqa_items(shared_data):
    loaded = SUITES["asqa"].load(shared_data / "asqa" / "asqa_dev_sample40.jsonl", LoadOptions())
    return {item.id: item for item in loaded.items}


def official_outputs(shared_data):
    path = shared_data / "asqa" / "alce_outputs_official_str_em_sample20.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_din0s_sample_loads_completely(asqa_items):
    assert len(asqa_items) == 40
    assert all(len(item.long_answers) == 2 for item in asqa_items.values())


def test_str_em_matches_every_official_per_pair_result(shared_data, asqa_items):
    """ALCE's automatic_correctness_scores: one bool per qa_pair, all must match exactly."""
    pairs = 0
    for output in official_outputs(shared_data):
        item = asqa_items[output["sample_id"]]
        hits = str_em_hits(
            [i.short_answers for i in item.interpretations], strip_alce_citations(output["output"])
        )
        assert hits == output["automatic_correctness_scores"], output["sample_id"]
        pairs += len(hits)
    assert pairs == 68


def test_suite_item_str_em_equals_official_item_score(shared_data, asqa_items):
    for output in official_outputs(shared_data):
        item = asqa_items[output["sample_id"]]
        scores = SUITES["asqa"].score(item, Answer(text=output["output"]), Scorers()).scores
        official = output["automatic_correctness_scores"]
        assert scores["str_em"] == pytest.approx(sum(official) / len(official))
        assert scores["str_hit"] == float(all(official))


def test_condambigqa_release_loads_with_fragment_citations(shared_data):
    path = shared_data / "condambigqa" / "condambigqa_sample20.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    items = SUITES["condambigqa"].load(path, LoadOptions()).items
    assert [i.id for i in items] == [r["id"] for r in raw]
    for item, record in zip(items, raw, strict=True):
        assert len(item.passages) == len(record["ctxs"]) == 20
        for interp, prop in zip(item.interpretations, record["properties"], strict=True):
            numbers = [int(c["title"].split(".")[0]) for c in prop["citations"]]
            assert interp.passage_ids == tuple(dict.fromkeys(f"F{n}" for n in numbers))
            assert all(
                item.passages[n - 1].title in c["title"]
                for n, c in zip(numbers, prop["citations"], strict=True)
            )
