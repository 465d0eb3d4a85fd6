"""The invariant, as a matrix, for secrets and for what reaches a terminal (issue 39, sections 2
and 3): whatever a system, an HTTP endpoint or a judge server says, and however a credential
is written into a URL,

- no secret is in any file or output, not even a part of it: no 10-character window of it
  (a text cut before it was scrubbed used to keep the first characters of a key);
- no escape sequence from data, an answer or a server's error reaches the terminal: control
  characters are shown escaped (``\\x1b``), so no title change (OSC 0/2), clipboard write
  (OSC 52), hyperlink (OSC 8), screen clear or cursor move (CSI), bell;
- no internal error: a URL a library would misread is one usage line that never shows its
  credential, or is read right;
- the run's numbers are what a run without the fault gives, where the fault does not touch them.
"""

from __future__ import annotations

import base64
import io
import json
import sqlite3
import urllib.parse
from pathlib import Path

import pytest
from test_fault_matrix import LIMIT, fault_free

from fixtures.network import GUARD
from fixtures.process import ambig_run
from fixtures.servers import SECRET
from pytest_ambigqa.metrics import METRICS
from pytest_ambigqa.models.batch import _storable
from pytest_ambigqa.models.chat import server_url
from pytest_ambigqa.output import bounded, excerpt, for_terminal, redact, scrub, sent_url, split_url
from pytest_ambigqa.session.statusline import StatusLine
from pytest_ambigqa.suites import SUITES

# A password holding every character that ends a URL's user info or authority early
USER, PASSWORD = "alice", "p/a?s#s@w:rd-4711-Xq9Zk2"
ENCODED = "p%2Fa%3Fs%23s%40w%3Ard-4711-Xq9Zk2"
TOKEN = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
# The first 190 characters of an error, so that a cut at 200 falls inside what follows
PAD = ("refused: " * 30)[:190]
# Title change, clipboard write, hyperlink, screen clear and cursor home, C1 CSI and OSC, a bell
ESCAPES = (
    "\x1b]0;pwned\x07 \x1b]52;c;ZXZpbA==\x07 \x1b]8;;http://evil.invalid/\x1b\\link\x1b]8;;\x1b\\ "
    "\x1b[2J\x1b[H \x9b31m \x9d2;title\x9c \x07 \r\x7f"
)
ESCAPE_BYTES = ("\x1b", "\x9b", "\x9d", "\x07")


def windows(secret: str, width: int = 10) -> set[str]:
    """Every ``width``-character window of ``secret``: any of them in an output is a leak."""
    return {secret[i : i + width] for i in range(max(1, len(secret) - width + 1))}


def leaks(pytester: pytest.Pytester, output: str, secrets: list[str]) -> list[str]:
    """The windows of ``secrets`` found in ``output`` or in any file of the run."""
    found = []
    parts = {w for s in secrets for w in windows(s)}
    # not the test's own system module (and its bytecode), which holds the secret it raises
    files = {
        p: p.read_bytes() for p in pytester.path.rglob("*") if p.is_file() and p.suffix not in (".py", ".pyc")
    }
    for window in sorted(parts):
        if window in output:
            found.append(f"output: {window!r}")
        found += [f"{path.name}: {window!r}" for path, data in files.items() if window.encode() in data]
    return found


def no_internal_error(output: str) -> None:
    # (a system's own error shows its frames as "Traceback of the system": that is no internal error)
    assert "INTERNALERROR" not in output and "Traceback (most recent call last)" not in output, output[-3000:]


def no_escape(output: str) -> None:
    found = [c for c in ESCAPE_BYTES if c in output]
    assert not found, (found, output[-3000:])


# -- the helpers, directly ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "userinfo", "host", "rest"),
    [
        (
            f"http://{USER}:{PASSWORD}@127.0.0.1:8000/qa?x=1",
            f"{USER}:{PASSWORD}",
            "127.0.0.1:8000",
            "/qa?x=1",
        ),
        (f"https://{USER}:{ENCODED}@h/v1", f"{USER}:{ENCODED}", "h", "/v1"),
        ("https://token@h/x", "token", "h", "/x"),
        ("ray://u:a#b@h:10001", "u:a#b", "h:10001", ""),
        ("s3://bucket/key@v2", None, "bucket", "/key@v2"),
        ("file:///tmp/a@b/c", None, "", "/tmp/a@b/c"),
        ("https://h/p?q=a@b", None, "h", "/p?q=a@b"),
        ("http://127.0.0.1:80/a", None, "127.0.0.1:80", "/a"),
    ],
)
def test_the_user_info_is_everything_up_to_the_last_at_sign(url, userinfo, host, rest):
    parts = split_url(url)
    assert parts is not None and (parts.userinfo, parts.host, parts.rest) == (userinfo, host, rest)
    assert PASSWORD not in redact(url) and "alice" not in redact(url)


def test_a_password_written_unencoded_is_found_and_sent_encoded():
    parts = split_url(f"http://{USER}:{PASSWORD}@127.0.0.1:8000/v1")
    assert parts is not None and parts.unencoded and (parts.user, parts.password) == (USER, PASSWORD)
    assert parts.encoded() == f"http://{USER}:{ENCODED}@127.0.0.1:8000/v1"
    assert server_url(f"http://{USER}:{PASSWORD}@127.0.0.1:8000/v1") == parts.encoded()
    assert server_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"
    sent_url(f"http://{USER}:{PASSWORD}@127.0.0.1:8000/v1")
    for said in (PASSWORD, ENCODED, TOKEN, f"http://{USER}:{PASSWORD}@host/x"):
        assert not any(w in scrub(f"echo {said} echo") for w in windows(PASSWORD)), said
    assert not any(w in scrub(f"echo {TOKEN} echo") for w in windows(TOKEN))


def test_a_secret_is_scrubbed_before_the_text_is_cut(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    text = PAD + SECRET + " and more"
    for shown in (excerpt(text, 200), excerpt(text, 200, tail=True), excerpt(text.encode(), 200)):
        assert not any(w in shown for w in windows(SECRET)), shown
    record = bounded({"error": text, "answer": {"text": text}}, 200)
    assert not any(w in json.dumps(record) for w in windows(SECRET))
    # a key nobody told us about, recognised by its form only while it is whole
    other = "sk-" + "A1b2C3d4E5f6G7h8J9k0"
    assert excerpt(f"{PAD} {other}", 200) == f"{PAD} sk-[redacted]"[:200]


def test_control_characters_are_shown_escaped():
    shown = for_terminal(f"a {ESCAPES}\nnext\tline")
    assert not any(c in shown for c in ESCAPE_BYTES) and "\r" not in shown and "\x7f" not in shown
    assert "\\x1b]0;pwned\\x07" in shown and "\\x9b31m" in shown and "\nnext\tline" in shown
    assert "\n" not in for_terminal("a\nb", one_line=True)
    assert for_terminal(shown) == shown  # once is enough
    assert for_terminal("plain text, é and ∑") == "plain text, é and ∑"


def test_the_status_line_shows_no_escape_sequence_of_its_text():
    class Writer:
        fullwidth = 200
        _current_line = ""
        width_of_current_line = 0

        def __init__(self) -> None:
            self._file = io.StringIO()

    writer = Writer()
    line = StatusLine(writer)
    line.draw(f"ambigqa 3/10 {ESCAPES} done")
    drawn = writer._file.getvalue()
    ours = ("\x1b[J", "\x1b[A")
    for sequence in ours:
        drawn = drawn.replace(sequence, "")
    assert not any(c in drawn for c in ESCAPE_BYTES), drawn
    assert "\\x1b]0;pwned" in drawn


def test_a_batch_id_holding_a_secret_or_an_escape_is_not_stored(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    assert _storable("batch_abc123")
    assert not _storable(f"batch_{SECRET}") and not _storable("batch_\x1b]0;x\x07")


# -- 2. secrets, end to end --------------------------------------------------------------


def cut_echo(path, body, headers):
    """An HTTP system that answers every other item, and refuses the rest with an error body
    that puts the credentials it was sent, and the environment's key, across a cut at 200."""
    if sum(map(ord, body["id"])) % 2:
        return 200, {"text": body["question"]}
    auth = headers.get("Authorization", "")
    token = auth.partition(" ")[2]
    said = base64.b64decode(token).decode() if token else ""
    return 500, f"{PAD}{SECRET} {token} {said} {auth}".encode()


def judge_echo(path, body, headers):
    """A judge server whose every reply is an HTTP 400 quoting the key just past 190 characters."""
    return 400, {"error": {"message": f"{PAD}{SECRET} {headers.get('Authorization', '')} {ESCAPES}"}}


CUT_SECRETS = [SECRET, PASSWORD, ENCODED, TOKEN]


@pytest.mark.parametrize("workers", ["0", "2"])
@pytest.mark.parametrize("where", ["http-body", "judge-error", "answer-cut"])
def test_a_secret_cut_in_half_is_written_nowhere(pytester, local_server, monkeypatch, where, workers):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    pytester.makeconftest(GUARD)
    args = [
        "--ambig-suite=march",
        f"--ambig-limit={LIMIT}",
        "--ambig-cache-dir=cache",
        "--junitxml=junit.xml",
    ]
    if where == "http-body":
        host = local_server(cut_echo).url.removeprefix("http://")
        args.append(f"--ambig-system=http://{USER}:{PASSWORD}@{host}/qa")
    elif where == "judge-error":
        judge = local_server(judge_echo)
        args += ["--ambig-system=oracle", f"--ambig-judge-base-url={judge.url}/v1", "--ambig-judge=judge-m"]
        args += ["--ambig-judge-retries=1"]
    else:  # a system's answer and error cut by --ambig-max-text
        pytester.makepyfile(
            keyed=f"def answer(question, item):\n"
            f"    if item.index % 2:\n"
            f"        raise RuntimeError({PAD + SECRET!r})\n"
            f"    return item.long_answers[0] + ' ' + {PAD + SECRET!r}\n"
        )
        args += ["--ambig-system=keyed:answer", "--ambig-max-text=200"]
    result, card = ambig_run(pytester, *args, "-n", workers, "-rA")
    output = result.stdout.str() + result.stderr.str()
    no_internal_error(output)
    no_escape(output)
    assert len(card["items"]) == LIMIT and card["suites"][0]["missing"] == 0
    assert "[redacted]" in json.dumps(card) + output
    assert not leaks(pytester, output, CUT_SECRETS)
    if where == "judge-error":  # the judge's failure changes no other number
        expected = fault_free("march")
        for item in card["items"]:
            no_model = {m: v for m, v in item["scores"].items() if METRICS[m].needs is None}
            assert no_model == expected[f"march-{item['item_id']}"]


def auth_checking(path, body, headers):
    """An HTTP system that answers only when sent the password, as written, in Basic auth."""
    if headers.get("Authorization") != f"Basic {TOKEN}":
        return 401, {"error": "who are you?"}
    return 200, {"text": body["question"]}


def test_an_http_system_password_is_found_however_it_is_written(pytester, local_server):
    """Written with "/", "?", "#", "@" and ":" as they are, the password is sent as Basic auth and
    the run's numbers are the percent-encoded URL's."""
    host = local_server(auth_checking).url.removeprefix("http://")
    pytester.makeconftest(GUARD)
    cards = {}
    for report, password in (("encoded", ENCODED), ("unencoded", PASSWORD)):
        system = f"--ambig-system=http://{USER}:{password}@{host}/qa"
        result, card = ambig_run(
            pytester, "--ambig-suite=march", f"--ambig-limit={LIMIT}", system, report=report
        )
        output = result.stdout.str() + result.stderr.str()
        no_internal_error(output)
        assert {i["status"] for i in card["items"]} == {"ok"}, output[-2000:]
        assert f"http://{host}/qa" in json.dumps(card)
        assert not leaks(pytester, output, CUT_SECRETS)
        cards[password] = {i["item_id"]: i["scores"] for i in card["items"]}
    assert cards[PASSWORD] == cards[ENCODED]


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_judge_base_url_password_is_found_however_it_is_written(pytester, chat_server, workers):
    """The judge's URL with an unencoded password reaches the judge (numbers as with a plain URL)
    and shows the password nowhere."""
    host = chat_server.url.removeprefix("http://")
    pytester.makeconftest(GUARD)
    common = [
        "--ambig-suite=march",
        "--ambig-system=oracle",
        f"--ambig-limit={LIMIT}",
        "--ambig-judge=judge-m",
    ]
    plain, plain_card = ambig_run(
        pytester, *common, f"--ambig-judge-base-url={chat_server.url}", report="plain"
    )
    result, card = ambig_run(
        pytester, *common, f"--ambig-judge-base-url=http://{USER}:{PASSWORD}@{host}", "-n", workers
    )
    output = result.stdout.str() + result.stderr.str()
    no_internal_error(output)
    assert result.ret == plain.ret == pytest.ExitCode.OK, output[-2000:]
    assert [i["scores"] for i in card["items"]] == [i["scores"] for i in plain_card["items"]]
    assert {"judge" in i["scores"] for i in card["items"]} == {True}
    assert not leaks(pytester, output, CUT_SECRETS)


@pytest.mark.parametrize(
    ("option", "shown"),
    [
        (
            "--ambig-executor=ray://{user}:{password}@127.0.0.1:10001",
            "--ambig-executor=ray://127.0.0.1:10001",
        ),
        ("--ambig-report=s3://{user}:{password}@bucket/runs", "s3://bucket/runs"),
        ("--ambig-report=file://{user}:{password}@localhost/tmp/x", "file://localhost/tmp/x"),
    ],
)
def test_a_url_others_would_misread_is_one_usage_line_that_never_shows_its_credential(
    pytester, option, shown
):
    pytester.makeconftest(GUARD)
    given = option.format(user=USER, password=PASSWORD)
    result = pytester.runpytest("--ambig-suite=march", "--ambig-system=oracle", given)
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, output[-2000:]
    errors = [line for line in result.stderr.lines if line.startswith("ERROR:")]
    assert len(errors) == 1 and shown in errors[0], output
    no_internal_error(output)
    assert not [w for w in windows(PASSWORD) if w in output] and USER not in output


# -- 3. what reaches a terminal ----------------------------------------------------------


ESCAPING_SYSTEM = f"""
ESC = {ESCAPES!r}

def answer(question, item):
    kind = item.index % 3
    if kind == 0:
        raise RuntimeError("boom " + ESC)
    if kind == 1:
        return {{"text": "nothing useful " + ESC, "metadata": {{"m": ESC}}}}
    return {{"text": item.long_answers[0] + ESC, "interpretations": [{{"question": ESC, "answer": ESC}}]}}
"""


def escaping_http(path, body, headers):
    kind = sum(map(ord, body["id"])) % 3
    if kind == 0:
        return 500, f"server error {ESCAPES}".encode()
    if kind == 1:
        return 200, f"not json {ESCAPES}".encode()
    return 200, {"text": f"{body['question']} {ESCAPES}"}


def escaping_data(path: Path) -> Path:
    """The bundled MARCH sample with escape sequences in an id, a question and a gold answer."""
    items = json.loads(SUITES["march"].sample_path().read_text(encoding="utf-8"))
    items[0]["id"] = f"id{ESCAPES}"
    items[1]["question"] += ESCAPES
    path.write_text(json.dumps(items), encoding="utf-8")
    return path


@pytest.mark.parametrize("workers", ["0", "2"])
@pytest.mark.parametrize("source", ["python-system", "http-system", "judge-error", "data"])
def test_no_escape_sequence_reaches_the_terminal(pytester, local_server, monkeypatch, source, workers):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    pytester.makeconftest(GUARD)
    args = ["--ambig-suite=march", "--ambig-item-min=str_em=1", "-v", "-rA", "--ambig-progress=off"]
    if source == "python-system":
        pytester.makepyfile(escaping=ESCAPING_SYSTEM)
        args.append("--ambig-system=escaping:answer")
    elif source == "http-system":
        args.append(f"--ambig-system={local_server(escaping_http).url}/qa")
    elif source == "judge-error":
        judge = local_server(judge_echo)
        args += ["--ambig-system=oracle", f"--ambig-judge-base-url={judge.url}/v1", "--ambig-judge=judge-m"]
        args += ["--ambig-judge-retries=1", f"--ambig-limit={LIMIT}"]
    else:
        data = escaping_data(pytester.path / "march-escaping.json")
        args += ["--ambig-system=oracle", f"--ambig-data={data}"]
    result, card = ambig_run(pytester, *args, "-n", workers)
    output = result.stdout.str() + result.stderr.str()
    no_internal_error(output)
    no_escape(output)
    assert card["items"] and card["suites"][0]["missing"] == 0, output[-2000:]
    if source in ("python-system", "http-system", "data"):
        assert "\\x1b" in output  # shown, escaped
    assert not leaks(pytester, output, [SECRET])


def test_a_batch_id_holding_the_key_and_an_escape_reaches_no_file_and_no_terminal(pytester, chat_server):
    """A server whose batch ids quote the key and a title change: the batch still waits, but its
    id is kept on disk by no run (a later run sends its requests again), and is shown escaped."""
    api = chat_server.batch_api
    api.plans = ["pending"]
    suffix = f"-{SECRET}-\x1b]0;pwned\x07"
    post, get = api.post, api.get

    def hostile_post(path, data, content_type):
        status, body, headers = post(path, data, content_type)
        if path.endswith("/batches") and status == 200:
            body = {**body, "id": body["id"] + suffix}
        return status, body, headers

    def hostile_get(path):
        status, body = get(urllib.parse.unquote(path).replace(suffix, ""))
        if isinstance(body, dict) and isinstance(body.get("id"), str) and body["id"].startswith("batch_"):
            body = {**body, "id": body["id"] + suffix}
        return status, body

    api.post, api.get = hostile_post, hostile_get
    pytester.makeconftest(GUARD)
    result, card = ambig_run(
        pytester,
        "--ambig-suite=march",
        "--ambig-system=oracle",
        f"--ambig-limit={LIMIT}",
        f"--ambig-judge-base-url={chat_server.url}",
        "--ambig-judge=judge-m",
        "--ambig-cache-dir=cache",
        "--ambig-judge-batch=0.05",
        "--ambig-judge-batch-poll=0.01",
        "-rA",
    )
    output = result.stdout.str() + result.stderr.str()
    no_internal_error(output)
    no_escape(output)
    assert len(card["items"]) == LIMIT and len(api.created) == 1, output[-2000:]
    reasons = {i["unscored"]["judge"] for i in card["items"]}
    assert reasons == {"pending batch batch_1-[redacted]-\x1b]0;pwned\x07"}  # escaped in JSON only
    assert not leaks(pytester, output, [SECRET])
    with sqlite3.connect(pytester.path / "cache" / "judge.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM batches").fetchone() == (0,)
