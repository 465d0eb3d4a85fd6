"""Loaders for every real format, the bundled samples, bad input, and --ambig-limit sampling."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_ambigqa.errors import DataError
from pytest_ambigqa.schema import AMBIGUITY_TYPES, AmbigItem, Interpretation
from pytest_ambigqa.suites import SUITES, LoadOptions, stratified_sample

ASQA_ITEM = {
    "sample_id": "-42",
    "ambiguous_question": "Who sang the song?",
    "qa_pairs": [
        {
            "question": "Who sang it in 1964?",
            "short_answers": ["Simon & Garfunkel"],
            "context": "c1",
            "wikipage": "A",
        },
        {"question": "Who sang it in 2016?", "short_answers": ["Dami Im"], "context": "c2", "wikipage": "B"},
    ],
    "wikipages": [],
    "annotations": [{"long_answer": "Simon & Garfunkel in 1964; Dami Im in 2016.", "knowledge": []}],
}


def write(tmp_path: Path, name: str, data, *, lines: bool = False) -> Path:
    path = tmp_path / name
    if lines:
        path.write_text("\n".join(json.dumps(d) for d in data) + "\n", encoding="utf-8")
    else:
        path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return path


def load(suite: str, path: Path | None, **options):
    return SUITES[suite].load(path, LoadOptions(options))


@pytest.mark.parametrize("suite, minimum", [("march", 12), ("condambigqa", 10), ("asqa", 10)])
def test_bundled_samples_load(suite, minimum):
    loaded = load(suite, None)
    assert loaded.is_sample and len(loaded.items) >= minimum
    assert all(item.interpretations for item in loaded.items)
    if suite == "march":
        assert set(Counter(i.ambiguity_type for i in loaded.items)) == set(AMBIGUITY_TYPES)
    if suite != "asqa":
        assert all(item.passages for item in loaded.items)


def test_bundled_oracle_answers_contain_every_short_answer():
    """The sample's long answers are consistent with its short answers (STR-EM 1 for the oracle)."""
    from pytest_ambigqa.baselines import oracle
    from pytest_ambigqa.suites import Scorers

    for name in ("march", "asqa"):
        for item in load(name, None).items:
            scores = SUITES[name].score(item, oracle(item.question, item), Scorers()).scores
            assert scores["str_em"] == 1.0, item.key


def test_asqa_official_layout_and_split(tmp_path):
    other = dict(ASQA_ITEM, sample_id="7")
    path = write(tmp_path, "ASQA.json", {"train": {"7": other}, "dev": {"-42": ASQA_ITEM}})
    (item,) = load("asqa", path).items
    assert item.id == "-42" and item.question == "Who sang the song?"
    assert [i.short_answers for i in item.interpretations] == [("Simon & Garfunkel",), ("Dami Im",)]
    assert item.interpretations[0].context == "c1"
    assert item.passages == ()  # gold contexts are never handed to systems
    assert load("asqa", path, split="train").items[0].id == "7"
    with pytest.raises(DataError, match=r"ASQA.json: no split 'test' \(it has dev, train\)"):
        load("asqa", path, split="test")


def test_asqa_din0s_jsonl(tmp_path):
    path = write(tmp_path, "dev.jsonl", [ASQA_ITEM, dict(ASQA_ITEM, sample_id="8")], lines=True)
    items = load("asqa", path).items
    assert [i.id for i in items] == ["-42", "8"]
    assert items[0].long_answers == ("Simon & Garfunkel in 1964; Dami Im in 2016.",)


def test_asqa_alce_docs_become_passages(tmp_path):
    alce = {k: v for k, v in ASQA_ITEM.items() if k not in ("ambiguous_question", "annotations")}
    alce |= {
        "question": "Who sang the song?",
        "answer": "Simon & Garfunkel and Dami Im.",
        "docs": [
            {
                "id": "11",
                "title": "Sounds",
                "text": "Simon & Garfunkel recorded it.",
                "score": 0.9,
                "answers_found": [1, 0],
            },
            {
                "id": "12",
                "title": "Dami",
                "text": "Dami Im sang at Eurovision.",
                "score": 0.8,
                "answers_found": [0, 1],
            },
        ],
    }
    (item,) = load("asqa", write(tmp_path, "asqa_eval_gtr_top100.json", [alce])).items
    assert [p.id for p in item.passages] == ["11", "12"] and item.passages[0].score == 0.9
    assert [i.passage_ids for i in item.interpretations] == [("11",), ("12",)]
    assert item.long_answers == ("Simon & Garfunkel and Dami Im.",)


def test_condambigqa_fragments_and_gold_citations(tmp_path):
    raw = {
        "id": "u1",
        "question": "When did the US leave the gold standard?",
        "properties": [
            {
                "condition": "Domestic",
                "groundtruth": "1933",
                "citations": [{"title": "2. Gold", "text": "x"}],
            },
            {
                "condition": "International",
                "groundtruth": "1971",
                "citations": [{"title": "Untitled", "text": "y"}],
            },
        ],
        "ctxs": [{"title": "A", "text": "a", "score": 1.5}, {"title": "Gold", "text": "b", "score": 1.2}],
    }
    (item,) = load("condambigqa", write(tmp_path, "c.json", [raw])).items
    assert [p.id for p in item.passages] == ["F1", "F2"]
    assert item.interpretations[0] == Interpretation(None, ("1933",), ("F2",), condition="Domestic")
    assert item.interpretations[1].passage_ids == ()
    assert item.conditions == ["Domestic", "International"]


def _condambigqa(**prop) -> dict:
    prop = {"condition": "c", "groundtruth": "g", "citations": [{"title": "1. A", "text": "a"}], **prop}
    return {"id": "u1", "question": "q?", "properties": [prop], "ctxs": [{"title": "A", "text": "a"}]}


def test_condambigqa_release_value_shapes(tmp_path):
    """The 200 release stores some answers as lists of strings, and some properties with no
    citations and an extra 'reason'; a list is one answer written in parts."""
    parts = ["'Peanut Butter Jelly Time' became a meme, ", " made by the Buckwheat Boyz.  "]
    raw = _condambigqa(groundtruth=parts, citations=[], reason="")
    (item,) = load("condambigqa", write(tmp_path, "c.json", [raw])).items
    assert item.interpretations[0].short_answers == (
        "'Peanut Butter Jelly Time' became a meme, made by the Buckwheat Boyz.",
    )
    assert item.interpretations[0].passage_ids == ()
    (item,) = load("condambigqa", write(tmp_path, "c.json", [_condambigqa(condition=["In", "parts"])])).items
    assert item.conditions == ["In parts"]


@pytest.mark.parametrize(
    "prop, message",
    [
        (
            {"groundtruth": []},
            r"c.json:1 \(item 'u1'\), properties\[0\]: field 'groundtruth' is an empty list",
        ),
        ({"groundtruth": ["a", 3]}, r"properties\[0\]: 'groundtruth'\[1\] must be a string, got int"),
        ({"groundtruth": {"a": 1}}, r"properties\[0\]: field 'groundtruth' must be a string, got dict"),
        ({"condition": None}, r"properties\[0\]: missing field 'condition'"),
        ({"citations": [{"text": "no title"}]}, r"citations\[0\]: missing field 'title'"),
    ],
)
def test_condambigqa_wrong_shapes_name_the_place(tmp_path, prop, message):
    path = tmp_path / "c.json"
    path.write_text(json.dumps([_condambigqa(**prop)]), encoding="utf-8")
    with pytest.raises(DataError, match=message):
        load("condambigqa", path)


def test_march_field_mapping(tmp_path):
    raw = {
        "qid": "m1",
        "query": "What is the capital of the country with Europe's highest mountain?",
        "type": "general",
        "clarifications": [
            {"clarified": "... Mount Elbrus?", "answers": ["Moscow"], "passage_ids": ["p1"]},
            {"clarified": "... Mont Blanc?", "answers": ["Paris", "Rome"], "passage_ids": []},
        ],
        "long_answer": "Moscow for Elbrus; Paris or Rome for Mont Blanc.",
        "passages": [{"id": "p1", "title": "Elbrus", "text": "Elbrus is in Russia."}],
    }
    fields = {
        "id": "qid",
        "question": "query",
        "ambiguity_type": "type",
        "interpretations": "clarifications",
        "interpretations.question": "clarified",
        "interpretations.short_answers": "answers",
    }
    (item,) = load("march", write(tmp_path, "m.json", [raw]), march_fields=fields).items
    assert item.id == "m1" and item.ambiguity_type == "constraint"  # MIRAGE's "general"
    assert item.interpretations[1].short_answers == ("Paris", "Rome")


@pytest.mark.parametrize(
    "text, message",
    [
        ('[{"id": "a"}\n  {"id": "b"}]', r"m.json:2: invalid JSON \(expected ',' or '\]'\)"),
        ('[\n{"id": "a", "question": "q"}\n]', r"m.json:2 \(item 'a'\): missing field 'ambiguity_type'"),
        ("", r"m.json: the file is empty"),
        ("[]", r"m.json: no MARCH items found"),
        ('{"id": 1}\n{"id": \n', r"m.json:2: invalid JSON \(Expecting value, column 8\)"),
    ],
)
def test_march_bad_files_name_file_and_line(tmp_path, text, message):
    path = tmp_path / "m.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataError, match=message):
        load("march", path)


def _march(item_id: str, kind: str = "semantic", **extra) -> dict:
    return {
        "id": item_id,
        "question": "q?",
        "ambiguity_type": kind,
        "long_answer": "a",
        "interpretations": [{"question": "q1?", "short_answers": ["a"]}],
        **extra,
    }


def test_march_semantic_errors(tmp_path):
    with pytest.raises(DataError, match=r"m.json:\d+: duplicate item id 'x' \(first at .*m.json:2\)"):
        load("march", write(tmp_path, "m.json", [_march("x"), _march("x")]))
    with pytest.raises(
        DataError, match=r"ambiguity_type 'lexical' is not one of semantic, syntactic, constraint"
    ):
        load("march", write(tmp_path, "m.json", [_march("x", "lexical")]))
    bad = _march("y")
    bad["interpretations"][0]["passage_ids"] = ["p9"]
    with pytest.raises(DataError, match=r"interpretations\[0\]: passage_ids \['p9'\] are not among"):
        load("march", write(tmp_path, "m.json", [bad]))
    with pytest.raises(DataError, match=r"field 'short_answers' must be a list, got str"):
        bad["interpretations"][0] = {"question": "q", "short_answers": "a"}
        load("march", write(tmp_path, "m.json", [bad]))
    with pytest.raises(DataError, match=r"no such file"):
        load("march", tmp_path / "absent.json")


def test_data_file_is_never_modified(tmp_path):
    path = write(tmp_path, "m.json", [_march("x"), _march("y")])
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    load("march", path)
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


def _items(kinds: list[str]) -> list[AmbigItem]:
    return [
        AmbigItem("march", str(n), "q", (Interpretation("q", ("a",)),), ambiguity_type=k)
        for n, k in enumerate(kinds)
    ]


def test_stratified_sample_keeps_proportions_and_order():
    items = _items(["semantic"] * 50 + ["syntactic"] * 30 + ["constraint"] * 20)
    chosen = stratified_sample(items, 10, seed=3)
    assert Counter(i.ambiguity_type for i in chosen) == {"semantic": 5, "syntactic": 3, "constraint": 2}
    assert [int(i.id) for i in chosen] == sorted(int(i.id) for i in chosen)
    assert chosen == stratified_sample(items, 10, seed=3)
    assert chosen != stratified_sample(items, 10, seed=4)


@given(
    st.lists(st.sampled_from([*AMBIGUITY_TYPES, None]), min_size=1, max_size=60),
    st.integers(1, 70),
    st.integers(0, 5),
)
def test_stratified_sample_size_and_membership(kinds, limit, seed):
    items = _items(kinds)
    chosen = stratified_sample(items, limit, seed)
    assert len(chosen) == min(limit, len(items))
    assert len({i.id for i in chosen}) == len(chosen)
    total = Counter(kinds)
    for kind, count in Counter(i.ambiguity_type for i in chosen).items():
        assert abs(count - limit * total[kind] / len(items)) < 1 + 1e-9 or limit >= len(items)
