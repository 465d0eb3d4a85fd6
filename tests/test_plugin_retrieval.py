"""Retrieval through pytest: the retriever fixture and argument, evidence coverage, xdist."""

from __future__ import annotations

import json

import pytest

from fixtures.process import ambig_run
from pytest_ambigqa.retrieval.cache import BUILD_LOG
from pytest_ambigqa.suites import SUITES, LoadOptions

MARCH = SUITES["march"].load(None, LoadOptions()).items

USES_RETRIEVER = """
def answer(question, retriever):
    hits = retriever(question, k=3)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    return {"text": " ".join(h.text for h in hits), "citations": [h.id for h in hits]}
"""


def run(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict]:
    return ambig_run(pytester, "--ambig-cache-dir=indexes", *args)


def builds(pytester: pytest.Pytester) -> list[dict]:
    log = pytester.path / "indexes" / BUILD_LOG
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_system_gets_a_working_bm25_retriever(pytester):
    pytester.makepyfile(mysys=USES_RETRIEVER)
    result, card = run(pytester, "--ambig-suite=march", "--ambig-system=mysys:answer")
    result.assert_outcomes(passed=len(MARCH))
    result.stdout.fnmatch_lines(
        ["ambigqa retrieval: bm25 top-10 over * passages (suites: march); indexes in *"]
    )
    assert card["system"]["inputs"] == ["question", "retriever"]
    cited = card["items"][0]["answer"]["citations"]
    assert len(cited) == 3 and all(c.startswith("march/") for c in cited)
    assert len(builds(pytester)) == 1


def test_default_cache_lives_in_pytests_cache_directory(pytester):
    pytester.makepyfile(mysys=USES_RETRIEVER)
    pytester.runpytest(
        "--ambig-suite=march", "--ambig-system=mysys:answer", "--ambig-limit=1"
    ).assert_outcomes(passed=1)
    assert (pytester.path / ".pytest_cache" / "d" / "ambigqa" / BUILD_LOG).exists()


def test_evidence_coverage_report(pytester):
    result, card = run(
        pytester, "--ambig-suite=march,condambigqa", "--ambig-retrieval-report", "--ambig-top-k=2"
    )
    result.stdout.fnmatch_lines(
        [
            "  evidence coverage: recall@2 of gold passages, bm25 over * passages (suites: march, condambigqa)",
            "  slice * items * original question * clarified questions *",
            "  all * 13 *",
            "  semantic *",
        ]
    )
    assert card["retrieval"]["k"] == 2 and card["retrieval"]["retriever"] == "bm25"
    march = next(s for s in card["suites"] if s["name"] == "march")
    names = [e["name"] for e in march["evidence"]]
    assert names == ["all", "semantic", "syntactic", "constraint"]
    overall = march["evidence"][0]
    assert overall["items"] == len(MARCH) and 0 <= overall["original"]["mean"] <= 100
    item = card["items"][0]
    assert set(item["evidence"]) == {"original", "clarified", "interpretations"}
    markdown = (pytester.path / "report" / "scorecard.md").read_text()
    assert "Evidence coverage: recall@2 of gold passages" in markdown


def test_dense_under_xdist_builds_one_index(pytester):
    """The issue's 'done when': -n 2 with dense retrieval builds one index, shared."""
    result, card = run(
        pytester,
        "--ambig-suite=march",
        "--ambig-retriever=dense",
        "-n",
        "2",
        "--ambig-system=retrieval",
        "--ambig-retrieval-report",
    )
    result.assert_outcomes(passed=len(MARCH))
    dense = [b for b in builds(pytester) if b["index"].startswith("dense-")]
    assert len(dense) == 1, builds(pytester)
    assert card["retrieval"]["retriever"] == "dense"
    march = card["suites"][0]
    assert march["evidence"][0]["items"] == len(MARCH)
    assert march["metrics"]["str_em"]["n"] == len(MARCH)
    assert all(r["answer"]["metadata"]["retrieved"] for r in card["items"])


def test_ambig_retriever_and_corpus_fixtures(pytester):
    pytester.makepyfile(
        test_mine="""
        def test_branches_are_reachable(ambig_item, ambig_retriever, ambig_corpus):
            assert len(ambig_corpus) > 0
            hits = ambig_retriever.batch([i.question for i in ambig_item.interpretations], k=5)
            assert all(len(h) == 5 for h in hits)
        """
    )
    result = pytester.runpytest("test_mine.py", "--ambig-suite=march", "--ambig-cache-dir=indexes")
    result.assert_outcomes(passed=len(MARCH))
    pytester.makepyfile(closed="def answer(question):\n    return 'no idea'\n")
    none = pytester.runpytest(
        "test_mine.py", "--ambig-suite=march", "--ambig-retriever=none", "--ambig-limit=1",
        "--ambig-system=closed:answer",
    )  # fmt: skip
    none.assert_outcomes(skipped=1)


def test_user_corpus(pytester):
    rows = [
        {"id": f"d{i}", "title": "Ford", "text": f"The Ford F-Series is a pickup, note {i}."}
        for i in range(4)
    ]
    pytester.path.joinpath("corpus.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    pytester.makepyfile(mysys=USES_RETRIEVER)
    result, card = run(
        pytester, "--ambig-suite=march", "--ambig-system=mysys:answer", "--ambig-corpus=corpus.jsonl"
    )
    result.assert_outcomes(passed=len(MARCH))
    assert card["items"][0]["answer"]["citations"] == ["d0", "d1", "d2"]


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--ambig-retriever=tfidf"],
            "ERROR: --ambig-retriever: 'tfidf' is not one of bm25, dense, hybrid, none",
        ),
        (["--ambig-top-k=0"], "ERROR: --ambig-top-k: 0 must be between 1 and 10000"),
        (["--ambig-corpus=nothing.jsonl"], "ERROR: --ambig-corpus: *nothing.jsonl: no such file"),
        (
            [
                "--ambig-system=oracle",
                "--ambig-retrieval-report",
                "--ambig-retriever=dense",
                "--ambig-embedder=/no/model",
            ],
            "ERROR: --ambig-retrieval-report: --ambig-embedder: '/no/model' is neither a model directory*",
        ),
        (
            ["--ambig-system=mysys:answer", "--ambig-retriever=none"],
            "ERROR: MARCH: the system 'mysys:answer' reads `retriever`, but this run has no evidence to give "
            "it under the open retrieval protocol: --ambig-retriever=none*",
        ),
        (
            ["--ambig-retrieval-report", "--ambig-retriever=none"],
            "ERROR: --ambig-retrieval-report needs a retriever*",
        ),
        (  # the default system, as a first run meets it: refused before any item, not per item
            ["--ambig-retriever=none"],
            "ERROR: MARCH: the system 'lexical baseline (pytest_ambigqa.baselines:lexical)' reads `retriever` and "
            "`passages`, but this run has no evidence to give it under the open retrieval protocol*",
        ),
    ],
)
def test_retrieval_usage_errors(pytester, args, message):
    pytester.makepyfile(mysys=USES_RETRIEVER)
    result = pytester.runpytest("--ambig-suite=march", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_empty_corpus_is_a_usage_error(pytester, shared_data):
    pytester.makepyfile(mysys=USES_RETRIEVER)
    data = shared_data / "asqa" / "asqa_dev_sample40.jsonl"  # the din0s layout ships no passages
    result = pytester.runpytest("--ambig-suite=asqa", f"--ambig-data={data}", "--ambig-system=mysys:answer")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: ASQA: the system 'mysys:answer' reads `retriever`, but this run has no evidence to give it "
            "under the open retrieval protocol: *asqa_dev_sample40.jsonl has no passages to search and no corpus "
            "was given (--ambig-corpus=PATH*"
        ]
    )
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_bm25_runs_never_import_torch(pytester):
    pytester.makeconftest(
        """
        import sys
        def pytest_sessionfinish(session):
            heavy = sorted(m for m in ("torch", "sentence_transformers", "faiss", "transformers") if m in sys.modules)
            print("HEAVY", heavy)
        """
    )
    pytester.makepyfile(mysys=USES_RETRIEVER)
    result = pytester.runpytest_subprocess(
        "--ambig-suite=march",
        "--ambig-system=mysys:answer",
        "--ambig-retrieval-report",
        "-s",
    )
    result.assert_outcomes(passed=len(MARCH))
    result.stdout.fnmatch_lines(["*HEAVY []"])


def test_a_retriever_that_cannot_open_fails_each_item_with_one_line(pytester):
    empty = [{"id": "a", "title": "", "text": "... !!!"}]  # no word to index
    pytester.path.joinpath("corpus.jsonl").write_text(json.dumps(empty[0]))
    pytester.makepyfile(mysys=USES_RETRIEVER)
    result, card = run(
        pytester,
        "--ambig-suite=march",
        "--ambig-system=mysys:answer",
        "--ambig-corpus=corpus.jsonl",
        "--ambig-limit=2",
    )
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(
        ["*ambigqa march-*: cannot open the bm25 retriever: ValueError: no passage has a word to index"] * 2
    )
    assert card["suites"][0]["errors"] == 2 and card["suites"][0]["missing"] == 0


def test_the_header_says_when_there_is_nothing_to_search(pytester):
    """The real ASQA dev file gives no passages: no "bm25 top-10 over 0 passages"."""
    record = {
        "sample_id": "-42",
        "ambiguous_question": "Who sang the song?",
        "qa_pairs": [
            {"question": "Who sang it in 1964?", "short_answers": ["Simon & Garfunkel"], "wikipage": "A"}
        ],
        "wikipages": [],
        "annotations": [{"long_answer": "Simon & Garfunkel sang it in 1964.", "knowledge": []}],
    }
    (pytester.path / "dev.jsonl").write_text(json.dumps(record) + "\n")
    pytester.makepyfile(mysys="def answer(question):\n    return 'Simon & Garfunkel'\n")
    result, _ = run(pytester, "--ambig-suite=asqa", "--ambig-data=dev.jsonl", "--ambig-system=mysys:answer")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["ambigqa retrieval: no passages to search (suites: asqa); --ambig-corpus gives some"]
    )
    result.stdout.no_fnmatch_line("*over 0 passages*")
