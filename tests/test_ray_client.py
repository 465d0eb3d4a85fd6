"""The Ray executor through Ray Client (``--ambig-executor=ray://HOST:PORT``) on a real Ray head
that each test starts on 127.0.0.1 (``ray start --head --ray-client-server-port``, its own temp
dir and token) and kills at its end: the same scorecard as a local run, the calls made in the
cluster's actors, the address in the config; a port where nothing listens fails each item with
one line that names it, at once; an address with a user, password or query, or without a
port, is one usage line that never shows a secret."""

from __future__ import annotations

import errno
import importlib.util
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import pytest
from test_ray import RUN, TIMEOUT, calls, separate_run, systems  # noqa: F401 - the fixture, too

from fixtures.process import ambig_run
from fixtures.ray_cluster import comparable
from pytest_ambigqa.executors.ray.pool import LOOPBACK, start_reason

pytestmark = [
    pytest.mark.ray,
    pytest.mark.skipif(
        importlib.util.find_spec("ray") is None,
        reason="ray is not installed: pip install 'pytest-ambigqa[ray]' (it is in the test extra)",
    ),
]

UP_S = 60  # seconds the head may take to accept Ray Client connections on a loaded machine
DOWN_S = 15  # seconds its processes may take to go once killed


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
        return True
    except ProcessLookupError:
        return False


@pytest.fixture
def ray_head(monkeypatch):
    """A Ray head on 127.0.0.1 with a Ray Client server, as ``ray start --head --block`` in a
    process group of its own (killed, by its id, after the test); yields the client port. A
    recent Ray's head wants a token (``RAY_AUTH_TOKEN``, a fresh one here, never ~/.ray's); a
    client sends it only with ``RAY_AUTH_MODE=token`` (an explicit address never enables it),
    so the runs get both, as a user's would (older Rays ignore both)."""
    token = secrets.token_hex(16)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    for name, value in (
        (LOOPBACK, "0"),
        ("RAY_USAGE_STATS_ENABLED", "0"),
        ("RAY_AUTH_TOKEN", token),
        ("RAY_AUTH_MODE", "token"),
    ):
        monkeypatch.setenv(name, value)
    client = free_port()
    ports = {
        "--port": free_port(),
        "--ray-client-server-port": client,
        "--dashboard-port": free_port(),  # the fixed defaults, free here: heads may run side by side
        "--dashboard-agent-listen-port": free_port(),
    }
    # Short: Ray's Unix sockets live under it (at most 107 bytes of path).
    temp = tempfile.mkdtemp(prefix="ambigray-")
    command = [
        sys.executable, "-m", "ray.scripts.scripts", "start", "--head", "--block",
        "--node-ip-address=127.0.0.1", "--num-cpus=2", "--include-dashboard=false",
        "--disable-usage-stats", f"--temp-dir={temp}", *(f"{k}={v}" for k, v in ports.items()),
    ]  # fmt: skip
    # The head's Ray Client proxy forks each client's server with a preexec_fn while gRPC runs;
    # with grpcio's fork handlers on, about 1 fork in 10 crashed here under load (SIGSEGV before
    # exec: "Starting Ray client server failed" after 40 s); off, none in 70.
    env = os.environ | {"GRPC_ENABLE_FORK_SUPPORT": "0"}
    log = Path(temp) / "head.log"
    with log.open("wb") as out:
        head = subprocess.Popen(
            command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        deadline = time.monotonic() + UP_S
        while not accepts(client):
            if head.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the Ray head did not start:\n{log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.5)
        yield client
    finally:
        if alive(head.pid):
            os.killpg(head.pid, signal.SIGKILL)  # the head's group: ray start and all it started
        head.wait(timeout=DOWN_S)
        deadline = time.monotonic() + DOWN_S
        while alive(head.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        shutil.rmtree(temp, ignore_errors=True)


def client_run(pytester, address: str, *args: str):
    return separate_run(pytester, f"--ambig-executor={address}", *args, report="client")


def test_a_ray_client_run_gives_the_local_scorecard_its_calls_made_in_the_clusters_actors(
    systems,  # noqa: F811 - test_ray's fixture
    ray_head,
):
    both = ("--ambig-system=mysys:Answerer", "--ambig-suite=march,asqa")
    local, expected = ambig_run(systems, *RUN, *both, report="local")
    assert local.ret == 0
    calls(systems)
    assert all(item["answer"]["citations"] for item in expected["items"])  # the retriever answered
    address = f"ray://127.0.0.1:{ray_head}"
    result, card = client_run(systems, address, *RUN, *both, "--ambig-ray-actors=2")
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=23)
    assert comparable(card) == comparable(expected)
    said = {"executor": address, "ray_actors": 2, "ray_cpus": 1.0, "ray_gpus": 0.0, "concurrency": 4}
    assert {k: card["config"][k] for k in said} == said
    made = calls(systems)
    assert len(made) == 23 + 2  # each item once, and the class constructed once per actor
    assert len({actor for _, actor, _ in made}) == 2  # both actors got items
    assert "-" not in {actor for _, actor, _ in made}  # none ran in the test's process
    assert len({node for _, _, node in made}) == 1  # the head: the cluster's one node


@pytest.mark.parametrize("named_by", ["option", "RAY_ADDRESS"])
def test_a_ray_client_address_where_nothing_listens_fails_each_item_at_once_with_one_line_naming_it(
    systems,  # noqa: F811 - test_ray's fixture
    monkeypatch,
    named_by,
):
    port = free_port()
    if named_by == "option":
        executor = shown = f"ray://127.0.0.1:{port}"
    else:  # a password in Ray's own variable is never shown either
        monkeypatch.setenv("RAY_ADDRESS", f"ray://alice:hunter2-secret@127.0.0.1:{port}")
        executor, shown = "ray", f"ray://[redacted]@127.0.0.1:{port}"
    # -rN: no short summary, whose lines pytest leaves whole where CI is set (a second copy)
    result, card = client_run(systems, executor, *RUN, "--ambig-system=mysys:answer", "-rN")
    assert result.ret == 1, result.stdout.str()
    result.assert_outcomes(errors=13)
    assert {item["error"] for item in card["items"]} == {
        f"Ray could not start or join {shown}: [Errno {errno.ECONNREFUSED}] Connection refused"
    }
    assert card["config"]["executor"] == executor
    said = result.stdout.str() + result.stderr.str()
    assert said.count(f"Ray could not start or join {shown}: ") == 13  # one line per item
    assert "Traceback" not in said
    written = "".join(path.read_text() for path in (systems.path / "client").iterdir())
    assert "hunter2" not in said + written and "alice" not in said + written
    assert not (systems.path / "calls.txt").exists()
    # "refused", from the run's own check: Ray Client alone would try for about 30 s and then
    # say only "ray client connection timeout" (no wall-clock bound: CI's machine is busy)


def test_why_ray_could_not_be_joined_is_one_line_without_a_servers_traceback(monkeypatch):
    """A version mismatch (Ray's own words, from Ray's own check) keeps its five lines' content;
    a failure Ray Client passes on from the server keeps what it says, not its frames."""
    monkeypatch.setenv(LOOPBACK, "0")  # if Ray is first imported here: as the other tests want it
    from ray._private.utils import check_version_info

    with pytest.raises(RuntimeError) as mismatch:
        check_version_info(
            {"ray_version": "2.9.0", "python_version": "3.10.12"},
            "Ray Client",
            python_version_match_level="minor",
        )
    said = start_reason(mismatch.value)
    assert said.startswith(
        "Version mismatch: The cluster was started with: Ray: 2.9.0 Python: 3.10.12 "
        "This process on Ray Client was started with: Ray: "
    ), said
    assert "\n" not in said
    try:  # the proxy's words, as Ray Client raises them (ray/util/client/worker.py)
        raise RuntimeError(
            "Starting Ray client server failed. See ray_client_server_23002.err for detailed logs."
        )
    except RuntimeError:
        server = traceback.format_exc()
    said = start_reason(ConnectionAbortedError(f"Initialization failure from server:\n{server}"))
    assert said == (
        "Initialization failure from server: RuntimeError: Starting Ray client server failed. "
        "See ray_client_server_23002.err for detailed logs."
    )
    assert start_reason(OSError()) == "OSError"


TAKES = "Ray Client takes ray://HOST:PORT, no user, password or query"
NAME = "name the cluster, ray://HOST:PORT (its Ray Client port)"


@pytest.mark.parametrize(
    ("given", "shown", "message"),
    [
        ("ray://alice:hunter2-secret@127.0.0.1:{port}", "ray://127.0.0.1:{port}", TAKES),
        ("ray://alice-hunter2@127.0.0.1:{port}", "ray://127.0.0.1:{port}", TAKES),
        ("ray://127.0.0.1:{port}/?token=hunter2-secret", "ray://127.0.0.1:{port}", TAKES),
        ("ray://127.0.0.1", "ray://127.0.0.1", NAME),
        ("ray://127.0.0.1:port", "ray://127.0.0.1:port", NAME),
        ("ray://127.0.0.1:70000", "ray://127.0.0.1:70000", NAME),
    ],
)
def test_a_ray_client_address_that_cannot_connect_is_one_usage_line_that_never_shows_a_secret(
    systems,  # noqa: F811 - test_ray's fixture
    given,
    shown,
    message,
):
    port = free_port()
    given, shown = given.format(port=port), shown.format(port=port)
    result = systems.runpytest(*RUN, "--ambig-system=mysys:answer", f"--ambig-executor={given}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: --ambig-executor={shown}: {message}"])
    said = result.stdout.str() + result.stderr.str()
    assert "hunter2" not in said and "alice" not in said
    assert "Traceback" not in said


def test_without_grpcio_a_ray_client_address_names_the_extra(systems):  # noqa: F811 - test_ray's fixture
    """An install of ray without its client extra (grpc made unimportable in the inner run)."""
    systems.makeconftest("import sys\nsys.modules['grpc'] = None  # as if it were not installed\n")
    address = f"ray://127.0.0.1:{free_port()}"
    result = systems.runpytest_subprocess(*RUN, "--ambig-system=mysys:answer", f"--ambig-executor={address}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"ERROR: --ambig-executor={address}: Ray Client needs grpcio: pip install 'pytest-ambigqa[ray]'"]
    )
    assert "Traceback" not in result.stderr.str()
