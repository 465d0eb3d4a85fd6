"""What a 1-item run costs at start-up: against a bare one-test pytest run, or with all extras
installed against the core only.

``--against bare`` (issue 27, target 5: a 1-item run within 1.4x a bare one-test run), in this
environment: each round runs, in turn and each in its own directory (made once, so caches are
warm as on a second run), ``pytest`` on a file holding ``def test_x(): pass``, then 1-item runs:
MARCH with the user's own system (a module beside the run, ``--ambig-system=qa:answer``; the
target's run), MARCH with the default lexical baseline (BM25, so numpy), and ASQA with the
user's system (ROUGE-Lsum and NLTK), and ASQA with the user's system and STR-EM alone (issue 44,
target 5: within 1.4x). The same plugins load in every run (``_common.run_pytest``: bytecode
cached, Hypothesis's and pytest-asyncio's plugins off). Printed: the median wall clock and its
ratio to the bare run, and the median CPU time (user + system) of each process and its ratio,
which a shared machine's load moves less; and the load average before and after.

In the same rounds, two 1-item ASQA runs of a system that takes 1 s (``time.sleep``): STR-EM
alone, and every ASQA metric (ROUGE-Lsum's imports begun in the background as the run is
configured). Printed: the median time from the process's start to the item's result (its call
report, written by a ``conftest.py`` beside the run), and the ratio of the two (issue 44,
target 5: every metric within 1.1x of STR-EM alone).

``--against extras`` (issue 10: within 1.3x): two virtual environments are made once under
``bench/.envs`` (``core``: ``pip install -e .``; ``all``: the local CPU torch, then ``pip install
-e .[all]``, which brings deepeval and its pytest plugin). Each round runs, in a fresh directory
and in turn: core, all, and all with ``-p deepeval`` (deepeval's plugin loaded, as before
``pytest-ambigqa.pth``); the medians and their ratios are printed. Python's bytecode cache is
on, as on a user's machine (``_common.run_pytest`` explains why).

    python bench/startup.py [--against bare|extras] [--rounds 7]
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import arguments, run_pytest

REPO = Path(__file__).resolve().parent.parent
ENVS = Path(__file__).resolve().parent / ".envs"
RUN = ["--ambig-suite=march", "--ambig-system=lexical", "--ambig-limit=1", "-p", "no:cacheprovider", "-q"]


def _env(name: str, extras: str) -> Path:
    python = ENVS / name / "bin" / "python"
    if not python.exists():
        print(f"making bench/.envs/{name} (once)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(ENVS / name)], check=True)
        pip = [str(python), "-m", "pip", "install", "-q"]
        if extras:
            subprocess.run([*pip, "torch==2.13.0"], check=True)
        subprocess.run([*pip, "-e", f"{REPO}{extras}"], check=True)
    else:  # the start-up files an editable install copies go stale when they change here
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "-e", str(REPO)], check=True)
    return python


def _run(python: Path, *extra: str) -> float:
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE" and "PYTEST" not in k}
    with tempfile.TemporaryDirectory() as cwd:
        started = time.perf_counter()
        done = subprocess.run(
            [str(python), "-m", "pytest", *RUN, *extra], cwd=cwd, env=environ, capture_output=True, text=True
        )
        elapsed = time.perf_counter() - started
    if done.returncode != 0:
        output = done.stdout[-2000:] + done.stderr[-2000:]
        raise SystemExit(f"{python}: pytest failed ({done.returncode}):\n{output}")
    return elapsed


OWN_SYSTEM = """
def answer(question):
    return "It depends on which one you mean."
"""

OWN = "--ambig-system=qa:answer"  # qa.py, beside the run

SLOW_SYSTEM = """
import time

def answer(question):
    time.sleep(1)
    return "It depends on which one you mean."
"""

FIRST_RESULT = """
import os
import time

def pytest_runtest_logreport(report):  # the item's test, not test_x.py's beside it
    if report.when == "call" and "test_ambig[" in report.nodeid and not os.path.exists("first.txt"):
        with open("first.txt", "w") as out:
            out.write(repr(time.time()))
"""

#: (what, the run's arguments): the bare run first, the ratios' denominator.
ONE_ITEM = {
    "bare: one test, `def test_x(): pass`": ["test_x.py"],
    "MARCH, 1 item, the user's own system": ["--ambig-suite=march", "--ambig-limit=1", OWN],
    "MARCH, 1 item, the lexical baseline (default)": ["--ambig-suite=march", "--ambig-limit=1"],
    "ASQA, 1 item, the user's own system": ["--ambig-suite=asqa", "--ambig-limit=1", OWN],
    "ASQA, 1 item, the user's own system, STR-EM": [
        "--ambig-suite=asqa",
        "--ambig-limit=1",
        OWN,
        "--ambig-metrics=str_em",
    ],
}

#: (what, the run's arguments): 1-item runs of a 1 s system, timed to their first result.
FIRST = {
    "ASQA, 1 s system, STR-EM": [
        "--ambig-suite=asqa",
        "--ambig-limit=1",
        "--ambig-system=slow:answer",
        "--ambig-metrics=str_em",
    ],
    "ASQA, 1 s system, every metric": ["--ambig-suite=asqa", "--ambig-limit=1", "--ambig-system=slow:answer"],
}


def _timed(args: list[str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one pytest process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = run_pytest(args, cwd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def _first(args: list[str], cwd: Path) -> float:
    """Seconds from a pytest process's start to its first item's result."""
    (cwd / "first.txt").unlink(missing_ok=True)
    started = time.time()
    run_pytest(args, cwd)
    return float((cwd / "first.txt").read_text()) - started


def against_bare(rounds: int) -> None:
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        dirs = {}
        for number, name in enumerate([*ONE_ITEM, *FIRST]):
            dirs[name] = Path(tmp) / str(number)
            dirs[name].mkdir()
            (dirs[name] / "test_x.py").write_text("def test_x():\n    pass\n", encoding="utf-8")
            (dirs[name] / "qa.py").write_text(OWN_SYSTEM, encoding="utf-8")
            if name in FIRST:
                (dirs[name] / "slow.py").write_text(SLOW_SYSTEM, encoding="utf-8")
                (dirs[name] / "conftest.py").write_text(FIRST_RESULT, encoding="utf-8")
        for name, args in ONE_ITEM.items():
            _timed(args, dirs[name])  # warm-up: bytecode caches, the BM25 index
        for name, args in FIRST.items():
            _first(args, dirs[name])
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in ONE_ITEM}
        first: dict[str, list[float]] = {name: [] for name in FIRST}
        for _ in range(rounds):
            for name, args in ONE_ITEM.items():
                times[name].append(_timed(args, dirs[name]))
            for name, args in FIRST.items():
                first[name].append(_first(args, dirs[name]))
    wall = {name: statistics.median(t[0] for t in runs) for name, runs in times.items()}
    cpu = {name: statistics.median(t[1] for t in runs) for name, runs in times.items()}
    bare = next(iter(ONE_ITEM))
    print(
        f"1-item runs against a bare one-test run, median of {rounds} interleaved rounds "
        f"(load average {load[0]:.2f} before, {os.getloadavg()[0]:.2f} after, {os.cpu_count()} cores):"
    )
    for name, runs in times.items():
        spread = f"{min(t[0] for t in runs):.2f}-{max(t[0] for t in runs):.2f}"
        print(
            f"  {name:<46} {wall[name]:5.2f} s ({spread}) {wall[name] / wall[bare]:5.2f}x"
            f"   CPU {cpu[name]:5.2f} s {cpu[name] / cpu[bare]:5.2f}x"
        )
    print("first result of a 1-item run, a 1 s system, from the process's start:")
    alone = statistics.median(first[next(iter(FIRST))])
    for name, runs in first.items():
        median = statistics.median(runs)
        print(f"  {name:<46} {median:5.2f} s ({min(runs):.2f}-{max(runs):.2f}) {median / alone:5.2f}x")


def against_extras(rounds: int) -> None:
    core, full = _env("core", ""), _env("all", "[all]")
    variants = {
        "core only": (core,),
        "[all]": (full,),
        "[all], deepeval's plugin loaded": (full, "-p", "deepeval"),
    }
    for variant in variants.values():
        _run(*variant)  # warm-up: bytecode caches, the BM25 index cache
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(rounds):
        for name, variant in variants.items():
            times[name].append(_run(*variant))
    base = statistics.median(times["core only"])
    print(f"1-item MARCH run (lexical), median of {rounds} interleaved rounds:")
    for name, runs in times.items():
        median = statistics.median(runs)
        print(f"  {name:<34} {median:5.2f} s  ({min(runs):.2f}-{max(runs):.2f})  {median / base:4.2f}x core")


def main() -> None:
    args = arguments(__doc__, rounds=7, against="bare")
    if args.against not in ("bare", "extras"):
        raise SystemExit("--against: bare or extras")
    (against_bare if args.against == "bare" else against_extras)(args.rounds)


if __name__ == "__main__":
    main()
