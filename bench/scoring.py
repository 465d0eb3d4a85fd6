"""Scoring on every core (issue 27, target 1): a run against the scoring floor of the machine,
and concurrency against none.

The job: N ASQA items (the real dev sample of ../shared/data repeated with fresh ids where it
is there, else the bundled sample), a system that answers at once with the item's first
annotated long answer, every ASQA metric (no reader: Disambig-F1 and DR are n/a, as in any
run without one). Printed, from one run of this script:

- the bare loop: the same metric code (``Suite.score``) over the same answers in one process,
  after its imports; the floor is that divided over the cores this process may use;
- the plugin's wall time (the whole pytest process) with ``--ambig-concurrency=C`` and the
  scoring pool (``--ambig-score-workers=auto``), and with scoring in the run's process
  (``--ambig-score-workers=0``), each against the floor (target: the pool within 1.3x);
- at 5,000 items, ``--ambig-concurrency=64`` against 1 (serial), with the pool and without
  (target: never slower).

Each run is its own process; the runs of a round alternate, and the medians of ``--rounds``
rounds are printed with the machine's load at the start and the end.

    python bench/scoring.py [--items 20000] [--small 5000] [--concurrency 8] [--rounds 1]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import BARE_SCORING, REAL_ASQA, arguments, run_pytest, scaled

from pytest_ambigqa.store.scoring import pool_size, usable_cores

SYSTEM = """
def answer(question, item):
    return item.long_answers[0]
"""


def main() -> None:
    args = arguments(__doc__, items=20000, small=5000, concurrency=8, rounds=1)
    cores, workers = usable_cores(), pool_size(None)
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "bench_system.py").write_text(SYSTEM)
        (root / "bare.py").write_text(BARE_SCORING)
        source = REAL_ASQA if REAL_ASQA.exists() else None
        big = scaled("asqa", args.items, root, source)
        small = scaled("asqa", args.small, root, source)
        env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
        runs = 0

        def plugin(data: Path, *options: str) -> float:
            nonlocal runs
            runs += 1  # a fresh response store each run: nothing is resumed
            return run_pytest(
                [
                    "--ambig-suite=asqa",
                    f"--ambig-data={data}",
                    "--ambig-system=bench_system:answer",
                    f"--ambig-cache-dir={root / f'cache{runs}'}",
                    *options,
                ],
                root,
                env=env,
            )

        def bare() -> float:
            out = subprocess.run(
                [sys.executable, str(root / "bare.py"), str(big), ""],
                capture_output=True,
                text=True,
                check=True,
            )
            return float(out.stdout.split()[-1])

        timed: dict[str, list[float]] = {}
        jobs = {
            "bare": bare,
            "pool": lambda: plugin(big, f"--ambig-concurrency={args.concurrency}"),
            "in-process": lambda: plugin(
                big, f"--ambig-concurrency={args.concurrency}", "--ambig-score-workers=0"
            ),
            "c1": lambda: plugin(small),
            "c64 pool": lambda: plugin(small, "--ambig-concurrency=64"),
            "c64 in-process": lambda: plugin(small, "--ambig-concurrency=64", "--ambig-score-workers=0"),
        }
        for round_ in range(args.rounds):
            order = list(jobs) if round_ % 2 == 0 else list(reversed(jobs))
            for name in order:
                timed.setdefault(name, []).append(jobs[name]())
        t = {name: statistics.median(values) for name, values in timed.items()}
    floor = t["bare"] / cores
    what = "the real ASQA dev sample" if source else "the bundled ASQA sample"
    print(
        f"{args.items:,} ASQA items ({what}, repeated with fresh ids), every metric, 0 ms system; "
        f"{cores} cores this process may use, {workers} scoring workers (auto); median of {args.rounds}; "
        f"load {load[0]:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"
    )
    each = t["bare"] / args.items * 1000
    print(f"  bare loop, one process            {t['bare']:8.1f} s  ({each:.2f} ms an item)")
    print(f"  floor: bare loop / {cores} cores       {floor:8.1f} s")
    for name, label in (("pool", "scoring pool (auto)"), ("in-process", "--ambig-score-workers=0")):
        print(
            f"  plugin, --ambig-concurrency={args.concurrency}, {label:<24} {t[name]:8.1f} s  "
            f"{t[name] / floor:.2f}x the floor"
        )
    print(f"  the pool against scoring in the run's process: {t['in-process'] / t['pool']:.2f}x faster")
    print(f"{args.small:,} items, 0 ms system: concurrency 64 against 1 (serial, {t['c1']:.1f} s)")
    for name, label in (("c64 pool", "scoring pool (auto)"), ("c64 in-process", "--ambig-score-workers=0")):
        print(f"  concurrency 64, {label:<24} {t[name]:8.1f} s  {t[name] / t['c1']:.2f}x concurrency 1")
    started = time.strftime("%Y-%m-%d")
    print(f"({started}; every run a whole pytest process)")


if __name__ == "__main__":
    main()
