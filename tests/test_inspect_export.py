"""The Inspect AI export (issue 43 §2): a run's eval logs, one per suite, read back with Inspect's
own log API (``inspect_ai.log.read_eval_log``), their numbers scorecard.json's, no secret in them,
opened in the real ``inspect view`` on 127.0.0.1 in headless Chromium; a run that does not ask for
the export imports none of Inspect.

The runs are real ones of the plugin, in a subprocess each (once per module); the system errs on
one item and puts a fake key in its answers and its error, as a leaky system would.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from fixtures.browser import loopback_page
from fixtures.exports import KEY, LEAKY, LEAKY_RUN, recording_conftest
from fixtures.process import ambig_run, run_pytest
from fixtures.servers import answering
from pytest_ambigqa import cli

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog

    from fixtures.storage import S3

inspect_log = pytest.importorskip(
    "inspect_ai.log", reason="the [inspect] extra: pip install 'pytest-ambigqa[inspect]'"
)
# Inspect's .eval members are zstd-compressed: zipfile reads them once this is imported
pytest.importorskip("zipfile_zstd", reason="Inspect's .eval members are zstd-compressed")

CONFTEST = recording_conftest("inspect_ai", "pytest_ambigqa.report.inspect_log")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two runs of the same system: ``exported`` with ``--ambig-export=inspect``, ``plain`` without."""
    root = tmp_path_factory.mktemp("inspect")
    (root / "leaky.py").write_text(LEAKY)
    (root / "conftest.py").write_text(CONFTEST)
    for report, extra in (("exported", ["--ambig-export=inspect"]), ("plain", [])):
        done = run_pytest(root, *LEAKY_RUN, f"--ambig-report={report}", *extra, env={"OPENAI_API_KEY": KEY})
        assert (root / report / "scorecard.json").is_file(), done.stdout + done.stderr
    return root


def _logs(directory: Path) -> dict[str, EvalLog]:
    """Every log Inspect lists in ``directory``, read whole, by task."""
    found = inspect_log.list_eval_logs(str(directory))
    logs = [inspect_log.read_eval_log(info) for info in found]
    return {log.eval.task: log for log in logs}


def test_a_log_per_suite_with_the_numbers_of_scorecard_json(runs: Path) -> None:
    """Each suite's ``EvalScore`` metrics are its summary's mean and interval, exactly; each
    item a sample whose scores are the item's, an n/a metric left out with its reason."""
    card = json.loads((runs / "exported" / "scorecard.json").read_text())
    logs = _logs(runs / "exported" / "inspect")
    assert sorted(logs) == ["ambigqa-asqa", "ambigqa-march"]
    for suite in card["suites"]:
        log = logs[f"ambigqa-{suite['name']}"]
        assert log.status == "success" and log.results is not None
        scores = {s.name: s for s in log.results.scores}
        reported = {m: s for m, s in suite["metrics"].items() if s["mean"] is not None}
        assert set(scores) == set(reported)
        for metric, summary in reported.items():
            values = {k: m.value for k, m in scores[metric].metrics.items()}
            expected = {k: summary[k] for k in ("mean", "low", "high") if summary[k] is not None}
            assert values == expected, metric
            assert scores[metric].scored_samples == summary["n"]
        not_reported = (log.results.metadata or {})["ambigqa"]["not_reported"]
        assert not_reported == {m: s["reason"] for m, s in suite["metrics"].items() if s["mean"] is None}
        items = [i for i in card["items"] if i["suite"] == suite["name"]]
        samples = {s.id: s for s in log.samples or []}  # Inspect orders them its own way
        assert sorted(samples) == sorted(i["item_id"] for i in items)
        for item in items:
            sample = samples[item["item_id"]]
            assert {k: s.value for k, s in (sample.scores or {}).items()} == item["scores"]
            assert sample.metadata["ambigqa"]["unscored"] == item["unscored"]
            assert sample.metadata["ambigqa"]["status"] == item["status"]
            assert sample.input and sample.input != item["item_id"] and sample.target  # read from the data
    errored = next(s for s in logs["ambigqa-march"].samples or [] if s.id == "con-03")
    assert errored.error is not None and "boom" in errored.error.message
    assert errored.metadata["ambigqa"]["status"] == "error"  # its scores above: as the scorecard counts them


def test_the_command_writes_the_logs_the_run_wrote(runs: Path, tmp_path: Path) -> None:
    """``pytest-ambigqa export --to inspect DIR -o OUT`` on the saved run: the same files, the
    same results and samples (the questions read again from the data files)."""
    out = tmp_path / "logs"
    assert cli.main(["export", "--to", "inspect", str(runs / "exported"), "-o", str(out)]) == 0
    written, again = _logs(runs / "exported" / "inspect"), _logs(out)
    assert sorted(p.name for p in out.iterdir()) == sorted(
        p.name for p in (runs / "exported" / "inspect").iterdir()
    )
    for task, log in written.items():
        assert again[task].results == log.results
        assert [s.model_dump() for s in again[task].samples or []] == [
            s.model_dump() for s in log.samples or []
        ]


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("missing.json", "missing.json is not a readable scorecard.json"),
        ("broken.json", "broken.json is not a readable scorecard.json"),
        ("empty", "scorecard.json is not a readable scorecard.json"),
    ],
)
def test_a_bad_scorecard_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], given: str, said: str
) -> None:
    """Exit 2 and one line naming the file, as the other commands say it; no traceback."""
    (tmp_path / "broken.json").write_text("{not json")
    (tmp_path / "empty").mkdir()
    assert cli.main(["export", "--to", "inspect", str(tmp_path / given), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pytest-ambigqa export: ") and said in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_an_output_that_is_a_file_is_one_line(
    runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "taken").write_text("")
    assert cli.main(["export", "--to", "inspect", str(runs / "exported"), "-o", str(tmp_path / "taken")]) == 2
    assert (
        capsys.readouterr().err.strip()
        == f"pytest-ambigqa export: -o {tmp_path / 'taken'}: exists and is not a directory"
    )


def test_no_secret_in_what_is_exported(runs: Path, tmp_path: Path) -> None:
    """The key the system leaked into its answers and its error is in no member of any log
    (the run's, built from its answers in memory, and the command's), read raw out of the .eval
    archive; the answers are kept, the key redacted (``output.scrub``)."""
    out = tmp_path / "logs"
    assert cli.main(["export", "--to", "inspect", str(runs / "exported"), "-o", str(out)]) == 0
    files = [*(runs / "exported" / "inspect").iterdir(), *out.iterdir()]
    assert len(files) == 4
    for path in files:
        with zipfile.ZipFile(path) as archive:
            for member in archive.namelist():
                assert KEY.encode() not in archive.read(member), f"{path.name}:{member}"
    march = _logs(runs / "exported" / "inspect")["ambigqa-march"]  # built from the run's own answers
    answered = next(s for s in march.samples or [] if s.id != "con-03")
    assert answered.output.completion.endswith("(asked with [redacted])")


def test_a_run_without_the_option_imports_none_of_inspect(runs: Path) -> None:
    """Inspect (2 s to import) is loaded at the end of a run that asks for its export, and by no other."""
    assert (runs / "plain.modules").read_text() == ""
    assert not (runs / "plain" / "inspect").exists()
    assert (runs / "exported.modules").read_text() == "inspect_ai pytest_ambigqa.report.inspect_log"


def test_the_option_needs_a_report_directory(runs: Path) -> None:
    done = run_pytest(runs, *LEAKY_RUN, "--ambig-export=inspect")
    assert done.returncode == 4
    assert "--ambig-export: the exports are written into --ambig-report's directory" in done.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def inspect_view(runs: Path) -> Iterator[str]:
    """``inspect view`` (Inspect's own viewer server) over the run's logs on 127.0.0.1; its URL."""
    command = Path(sys.executable).with_name("inspect")
    if not command.is_file():
        pytest.skip(f"no `inspect` command beside {sys.executable}")
    port = _free_port()
    server = subprocess.Popen(
        [
            str(command),
            "view",
            "start",
            "--log-dir",
            str(runs / "exported" / "inspect"),
            "--host",
            "127.0.0.1",
        ]
        + ["--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "INSPECT_TELEMETRY": "false"},
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        answering(url, server, within=60)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=20)


def test_inspect_view_shows_the_suite_and_its_scores(runs: Path, browser, inspect_view: str) -> None:
    """The viewer lists the suite's log as a task, and opened it shows each metric's mean and
    a sample's score; nothing but the viewer on 127.0.0.1 is asked for."""
    card = json.loads((runs / "exported" / "scorecard.json").read_text())
    march = next(s for s in card["suites"] if s["name"] == "march")
    item = next(
        i for i in card["items"] if i["suite"] == "march" and i["status"] == "ok" and i["scores"]["str_em"]
    )
    with loopback_page(browser, inspect_view) as (page, outside):
        page.goto(inspect_view)
        page.get_by_text("ambigqa-march").first.click()
        mean, score = f"{march['metrics']['str_em']['mean']:.3f}", str(item["scores"]["str_em"])
        # The viewer renders its panels as the log's parts arrive: wait for each before reading the page.
        for text in (item["item_id"], "str_em", mean, score):
            page.get_by_text(text, exact=True).first.wait_for()
        shown = page.inner_text("body")
        assert "ambigqa-march" in shown and "str_em" in shown and mean in shown, shown[:3000]
        assert score in shown, shown[:3000]  # the sample's score, as the log holds it
    assert outside == []


def test_a_run_writes_its_logs_to_s3(pytester: pytest.Pytester, s3: S3) -> None:
    """With ``--ambig-report=s3://...`` the logs go to the store too, under ``inspect/``
    (Inspect's own fsspec writer, the store's usual credentials), and read back from it."""
    pytester.makepyfile(mysys="def answer(question, item):\n    return item.long_answers[0]\n")
    result, card = ambig_run(
        pytester, "--ambig-suite=march", "--ambig-system=mysys:answer", "--ambig-export=inspect",
        report=s3.url("run-1"),
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()
    logs = [key for key in s3.keys() if key.startswith("run-1/inspect/")]
    assert len(logs) == 1 and logs[0].endswith(".eval"), s3.keys()
    log = inspect_log.read_eval_log(s3.url(logs[0]))
    assert log.eval.task == "ambigqa-march" and log.results is not None
    stored = s3.json("run-1/scorecard.json")
    march = next(s for s in stored["suites"] if s["name"] == "march")
    assert {s.name: s.metrics["mean"].value for s in log.results.scores} == {
        m: s["mean"] for m, s in march["metrics"].items() if s["mean"] is not None
    }
