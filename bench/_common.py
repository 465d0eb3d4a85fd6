"""Shared helpers for the bench scripts: synthetic data at scale, timed pytest runs."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from pytest_ambigqa.suites import SUITES, LoadOptions

# The repository root, for the test suite's ``fixtures`` (bench/reader.py builds its model with
# them) where the package is not an editable install; appended, so it shadows nothing installed.
ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))
# The real ASQA dev sample (../shared/data, not ours to commit): the bench's ASQA items where present.
REAL_ASQA = ROOT.parent / "shared" / "data" / "asqa" / "asqa_dev_sample40.jsonl"


# The scoring floor: ASQA's items scored in a bare loop (``python bare.py DATA METRICS``, METRICS
# comma-separated, empty for every metric), the answers made first; prints the loop's seconds.
BARE_SCORING = """
import sys, time
from pathlib import Path
from pytest_ambigqa.schema import Answer
from pytest_ambigqa.suites import SUITES, LoadOptions, Scorers

suite = SUITES["asqa"]
scorers = Scorers(metrics=frozenset(sys.argv[2].split(","))) if sys.argv[2] else Scorers()
items = suite.load(Path(sys.argv[1]), LoadOptions()).items
answers = [Answer(text=item.long_answers[0]) for item in items]
suite.warm(scorers)
started = time.perf_counter()
for item, answer in zip(items, answers):
    suite.score(item, answer, scorers)
print(time.perf_counter() - started)
"""


def import_seconds(statement: str) -> float:
    """``statement`` (an import) run in a fresh interpreter, timed by its own clock."""
    code = f"import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"
    return float(
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    )


def scaled(suite: str, n: int, directory: Path, source: Path | None = None) -> Path:
    """``n`` items for ``suite``: the bundled sample (or ``source``, JSON or JSON lines)
    repeated with fresh ids, in its own format."""
    text = (source or SUITES[suite].sample_path()).read_text(encoding="utf-8")
    lines = text.lstrip()[:1] == "{"  # JSON lines (the real ASQA dev sample); our samples are lists
    raw = [json.loads(line) for line in text.splitlines() if line.strip()] if lines else json.loads(text)
    key = "sample_id" if suite == "asqa" else "id"
    records = [_copy(raw[i % len(raw)], key, i) for i in range(n)]
    path = directory / f"{suite}_{n}.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    assert len(SUITES[suite].load(path, LoadOptions()).items) == n
    return path


def _copy(record: dict, key: str, i: int) -> dict:
    """A copy with its own id and its own wording, so no cache sees repeated texts."""
    record = json.loads(json.dumps(record))
    record[key] = str(i)
    for annotation in record.get("annotations", []):
        annotation["long_answer"] += f" This is copy {i}."
    if "long_answer" in record:
        record["long_answer"] += f" This is copy {i}."
    for passage in record.get("passages", []) + record.get("docs", []) + record.get("ctxs", []):
        passage["text"] += f" Copy {i}."
    return record


def run_pytest(
    args: list[str], cwd: Path, env: dict[str, str] | None = None, terminal: bool = False
) -> float:
    """Wall-clock seconds of one pytest process (asserting it succeeded).

    Measured as on a user's machine: Python's bytecode cache is left on (this sandbox sets
    PYTHONDONTWRITEBYTECODE=1, which makes pytest re-rewrite every plugin module in every
    process and run); Hypothesis's pytest plugin, there only because our test extra installs
    it, is not loaded, nor is pytest-asyncio's (deepeval's dependency); deepeval's own is kept
    out by pytest-ambigqa.pth. ``terminal``: its output goes to a pseudo-terminal, as a user's
    does (without ``-q``), not into a pipe.
    """
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    started = time.perf_counter()
    quiet = ["-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "no:asyncio"]
    command = [sys.executable, "-m", "pytest", *quiet, *([] if terminal else ["-q"]), *args]
    environ |= env or {}
    if terminal:
        from fixtures.terminal import in_terminal

        code, output = in_terminal(command, cwd, environ)
    else:
        proc = subprocess.run(command, cwd=cwd, env=environ, capture_output=True, text=True)
        code, output = proc.returncode, f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    elapsed = time.perf_counter() - started
    if code not in (0, 5):
        raise SystemExit(f"pytest failed ({code}):\n{output[-6000:]}")
    return elapsed


def median_of(runs: int, fn) -> float:
    """The median of ``runs`` timings, after one untimed warm-up run (caches filled)."""
    fn()
    return statistics.median(fn() for _ in range(runs))


def arguments(doc: str, **defaults: int | float | str) -> argparse.Namespace:
    """The script's options, ``--name N`` for each default (``rounds=3`` gives ``--rounds``)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    for name, default in defaults.items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=type(default), default=default)
    return parser.parse_args()
