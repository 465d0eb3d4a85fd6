"""A 1-item run with all extras installed against the same run with only the core installed.

Target (issue 10): within 1.3x. Two virtual environments are made once under ``bench/.envs``
(``core``: ``pip install -e .``; ``all``: the local CPU torch, then ``pip install -e .[all]``,
which brings deepeval and its pytest plugin). Each round runs, in a fresh directory and in
turn: core, all, and all with ``-p deepeval`` (deepeval's plugin loaded, as before
``pytest-ambigqa.pth``); the medians and their ratios are printed. Python's bytecode cache
is on, as on a user's machine (``_common.run_pytest`` explains why).

    python bench/startup.py [--rounds 7]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import arguments

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


def main() -> None:
    args = arguments(__doc__, rounds=7)
    core, full = _env("core", ""), _env("all", "[all]")
    variants = {
        "core only": (core,),
        "[all]": (full,),
        "[all], deepeval's plugin loaded": (full, "-p", "deepeval"),
    }
    for variant in variants.values():
        _run(*variant)  # warm-up: bytecode caches, the BM25 index cache
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(args.rounds):
        for name, variant in variants.items():
            times[name].append(_run(*variant))
    base = statistics.median(times["core only"])
    print(f"1-item MARCH run (lexical), median of {args.rounds} interleaved rounds:")
    for name, runs in times.items():
        median = statistics.median(runs)
        print(f"  {name:<34} {median:5.2f} s  ({min(runs):.2f}-{max(runs):.2f})  {median / base:4.2f}x core")


if __name__ == "__main__":
    main()
