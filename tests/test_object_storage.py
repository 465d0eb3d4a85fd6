"""Reports and ``merge`` on object storage, against a real S3 API on 127.0.0.1 (moto's server,
fixtures/storage.py): a run writes its reports to ``s3://``, ``merge`` reads the shards by a glob
and writes the merged run there too, equal to one run; a missing or doubled shard is refused; bad
credentials are one line that shows no secret; ``file://`` is the local path; a store fsspec
cannot open here is a usage error before any item runs."""

from __future__ import annotations

import json

import pytest

from fixtures.process import ambig_run
from fixtures.storage import KEY_ID, SECRET
from pytest_ambigqa.card.storage import EXTRA
from pytest_ambigqa.cli import main as cli
from pytest_ambigqa.schedulers import INDEX_VARIABLES

FILES = ("report.html", "scorecard.json", "scorecard.md")


def metrics_of(card: dict) -> list:
    return [
        (s["name"], s["metrics"], s["slices"], s["items"], s["errors"], s["missing"]) for s in card["suites"]
    ]


@pytest.fixture
def system(pytester, monkeypatch):
    pytester.makepyfile(mysys="def answer(question, item):\n    return item.long_answers[0]\n")
    for name in INDEX_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return pytester


def run(pytester, *args, report):
    return ambig_run(
        pytester, "--ambig-suite=march", "--ambig-system=mysys:answer", "--ambig-fail-under=str_em=50", *args,
        report=report,
    )  # fmt: skip


def shards_to_s3(system, s3, monkeypatch, prefix="run-42"):
    """Two tasks of a Slurm array (``--array=1-2``), each writing its reports to its own prefix."""
    monkeypatch.setenv("SLURM_ARRAY_TASK_MIN", "1")
    monkeypatch.setenv("SLURM_ARRAY_TASK_MAX", "2")
    monkeypatch.setenv("SLURM_ARRAY_TASK_COUNT", "2")
    for task in (1, 2):
        monkeypatch.setenv("SLURM_ARRAY_TASK_ID", str(task))
        result, _ = run(system, "--ambig-shard=auto", report=s3.url(f"{prefix}/shard-{task}"))
        assert result.ret == 0, result.stdout.str()
        result.stdout.fnmatch_lines([f"scorecard written to {s3.url(f'{prefix}/shard-{task}')}"])


def test_a_run_writes_its_reports_to_s3(system, s3):
    local, card = run(system, report="local")
    result, _ = run(system, report=s3.url("run-1/single"))
    assert result.ret == local.ret == 0
    assert s3.keys() == [f"run-1/single/{name}" for name in FILES]  # one object per file, nothing else
    stored = s3.json("run-1/single/scorecard.json")
    assert metrics_of(stored) == metrics_of(card) and stored["gates"] == card["gates"]
    assert s3.read("run-1/single/scorecard.md").decode().startswith("# ")
    assert not (system.path / "s3:").exists()  # no local directory named after the URL


def test_merge_reads_shards_from_s3_by_a_glob_and_equals_one_run(system, s3, monkeypatch, capsys):
    whole, single = run(system, report="whole")
    shards_to_s3(system, s3, monkeypatch)
    for task in (1, 2):
        assert s3.json(f"run-42/shard-{task}/scorecard.json")["config"]["shard_scheduler"] == {
            "scheduler": "slurm",
            "index": task,
        }
    code = cli(["merge", s3.url("run-42/shard-*/scorecard.json"), "-o", s3.url("run-42/merged")])
    out = capsys.readouterr().out
    assert code == whole.ret == 0
    assert f"merged 13 items from 2 scorecards into {s3.url('run-42/merged')}" in out
    merged = s3.json("run-42/merged/scorecard.json")
    assert metrics_of(merged) == metrics_of(single) and merged["gates"] == single["gates"]
    assert [r["item_id"] for r in merged["items"]] == [r["item_id"] for r in single["items"]]
    assert [k for k in s3.keys() if k.startswith("run-42/merged/")] == [f"run-42/merged/{f}" for f in FILES]
    # the merge from the store, written locally, is the same file as the merge of local copies
    for task in (1, 2):
        (system.path / f"copy{task}").mkdir()
        (system.path / f"copy{task}/scorecard.json").write_bytes(
            s3.read(f"run-42/shard-{task}/scorecard.json")
        )
    assert cli(["merge", "copy1/scorecard.json", "copy2/scorecard.json", "-o", "local-merge"]) == 0
    local = json.loads((system.path / "local-merge/scorecard.json").read_text())
    assert metrics_of(local) == metrics_of(merged) and local["items"] == merged["items"]


def test_merge_from_s3_refuses_a_missing_or_doubled_shard(system, s3, monkeypatch, capsys):
    shards_to_s3(system, s3, monkeypatch)
    glob = s3.url("run-42/shard-*/scorecard.json")
    s3.client.copy_object(  # a retried task's second copy of shard 1
        Bucket=s3.bucket,
        Key="run-42/shard-1-retry/scorecard.json",
        CopySource={"Bucket": s3.bucket, "Key": "run-42/shard-1/scorecard.json"},
    )
    assert cli(["merge", glob, "-o", s3.url("run-42/merged")]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"pytest-ambigqa merge: {s3.url('run-42/shard-1/scorecard.json')}: shard 1/2 is given twice "
        f"(also {s3.url('run-42/shard-1-retry/scorecard.json')})\n"
    )
    for key in ("run-42/shard-1-retry/scorecard.json", "run-42/shard-2/scorecard.json"):
        s3.client.delete_object(Bucket=s3.bucket, Key=key)
    assert cli(["merge", glob, "-o", s3.url("run-42/merged")]) == 2
    assert capsys.readouterr().err == (
        "pytest-ambigqa merge: shard 2/2 missing: a merge needs every shard of the run\n"
    )
    assert cli(["merge", s3.url("run-7/shard-*/scorecard.json"), "-o", "m"]) == 2
    assert capsys.readouterr().err == (
        f"pytest-ambigqa merge: {s3.url('run-7/shard-*/scorecard.json')}: matches no file\n"
    )
    assert cli(["merge", s3.url("run-42/shard-9/scorecard.json"), "-o", "m"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"pytest-ambigqa merge: {s3.url('run-42/shard-9/scorecard.json')}: not a readable")
    assert "FileNotFoundError" in err and err.count("\n") == 1
    assert not any(k.startswith("run-42/merged") for k in s3.keys())  # nothing written by a refused merge


def test_bad_credentials_are_one_line_without_the_secret(system, s3, monkeypatch, capsys):
    shards_to_s3(system, s3, monkeypatch)
    s3.enforce_credentials(True)  # moto now checks every key against its IAM users: ours is none
    glob = s3.url("run-42/shard-*/scorecard.json")
    assert cli(["merge", glob, "-o", "merged"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"pytest-ambigqa merge: {glob}: could not list the store: ")
    assert err.count("\n") == 1 and "Access Key Id" in err
    result, _ = run(system, report=s3.url("run-43/single"))
    # said once after the scorecard (pytest's short summary lists it again as ambigqa::run[1])
    lines = [line for line in result.outlines if line.startswith("ambigqa: could not write the scorecard")]
    assert lines == [
        f"ambigqa: could not write the scorecard to {s3.url('run-43/single')}: PermissionError: "
        "The AWS Access Key Id you provided does not exist in our records."
    ]
    assert result.ret == 1 and "scorecard written to" not in result.stdout.str()
    for output in (err, result.stdout.str(), result.stderr.str()):
        assert SECRET not in output and KEY_ID not in output


def test_file_urls_are_local_paths(system, capsys):
    whole, card = run(system, report="whole")
    url = (system.path / "by-url").as_uri()
    result, _ = run(system, report=url)
    stored = json.loads((system.path / "by-url/scorecard.json").read_text())
    assert result.ret == whole.ret and metrics_of(stored) == metrics_of(card)
    assert cli(["merge", f"{url}/scorecard.json", "-o", (system.path / "again").as_uri()]) == 0
    assert metrics_of(json.loads((system.path / "again/scorecard.json").read_text())) == metrics_of(card)
    assert "file://" not in capsys.readouterr().out  # a file:// URL is the path it names


@pytest.mark.parametrize(
    ("report", "error"),
    [
        ("nosuch://bucket/run", "--ambig-report: nosuch://bucket/run: Protocol not known: nosuch"),
        ("file://elsewhere/run", "--ambig-report: file://elsewhere/run: a file:// URL names a path on this "
         "machine, not on elsewhere"),
    ],
)  # fmt: skip
def test_a_store_that_cannot_be_opened_is_a_usage_error(system, report, error):
    result = system.runpytest("--ambig-suite=march", f"--ambig-report={report}")
    result.stderr.fnmatch_lines([f"ERROR: {error}"])
    assert result.ret == 4 and "Traceback" not in result.stderr.str()


def test_a_store_whose_package_is_missing_names_it(system):
    """gcsfs is not installed here (nor in the [cloud] extra): ``gs://`` says to install it."""
    pytest.importorskip("fsspec")
    try:
        import gcsfs  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("gcsfs is installed here: no missing package to name")
    result = system.runpytest("--ambig-suite=march", "--ambig-report=gs://bucket/run")
    result.stderr.fnmatch_lines(["ERROR: --ambig-report: gs://bucket/run: *install gcsfs*"])
    assert result.ret == 4 and EXTRA not in result.stderr.str()


def test_without_fsspec_a_url_names_the_extra(system):
    """An install without the [cloud] extra (fsspec made unimportable in the inner run)."""
    system.makeconftest("import sys\nsys.modules['fsspec'] = None  # as if it were not installed\n")
    result = system.runpytest_subprocess("--ambig-suite=march", "--ambig-report=s3://bucket/run")
    result.stderr.fnmatch_lines(["ERROR: --ambig-report: s3://bucket/run: object storage needs fsspec: *"])
    assert EXTRA in result.stderr.str() and result.ret == 4


def test_a_password_in_a_url_never_shows(system, s3, capsys):
    """A URL's user info (some stores take ``user:password@``) is scrubbed from every line."""
    url = f"s3://reader:Hunter2-Loopback-Password@{s3.bucket}/run-1/scorecard.json"
    assert cli(["merge", url, "-o", f"s3://reader:Hunter2-Loopback-Password@{s3.bucket}/m"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "[redacted]@" in err and "Hunter2" not in err
    result = system.runpytest("--ambig-suite=march", f"--ambig-report={url.rsplit('/', 1)[0]}")
    assert "Hunter2" not in result.stdout.str() + result.stderr.str()


def test_a_file_url_naming_another_host_shows_no_password():
    from pytest_ambigqa.card.storage import location
    from pytest_ambigqa.errors import UsageError

    with pytest.raises(UsageError) as refused:
        location("file://alice:s3cretpass@host/tmp/x")
    assert "s3cretpass" not in str(refused.value) and "not on host" in str(refused.value)
