"""Every shell and Python example in the README and the site is run here or marked illustrative,
so none can rot (issue 41). tests/README.md, "Examples in the docs", says how to mark one.

A fenced block whose language is a shell's or Python's (``EXAMPLES``) carries, on the line just
before its fence, exactly one marker:

- ``<!-- example: illustrative -->`` or ``<!-- example: illustrative (why) -->``: not run;
- ``<!-- example: file PATH -->``: its text is written to PATH in the page's scratch directory,
  for the ``run`` blocks after it (a ``file`` marker may precede a block of any language);
- ``<!-- example: run -->`` or ``<!-- example: run exit=N -->``: run in that directory, a shell
  block as one ``bash -e -o pipefail`` script, a Python block as a script (``python -c``), and
  its exit status must be 0, or N.

:func:`test_every_example_is_marked` (fast) checks the markers of every page;
:func:`test_page_examples_run` (slow: it starts processes) runs each page that has ``run`` blocks.
The generated reference pages are not files in docs/ (docs/hooks.py makes them at build time).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import pytest

from fixtures.network import GUARD

ROOT = Path(__file__).parent.parent
SHELL = frozenset({"bash", "sh", "shell"})
PYTHON = frozenset({"python", "py", "python3", "py3"})
# Transcripts (prompts and what was printed): a reader copies from them, so they are examples too,
# but they cannot run as they stand; write the commands as ```bash to run them.
TRANSCRIPT = frozenset({"console", "pycon", "shell-session"})
EXAMPLES = SHELL | PYTHON | TRANSCRIPT
TIMEOUT = 300  # seconds a run block may take (the bundled samples take seconds)
TAIL = 60  # lines of a failed block's output shown

# An opening fence (CommonMark: three or more backticks or tildes; a backtick fence's info string
# has no backtick), indented or not: pymdownx.superfences takes fences indented under list items.
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}(?=[^`]*$)|~{3,})(?P<info>.*)$")
# Anything that claims to be a marker; MARKER is what a valid one looks like.
CLAIM = re.compile(r"^\s*<!--\s*examples?\b", re.IGNORECASE)
MARKER = re.compile(
    r"^\s*<!-- example: (?:"
    r"(?P<illustrative>illustrative)(?: \((?P<why>[^()]*(?:\([^()]*\)[^()]*)*)\))?"
    r"|file (?P<path>\S+)"
    r"|(?P<run>run)(?: exit=(?P<exit>\d{1,3}))?"
    r") -->\s*$"
)
# The first line of an unlabelled block that is a command, not what one printed.
COMMAND = re.compile(r"(\$ |(pytest|pytest-ambigqa|python3?|pip|uv|export|mkdocs|git|cd|bash)( |$))")
WANT = "want illustrative[ (why)], file PATH or run[ exit=N]"


@dataclass(frozen=True)
class Marker:
    kind: str  # illustrative, file or run
    path: str = ""  # file
    exit: int = 0  # run
    why: str = ""  # illustrative


@dataclass(frozen=True)
class Block:
    line: int  # the opening fence's, from 1
    lang: str  # the info string's first word, lower case ("" for none)
    text: str  # the content, dedented by the fence's indentation
    marker: Marker | None
    closed: bool = True


@dataclass
class Page:
    name: str  # as messages show it: the path from the repository root
    blocks: list[Block] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # "name:line: why", from reading it


def parse_marker(comment: str) -> Marker | str:
    """The marker in ``comment`` (a line), or why it is none."""
    found = MARKER.match(comment)
    if found is None:
        return f"not a marker: {comment.strip()!r} ({WANT})"
    if found["illustrative"]:
        return Marker("illustrative", why=found["why"] or "")
    if found["run"]:
        status = int(found["exit"] or 0)
        if status > 255:
            return f"exit={status}: an exit status is 0 to 255"
        return Marker("run", exit=status)
    path = PurePosixPath(found["path"])
    if path.is_absolute() or found["path"].startswith("~") or "\\" in found["path"]:
        return f"file {found['path']}: PATH must be relative (to the page's scratch directory)"
    if ".." in path.parts or path == PurePosixPath("."):
        return f"file {found['path']}: PATH must stay inside the page's scratch directory"
    return Marker("file", path=str(path))


def language(info: str) -> str:
    """The language an info string names: its first word (``python title="x.py"``, ``{.python}``)."""
    words = info.strip().split()
    return words[0].strip("{}").lstrip(".").lower() if words else ""


def read_page(path: Path, name: str | None = None) -> Page:
    """The fenced blocks of a Markdown file, each with the marker on the line before it, and the
    markers that are not on the line before a fence or are malformed."""
    page = Page(name or path.as_posix())
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None:
            if CLAIM.match(lines[i]):
                if i + 1 == len(lines) or not FENCE.match(lines[i + 1]):
                    page.problems.append(
                        f"{page.name}:{i + 1}: a marker goes on the line just before a fence"
                    )
                elif isinstance(parse_marker(lines[i]), str):
                    page.problems.append(f"{page.name}:{i + 1}: {parse_marker(lines[i])}")
            i += 1
            continue
        indent, fence = opening["indent"], opening["fence"]
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        end = next((j for j in range(i + 1, len(lines)) if closing.match(lines[j])), None)
        body = lines[i + 1 : len(lines) if end is None else end]
        text = "\n".join(line[min(len(indent), len(line) - len(line.lstrip())) :] for line in body)
        marker = parse_marker(lines[i - 1]) if i and CLAIM.match(lines[i - 1]) else None
        page.blocks.append(
            Block(
                line=i + 1,
                lang=language(opening["info"]),
                text=text + "\n" if text else "",
                marker=marker if isinstance(marker, Marker) else None,
                closed=end is not None,
            )
        )
        i = len(lines) if end is None else end + 1
    return page


def problems(page: Page) -> list[str]:
    """What is wrong with the page's examples, as ``name:line: why``."""
    found = list(page.problems)
    runs_after = [
        any(b.marker and b.marker.kind == "run" for b in page.blocks[k + 1 :])
        for k in range(len(page.blocks))
    ]
    for block, run_follows in zip(page.blocks, runs_after, strict=True):
        where = f"{page.name}:{block.line}:"
        fence = f"```{block.lang}" if block.lang else "``` (no language)"
        marker = block.marker
        if not block.closed:
            found.append(f"{where} the {fence} block's fence is never closed")
        if marker is None:
            if block.lang in EXAMPLES:
                found.append(f"{where} {fence} block without a marker")
            elif block.lang in ("", "text") and COMMAND.match(block.text.lstrip("\n")):
                found.append(
                    f"{where} {fence} block of commands: label it ```bash (then mark it),"
                    " or ```console for a session with what it prints"
                )
            continue
        if marker.kind == "file":
            if not run_follows:
                found.append(
                    f"{where} file {marker.path} is never used: no run block follows it on this page"
                    " (mark it illustrative)"
                )
        elif block.lang not in EXAMPLES:
            found.append(
                f"{where} example: {marker.kind} before a {fence} block: only shell and Python blocks are examples"
                " (file may precede any language)"
            )
            continue
        elif marker.kind == "run" and block.lang in TRANSCRIPT:
            found.append(
                f"{where} a {fence} block is a transcript and cannot run: write the commands as ```bash"
                " (and what they print as ```text), or mark it illustrative"
            )
        python = block.lang in PYTHON or (marker.kind == "file" and marker.path.endswith(".py"))
        if python and marker.kind in ("run", "file"):
            try:
                compile(block.text, f"{page.name}:{block.line}", "exec")
            except SyntaxError as error:
                found.append(
                    f"{where} the Python does not compile: {error.msg} (line {error.lineno} of the block)"
                )
    return sorted(found, key=lambda problem: int(problem[len(page.name) + 1 :].split(":", 1)[0]))


def pages() -> list[Page]:
    """The README, CONTRIBUTING.md, CHANGELOG.md and every page under docs/, as the site has them."""
    paths = [
        ROOT / name for name in ("README.md", "CONTRIBUTING.md", "CHANGELOG.md") if (ROOT / name).exists()
    ]
    paths += sorted((ROOT / "docs").rglob("*.md"))
    return [read_page(path, path.relative_to(ROOT).as_posix()) for path in paths]


def example_env(home: Path, guard: Path) -> dict[str, str]:
    """The environment a run block gets: a reader's, without secrets, CI or the outer run's pytest
    variables (PYTEST_ADDOPTS included: a reader's pytest is what the page shows), with the venv first on
    PATH, a home of its own inside ``home``, and the network guard (fixtures/network.py) in every
    Python process through a sitecustomize module in ``guard``. Hypothesis's pytest plugin is off:
    only the test extra installs it, and it imports all of Hypothesis in every process."""
    secret = re.compile(
        r"^(OPENAI_|ANTHROPIC_|AWS_|AZURE_|GOOGLE_|HF_|HUGGING_FACE_)|(_KEY|_TOKEN|_SECRET|_PASSWORD)$"
    )
    env = {
        name: value
        for name, value in os.environ.items()
        if not secret.search(name)
        and not name.startswith(("PYTEST_", "AMBIGQA_", "XDG_", "GITHUB_"))
        and name not in ("CI", "RAY_ADDRESS", "COLUMNS", "LINES")
    }
    guard.mkdir(parents=True, exist_ok=True)
    (guard / "sitecustomize.py").write_text(GUARD, encoding="utf-8")
    env.update(
        PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        PYTHONPATH=os.pathsep.join(filter(None, [str(guard), os.environ.get("PYTHONPATH")])),
        PYTHONDONTWRITEBYTECODE="1",
        HOME=str(home),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        HF_HOME=str(home / ".cache" / "huggingface"),
        HF_HUB_OFFLINE="1",
        PYTEST_ADDOPTS="-p no:hypothesispytest",
    )
    home.mkdir(parents=True, exist_ok=True)
    return env


def run_block(block: Block, cwd: Path, env: dict[str, str]) -> tuple[int | None, str]:
    """Run a ``run`` block in ``cwd``: its exit status (None past ``TIMEOUT``) and its output."""
    if block.lang in SHELL:
        argv = ["bash", "-e", "-o", "pipefail", "-c", block.text]
    else:
        argv = [sys.executable, "-c", block.text]
    # A session of its own, so that a timeout ends what the block started too (a pytest run).
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        return None, output
    return proc.returncode, output


def run_page(page: Page, scratch: Path) -> None:
    """Write the page's ``file`` blocks and run its ``run`` blocks, in order, in ``scratch``;
    fail at the first block whose exit status is not the one expected."""
    work = scratch / "work"
    work.mkdir(parents=True)
    env = example_env(scratch / "home", scratch / "guard")
    for block in page.blocks:
        marker, where = block.marker, f"{page.name}:{block.line}"
        if marker is None or marker.kind == "illustrative":
            continue
        if marker.kind == "file":
            target = (work / marker.path).resolve()
            assert target.is_relative_to(work.resolve()), (
                f"{where}: file {marker.path} leaves the scratch directory"
            )
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.text, encoding="utf-8")
            continue
        assert block.lang in SHELL | PYTHON, f"{where}: a ```{block.lang} block cannot run"
        status, output = run_block(block, work, env)
        if status == marker.exit:
            continue
        tail = "\n".join(output.splitlines()[-TAIL:])
        if status is None:
            why = f"still running after {TIMEOUT} s: stopped"
        elif status < 0:
            why = f"killed by signal {-status}"
        else:
            why = f"exited {status}, expected {marker.exit}"
        pytest.fail(
            f"{where}: the {block.lang} example {why}\n"
            f"(scratch directory {work}; line N of the block is line {block.line}+N of the page)\n"
            f"--- the block ---\n{block.text}--- its output, last {TAIL} lines ---\n{tail}",
            pytrace=False,
        )


PAGES = pages()


def test_every_example_is_marked() -> None:
    """Every shell and Python block of the README and the site is run, written as a file for one
    that runs, or marked illustrative; and every marker is well formed and where it belongs."""
    found = [problem for page in PAGES for problem in problems(page)]
    if found:
        pytest.fail(
            f"{len(found)} example(s) to mark or fix. A shell or Python block takes, on the line just before"
            " its fence, one of <!-- example: run -->, <!-- example: run exit=N -->, <!-- example: file PATH -->,"
            " <!-- example: illustrative (why) --> (tests/README.md, Examples in the docs):\n"
            + "\n".join(found),
            pytrace=False,
        )


@pytest.mark.parametrize(
    "page",
    [p for p in PAGES if any(b.marker and b.marker.kind == "run" for b in p.blocks)],
    ids=lambda p: p.name,
)
def test_page_examples_run(page: Page, tmp_path: Path) -> None:
    """The page's run blocks exit as they say, in a fresh scratch directory of the page's own."""
    run_page(page, tmp_path)


# The parser and the runner, on small pages of their own.


def page_of(tmp_path: Path, markdown: str) -> Page:
    path = tmp_path / "page.md"
    path.write_text(markdown, encoding="utf-8")
    return read_page(path, "page.md")


def test_fences_of_every_form(tmp_path: Path) -> None:
    page = page_of(
        tmp_path,
        "# Title\n\n"
        "<!-- example: run -->\n```bash\necho one\n```\n\n"
        '<!-- example: illustrative (needs an API key) -->\n~~~python title="x.py"\nprint(2)\n~~~\n\n'
        "<!-- example: run exit=3 -->\n````sh\n```\nnot a fence end\n````\n\n"
        "```text\nprinted\n```\n\n"
        "```\nno language\n```\n\n"
        "``` {.python .annotate}\nx = 1\n```\n",
    )
    assert [(b.line, b.lang) for b in page.blocks] == [
        (4, "bash"),
        (9, "python"),
        (14, "sh"),
        (19, "text"),
        (23, ""),
        (27, "python"),
    ]
    assert page.blocks[0].marker == Marker("run") and page.blocks[0].text == "echo one\n"
    assert page.blocks[1].marker == Marker("illustrative", why="needs an API key")
    assert page.blocks[2].marker == Marker("run", exit=3) and page.blocks[2].text == "```\nnot a fence end\n"
    assert [b.marker for b in page.blocks[3:]] == [None, None, None]
    assert problems(page) == ["page.md:27: ```python block without a marker"]


def test_fences_indented_under_a_list_item(tmp_path: Path) -> None:
    page = page_of(
        tmp_path,
        "1. Write the system:\n\n"
        "    <!-- example: file mypkg/qa.py -->\n"
        "    ```python\n    def answer(q):\n        return q\n    ```\n\n"
        "2. Run it:\n\n"
        "   <!-- example: run -->\n   ```bash\n   python -c 'import mypkg.qa'\n   ```\n",
    )
    assert [(b.line, b.marker) for b in page.blocks] == [
        (4, Marker("file", path="mypkg/qa.py")),
        (12, Marker("run")),
    ]
    assert page.blocks[0].text == "def answer(q):\n    return q\n"
    assert page.blocks[1].text == "python -c 'import mypkg.qa'\n"
    assert problems(page) == []


def test_markers_not_in_place_or_malformed(tmp_path: Path) -> None:
    unmarked = "```bash block without a marker"
    page = page_of(
        tmp_path,
        "<!-- example: run -->\n\n```bash\ntrue\n```\n"  # a blank line between
        "<!-- example: running -->\n```bash\ntrue\n```\n"  # an unknown word
        "<!-- example: run exit=x -->\n```bash\ntrue\n```\n"
        "<!-- example: file /etc/passwd -->\n```text\nx\n```\n"
        "<!-- example: file ../up.txt -->\n```text\nx\n```\n"
        "<!-- example: illustrative -->\n<!-- example: run -->\n```bash\ntrue\n```\n"  # two
        "<!-- example: run -->\n```text\nprinted\n```\n"  # on a block that is no example
        "<!-- example: run -->\n```console\n$ pytest\n```\n"  # a transcript
        "<!-- example: file data.json -->\n```json\n{}\n```\n"  # file takes any language
        "<!-- example: run -->\n```python\nprint(\n```\n"  # does not compile
        "<!-- example: illustrative -->\n```python\nprint(\n```\n"  # not run: not compiled
        "```markdown\n<!-- example: run -->\n```\n"  # inside a block: text, not a marker
        "<!-- example: run -->\n```bash\nunclosed\n",
    )
    assert problems(page) == [
        "page.md:1: a marker goes on the line just before a fence",
        f"page.md:3: {unmarked}",
        f"page.md:6: not a marker: '<!-- example: running -->' ({WANT})",
        f"page.md:7: {unmarked}",
        f"page.md:10: not a marker: '<!-- example: run exit=x -->' ({WANT})",
        f"page.md:11: {unmarked}",
        "page.md:14: file /etc/passwd: PATH must be relative (to the page's scratch directory)",
        "page.md:18: file ../up.txt: PATH must stay inside the page's scratch directory",
        "page.md:22: a marker goes on the line just before a fence",
        "page.md:28: example: run before a ```text block: only shell and Python blocks are examples"
        " (file may precede any language)",
        "page.md:32: a ```console block is a transcript and cannot run: write the commands as ```bash"
        " (and what they print as ```text), or mark it illustrative",
        "page.md:40: the Python does not compile: '(' was never closed (line 1 of the block)",
        "page.md:51: the ```bash block's fence is never closed",
    ]


def test_commands_in_an_unlabelled_block(tmp_path: Path) -> None:
    page = page_of(
        tmp_path,
        "```\npytest --ambig-suite=march \\\n  --ambig-system=lexical\n```\n"
        "```text\n$ pytest-ambigqa data list\nmarch\n```\n"
        "```text\n===== ambigqa scorecard =====\npytest-ambigqa 0.1\n```\n"  # what a run printed
        "```\nsuites/<name>/   one folder per suite\n```\n",
    )
    assert problems(page) == [
        "page.md:1: ``` (no language) block of commands: label it ```bash (then mark it),"
        " or ```console for a session with what it prints",
        "page.md:5: ```text block of commands: label it ```bash (then mark it),"
        " or ```console for a session with what it prints",
    ]


def test_a_file_that_nothing_runs(tmp_path: Path) -> None:
    page = page_of(
        tmp_path,
        "<!-- example: file conf.toml -->\n```toml\nx = 1\n```\n"
        "<!-- example: illustrative (needs a key) -->\n```bash\npytest\n```\n",
    )
    assert problems(page) == [
        "page.md:2: file conf.toml is never used: no run block follows it on this page (mark it illustrative)"
    ]


def test_run_exit_status(tmp_path: Path) -> None:
    expected = page_of(
        tmp_path, "<!-- example: run exit=1 -->\n```bash\necho before\nfalse\necho never\n```\n"
    )
    run_page(expected, tmp_path / "expected")
    unexpected = page_of(tmp_path, "text\n\n<!-- example: run exit=1 -->\n```python\nprint('fine')\n```\n")
    with pytest.raises(pytest.fail.Exception) as failed:
        run_page(unexpected, tmp_path / "unexpected")
    message = str(failed.value)
    assert message.startswith("page.md:4: the python example exited 0, expected 1\n"), message
    assert message.endswith("--- its output, last 60 lines ---\nfine"), message


def test_file_then_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = page_of(
        tmp_path,
        "<!-- example: file mypkg/qa.py -->\n```python\ndef answer(question):\n    return question.upper()\n```\n"
        "<!-- example: run -->\n```python\n"
        "import os, sys\n"
        "from mypkg.qa import answer\n"
        "assert answer('a') == 'A'\n"
        "assert os.environ['HOME'] == os.path.join(os.path.dirname(os.getcwd()), 'home')\n"
        "assert 'CI' not in os.environ and 'OPENAI_API_KEY' not in os.environ\n"
        "assert os.environ['PATH'].startswith(os.path.dirname(sys.executable))\n"
        "open('made.txt', 'w').write('x')\n```\n"
        "<!-- example: run -->\n```bash\ntest -f made.txt\n```\n"
        "<!-- example: run exit=1 -->\n```bash\nfalse | true\n```\n"  # pipefail
        "<!-- example: run -->\n```python\n"  # the network guard
        "import socket\ntry:\n    socket.create_connection(('192.0.2.1', 80), timeout=5)\n"
        "except AssertionError as error:\n    assert 'network guard' in str(error)\n"
        "else:\n    raise SystemExit('reached the network')\n```\n",
    )
    assert problems(page) == []
    monkeypatch.setenv("OPENAI_API_KEY", "sk-set")
    monkeypatch.setenv("CI", "true")
    run_page(page, tmp_path / "scratch")


def test_a_block_past_the_timeout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.modules[__name__], "TIMEOUT", 1)
    page = page_of(tmp_path, "<!-- example: run -->\n```bash\necho started\nsleep 60 &\nwait\n```\n")
    with pytest.raises(pytest.fail.Exception) as failed:
        run_page(page, tmp_path / "scratch")
    message = str(failed.value)
    assert message.startswith("page.md:2: the bash example still running after 1 s: stopped\n"), message
    assert message.endswith("\nstarted"), message
