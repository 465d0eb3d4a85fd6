"""What is wrong with the model set-up is said before any item (issue 38, part 4): one light
request to each model server (judge, ``llm:`` system, simulated user) before the first item,
against real servers on 127.0.0.1 that answer, refuse the key, or are not there; one line
naming the variable or the URL (without credentials), never one error per item."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from fixtures.network import GUARD
from fixtures.process import ambig_run
from fixtures.servers import SECRET
from pytest_ambigqa.models.preflight import probe

RIGHT_KEY = "sk-right-key-0123456789abcdef"


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on once the probe socket is closed."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that takes connections and never answers (listening, never accepting)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield sock.getsockname()[1]


def llm_run(
    pytester: pytest.Pytester, url: str, *args: str, report: str = "report"
) -> tuple[pytest.RunResult, dict]:
    pytester.makeconftest(GUARD)
    return ambig_run(
        pytester,
        "--ambig-suite=march",
        "--ambig-limit=2",
        "--ambig-system=llm:naive-rag",
        "--ambig-llm-model=scripted-m",
        f"--ambig-llm-base-url={url}",
        "--ambig-judge-retries=0",
        "--ambig-cache-dir=cache",
        *args,
        report=report,
    )


def refused(result: pytest.RunResult) -> str:
    """The one error line of a run stopped before any item (and that it ran none)."""
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
    said = result.stdout.lines + result.stderr.lines
    errors = [line for line in said if line.startswith("ERROR")]
    assert len(errors) == 1, said
    assert not any("test_ambig" in line or "PASSED" in line or "passed" in line for line in said), said
    assert "model server check: " in errors[0] and errors[0].endswith(
        "(checked before any item; --ambig-no-preflight skips it)"
    )
    return errors[0]


def assert_secret_nowhere(pytester: pytest.Pytester, result: pytest.RunResult, *secrets: str) -> None:
    output = result.stdout.str() + result.stderr.str()
    for secret in secrets:
        assert secret not in output
        for path in pytester.path.rglob("*"):
            if path.is_file():
                assert secret.encode() not in path.read_bytes(), path


# -- a server that answers: one request, and the run goes on ---------------------------------


def test_a_server_that_answers_is_asked_once_for_the_judge_and_the_llm_system(pytester, chat_server):
    result, card = llm_run(
        pytester, chat_server.url, "--ambig-judge=judge-m", f"--ambig-judge-base-url={chat_server.url}"
    )
    result.assert_outcomes(passed=2)
    assert chat_server.gets == ["/v1/models"]  # one server, one key: one light request
    assert len(card["items"]) == 2


def test_a_server_without_the_models_route_still_answers(pytester, chat_server):
    chat_server.models_route = False  # a 404 for GET /models: the server is there
    result, _ = llm_run(pytester, chat_server.url)
    result.assert_outcomes(passed=2)
    assert chat_server.gets == ["/v1/models"]


def test_the_check_runs_in_the_controller_only(pytester, chat_server):
    result, _ = llm_run(pytester, chat_server.url, "-n", "2")
    result.assert_outcomes(passed=2)
    assert chat_server.gets == ["/v1/models"]  # not once more per xdist worker


def test_the_check_can_be_skipped(pytester, chat_server):
    result, _ = llm_run(pytester, chat_server.url, "--ambig-no-preflight")
    result.assert_outcomes(passed=2)
    assert chat_server.gets == []
    port = closed_port()  # skipped, a dead server is what it was: one error per item
    result, card = llm_run(pytester, f"http://127.0.0.1:{port}/v1", "--ambig-no-preflight", report="dead")
    result.assert_outcomes(errors=2)


def test_collect_only_sends_nothing(pytester, chat_server):
    llm_run(pytester, chat_server.url, "--collect-only")
    assert chat_server.gets == []


# -- the key: missing, refused ------------------------------------------------------------------


def test_a_server_that_needs_a_key_and_none_is_set_names_the_variable(pytester, chat_server, monkeypatch):
    chat_server.key = RIGHT_KEY
    monkeypatch.delenv("OPENAI_API_KEY")
    result, card = llm_run(pytester, chat_server.url)
    line = refused(result)
    assert line == (
        "ERROR: model server check: --ambig-system=llm:naive-rag (--ambig-llm-model=scripted-m): "
        f"{chat_server.url} (--ambig-llm-base-url) asks for an API key (HTTP 401: Incorrect API key "
        "provided. You can find your API key at your account page.) and $OPENAI_API_KEY is not set: "
        "set it, or check the URL (checked before any item; --ambig-no-preflight skips it)"
    )
    assert chat_server.requests == [] and card == {}  # no item asked the model
    assert chat_server.gets == ["/v1/models"]


def test_a_refused_key_is_said_once_and_written_nowhere(pytester, chat_server):
    chat_server.key = RIGHT_KEY  # the environment holds SECRET: the wrong one
    result, _ = llm_run(
        pytester, chat_server.url, "--ambig-judge=judge-m", f"--ambig-judge-base-url={chat_server.url}"
    )
    line = refused(result)
    assert line.startswith(
        "ERROR: model server check: --ambig-judge=judge-m and --ambig-system=llm:naive-rag "
        f"(--ambig-llm-model=scripted-m): {chat_server.url} (--ambig-judge-base-url, --ambig-llm-base-url) "
        "refused the key in $OPENAI_API_KEY (HTTP 401: "
    )
    assert "check that the key is valid for this server" in line
    assert chat_server.requests == [] and chat_server.gets == ["/v1/models"]
    assert_secret_nowhere(pytester, result, SECRET)


def test_a_key_the_server_echoes_in_its_refusal_is_scrubbed(pytester, chat_server):
    chat_server.key, chat_server.echo_key = RIGHT_KEY, True
    result, _ = llm_run(pytester, chat_server.url)
    line = refused(result)
    assert "(HTTP 401: no such key: Bearer [redacted])" in line
    assert_secret_nowhere(pytester, result, SECRET)


# -- nothing answers ----------------------------------------------------------------------------


def test_a_closed_port_names_the_url_without_its_credentials(pytester, chat_server):
    port = closed_port()
    url = f"http://user:hunter2secret@127.0.0.1:{port}/v1?api_key=querysecret123"
    result, _ = llm_run(pytester, url)
    line = refused(result)
    assert line.startswith(
        "ERROR: model server check: --ambig-system=llm:naive-rag (--ambig-llm-model=scripted-m): "
        f"nothing answers at http://127.0.0.1:{port}/v1 (--ambig-llm-base-url) ("
    )
    assert "Connection refused" in line and "check the URL and that the server is running" in line
    assert_secret_nowhere(pytester, result, "hunter2secret", "querysecret123", SECRET)


def test_each_failing_server_of_a_panel_is_named_on_the_one_line(pytester, chat_server):
    port = closed_port()
    pytester.makeconftest(GUARD)
    result = pytester.runpytest(
        "--ambig-suite=march",
        "--ambig-system=oracle",
        "--ambig-judge=panel-a,panel-b",
        f"--ambig-judge-base-url={chat_server.url},http://127.0.0.1:{port}/v1",
    )
    line = refused(result)
    assert "--ambig-judge=panel-a" not in line  # its server answered
    assert f"--ambig-judge=panel-b: nothing answers at http://127.0.0.1:{port}/v1" in line


def test_the_simulated_user_is_named_as_such(pytester):
    port = closed_port()
    pytester.makeconftest(GUARD)
    result = pytester.runpytest(
        "--ambig-suite=march",
        "--ambig-protocol=interactive",
        "--ambig-costs=0:0.1",
        "--ambig-system=oracle",
        "--ambig-user=llm",
        "--ambig-judge=user-m",
        f"--ambig-judge-base-url=http://127.0.0.1:{port}/v1",
    )
    line = refused(result)
    assert line.startswith(
        "ERROR: model server check: the simulated user (--ambig-judge=user-m): nothing answers"
    )


def test_the_default_url_is_named_with_where_it_came_from(monkeypatch):
    port = closed_port()
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    from pytest_ambigqa.models.chat import server_url
    from pytest_ambigqa.session.preflight import _url_from

    assert server_url(None) == f"http://127.0.0.1:{port}/v1"
    assert _url_from(None, "--ambig-judge-base-url") == "$OPENAI_BASE_URL"
    monkeypatch.delenv("OPENAI_BASE_URL")
    assert _url_from(None, "--ambig-judge-base-url") == (
        "OpenAI's: neither --ambig-judge-base-url nor $OPENAI_BASE_URL is set"
    )


def test_a_server_that_never_answers_is_given_the_short_timeout(silent_port):
    said = probe(f"http://127.0.0.1:{silent_port}/v1", 0.5)
    assert said == (
        f"no answer from http://127.0.0.1:{silent_port}/v1 within 0.5 s: check the URL and that the server is up"
    )


def test_a_rescore_asks_no_system_so_its_server_is_not_checked(pytester, chat_server):
    first, _ = llm_run(pytester, chat_server.url)
    first.assert_outcomes(passed=2)
    port = closed_port()
    again, card = llm_run(
        pytester,
        f"http://127.0.0.1:{port}/v1",
        "--ambig-rescore=report/scorecard.json",
        report="rescored",
    )
    again.assert_outcomes(passed=2)
    assert len(card["items"]) == 2
