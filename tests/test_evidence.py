"""Issue 38: a system is never run on items it would silently get no evidence for; the header
says what the system actually received and why the protocol was chosen; items given less
than their protocol promises are counted; the papers' rows are comparable only for the data
they were computed on."""

from __future__ import annotations

import fnmatch
import json

import pytest
from pytest_ambigqa.baselines.llm import METHODS

from fixtures.hub import ASQA as HUB_ASQA
from fixtures.hub import FIRST as HUB_FIRST
from fixtures.process import ambig_run
from pytest_ambigqa.card import published
from pytest_ambigqa.suites import SUITES

ASQA_SAMPLE = json.loads(SUITES["asqa"].sample_path().read_text("utf-8"))

# What a system got, one JSON line a call: whether a retriever came, how many passages.
PROBE = """
import json

def record(question, retriever, passages):
    with open("received.jsonl", "a") as out:
        got = {"retriever": retriever is not None, "passages": len(passages or ())}
        if retriever is not None:
            got["hits"] = len(retriever(question, k=3))
        out.write(json.dumps(got) + "\\n")
    return "no idea"
"""


def asqa_file(pytester: pytest.Pytester, name: str = "asqa.jsonl", docs: bool = False) -> str:
    """Our bundled ASQA items in the din0s JSON Lines layout, with or without ALCE's docs."""
    rows = [item if docs else {k: v for k, v in item.items() if k != "docs"} for item in ASQA_SAMPLE]
    pytester.path.joinpath(name).write_text("\n".join(json.dumps(r) for r in rows) + "\n", "utf-8")
    return name


def corpus_file(pytester: pytest.Pytester) -> str:
    """A corpus of the ASQA sample's docs, for an open-retrieval run."""
    rows = {d["id"]: d for item in ASQA_SAMPLE for d in item["docs"]}
    pytester.path.joinpath("corpus.jsonl").write_text(
        "\n".join(json.dumps(r) for r in rows.values()), "utf-8"
    )
    return "corpus.jsonl"


def received(pytester: pytest.Pytester) -> list[dict]:
    path = pytester.path / "received.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


SIGNATURES = {
    "required retriever": "def answer(question, retriever):\n    return record(question, retriever, ())",
    "defaulted retriever": "def answer(question, retriever=None):\n    return record(question, retriever, ())",
    "defaulted passages": "def answer(question, passages=()):\n    return record(question, None, passages)",
    "the README's RAG system": (
        "def answer(question, retriever=None, passages=()):\n    return record(question, retriever, passages)"
    ),
    "keyword-only": (
        "def answer(question, *, passages=(), retriever=None):\n    return record(question, retriever, passages)"
    ),
    "a class": (
        "class Answer:\n    def __call__(self, question, passages=None, retriever=None):\n"
        "        return record(question, retriever, passages)\n\nanswer = Answer"
    ),
}


@pytest.mark.parametrize("signature", SIGNATURES, ids=list(SIGNATURES))
def test_no_evidence_stops_the_run_before_any_item(pytester, signature):
    pytester.makepyfile(mysys=PROBE + "\n\n" + SIGNATURES[signature])
    data = asqa_file(pytester)
    result, card = ambig_run(
        pytester, "--ambig-suite=asqa", f"--ambig-data={data}", "--ambig-system=mysys:answer"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.startswith("ERROR:")]
    assert len(errors) == 1, result.stderr.lines
    assert errors[0].startswith("ERROR: ASQA: the system 'mysys:answer' reads `")
    assert "--ambig-corpus" in errors[0] and "asqa.jsonl" in errors[0]
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert received(pytester) == [] and card == {}


@pytest.mark.parametrize("system", ["lexical", "retrieval"])
def test_the_baselines_that_read_evidence_are_refused_too(pytester, system):
    result = pytester.runpytest(
        "--ambig-suite=asqa", f"--ambig-data={asqa_file(pytester)}", f"--ambig-system={system}"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: ASQA: the system '* baseline *' reads `*--ambig-corpus*"])


EVIDENCE_READERS = [m for m in METHODS if not m.startswith("policy") and m not in ("closed-book", "cot")]


@pytest.mark.parametrize("method", EVIDENCE_READERS)
def test_every_llm_method_that_reads_evidence_is_refused(pytester, method):
    """Refused before any call: the model's URL is a closed port, and nothing is asked of it."""
    result = pytester.runpytest(
        "--ambig-suite=asqa",
        f"--ambig-data={asqa_file(pytester)}",
        f"--ambig-system=llm:{method}",
        "--ambig-llm-model=m",
        "--ambig-llm-base-url=http://127.0.0.1:9/v1",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: ASQA: the system 'llm:{method} *' reads `*--ambig-corpus*"])


def test_a_closed_book_system_runs_and_says_it_got_no_evidence(pytester):
    pytester.makepyfile(mysys="def answer(question):\n    return 'no idea'\n")
    data = asqa_file(pytester)
    result, card = ambig_run(
        pytester, "--ambig-suite=asqa", f"--ambig-data={data}", "--ambig-system=mysys:answer"
    )
    result.assert_outcomes(passed=len(ASQA_SAMPLE))
    result.stdout.fnmatch_lines(["  receives: question; no evidence given"])
    assert card["suites"][0]["protocol"]["received"] == ["question"]


def test_the_receives_line_is_what_the_system_got(pytester):
    """Open retrieval over a corpus: the header's line against what a probe system recorded."""
    pytester.makepyfile(mysys=PROBE + "\n\n" + SIGNATURES["the README's RAG system"])
    data, corpus = asqa_file(pytester), corpus_file(pytester)
    result, card = ambig_run(
        pytester,
        "--ambig-suite=asqa",
        f"--ambig-data={data}",
        f"--ambig-corpus={corpus}",
        "--ambig-system=mysys:answer",
    )
    result.assert_outcomes(passed=len(ASQA_SAMPLE))
    got = received(pytester)
    assert len(got) == len(ASQA_SAMPLE)
    assert all(g["retriever"] and g["hits"] == 3 and g["passages"] == 0 for g in got)
    passages = sum(1 for _ in (pytester.path / corpus).read_text().splitlines())
    line = f"  receives: question; retriever: bm25 over {passages} passages ({pytester.path / corpus}); passages: none"
    result.stdout.fnmatch_lines(["  protocol: open retrieval: systems get a retriever, no passages; *", line])
    assert card["suites"][0]["protocol"]["evidence"] == "retriever"


def test_given_docs_says_why_and_counts_items_short_of_evidence(pytester):
    """ALCE's layout with docs and a system that reads `passages`: given docs, chosen by the
    declared parameter; an item whose docs are missing is counted, per item and in total."""
    pytester.makepyfile(mysys=PROBE + "\n\n" + SIGNATURES["defaulted passages"])
    data = asqa_file(pytester, docs=True)
    rows = [json.loads(line) for line in (pytester.path / data).read_text().splitlines()]
    rows[2]["docs"] = []
    (pytester.path / data).write_text("\n".join(json.dumps(r) for r in rows), "utf-8")
    result, card = ambig_run(
        pytester, "--ambig-suite=asqa", f"--ambig-data={data}", "--ambig-system=mysys:answer"
    )
    result.assert_outcomes(passed=len(rows))
    counts = sorted(g["passages"] for g in received(pytester))
    assert counts == [0] + [5] * (len(rows) - 1)
    result.stdout.fnmatch_lines(
        [
            "  protocol: given docs: systems get the data file's retrieved docs (ALCE) (chosen as the system "
            "declares `passages` and the data file has retrieved docs); scorer: *",
            "  receives: question; passages: the data file's, 5 per item (1 item has none)",
            f"  evidence short: 1 of {len(rows)} items got less evidence than the protocol promises: "
            f"{rows[2]['sample_id']} (no passages in the data file)",
        ]
    )
    suite = card["suites"][0]
    assert suite["evidence_short"] == 1
    short = [i for i in card["items"] if "evidence_short" in i["details"]]
    assert [i["item_id"] for i in short] == [rows[2]["sample_id"]]


def test_condambigqa_closed_book_setting_is_not_refused(pytester):
    """The closed-book setting promises no evidence: a system that reads some still runs."""
    pytester.makepyfile(mysys=PROBE + "\n\n" + SIGNATURES["the README's RAG system"])
    result, card = ambig_run(
        pytester,
        "--ambig-suite=condambigqa",
        "--ambig-condambigqa-setting=closed-book",
        "--ambig-system=mysys:answer",
        "--ambig-limit=2",
    )
    result.assert_outcomes(passed=2)
    assert received(pytester) == [{"retriever": False, "passages": 0}] * 2
    result.stdout.fnmatch_lines(
        [
            "  receives: question; retriever: none (the setting gives no evidence); passages: none; no evidence given"
        ]
    )


# ---- "comparable" means comparable


def test_the_bundled_sample_is_context_with_the_reason(pytester):
    result, card = ambig_run(pytester, "--ambig-suite=march")
    result.assert_outcomes(passed=13)
    reason = "the bundled sample of 13 items written for this project, not the benchmark's"
    result.stdout.fnmatch_lines([f"  n/c: MARCH (Park et al., 2025), Table 3, 27 rows: {reason}"])
    assert "rows comparable" not in result.stdout.str()
    rows = card["suites"][0]["published"]
    assert rows and not any(r["comparable"] for r in rows)
    assert {r["reason"] for r in rows if r["same_protocol"]} == {reason}


def test_a_file_that_cannot_be_identified_is_context(pytester):
    pytester.makepyfile(mysys="def answer(question):\n    return 'no idea'\n")
    data = asqa_file(pytester)
    result, card = ambig_run(
        pytester, "--ambig-suite=asqa", f"--ambig-data={data}", "--ambig-system=mysys:answer"
    )
    result.stdout.fnmatch_lines(
        [
            "  n/c: MARCH (Park et al., 2025), Table 11, 21 rows: data not identified as a published release of ASQA*"
        ]
    )
    assert not any(r["comparable"] for r in card["suites"][0]["published"])


@pytest.mark.parametrize(
    "is_sample, release, ran, sampled, expected",
    [
        (
            True,
            None,
            13,
            False,
            "the bundled sample of 13 items written for this project, not the benchmark's",
        ),
        (False, None, 948, False, "data not identified as a published release of ASQA*"),
        (False, "ASQA dev split", 948, False, None),
        (
            False,
            "ASQA dev split",
            100,
            False,
            "100 of the 948 items of ASQA dev split (-k, --ambig-limit or a shard)*",
        ),
        (
            False,
            "ASQA dev split",
            100,
            True,
            None,
        ),  # a declared random sample, weighted back, with its interval
    ],
    ids=["bundled", "unidentified", "whole release", "limited", "sampled"],
)
def test_what_makes_data_unlike_the_papers(is_sample, release, ran, sampled, expected):
    total = 13 if is_sample else 948
    why = published.unlike("ASQA", is_sample, release, ran, total, sampled)
    if expected is None:
        assert why is None
    else:
        assert why is not None and fnmatch.fnmatch(why, expected), why


def test_an_endpoint_that_retrieves_for_itself_runs_and_is_sent_the_question(pytester, local_server):
    """An HTTP system declares no signature: it is sent what the protocol gives, and the
    question alone where it gives nothing (it may search for itself); the header says so."""
    server = local_server(lambda path, body: (200, {"text": "no idea"}))
    data = asqa_file(pytester)
    result, card = ambig_run(
        pytester, "--ambig-suite=asqa", f"--ambig-data={data}", f"--ambig-system={server.url}"
    )
    result.assert_outcomes(passed=len(ASQA_SAMPLE))
    assert {tuple(sorted(body)) for _, body in server.requests} == {("id", "question")}
    result.stdout.fnmatch_lines(["  receives: question; passages: none; no evidence given"])
    assert "evidence short" not in result.stdout.str()


# A known release (the stand-in Hub's din0s/asqa, 10 dev items at FIRST): its rows are
# comparable whole or as a declared random sample, context as a subset or another split.
RELEASE_RUNS = {
    "whole": ([], None),
    "a declared random sample": (["--ambig-sample=6"], None),
    "--ambig-limit": (["--ambig-limit=4"], "4 of the 10 items of ASQA dev split, din0s/asqa@*"),
    "-k": (["-k", "not 1003"], "9 of the 10 items of ASQA dev split, din0s/asqa@*"),
    "another split": (["--ambig-split=train"], "the train split of din0s/asqa@*; the papers report dev"),
}


@pytest.mark.parametrize("case", RELEASE_RUNS, ids=list(RELEASE_RUNS))
def test_a_known_release_is_comparable_whole_or_sampled(pytester, fake_hub, case):
    args, reason = RELEASE_RUNS[case]
    pytester.makepyfile(mysys="def answer(question):\n    return 'no idea'\n")
    result, card = ambig_run(
        pytester,
        "--ambig-suite=asqa",
        f"--ambig-data=hf://{HUB_ASQA}@{HUB_FIRST}",
        "--ambig-system=mysys:answer",
        "--ambig-metrics=str_em",
        *args,
    )
    assert result.ret == 0, result.stdout.str()
    rows = [r for r in card["suites"][0]["published"] if r["same_protocol"]]
    assert rows
    if reason is None:
        assert all(r["comparable"] for r in rows)
        result.stdout.fnmatch_lines(["  papers: MARCH (Park et al., 2025), Table 11, 21 rows comparable*"])
    else:
        assert not any(r["comparable"] for r in rows)
        assert all(fnmatch.fnmatch(r["reason"], reason) for r in rows), rows[0]["reason"]
        result.stdout.fnmatch_lines([f"  n/c: MARCH (Park et al., 2025), Table 11, 21 rows: {reason}"])


def test_a_conftest_system_is_checked_not_the_default_one(pytester):
    """An ``ambig_system`` fixture replaces the default system: a closed-book one runs on a
    file without passages, and a reading one is told on its items, not the lexical baseline."""
    data = asqa_file(pytester)
    pytester.makeconftest(
        "import pytest\n\n@pytest.fixture(scope='session')\ndef ambig_system():\n"
        "    return lambda question: 'no idea'\n"
    )
    result, card = ambig_run(pytester, "--ambig-suite=asqa", f"--ambig-data={data}")
    result.assert_outcomes(passed=len(ASQA_SAMPLE))
    assert "reads `" not in result.stdout.str() + result.stderr.str()
    pytester.makeconftest(
        "import pytest\n\n@pytest.fixture(scope='session')\ndef ambig_system():\n"
        "    def answer(question, passages=()):\n        return 'no idea'\n    return answer\n"
    )
    result = pytester.runpytest("--ambig-suite=asqa", f"--ambig-data={data}", "--ambig-limit=2")
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["*ambig_system fixture: ASQA: the system '*' reads `passages`*"])


def test_a_setting_that_withholds_the_files_passages_says_so(pytester):
    """MARCH's file has its gold passages; open retrieval hands none over."""
    pytester.makepyfile(mysys="def answer(question, passages):\n    return 'no idea'\n")
    result = pytester.runpytest("--ambig-suite=march", "--ambig-system=mysys:answer")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: MARCH: *open retrieval protocol hands over none of *march_sample.json's passages*"]
    )


def test_a_scorecard_from_before_is_judged_when_read(pytester):
    """A card written before the data was judged: its bundled rows read as context, and
    what its system received is not made up."""
    from pytest_ambigqa.card.scorecard import Scorecard
    from pytest_ambigqa.report.view import published_lines, published_rows, received_line

    result, card = ambig_run(pytester, "--ambig-suite=march", "--ambig-limit=3")
    for suite in card["suites"]:
        for key in ("unlike", "easier", "received", "evidence", "chosen"):
            suite["protocol"].pop(key, None)
    old = Scorecard.from_json({**card, "schema_version": 1}).suites[0]  # version 1's writers
    assert received_line(old.protocol) == "not recorded (a scorecard written before it was)"
    lines = published_lines(old, published_rows(old))
    assert lines and all("the bundled sample of 13 items" in line for line in lines)
