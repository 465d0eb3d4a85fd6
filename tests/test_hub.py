"""Benchmarks from the Hugging Face Hub (``--ambig-data=hf://...``), through the real
``huggingface_hub`` client against a stand-in Hub on 127.0.0.1 (``fixtures/hub.py``): pinned to a
commit, checked, cached, read offline, and every way it can fail one line before any item."""

from __future__ import annotations

import hashlib
import json
import socket
from pathlib import Path

import pytest

from fixtures.hub import ALCE, ASQA, CONDAMBIGQA, FIRST, NOT_ACCEPTED, SECOND, TOKEN, asqa_rows, parquet
from fixtures.process import ambig_run
from pytest_ambigqa.cli import main as cli
from pytest_ambigqa.errors import DataError
from pytest_ambigqa.suites import SUITES, LoadOptions
from pytest_ambigqa.suites.sources import (
    HubRef,
    KnownFile,
    Read,
    Source,
    Sources,
    choose,
    names_split,
    parse_hub,
    release,
)

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
SYSTEM = "def answer(question):\n    return 'I cannot say.'\n"  # closed book: it needs no evidence


def run(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict]:
    pytester.makepyfile(mysys=SYSTEM)
    metric = "str_em" if "--ambig-suite=asqa" in args else "answer_count"  # no model needed
    return ambig_run(
        pytester, "-p", "no:cacheprovider", "--ambig-system=mysys:answer", f"--ambig-metrics={metric}", *args
    )


def load(url: str, suite: str = "asqa", offline: bool = False, **values) -> object:
    return SUITES[suite].load(parse_hub(url), LoadOptions(values, offline=offline))


def card_of(card: dict, name: str) -> dict:
    return next(s for s in card["suites"] if s["name"] == name)


# -- the URL and the table (pure) ----------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "ref"),
    [
        ("hf://din0s/asqa", HubRef("din0s/asqa")),
        ("hf://datasets/din0s/asqa@main", HubRef("din0s/asqa", "main")),
        (f"hf://din0s/asqa@{FIRST}/data/dev.parquet", HubRef("din0s/asqa", FIRST, "data/dev.parquet")),
        ("hf://din0s/asqa@refs%2Fconvert%2Fparquet", HubRef("din0s/asqa", "refs/convert/parquet")),
    ],
)
def test_hf_urls_name_a_repository_a_revision_and_a_file(url, ref):
    assert parse_hub(url) == ref
    assert parse_hub(str(ref)) == ref


@pytest.mark.parametrize("url", ["hf://asqa", "hf://din0s/", "hf://a b/c"])
def test_a_url_without_owner_and_name_is_refused(url):
    with pytest.raises(DataError, match="OWNER/NAME"):
        parse_hub(url)


def test_a_split_is_a_whole_word_of_the_path():
    assert names_split("default/dev/0000.parquet", "dev")
    assert names_split("data/dev-00000-of-00001.parquet", "dev")
    assert names_split("dev.jsonl", "dev")
    assert not names_split("devtest.jsonl", "dev")
    files = ["README.md", "data/dev-0.parquet", "data/train-0.parquet"]
    assert choose(HubRef("a/b"), files, "dev", None) == ["data/dev-0.parquet"]
    with pytest.raises(DataError, match="no file for split 'test'"):
        choose(HubRef("a/b"), files, "test", None)


def test_release_is_a_whole_known_split_of_a_known_repository_or_a_known_checksum():
    sha = "ab" * 32
    known = Sources(
        "asqa",
        (
            Source(
                "din0s/asqa",
                "ASQA",
                "apache-2.0",
                "948",
                splits=("train", "dev"),
                files=(KnownFile("dev.jsonl", sha, "dev", "c" * 40, "a test"),),
            ),
        ),
    )
    commit = "0123456789abcdef" * 2 + "01234567"
    by_split = Read((("dev.parquet", "x"),), "din0s/asqa", commit, chosen_by_split=True)
    assert release(known, by_split, "dev") == "ASQA dev split, din0s/asqa@0123456789ab"
    named = Read((("dev.parquet", "x"),), "din0s/asqa", commit)  # a file named, not the split's only one
    assert release(known, named, "dev") is None
    assert release(known, Read((("dev.parquet", "x"),), "someone/copy", commit, True), "dev") is None
    assert release(known, Read((("mine.jsonl", sha),)), "dev") == (
        "ASQA dev split, din0s/asqa@cccccccccccc dev.jsonl (by sha256)"
    )
    assert release(known, Read((("mine.jsonl", "cd" * 32),)), "dev") is None


def test_every_suite_lists_its_sources_or_says_why_it_has_none():
    for name, suite in SUITES.items():
        sources = suite.sources()
        assert sources.sources or sources.unpublished, name
        for source in sources.sources:
            assert source.license and source.size
            for file in source.files:
                assert len(file.sha256) == 64 and file.found
    assert SUITES["condambigqa"].sources().default.gated
    assert "contact the authors listed in the paper" in SUITES["march"].sources().unpublished


# -- loading, pinned and checked -----------------------------------------------------------


def test_a_revision_not_given_is_resolved_once_and_recorded(fake_hub):
    loaded = load("hf://din0s/asqa")
    assert loaded.revision == SECOND and loaded.source == f"hf://din0s/asqa@{SECOND}"
    assert len(loaded.items) == 6
    data = fake_hub.repos[ASQA].commits[SECOND]["data/dev-00000-of-00001.parquet"]
    assert loaded.files == (("data/dev-00000-of-00001.parquet", hashlib.sha256(data).hexdigest()),)
    assert loaded.release == f"ASQA dev split, din0s/asqa@{SECOND[:12]}"
    assert [i.id for i in loaded.items] == [str(1000 + n) for n in range(6)]  # din0s's sample_id
    revisions = [p for m, p, _ in fake_hub.requests if p.startswith("/api/")]
    assert revisions == ["/api/datasets/din0s/asqa?blobs=true"]  # resolved once, then read at the commit
    assert all(SECOND in p for m, p, _ in fake_hub.requests if "/resolve/" in p)


def test_two_revisions_give_their_own_files(fake_hub):
    first, second = load(f"hf://din0s/asqa@{FIRST}"), load("hf://din0s/asqa@main")
    assert (len(first.items), len(second.items)) == (10, 6)
    assert first.files != second.files and first.revision == FIRST


def test_a_named_file_and_the_split_option(fake_hub):
    train = load("hf://din0s/asqa", split="train")
    assert len(train.items) == 3 and train.release.startswith("ASQA train split")
    named = load("hf://din0s/asqa/data/dev-00000-of-00001.parquet")
    assert len(named.items) == 6 and named.release.startswith("ASQA dev split")  # the split's only file


def test_alce_files_are_read_inside_their_tar_archive(fake_hub):
    loaded = load(f"hf://{ALCE}")
    assert len(loaded.items) == 10 and all(item.passages for item in loaded.items)  # ALCE's docs
    assert [name for name, _ in loaded.files] == [
        "ALCE-data.tar",
        "ALCE-data.tar/ALCE-data/asqa_eval_gtr_top100.json",
    ]
    assert loaded.release == f"ALCE's ASQA with GTR top-100 passages, {ALCE}@{FIRST[:12]}"
    assert load(f"hf://{ALCE}/ALCE-data.tar/asqa_eval_bm25_top100.json").release is None  # not that release
    with pytest.raises(DataError, match="no single file 'asqa_eval_nothing.json' in the archive"):
        load(f"hf://{ALCE}/ALCE-data.tar/asqa_eval_nothing.json")


def test_offline_runs_from_the_hub_cache_and_asks_nothing(fake_hub, monkeypatch):
    load("hf://din0s/asqa")
    asked = len(fake_hub.requests)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    again = load("hf://din0s/asqa")
    assert (again.revision, len(again.items)) == (SECOND, 6)
    assert len(fake_hub.requests) == asked


def test_no_network_falls_back_on_the_cache(fake_hub, monkeypatch, tmp_path):
    load("hf://din0s/asqa")
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    assert load("hf://din0s/asqa").revision == SECOND


@pytest.mark.skipif(
    not (SHARED / "asqa" / "asqa_dev_sample40.jsonl").is_file(), reason="../shared/data is absent"
)
def test_parquet_rows_read_as_the_release_json_does(fake_hub, tmp_path):
    """Real din0s/asqa items (../shared), served as parquet: the same items as their JSON Lines."""
    text = (SHARED / "asqa" / "asqa_dev_sample40.jsonl").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    fake_hub.repos[ASQA].commits[FIRST]["data/dev-00000-of-00001.parquet"] = parquet(rows)
    local = tmp_path / "dev.jsonl"
    local.write_text(text, encoding="utf-8")
    from_hub = load(f"hf://din0s/asqa@{FIRST}").items
    from_file = SUITES["asqa"].load(local, LoadOptions()).items
    assert len(from_hub) == 40
    assert [(i.id, i.question, i.interpretations, i.long_answers) for i in from_hub] == [
        (i.id, i.question, i.interpretations, i.long_answers) for i in from_file
    ]


def test_a_local_file_with_a_known_checksum_is_its_release(tmp_path, monkeypatch):
    path = tmp_path / "dev.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _rows(3)), encoding="utf-8")
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    table = tmp_path / "sources.toml"
    table.write_text(
        '[[source]]\nrepo = "din0s/asqa"\ntitle = "ASQA"\nlicense = "apache-2.0"\nsize = "3"\n'
        'splits = ["dev"]\n[[source.file]]\npath = "dev.jsonl"\n'
        f'sha256 = "{sha}"\nsplit = "dev"\nfound = "this test"\n',
        encoding="utf-8",
    )
    monkeypatch.setattr(type(SUITES["asqa"]), "sources_path", lambda self: table)
    loaded = SUITES["asqa"].load(path, LoadOptions())
    assert loaded.release == "ASQA dev split, din0s/asqa dev.jsonl (by sha256)"
    assert SUITES["asqa"].load(None, LoadOptions()).release is None  # the bundled sample is none


# -- every bad case, one line ----------------------------------------------------------------


def test_gated_without_a_token(fake_hub):
    with pytest.raises(DataError) as info:
        load(f"hf://{CONDAMBIGQA}", suite="condambigqa")
    assert "gated" in str(info.value) and "HF_TOKEN" in str(info.value) and "\n" not in str(info.value)


def test_gated_with_a_token_whose_terms_are_not_accepted(fake_hub, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", NOT_ACCEPTED)
    with pytest.raises(DataError, match="your token has no access to it: accept its terms") as info:
        load(f"hf://{CONDAMBIGQA}", suite="condambigqa")
    assert NOT_ACCEPTED not in str(info.value)


def test_gated_with_an_accepted_token_loads(fake_hub, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    loaded = load(f"hf://{CONDAMBIGQA}", suite="condambigqa")
    assert (
        len(loaded.items) == 10 and loaded.release == f"CondAmbigQA (200 items), {CONDAMBIGQA}@{FIRST[:12]}"
    )
    assert any(auth == f"Bearer {TOKEN}" for _, _, auth in fake_hub.requests)


def test_a_refused_token(fake_hub, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_ThisTokenTheHubDoesNotKnow99")
    with pytest.raises(DataError, match=r"refused your token \(401\)") as info:
        load("hf://din0s/asqa")
    assert "hf_ThisTokenTheHubDoesNotKnow99" not in str(info.value)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("hf://nobody/nothing", "no dataset repository 'nobody/nothing'"),
        ("hf://din0s/asqa@v9", "no revision 'v9'"),
        ("hf://din0s/asqa/data/test.parquet", "no file 'data/test.parquet'"),
    ],
)
def test_unknown_repository_revision_or_file(fake_hub, url, message):
    with pytest.raises(DataError, match=message):
        load(url)


@pytest.mark.parametrize(
    ("fault", "message"), [("cut", "cut short"), ("corrupt", "does not match its checksum")]
)
def test_a_download_cut_short_or_damaged(fake_hub, fault, message):
    data = fake_hub.repos[ASQA].commits[SECOND]["data/dev-00000-of-00001.parquet"]
    fake_hub.faults[hashlib.sha256(data).hexdigest()] = fault
    with pytest.raises(DataError, match=message):
        load("hf://din0s/asqa")
    del fake_hub.faults[hashlib.sha256(data).hexdigest()]
    assert len(load("hf://din0s/asqa").items) == 6  # the next run downloads it again, whole


def test_no_network_and_nothing_cached(fake_hub, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    with pytest.raises(DataError, match="cannot be reached and the cache"):
        load("hf://din0s/asqa")


def test_offline_with_an_empty_cache(fake_hub, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(DataError, match="HF_HUB_OFFLINE is set and the Hub cache"):
        load("hf://din0s/asqa")
    assert not fake_hub.requests


# -- through pytest ----------------------------------------------------------------------------


def test_a_run_on_the_hub_records_source_revision_files_and_release(pytester, fake_hub):
    result, card = run(pytester, "--ambig-suite=asqa", "--ambig-data=hf://din0s/asqa")
    result.assert_outcomes(passed=6)
    result.stdout.fnmatch_lines(
        [
            f"ambigqa data: asqa from hf://din0s/asqa (main is commit {SECOND}); read "
            f"data/dev-00000-of-00001.parquet sha256 *; repeat exactly with "
            f"--ambig-data=asqa=hf://din0s/asqa@{SECOND}",
            f"*data: hf://din0s/asqa@{SECOND} (revision {SECOND[:12]}, sha256 *)",
        ]
    )
    suite = card_of(card, "asqa")
    assert suite["source"] == f"hf://din0s/asqa@{SECOND}" and suite["revision"] == SECOND
    assert suite["files"][0][0] == "data/dev-00000-of-00001.parquet"
    assert suite["release"] == f"ASQA dev split, din0s/asqa@{SECOND[:12]}"
    assert card["config"]["data"] == {"asqa": "hf://din0s/asqa"}


def test_two_runs_at_two_revisions_compare_as_different_data(pytester, fake_hub, capsys):
    run(pytester, "--ambig-suite=asqa", f"--ambig-data=hf://din0s/asqa@{FIRST}")
    (pytester.path / "report").rename(pytester.path / "first")
    result, card = run(pytester, "--ambig-suite=asqa", "--ambig-data=hf://din0s/asqa")
    assert card_of(card, "asqa")["revision"] == SECOND
    first = json.loads((pytester.path / "first" / "scorecard.json").read_text(encoding="utf-8"))
    assert card_of(first, "asqa")["revision"] == FIRST
    capsys.readouterr()
    cli(
        [
            "compare",
            str(pytester.path / "first" / "scorecard.json"),
            str(pytester.path / "report" / "scorecard.json"),
        ]
    )
    assert f"read different data (revision {FIRST[:12]} against {SECOND[:12]})" in capsys.readouterr().out


def test_a_bad_source_is_one_usage_line_before_any_item(pytester, fake_hub):
    result, card = run(pytester, "--ambig-suite=condambigqa", f"--ambig-data=hf://{CONDAMBIGQA}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR and not card
    lines = [line for line in result.stderr.lines if "--ambig-data" in line]
    assert len(lines) == 1 and "gated dataset" in lines[0] and "Traceback" not in result.stderr.str()


def test_the_token_is_in_no_output_report_or_cache(pytester, fake_hub, monkeypatch, tmp_path):
    """The token ``hf auth login`` stored (not in the environment, so only the plugin knows it)."""
    home = tmp_path / "hf-home"
    home.mkdir(exist_ok=True)
    (home / "token").write_text(TOKEN, encoding="utf-8")
    result, card = run(
        pytester,
        "--ambig-suite=condambigqa",
        f"--ambig-data=hf://{CONDAMBIGQA}",
        "--ambig-condambigqa-setting=closed-book",
    )
    result.assert_outcomes(passed=10)
    assert any(auth == f"Bearer {TOKEN}" for _, _, auth in fake_hub.requests)
    assert TOKEN not in result.stdout.str() + result.stderr.str()
    written = [
        p for p in [*pytester.path.rglob("*"), *home.rglob("*")] if p.is_file() and p != home / "token"
    ]
    assert written and not [p for p in written if TOKEN.encode() in p.read_bytes()]


def test_without_huggingface_hub_one_line_says_what_to_install(pytester, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n, *a: None if n == "huggingface_hub" else real(n, *a)
    )
    result, _ = run(pytester, "--ambig-suite=asqa", "--ambig-data=hf://din0s/asqa")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.lines[0] == (
        "ERROR: --ambig-data: hf://din0s/asqa needs huggingface_hub: pip install 'pytest-ambigqa[hub]'"
    )


# -- pytest-ambigqa data ---------------------------------------------------------------------


def test_data_fetch_fills_a_cache_that_an_offline_run_reads(pytester, fake_hub, monkeypatch, capsys):
    cache = pytester.path / "carried-cache"
    assert cli(["data", "fetch", "asqa", "--to", str(cache)]) == 0
    out = capsys.readouterr().out
    assert f"--ambig-data=hf://din0s/asqa@{SECOND}" in out and f"HF_HUB_CACHE={cache}" in out
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    result, card = run(pytester, "--ambig-suite=asqa", f"--ambig-data=hf://din0s/asqa@{SECOND}")
    result.assert_outcomes(passed=6)
    assert card_of(card, "asqa")["release"] == f"ASQA dev split, din0s/asqa@{SECOND[:12]}"


def test_data_fetch_refuses_march_and_says_why(capsys):
    assert cli(["data", "fetch", "march"]) == 2
    assert "contact the authors listed in the paper" in capsys.readouterr().err


def test_data_list_shows_each_suites_sources(capsys):
    assert cli(["data", "list"]) == 0
    out = capsys.readouterr().out
    assert "hf://din0s/asqa  ASQA; public; splits train, dev" in out
    assert f"hf://{CONDAMBIGQA}  CondAmbigQA (200 items); gated" in out
    assert "march (MARCH):\n  no public copy:" in out and "contact the authors listed in the paper" in out


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rows(n: int) -> list[dict]:
    return asqa_rows(n)


def test_xdist_workers_read_the_commit_the_controller_resolved(pytester, fake_hub):
    """Each process loads the data: the workers read the controller's commit from the cache and
    ask the Hub nothing, so a branch that moves during the run cannot split it."""
    from fixtures.process import run_pytest

    pytester.makepyfile(mysys=SYSTEM)
    done = run_pytest(
        pytester.path,
        "-n",
        "2",
        "--ambig-suite=asqa",
        "--ambig-data=hf://din0s/asqa",
        "--ambig-system=mysys:answer",
        "--ambig-metrics=str_em",
        "--ambig-report=report",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    card = json.loads((pytester.path / "report" / "scorecard.json").read_text(encoding="utf-8"))
    assert card_of(card, "asqa")["revision"] == SECOND and card_of(card, "asqa")["items"] == 6
    assert [p for _, p, _ in fake_hub.requests if p.startswith("/api/")] == [
        "/api/datasets/din0s/asqa?blobs=true"
    ]
