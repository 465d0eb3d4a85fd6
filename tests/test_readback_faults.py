"""The fault matrix, second part: what a run reads back from disk, what it sends, what it writes.

Seven classes of hostile input (issue 23), each across the paths it can reach (serial,
``-n 2``, ``compare``, ``--ambig-baseline``, ``merge``, ``--ambig-rescore``, ``--ambig-resume``).
Each case asserts the invariant: only the affected item or file is touched, with one clear
reason; a gate decides as it does on clean data, or the file is refused; no secret is in any
file the run wrote or in its output.
"""

from __future__ import annotations

import base64
import json
import math
import sqlite3
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixtures.network import GUARD
from fixtures.process import ambig_run, run_pytest
from pytest_ambigqa.card import gates
from pytest_ambigqa.card.compare import Comparison, Margin, Row, worse
from pytest_ambigqa.card.saved import read_card
from pytest_ambigqa.card.scorecard import MetricSummary, SuiteCard
from pytest_ambigqa.cli import main as cli
from pytest_ambigqa.errors import ScorecardError
from pytest_ambigqa.output import scrub, sent_url
from pytest_ambigqa.suites import SUITES, LoadOptions

MARCH = SUITES["march"].sample_path()


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """Clean scorecards of the MARCH sample: the oracle (the base), the lexical baseline
    (worse: a regression gate against the oracle fails on clean data), and the lexical
    baseline's two shards."""
    root = tmp_path_factory.mktemp("runs")
    out = {}
    for name, args in {
        "oracle": ["--ambig-system=oracle"],
        "lexical": ["--ambig-system=lexical"],
        "shard1": ["--ambig-system=lexical", "--ambig-shard=1/2"],
        "shard2": ["--ambig-system=lexical", "--ambig-shard=2/2"],
    }.items():
        done = run_pytest(root, "--ambig-suite=march", f"--ambig-report={name}", *args)
        assert done.returncode == 0, done.stdout[-2000:]
        out[name] = root / name / "scorecard.json"
    return out


def _tampered(source: Path, target: Path, change) -> Path:
    data = json.loads(source.read_text(encoding="utf-8"))
    change(data)
    target.write_text(json.dumps(data), encoding="utf-8")  # NaN and Infinity as JSON's extensions
    return target


# -- 1. non-finite or out-of-scale numbers read back: refused, one line, never a passing gate --

BAD = {
    "nan": math.nan,
    "inf": math.inf,
    "-inf": -math.inf,
    "1e308": 1e308,
    "off-scale": 1.5,  # STR-EM's item scale is 0-1
    "a string": "0.5",
}


def _item_score(value):
    def change(card):
        card["items"][2]["scores"]["str_em"] = value

    return change


@pytest.mark.parametrize("bad", list(BAD))
def test_compare_refuses_a_base_with_a_bad_number_and_never_passes(runs, tmp_path, capsys, bad):
    clean = cli(["compare", str(runs["oracle"]), str(runs["lexical"]), "--fail-if-worse=str_em:1"])
    assert clean == 1  # the regression gate fails on clean data
    capsys.readouterr()
    base = _tampered(runs["oracle"], tmp_path / "base.json", _item_score(BAD[bad]))
    assert cli(["compare", str(base), str(runs["lexical"]), "--fail-if-worse=str_em:1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and str(base) in err
    assert "item march-sem-03, field scores.str_em" in err


@pytest.mark.parametrize("bad", ["nan", "1e308", "off-scale"])
def test_merge_refuses_a_shard_with_a_bad_number(runs, tmp_path, capsys, bad):
    shard = _tampered(runs["shard2"], tmp_path / "shard2.json", _item_score(BAD[bad]))
    assert cli(["merge", str(runs["shard1"]), str(shard), "-o", str(tmp_path / "merged")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and str(shard) in err and "field scores.str_em" in err
    assert not (tmp_path / "merged").exists()


@pytest.mark.parametrize(
    "where",
    [
        "summary",  # a suite mean
        "duration",
        "usage",
    ],
)
def test_a_bad_number_anywhere_a_reader_relies_on_is_named(runs, tmp_path, where):
    def change(card):
        if where == "summary":
            card["suites"][0]["metrics"]["str_em"]["mean"] = math.nan
        elif where == "duration":
            card["items"][0]["duration"] = math.inf
        else:
            card["items"][0]["usage"] = {"requests": 1, "cost": math.nan}

    path = _tampered(runs["oracle"], tmp_path / "card.json", change)
    with pytest.raises(ScorecardError) as info:
        read_card(path)
    field = {"summary": "suites.0.metrics.str_em.mean", "duration": "duration", "usage": "usage.cost"}[where]
    assert field in str(info.value) and "not a finite number" in str(info.value)


@pytest.mark.parametrize("how", ["baseline", "rescore"])
def test_a_run_refuses_a_scorecard_with_nan_before_any_item(runs, tmp_path, how):
    bad = _tampered(runs["oracle"], tmp_path / "bad.json", _item_score(math.nan))
    args = (
        [
            "--ambig-suite=march",
            "--ambig-system=lexical",
            f"--ambig-baseline={bad}",
            "--ambig-fail-if-worse=str_em:1",
        ]
        if how == "baseline"
        else [f"--ambig-rescore={bad}", "--ambig-fail-under=str_em=50"]
    )
    done = run_pytest(tmp_path, *args)
    assert done.returncode == pytest.ExitCode.USAGE_ERROR
    line = f"ERROR: --ambig-{how}: {bad} is not a readable scorecard.json (item march-sem-03, field scores.str_em: nan is not a finite number)"
    assert line in done.stderr and "Traceback" not in done.stderr + done.stdout


def test_a_gate_on_a_statistic_that_is_not_finite_fails():
    summary = MetricSummary("str_em", 13, 0, None, math.nan, math.nan, math.nan)
    card = SuiteCard("march", "MARCH", "x", "0", True, 13, 13, 0, 0, {"str_em": summary})
    assert gates.evaluate([card], [gates.Threshold(None, "str_em", 10)], "mean", None)[1] == [
        "march str_em (STR-EM) mean is nan, not a finite number: cannot meet 10"
    ]
    assert gates.item_shortfalls({"str_em": math.nan}, "march", [gates.Threshold(None, "str_em", 0.5)])
    row = Row("march", "all", "str_em", 13, 1, 1, math.nan, math.nan, math.nan, "mcnemar", 1, 1, 0, 0, 0)
    (check,) = worse(Comparison({}, [row], [], [], []), [Margin(None, "str_em", 1)])
    assert not check.passed and "not a finite number" in check.failure


def test_a_metric_that_returns_nan_is_unscored_not_a_number():
    from pytest_ambigqa.evaluate import _finite
    from pytest_ambigqa.metrics import Scored

    scored = _finite(
        Scored(
            scores={"str_em": 0.5, "word_recall": math.nan, "judge": 3.0}, samples={"judge": [3.0, math.inf]}
        )
    )
    assert scored.scores == {"str_em": 0.5}
    assert scored.unscored == {
        "word_recall": "the scorer returned nan, not a finite number",
        "judge": "the scorer returned 3.0, not a finite number",
    }
    assert scored.samples == {}


# Where a number can be damaged in a scorecard, and the range a clean one keeps to there.
LOCATIONS = {
    ("items", "scores", "str_em"): (0, 1),
    ("items", "scores", "cover_em"): (0, 1),
    ("items", "scores", "length"): (-1e12, 1e12),  # a count: any finite size is a legal one
    ("items", "duration", None): (0, 1e12),
    ("items", "samples", "judge"): (0, 5),
    ("items", "units", "str_em"): (0, 1),
    ("items", "evidence", "original"): (0, 1),
    ("suites", "mean", "str_em"): (0, 100),
    ("suites", "low", "cover_em"): (0, 1),
    ("slices", "high", "str_em"): (0, 100),
}


def _outside(low: float, high: float) -> st.SearchStrategy[float]:
    """Numbers no clean scorecard holds at a place whose clean values lie in [low, high]."""
    return st.one_of(
        st.sampled_from([math.nan, math.inf, -math.inf, 1e308, -1e308]),
        st.floats(min_value=high + max(1e-6, abs(high) * 1e-6), max_value=1e300),
        st.floats(min_value=-1e300, max_value=low - max(1e-6, abs(low) * 1e-6)),
    )


def _inject(card: dict, location: tuple, index: int, value: float) -> None:
    kind, field, metric = location
    if kind == "items":
        item = card["items"][index % len(card["items"])]
        if field == "duration":
            item["duration"] = value
        elif field in ("samples", "units"):
            item[field][metric] = [0.5, value]
        elif field == "evidence":
            item["evidence"] = {"original": value, "clarified": 0.5}
        else:
            item["scores"][metric] = value
        return
    suite = card["suites"][0]
    summaries = (
        suite["metrics"] if kind == "suites" else suite["slices"][index % len(suite["slices"])]["metrics"]
    )
    summaries[metric][field] = value


def _outcome(args: list[str], capsys) -> tuple[int, str, str]:
    code = cli(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.data(),
    location=st.sampled_from(sorted(LOCATIONS, key=str)),
    index=st.integers(0, 12),
    damaged=st.booleans(),
)
def test_property_a_damaged_number_is_refused_or_changes_nothing(
    runs, tmp_path, capsys, data, location, index, damaged
):
    """A number no clean scorecard holds, anywhere: ``compare`` (the base), ``merge`` (a
    shard) and ``--ambig-baseline`` refuse the file (exit 2 or a usage error, one line naming
    the file and the field); the same file undamaged gives exactly the clean result."""
    value = data.draw(_outside(*LOCATIONS[location])) if damaged else None

    def change(card):
        if value is not None:
            _inject(card, location, index, value)

    base = _tampered(runs["oracle"], tmp_path / "base.json", change)
    shard = _tampered(runs["shard1"], tmp_path / "shard.json", change)
    compare = ["compare", str(base), str(runs["lexical"]), "--fail-if-worse=str_em:1"]
    merge = ["merge", str(shard), str(runs["shard2"]), "-o", str(tmp_path / "merged")]
    if damaged:
        for args, path in ((compare, base), (merge, shard)):
            code, _, err = _outcome(args, capsys)
            assert code == 2 and err.strip().count("\n") == 0 and str(path) in err, err
        with pytest.raises(ScorecardError, match="field "):
            read_card(base)
        return
    code, out, _ = _outcome(compare, capsys)
    clean = _outcome([*compare[:1], str(runs["oracle"]), *compare[2:]], capsys)
    assert (code, out.replace(str(base), str(runs["oracle"]))) == clean[:2]
    clean_merge = ["merge", str(runs["shard1"]), str(runs["shard2"]), "-o", str(tmp_path / "clean")]
    code, out, _ = _outcome(merge, capsys)
    clean = _outcome(clean_merge, capsys)
    out = out.replace(str(tmp_path / "merged"), str(tmp_path / "clean")).replace(
        str(shard), str(runs["shard1"])
    )
    assert (code, out) == clean[:2]
    assert read_card(base) == read_card(runs["oracle"])


# -- 2. every credential the plugin sends, in every form, is scrubbed from everything written --

USER, PASSWORD, QUERY = "alice", "pw:4711/s3cret", "sigvalue99"
TOKEN = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
FORMS = [TOKEN, PASSWORD, "pw%3A4711%2Fs3cret", QUERY]


def echo(path, body, headers):
    """An HTTP system that echoes the credentials it is sent: in an answer, an error body, a
    reply that is not JSON, and in an answer's metadata, by item."""
    auth = headers.get("Authorization", "")
    token = auth.partition(" ")[2]
    said = f"{auth} / {base64.b64decode(token).decode()} / {path}"
    kind = sum(map(ord, body["id"])) % 4
    if kind == 0:
        return 200, {"text": f"{body['question']} {said}", "metadata": {"seen": said}}
    if kind == 1:
        return 500, {"error": f"refused {said}"}
    if kind == 2:
        return 200, f"<html>{token} {said}</html>".encode()
    return 200, {"text": body["question"], "interpretations": [{"question": said, "answer": token}]}


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_credential_echoed_in_any_form_is_written_nowhere(pytester, local_server, workers):
    server = local_server(echo)
    host = server.url.removeprefix("http://")
    quoted = PASSWORD.replace(":", "%3A").replace("/", "%2F")
    pytester.makeconftest(GUARD)
    result, card = ambig_run(
        pytester,
        "--ambig-suite=march",
        f"--ambig-system=http://{USER}:{quoted}@{host}/qa?sig={QUERY}",
        "--junitxml=junit.xml",
        "--ambig-cache-dir=cache",
        "-n",
        workers,
    )
    output = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in output and "Traceback" not in output
    assert {i["status"] for i in card["items"]} == {"ok", "error"} and card["suites"][0]["missing"] == 0
    assert "[redacted]" in json.dumps(card)
    written = [p for p in pytester.path.rglob("*") if p.is_file()]
    assert {"answers.sqlite", "report.html", "scorecard.md", "junit.xml"} <= {p.name for p in written}
    for form in FORMS:
        assert form not in output, form
        for path in written:
            assert form.encode() not in path.read_bytes(), (form, path)


def test_sent_credentials_are_scrubbed_as_words_and_wherever_they_are_long():
    sent_url("https://bob:hunter22@example.invalid/v1?api_key=k1&mode=fast")
    assert (
        scrub("bob:hunter22 hunter22. hunter222 and fast mode")
        == "[redacted] [redacted]. hunter222 and fast mode"
    )
    token = base64.b64encode(b"bob:hunter22").decode()
    assert scrub(f"Basic {token}") == "Basic [redacted]" and scrub(f"x{token}x") == "x[redacted]x"


# -- 3. ids and texts that pytest, JUnit or execnet cannot carry --


def _hostile_march(path: Path) -> Path:
    items = json.loads(MARCH.read_text(encoding="utf-8"))
    items[0]["id"] = "lone\ud800"
    items[1]["id"] = "lone\udfff"
    items[2]["id"] = "x::test_ambig[y]"
    items[3]["question"] = "broken \udc80 question?"
    items[4]["passages"][0]["text"] += " \udc81"
    path.write_text(json.dumps(items), encoding="utf-8")  # ASCII: the surrogates as \\u escapes
    return path


@pytest.mark.parametrize("workers", ["0", "2"])
def test_ids_and_texts_with_lone_surrogates_run_and_report(pytester, workers):
    data = _hostile_march(pytester.path / "hostile.json")
    result, card = ambig_run(
        pytester,
        "--ambig-suite=march",
        f"--ambig-data={data}",
        "--ambig-system=lexical",
        "--junitxml=junit.xml",
        "-n",
        workers,
    )
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == 0 and "INTERNALERROR" not in output, output[-3000:]
    result.stdout.fnmatch_lines(
        [
            "*hostile.json: 4 text(s) hold a lone surrogate*hostile.json:1, id and 3 more",
            "*ambigqa scorecard*",
            "MARCH: 13 items*",
        ]
    )
    ids = [i["item_id"] for i in card["items"]]
    assert ids[:3] == ["lone\\ud800", "lone\\udfff", "x::test_ambig[y]"]  # distinct, and each itself
    assert {i["status"] for i in card["items"]} == {"ok"}
    names = [c.get("name") for c in ET.parse(pytester.path / "junit.xml").iter("testcase")]
    assert "test_ambig[march-lone\\ud800]" in names and len(names) == 14  # 13 items, the suite's case


def test_a_corpus_passage_that_cannot_be_indexed_is_repaired_and_named(pytester):
    corpus = pytester.path / "corpus.jsonl"
    lines = [{"id": f"d{n}", "title": "T", "text": f"Passage {n} about Ford trucks"} for n in range(5)]
    lines[3]["text"] = "broken \udc80 passage"
    corpus.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    result = pytester.runpytest(
        "--ambig-suite=march", "--ambig-system=lexical", "--ambig-retriever=bm25", f"--ambig-corpus={corpus}"
    )
    result.assert_outcomes(passed=13, warnings=1)
    result.stdout.fnmatch_lines(["*corpus.jsonl: 1 text(s) hold a lone surrogate*corpus.jsonl:4, text*"])


# -- 4. damaged rows in the answer store --

DAMAGE = {
    "not JSON": "{text: nope",
    "NULL": None,
    "too deep": "[" * 100_000 + "]" * 100_000,
    "wrong shape": '{"text": 5}',
    "unknown field": '{"text": "x", "from_a_future_version": 1}',
}

COUNTING = """
import os

def answer(question, item):
    with open(os.environ["CALLS"], "a", encoding="utf-8") as log:
        log.write(item.id + "\\n")
    return item.long_answers[0]
"""


@pytest.mark.parametrize("workers", ["0", "2"])
def test_damaged_store_rows_are_asked_again_and_counted_once(pytester, monkeypatch, workers):
    pytester.makepyfile(counting=COUNTING)
    calls = pytester.path / "calls.txt"
    monkeypatch.setenv("CALLS", str(calls))
    args = ["--ambig-suite=march", "--ambig-system=counting:answer", "--ambig-cache-dir=cache"]
    result, first = ambig_run(pytester, *args)
    result.assert_outcomes(passed=13)
    calls.unlink()
    db = sqlite3.connect(pytester.path / "cache" / "answers.sqlite")
    keys = [k for (k,) in db.execute("SELECT key FROM answers ORDER BY key LIMIT 5")]
    for key, payload in zip(keys, DAMAGE.values(), strict=True):
        db.execute("UPDATE answers SET payload = ? WHERE key = ?", (payload, key))
    db.commit()
    db.close()
    result, again = ambig_run(pytester, *args, "--ambig-resume", "--ambig-concurrency=3", "-n", workers)
    result.assert_outcomes(passed=13, warnings=1)
    result.stdout.fnmatch_lines(
        ["*5 stored answer(s) in *answers.sqlite could not be read back*asked again*"]
    )
    assert len(calls.read_text().split()) == 5  # exactly the damaged ones, once each
    assert [i["scores"] for i in again["items"]] == [i["scores"] for i in first["items"]]
    assert sum(i["cached"] for i in again["items"]) == 8


def test_damaged_judge_cache_rows_are_misses_not_the_end_of_the_cache(pytester, chat_server):
    pytester.makeconftest(GUARD)
    args = [
        "--ambig-suite=march",
        "--ambig-system=oracle",
        "--ambig-limit=3",
        f"--ambig-judge-base-url={chat_server.url}",
        "--ambig-judge=judge-m",
        "--ambig-cache-dir=cache",
    ]
    result, first = ambig_run(pytester, *args)
    result.assert_outcomes(passed=3)
    asked = len(chat_server.requests)
    db = sqlite3.connect(pytester.path / "cache" / "judge.sqlite")
    keys = [k for (k,) in db.execute("SELECT key FROM calls ORDER BY key")]
    for key, reply in zip(keys, ["{nope", "[" * 100_000, "[1, 2]"], strict=False):
        db.execute("UPDATE calls SET reply = ? WHERE key = ?", (reply, key))
    db.commit()
    db.close()
    result, again = ambig_run(pytester, *args)
    result.assert_outcomes(passed=3)
    assert "cannot be used" not in result.stdout.str()  # the cache stays on
    assert len(chat_server.requests) - asked == 3  # the three damaged rows, asked again
    assert [i["scores"] for i in again["items"]] == [i["scores"] for i in first["items"]]


# -- 6. a rescore that holds none of a selected suite --


@pytest.mark.parametrize("suites", ["asqa", "march,asqa"])
def test_a_rescore_without_a_selected_suite_names_it(runs, tmp_path, suites):
    done = run_pytest(tmp_path, f"--ambig-rescore={runs['lexical']}", f"--ambig-suite={suites}")
    assert done.returncode == pytest.ExitCode.USAGE_ERROR
    assert (
        f"ERROR: --ambig-rescore: {runs['lexical']} holds march (13 answers), none for the selected suite asqa"
        in done.stderr
    )


# -- 7. size: what one item can write --

HUGE = """
def answer(question, action="answer", actions=("answer",)):
    text = question + " " + "word " * 400_000
    if "clarify" in actions:
        return {"action": "clarify", "text": "which one? " + "padding " * 300_000}
    return {"text": text, "metadata": {"steps": ["x" * 100] * 5000, "blob": "y" * 2_000_000}}
"""


@pytest.mark.parametrize("mode", ["single-shot", "interactive"])
def test_an_answer_of_megabytes_is_cut_in_every_report_and_scored_whole(pytester, mode):
    pytester.makepyfile(huge=HUGE)
    extra = (
        ["--ambig-protocol=interactive", "--ambig-costs=0:0.1", "--ambig-limit=2"]
        if mode == "interactive"
        else ["--ambig-limit=4"]  # each item is scored whole: 400,000 words
    )
    result, card = ambig_run(
        pytester,
        "--ambig-suite=march",
        "--ambig-system=huge:answer",
        "--junitxml=junit.xml",
        "-n",
        "2",
        *extra,
    )
    assert result.ret == 0, result.stdout.str()[-2000:]
    junit = (pytester.path / "junit.xml").stat().st_size
    card_path = pytester.path / "report" / "scorecard.json"
    n = len(card["items"])
    # readable properties only, no result payload; a transcript's turns of 2,000 characters at most
    assert junit < (4_000 if mode == "single-shot" else 20_000) * n + 20_000
    # Uncut, an item writes 4 MB (an episode more); cut, each text is at most 64 Ki characters and
    # each list 1,000 entries.
    per_item = 300_000 if mode == "single-shot" else 600_000
    assert card_path.stat().st_size < per_item * n
    assert (pytester.path / "report" / "report.html").stat().st_size < per_item * n + 200_000
    if mode == "single-shot":
        item = card["items"][0]
        questions = {i.id: i.question for i in SUITES["march"].load(None, LoadOptions()).items}
        question = questions[item["item_id"]]
        assert item["details"]["cut"] == {
            "answer.text": 2_000_000 + len(question) + 1,
            "answer.metadata.steps": 5000,
            "answer.metadata.blob": 2_000_000,
        }
        assert item["answer"]["text"].endswith("characters, the first 65,536 kept (--ambig-max-text)]")
        assert item["scores"]["length"] == 400_000 + len(question.split())
    else:
        turns = [t["text"] for i in card["items"] for t in i["details"]["transcript"]]
        assert any("(--ambig-max-text)]" in t for t in turns) and max(map(len, turns)) < 66_000
    ET.parse(pytester.path / "junit.xml")  # still valid XML
    assert "ambigqa.result" not in (pytester.path / "junit.xml").read_text(encoding="utf-8")


def test_max_text_is_an_option_with_bounds(pytester):
    result = pytester.runpytest("--ambig-suite=march", "--ambig-max-text=10")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --ambig-max-text: 10 must be between 200 and *"])


def test_a_stored_error_keeps_its_calls_and_an_older_bare_message_still_reads(tmp_path):
    """Error rows are JSON (the message and the failed system's calls); a row an earlier
    version wrote is its bare message; an error row that is neither is unreadable (asked again)."""
    from pytest_ambigqa.store.answers import AnswerStore

    store = AnswerStore(tmp_path / "answers.sqlite")
    calls = {"model": "m", "calls": 2, "requests": 4, "cost": 0.5, "last_reply": "prose"}
    store.put("new", "run", "error", {"error": "llm:x, step plan: unusable", "calls": calls})
    store.put("bad", "run", "error", {"error": "x", "calls": {"model": "m", "calls": -1}})
    store.close()
    db = sqlite3.connect(tmp_path / "answers.sqlite")
    db.execute(
        "INSERT INTO answers (key, run, state, payload, pid, updated) VALUES ('old', 'run', 'error', 'boom', 1, 0)"
    )
    db.commit()
    db.close()
    store = AnswerStore(tmp_path / "answers.sqlite")
    assert store.done("new", "run", False) == (
        "error",
        {"error": "llm:x, step plan: unusable", "calls": calls},
        False,
    )
    assert store.done("old", "run", False) == ("error", {"error": "boom", "calls": None}, False)
    state, why, _ = store.done("bad", "run", False)
    assert state == "unreadable" and "calls.calls" in why
    store.close()
