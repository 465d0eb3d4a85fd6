"""deepeval's pytest plugin stays out of pytest runs that do not ask for it (issue 10, item 1).

The end-to-end tests run pytest in the environment these tests run in, where pytest-ambigqa
and deepeval are both installed (CI installs ``.[all,test]`` from a wheel), so they prove what
a user gets from ``pip install pytest-ambigqa[judge]``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import sysconfig
from importlib import metadata
from pathlib import Path

import pytest
from _pytest.config import PytestPluginManager

import pytest_ambigqa_gate

PROBE = """
import json, os, sys

def test_probe(pytestconfig):
    with open(f"probe-{os.getpid()}.json", "w") as out:
        json.dump({"plugin": pytestconfig.pluginmanager.has_plugin("deepeval"),
                   "imported": "deepeval" in sys.modules,
                   "worker": hasattr(pytestconfig, "workerinput")}, out)
"""


def _calls(pm: PytestPluginManager, group: str = "pytest11", name: str | None = None) -> bool:
    """Whether deepeval was blocked while pytest loaded the entry points."""
    calls = []

    def load(self, group, name=None):
        calls.append((group, name, self.is_blocked("deepeval")))
        return 0

    before = pm.is_blocked("deepeval")
    pytest_ambigqa_gate._gate(load)(pm, group, name)
    assert [c[:2] for c in calls] == [(group, name)]  # pytest's own loading always goes on
    assert pm.is_blocked("deepeval") == before  # out of the autoload only: later loads may take it
    return calls[0][2]


@pytest.fixture
def clean_env(monkeypatch):
    for name in ("DEEPEVAL", "PYTEST_PLUGINS"):
        monkeypatch.delenv(name, raising=False)


def test_a_plain_run_blocks_deepeval(clean_env):
    pm = PytestPluginManager()
    assert _calls(pm)
    assert pytest_ambigqa_gate.blocked_by_us(pm)


@pytest.mark.parametrize(
    "setup",
    [
        pytest.param(lambda pm, mp: mp.setenv("DEEPEVAL", "YES"), id="deepeval-test-run"),
        pytest.param(
            lambda pm, mp: mp.setenv("PYTEST_PLUGINS", "deepeval.plugins.plugin"), id="PYTEST_PLUGINS"
        ),
        pytest.param(lambda pm, mp: pm.set_blocked("ambigqa"), id="no-ambigqa"),
        pytest.param(lambda pm, mp: pm.register(object(), "deepeval"), id="p-deepeval"),
        pytest.param(lambda pm, mp: pm.set_blocked("deepeval"), id="p-no-deepeval"),
    ],
)
def test_a_run_that_asks_for_deepeval_keeps_it(monkeypatch, clean_env, setup):
    pm = PytestPluginManager()
    setup(pm, monkeypatch)
    assert _calls(pm) == pm.is_blocked("deepeval")  # blocked only where the user blocked it
    assert not pytest_ambigqa_gate.blocked_by_us(pm)
    if pm.get_plugin("deepeval") is not None:
        assert pm.has_plugin("deepeval")  # loaded by -p before autoload: never unregistered


def test_plugins_named_like_it_do_not_count(monkeypatch, clean_env):
    monkeypatch.setenv("PYTEST_PLUGINS", "my_deepeval_helpers")
    assert _calls(PytestPluginManager())


def test_loading_one_named_plugin_is_left_alone(clean_env):
    assert not _calls(PytestPluginManager(), name="deepeval")  # `-p deepeval`
    assert not _calls(PytestPluginManager(), group="other")


def test_quiet_keeps_what_the_user_set(monkeypatch):
    monkeypatch.setenv("DEEPEVAL_TELEMETRY_OPT_OUT", "0")
    for name in set(pytest_ambigqa_gate.QUIET) - {"DEEPEVAL_TELEMETRY_OPT_OUT"}:
        monkeypatch.delenv(name, raising=False)
    pytest_ambigqa_gate.quiet()
    assert os.environ["DEEPEVAL_TELEMETRY_OPT_OUT"] == "0"
    assert all(
        os.environ[name] == "1" for name in set(pytest_ambigqa_gate.QUIET) - {"DEEPEVAL_TELEMETRY_OPT_OUT"}
    )


# --- end to end, in this environment ---------------------------------------------------


def _require_both_installed() -> None:
    try:
        metadata.version("deepeval")
    except metadata.PackageNotFoundError:
        pytest.skip("deepeval is not installed here (the judge extra brings it)")
    files = metadata.distribution("pytest-ambigqa").files or []
    pth = [f for f in files if f.name == "pytest-ambigqa.pth"]
    assert pth, "pytest-ambigqa is installed without pytest-ambigqa.pth: the wheel must ship it"


@pytest.fixture
def project(tmp_path):
    _require_both_installed()
    (tmp_path / "test_probe.py").write_text(PROBE)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "DEEPEVAL"))}
    env["HOME"] = str(tmp_path)  # deepeval's own files, if any, go here
    return tmp_path, env


def _probes(path: Path) -> list[dict]:
    found = [json.loads(p.read_text()) for p in sorted(path.glob("probe-*.json"))]
    for p in path.glob("probe-*.json"):
        p.unlink()
    return found


def _pytest(path: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args]
    return subprocess.run(cmd, cwd=path, env=env, capture_output=True, text=True, timeout=300)


def test_an_ambig_run_never_imports_deepeval(project):
    path, env = project
    done = _pytest(
        path, env, "-v", "-n", "1", "test_probe.py",
        "--ambig-suite=march", "--ambig-system=lexical", "--ambig-limit=1",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    plugins = next(line for line in done.stdout.splitlines() if line.startswith("plugins:"))
    assert "ambigqa-" in plugins and "deepeval-" not in plugins  # the controller
    assert "deepeval's pytest plugin is not loaded in this run (-p deepeval loads it)" in done.stdout
    assert _probes(path) == [{"plugin": False, "imported": False, "worker": True}]  # the worker
    assert "Running teardown with pytest sessionfinish" not in done.stdout
    assert not (path / ".deepeval").exists()


def test_p_deepeval_loads_it(project):
    path, env = project
    done = _pytest(path, env, "-p", "deepeval", "test_probe.py")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _probes(path) == [{"plugin": True, "imported": True, "worker": False}]


def test_required_plugins_and_a_conftest_still_load_it(project):
    path, env = project
    (path / "pytest.ini").write_text("[pytest]\nrequired_plugins = deepeval\n")
    done = _pytest(path, env, "test_probe.py")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _probes(path) == [{"plugin": True, "imported": True, "worker": False}]
    (path / "pytest.ini").unlink()
    (path / "conftest.py").write_text('pytest_plugins = ["deepeval"]\n')
    done = _pytest(path, env, "test_probe.py")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _probes(path) == [{"plugin": True, "imported": True, "worker": False}]


def test_deepeval_test_run_still_works(project):
    path, env = project
    script = Path(sysconfig.get_path("scripts")) / "deepeval"
    if not script.exists():
        pytest.skip(f"deepeval's command is not installed at {script}")
    env = {**env, "DEEPEVAL_TELEMETRY_OPT_OUT": "1"}  # it must not try to phone home from a test
    cmd = [sys.executable, str(script), "test", "run", "test_probe.py"]
    done = subprocess.run(cmd, cwd=path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _probes(path) == [{"plugin": True, "imported": True, "worker": False}]


def test_an_ambig_run_prints_no_pytest_asyncio_warning(project):
    """pytest-asyncio, which deepeval brings with it, warns in every run of a project that
    has not set asyncio_default_fixture_loop_scope: an ambigqa run, serial or under -n 2,
    does not print it (issue 26, item 8); the user's other runs, and their files, are left
    as they were."""
    if importlib.util.find_spec("pytest_asyncio") is None:
        pytest.skip("pytest-asyncio is not installed here (deepeval brings it)")
    path, env = project
    unset = 'The configuration option "asyncio_default_fixture_loop_scope" is unset'
    for extra in ([], ["-n", "2"]):
        done = _pytest(path, env, *extra, "--ambig-suite=march", "--ambig-system=lexical", "--ambig-limit=2")
        assert done.returncode == 0, done.stdout + done.stderr
        assert "asyncio-" in done.stdout and unset not in done.stdout + done.stderr
    idle = _pytest(path, env, "test_probe.py")
    assert unset in idle.stdout + idle.stderr  # not our run: pytest-asyncio says what it says
    assert not [p for p in ("pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg") if (path / p).exists()]


def test_the_gate_imports_nothing_at_interpreter_start():
    """Every Python process of the environment runs the ``.pth`` line: the gate may import
    nothing the interpreter's start has not (``re`` alone cost ~7 ms); its work waits for
    pytest. ``-S``: no site, so nothing else imports first; ``os`` stands in for what it would."""
    gate = Path(pytest_ambigqa_gate.__file__).parent
    probe = (
        "import os, sys; before = set(sys.modules); import pytest_ambigqa_gate; "
        "print(' '.join(sorted(set(sys.modules) - before)))"
    )
    done = subprocess.run(
        [sys.executable, "-S", "-c", probe],
        cwd=gate,
        env={"PYTHONPATH": str(gate), "PATH": os.environ.get("PATH", "")},
        capture_output=True,
        text=True,
        check=True,
    )
    assert set(done.stdout.split()) <= {"pytest_ambigqa_gate", "__future__"}
