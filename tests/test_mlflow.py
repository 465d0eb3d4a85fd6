"""MLflow (issue 43 §3): a run logged with ``--ambig-mlflow`` and read back through MLflow's own
client from a real SQLite store, its numbers scorecard.json's; shards under one run that
``merge --mlflow`` completes; no secret in anything logged; a dead server warned of once; and
the run shown by the real MLflow UI on 127.0.0.1 in headless Chromium. A run without the option
imports no MLflow (tests/test_layout.py's one-item run).

The main run is a real one of the plugin in a subprocess (once per module), whose system errs on
one item and puts a fake key in its answers and its error, as a leaky system would.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fixtures.browser import loopback_page
from fixtures.exports import KEY, LEAKY, LEAKY_RUN, recording_conftest
from fixtures.process import ambig_run, run_pytest
from fixtures.servers import answering
from pytest_ambigqa import cli
from pytest_ambigqa.card.saved import read_card

mlflow = pytest.importorskip("mlflow", reason="the [mlflow] extra: pip install 'pytest-ambigqa[mlflow]'")
# MLflow's SQLite store (SQLAlchemy, Alembic), imported up front: pytester's in-process runs drop
# what they imported, and a second SQLAlchemy beside the one MLflow keeps failed
# ("'InternalTraversal' object is not callable"), as fixtures/process.py says of others.
pytest.importorskip("mlflow.store.tracking.sqlalchemy_store", reason="the [mlflow] extra's SQLAlchemy")
from mlflow.tracking import MlflowClient  # noqa: E402 - after the skips above

from pytest_ambigqa.report import mlflow_log, mlflow_target  # noqa: E402 - imports MLflow

CONFTEST = recording_conftest("mlflow", "pytest_ambigqa.report.mlflow_log")
CLEAN = {"OPENAI_API_KEY": KEY, "MLFLOW_TRACKING_URI": "", "MLFLOW_EXPERIMENT_NAME": ""}


@dataclasses.dataclass
class Logged:
    root: Path
    returncode: int
    card: dict[str, Any]

    @property
    def client(self) -> MlflowClient:
        return MlflowClient(f"sqlite:///{self.root / 'mlflow.db'}")

    def run(self) -> Any:
        experiment = self.client.get_experiment_by_name("pytest-ambigqa")
        assert experiment is not None
        (found,) = self.client.search_runs([experiment.experiment_id])
        return found


@pytest.fixture(scope="module")
def logged(tmp_path_factory: pytest.TempPathFactory) -> Logged:
    """The run with ``--ambig-mlflow`` alone: the default store, mlflow.db in the rootdir."""
    root = tmp_path_factory.mktemp("mlflow")
    (root / "leaky.py").write_text(LEAKY)
    (root / "conftest.py").write_text(CONFTEST)
    done = run_pytest(root, *LEAKY_RUN, "--ambig-report=logged", "--ambig-mlflow", env=CLEAN)
    assert (root / "logged" / "scorecard.json").is_file(), done.stdout + done.stderr
    assert "MLflow" not in done.stdout + done.stderr  # no warning, no MLflow log line
    return Logged(root, done.returncode, json.loads((root / "logged" / "scorecard.json").read_text()))


def _numbers(card: dict[str, Any]) -> dict[str, float]:
    """scorecard.json's numbers under the names the docs give (every name here is already safe)."""
    found: dict[str, float] = {}

    def summaries(prefix: str, metrics: dict[str, Any]) -> None:
        for name, summary in metrics.items():
            found[f"{prefix}/{name}/n"], found[f"{prefix}/{name}/unscored"] = (
                summary["n"],
                summary["unscored"],
            )
            for key, suffix in (("mean", ""), ("low", "/low"), ("high", "/high")):
                if summary[key] is not None:
                    found[f"{prefix}/{name}{suffix}"] = summary[key]

    for suite in card["suites"]:
        for key in ("items", "errors", "missing"):
            found[f"{suite['name']}/{key}"] = suite[key]
        summaries(suite["name"], suite["metrics"])
        for part in suite["slices"]:
            found[f"{suite['name']}/slice/{part['name']}/items"] = part["items"]
            summaries(f"{suite['name']}/slice/{part['name']}", part["metrics"])
    return found


def test_a_run_is_logged_with_the_numbers_of_scorecard_json(logged: Logged) -> None:
    """Every suite's and slice's mean, interval and counts, exactly; the config as parameters;
    the store and its artifacts beside the rootdir's other files, MLflow loaded only for this."""
    run = logged.run()
    assert run.info.status == "FINISHED" and run.info.run_name == "march,asqa leaky:answer"
    expected = _numbers(logged.card)
    assert run.data.metrics == expected
    assert expected["march/str_em"] == logged.card["suites"][0]["metrics"]["str_em"]["mean"]
    assert "march/slice/semantic/str_em/low" in expected and "asqa/errors" in expected
    params = run.data.params
    assert params["config.seed"] == "0" and json.loads(params["config.suites"]) == ["march", "asqa"]
    assert params["config.settings.march"] == "open-retrieval" and params["system.label"] == "leaky:answer"
    assert run.data.tags["ambigqa.exit_status"] == str(logged.returncode)
    assert run.data.tags["ambigqa.gates"] == "passed"
    assert (
        run.info.artifact_uri
        == (logged.root / "mlruns" / "pytest-ambigqa").as_uri() + f"/{run.info.run_id}/artifacts"
    )
    assert (logged.root / "logged.modules").read_text() == "mlflow pytest_ambigqa.report.mlflow_log"


def test_the_item_table_and_the_reports_are_its_artifacts(logged: Logged, tmp_path: Path) -> None:
    """``ambigqa/items.json`` in MLflow's table format, an item a row with its scores; the
    reports under ``report/`` as --ambig-report wrote them."""
    run = logged.run()
    got = Path(logged.client.download_artifacts(run.info.run_id, "", str(tmp_path)))
    table = json.loads((got / "ambigqa" / "items.json").read_text())
    rows = [dict(zip(table["columns"], row, strict=True)) for row in table["data"]]
    assert [r["key"] for r in rows] == [f"{i['suite']}-{i['item_id']}" for i in logged.card["items"]]
    for row, item in zip(rows, logged.card["items"], strict=True):
        assert row["status"] == item["status"]
        assert {m: row[m] for m in item["scores"]} == item["scores"]
    assert json.loads(run.data.tags["mlflow.loggedArtifacts"]) == [
        {"path": "ambigqa/items.json", "type": "table"}
    ]
    errored = next(r for r in rows if r["item_id"] == "con-03")
    assert errored["status"] == "error" and "boom" in errored["error"]
    for name in ("report.html", "scorecard.json", "scorecard.md"):
        assert (got / "report" / name).read_bytes() == (logged.root / "logged" / name).read_bytes(), name


def test_no_secret_in_what_is_logged(logged: Logged, tmp_path: Path) -> None:
    """The key the system leaked into its answers and its error is in no artifact, parameter or
    tag (the answers kept, the key redacted); nor is a key or password in the config."""
    run = logged.run()
    got = Path(logged.client.download_artifacts(run.info.run_id, "", str(tmp_path / "run")))
    files = [p for p in got.rglob("*") if p.is_file()]
    assert len(files) == 4
    for path in files:
        assert KEY.encode() not in path.read_bytes(), path
    assert KEY not in json.dumps([run.data.params, run.data.tags])
    table = json.loads((got / "ambigqa" / "items.json").read_text())
    answers = [row[table["columns"].index("answer")] for row in table["data"]]
    assert any(a and a.endswith("(asked with [redacted])") for a in answers)
    # A config that holds credentials (a base URL's password and query key): scrubbed too.
    card = read_card(logged.root / "logged" / "scorecard.json")
    leaky = {**card.config, "llm_base_url": f"https://bob:{KEY}@models.example/v1?api_key={KEY}"}
    card = dataclasses.replace(card, config=leaky)
    uri = f"sqlite:///{tmp_path / 'secret.db'}"
    assert mlflow_log.log(card, mlflow_target.target(uri, "secrets", tmp_path), None, 0) is None
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("secrets")
    assert experiment is not None
    (again,) = client.search_runs([experiment.experiment_id])
    assert KEY not in json.dumps([again.data.params, again.data.tags])
    assert again.data.params["config.llm_base_url"].startswith("https://[redacted]@models.example/v1")


def _runs(uri: str, experiment: str) -> list[Any]:
    client = MlflowClient(uri)
    found = client.get_experiment_by_name(experiment)
    assert found is not None
    return list(client.search_runs([found.experiment_id], order_by=["attributes.start_time ASC"]))


def test_shards_log_under_one_run_that_merge_completes(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each shard is a child run of the run its shard set shares (``$MLFLOW_TRACKING_URI`` and
    ``$MLFLOW_EXPERIMENT_NAME`` say where), which ``merge --mlflow`` gives the merged numbers
    and ends; a later run of the same shards opens another. A merge whose server is down says
    so in one line and exits as it would have."""
    uri = f"sqlite:///{pytester.path / 'store' / 'shards.db'}"
    (pytester.path / "store").mkdir()
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.setenv("MLFLOW_EXPERIMENT_NAME", "nightly")
    pytester.makepyfile(mysys="def answer(question, item):\n    return item.long_answers[0]\n")
    cards = []
    args = ("--ambig-suite=march", "--ambig-system=mysys:answer", "--ambig-mlflow")
    for number in (1, 2):
        result, card = ambig_run(pytester, *args, f"--ambig-shard={number}/2", report=f"s{number}")
        assert result.ret == 0, result.stdout.str()
        cards.append(card)
    parent, *shards = _runs(uri, "nightly")
    assert parent.info.status == "RUNNING" and parent.data.tags["ambigqa.role"] == "shards"
    assert sorted(s.data.tags["ambigqa.shard"] for s in shards) == ["1/2", "2/2"]
    assert {s.data.tags["mlflow.parentRunId"] for s in shards} == {parent.info.run_id}
    for shard, card in zip(sorted(shards, key=lambda s: s.data.tags["ambigqa.shard"]), cards, strict=True):
        assert shard.data.metrics == _numbers(card)
    paths = [str(pytester.path / f"s{n}" / "scorecard.json") for n in (1, 2)]
    out = pytester.path / "merged"
    assert cli.main(["merge", *paths, "-o", str(out), f"--mlflow={uri}", "--mlflow-experiment=nightly"]) == 0
    merged = json.loads((out / "scorecard.json").read_text())
    completed, *_ = _runs(uri, "nightly")
    assert completed.info.run_id == parent.info.run_id and completed.info.status == "FINISHED"
    assert completed.data.metrics == _numbers(merged)
    assert completed.data.tags["ambigqa.gates"] == "passed"
    # The same shard set again, its run ended: a new one.
    result, _ = ambig_run(pytester, *args, "--ambig-shard=1/2", report="again")
    assert result.ret == 0
    runs = _runs(uri, "nightly")
    assert len(runs) == 5 and runs[-1].data.tags["mlflow.parentRunId"] not in {parent.info.run_id}
    capsys.readouterr()
    dead = f"--mlflow=http://127.0.0.1:{_free_port()}"
    assert cli.main(["merge", *paths, "-o", str(pytester.path / "m2"), dead]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(
        "pytest-ambigqa merge: could not log the run to MLflow at http://"
    )
    assert json.loads((pytester.path / "m2" / "scorecard.json").read_text())["suites"] == merged["suites"]


def test_a_dead_server_warns_once_and_changes_nothing(
    pytester: pytest.Pytester, logged: Logged, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tracking server that does not answer: one warning, the same exit status and the same
    scorecard as the run that logged."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    pytester.makepyfile(leaky=LEAKY)
    dead = f"--ambig-mlflow=http://127.0.0.1:{_free_port()}"
    result, card = ambig_run(pytester, *LEAKY_RUN, dead)
    assert result.ret == logged.returncode
    result.assert_outcomes(passed=22, errors=1, warnings=1)
    warned = [line for line in result.outlines if "could not log the run to MLflow" in line]
    assert len(warned) == 1, result.stdout.str()
    assert card["suites"] == logged.card["suites"]
    outcome = [(i["item_id"], i["status"], i["scores"]) for i in card["items"]]
    assert outcome == [(i["item_id"], i["status"], i["scores"]) for i in logged.card["items"]]


def test_under_xdist_the_controller_logs_one_run(pytester: pytest.Pytester) -> None:
    """The workers log nothing; the controller logs the whole run once, its numbers the scorecard's."""
    uri = f"sqlite:///{pytester.path / 'xdist.db'}"
    pytester.makepyfile(mysys="def answer(question, item):\n    return item.long_answers[0]\n")
    args = ("--ambig-suite=march", "--ambig-system=mysys:answer", f"--ambig-mlflow={uri}", "-n", "2")
    result, card = ambig_run(pytester, *args)
    assert result.ret == 0, result.stdout.str()
    (run,) = _runs(uri, "pytest-ambigqa")
    assert run.data.metrics == _numbers(card) and run.data.metrics["march/items"] == 13


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--ambig-mlflow", "tests"), "--ambig-mlflow: 'tests' is not a tracking URI"),
        (("--ambig-mlflow-experiment=x",), "--ambig-mlflow-experiment: the experiment of an MLflow run"),
    ],
)
def test_a_bad_option_is_one_usage_line(pytester: pytest.Pytester, args: tuple[str, ...], said: str) -> None:
    pytester.makepyfile(mysys="def answer(question):\n    return 'x'\n")
    result = pytester.runpytest("--ambig-suite=march", "--ambig-system=mysys:answer", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    lines = [line for line in result.errlines if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"ERROR: {said}"), lines


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--mlflow", "a.json", "b.json"), "--mlflow: 'a.json' is not a tracking URI"),
        (
            ("a.json", "--mlflow-experiment=x"),
            "--mlflow-experiment: the experiment of an MLflow run; set --mlflow",
        ),
    ],
)
def test_a_bad_merge_option_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], said: str
) -> None:
    assert cli.main(["merge", *args, "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"pytest-ambigqa merge: {said}")
    assert not (tmp_path / "out").exists()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _mlflow_ui() -> list[str] | None:
    """An ``mlflow`` command that serves the UI: ``$AMBIGQA_MLFLOW_SERVER``, else this
    interpreter's when its MLflow is the full package (mlflow-skinny has no UI)."""
    given = os.environ.get("AMBIGQA_MLFLOW_SERVER")
    if given:
        return [given]
    spec = importlib.util.find_spec("mlflow")
    built = (
        Path(spec.origin).parent / "server" / "js" / "build" / "index.html" if spec and spec.origin else None
    )
    return [sys.executable, "-m", "mlflow"] if built is not None and built.is_file() else None


@pytest.fixture
def mlflow_ui(request: pytest.FixtureRequest) -> Iterator[tuple[str, Logged]]:
    """``mlflow ui`` over the run's store on 127.0.0.1 (no job runner): its URL, and the run.
    Skipped before the run is made where no ``mlflow`` serves the UI."""
    command = _mlflow_ui()
    if command is None:
        reason = "the MLflow UI needs the full mlflow package (the test extra), or $AMBIGQA_MLFLOW_SERVER"
        if os.environ.get("AMBIGQA_REQUIRE_BROWSER") == "1":
            pytest.fail(f"{reason} (AMBIGQA_REQUIRE_BROWSER=1)", pytrace=False)
        pytest.skip(reason)
    logged: Logged = request.getfixturevalue("logged")
    port = _free_port()
    server = subprocess.Popen(
        [*command, "ui", "--backend-store-uri", f"sqlite:///{logged.root / 'mlflow.db'}"]
        + ["--host", "127.0.0.1", "--port", str(port), "--workers", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false", "DO_NOT_TRACK": "true"},
        start_new_session=True,  # its uvicorn worker is stopped with it
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        answering(url, server, within=180)  # 50 s to start on a loaded 2-core machine
        yield url, logged
    finally:
        if server.poll() is None:
            os.killpg(server.pid, 15)
        server.wait(timeout=30)


def test_the_mlflow_ui_shows_the_run_and_its_metrics(mlflow_ui: tuple[str, Logged], browser: Any) -> None:
    """The run's page in the real MLflow UI shows its name and a suite's STR-EM as logged
    (however many decimals the UI keeps); nothing but the server on 127.0.0.1 is asked for."""
    url, logged = mlflow_ui
    run = logged.run()
    mean = logged.card["suites"][0]["metrics"]["str_em"]["mean"]
    with loopback_page(browser, url) as (page, outside):
        page.goto(f"{url}#/experiments/{run.info.experiment_id}/runs/{run.info.run_id}")
        # The UI renders its panels as the run's parts arrive: wait for each before reading the page.
        for text in ("march,asqa leaky:answer", "march/str_em"):
            page.get_by_text(text, exact=True).first.wait_for()
        lines = [line.strip() for line in page.inner_text("body").splitlines()]
        shown = lines[lines.index("march/str_em") + 1]
        decimals = len(shown.partition(".")[2])
        assert float(shown) == round(mean, decimals), (shown, mean)
    assert outside == []


def test_where_a_run_is_logged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The flag alone: ``$MLFLOW_TRACKING_URI``, else mlflow.db in the rootdir (artifacts in
    mlruns/ beside it); the experiment: the option, else ``$MLFLOW_EXPERIMENT_NAME``, else ours."""
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.delenv("MLFLOW_EXPERIMENT_NAME", raising=False)
    found = mlflow_target.target("auto", None, tmp_path)
    assert found == mlflow_target.Target(
        f"sqlite:///{tmp_path / 'mlflow.db'}", "pytest-ambigqa", (tmp_path / "mlruns").as_uri()
    )
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:5000")
    monkeypatch.setenv("MLFLOW_EXPERIMENT_NAME", "nightly")
    assert mlflow_target.target("auto", None, tmp_path) == mlflow_target.Target(
        "http://127.0.0.1:5000", "nightly", None
    )
    assert mlflow_target.target("databricks", "mine", tmp_path).experiment == "mine"
    given = mlflow_target.target("https://bob:hunter2-secret@mlflow.example", None, tmp_path)
    assert given.shown() == "https://mlflow.example"


def test_metric_names_are_made_safe() -> None:
    assert mlflow_log.metric_key("march", "slice", "semantic", "str_em") == "march/slice/semantic/str_em"
    assert mlflow_log.metric_key("my suite", "F1@k+", "..", "") == "my suite/F1_k_/_/_"
