"""The run against its floor (issue 44, targets 1 and 2): P(N), pytest's own per-test protocol,
plus S(N), the scoring, at 500 / 5,000 / 20,000 items.

- **P(N)**: bare pytest running N trivial parametrized tests (``def test_item(i): pass``), a whole
  process with the same ``-p`` flags and the same JUnit file as the plugin's run.
- **S(N)**: the same answers scored in a bare loop by our metric code (``Suite.score``, the
  run's metric selection), after its imports, divided over the cores the run scores on (the
  scoring pool's workers where the run starts one, else 1).
- **the run**: N ASQA items (the real dev sample of ../shared/data repeated with fresh ids where
  it is there, else the bundled sample), a system that answers at once with the item's first
  annotated long answer, ``--ambig-report`` and ``--junitxml`` written; STR-EM only
  (``--ambig-metrics=str_em``, the default concurrency) and every ASQA metric
  (``--ambig-concurrency=64``, the scoring pool).
- **resume**: ``--ambig-resume`` of the every-metric run over its complete store (every answer
  and every score stored), against P(N) plus the time to read the store (every answer and score
  row read and checked as a resume checks it, in a bare loop).

Printed per N: each time, the ratio run / (P + S) (target: at most 1.3) and the run's own cost
per item above the floor ((run - P - S) / N: flat in N is the second half of target 1). Every
timing is a whole process; in each round the jobs of every size are interleaved (the order
reversed every other round), and medians over ``--rounds`` are printed with the machine's load.

``--parts N``: where the run's time above its floor goes, at N items: the STR-EM run and the
resume again with one part taken away after another (report.html; then pytest's JUnit file,
in P too; then the timeout thread, ``--ambig-timeout=0``; then the answer store's writes,
which only a stand-in plugin of this script can take away: a what-if, not an option), each
rung against its floor, with what the part it drops cost.

    python bench/floor.py [--items 500,5000,20000] [--rounds 1] [--resume-items 500,5000] [--parts 5000]
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _common import BARE_SCORING, REAL_ASQA, arguments, run_pytest, scaled

from pytest_ambigqa.store.scoring import THRESHOLD, pool_size

SYSTEM = """
def answer(question, item):
    return item.long_answers[0]
"""

TRIVIAL = """
import os
import pytest

@pytest.mark.parametrize("i", range(int(os.environ["AMBIGQA_BENCH_N"])))
def test_item(i):
    pass
"""

READ = """
import json, sqlite3, sys, time
from pytest_ambigqa.readback import check_answer, check_result

started = time.perf_counter()
db = sqlite3.connect(sys.argv[1])
for (payload,) in db.execute("SELECT payload FROM answers WHERE state = 'ok'"):
    check_answer(json.loads(payload))
for (payload,) in db.execute("SELECT payload FROM scores"):
    check_result(json.loads(payload))
print(time.perf_counter() - started)
"""

# --parts' last rung: a run whose answer store is never written (what its writes cost)
UNWRITTEN = """
from pytest_ambigqa.store.answers import AnswerStore

assert hasattr(AnswerStore, "_enqueue"), "the store's writes are no longer queued by _enqueue"
AnswerStore._enqueue = lambda self, statement, row: None
"""

# --parts: each rung drops one more part of the STR-EM run (then of the resume) than the one
# before: (job, the part it drops, how many of report.html and the JUnit file it leaves out, options)
RUNGS = (
    ("str_em", "", 0, ("--ambig-metrics=str_em",)),
    ("str_em", "report.html", 1, ("--ambig-metrics=str_em",)),
    ("str_em", "JUnit", 2, ("--ambig-metrics=str_em",)),
    ("str_em", "timeout thread", 2, ("--ambig-metrics=str_em", "--ambig-timeout=0")),
    ("str_em", "store's writes", 2, ("--ambig-metrics=str_em", "--ambig-timeout=0", "-p", "unwritten")),
    ("resume", "", 0, ()),
    ("resume", "report.html", 1, ()),
    ("resume", "JUnit", 2, ()),
)


def main() -> None:
    args = arguments(__doc__, items="500,5000,20000", rounds=1, resume_items="500,5000", parts=0)
    sizes = [int(n) for n in args.items.split(",") if n]
    resumed = [int(n) for n in args.resume_items.split(",") if n]
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "bench_system.py").write_text(SYSTEM)
        (root / "trivial_cases.py").write_text(TRIVIAL)
        (root / "bare.py").write_text(BARE_SCORING)
        (root / "read.py").write_text(READ)
        (root / "unwritten.py").write_text(UNWRITTEN)
        source = REAL_ASQA if REAL_ASQA.exists() else None
        parts = [args.parts] if args.parts else []
        data = {n: scaled("asqa", n, root, source) for n in sorted(set(sizes) | set(resumed) | set(parts))}
        env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}

        def plugin(n: int, cache: str, *options: str, dropped: int = 0) -> float:
            """``dropped``: how many of report.html and the JUnit file (in that order) it leaves out."""
            shutil.rmtree(root / "report", ignore_errors=True)
            files = [f"--ambig-report={root / 'report'}", f"--junitxml={root / 'junit.xml'}"][dropped:]
            return run_pytest(
                [
                    "--ambig-suite=asqa", f"--ambig-data={data[n]}", "--ambig-system=bench_system:answer",
                    f"--ambig-cache-dir={root / cache}", *files, *options,
                ],
                root,
                env=env,
            )  # fmt: skip

        def fresh(n: int, *options: str, dropped: int = 0) -> float:
            shutil.rmtree(root / "cache", ignore_errors=True)  # nothing is resumed
            return plugin(n, "cache", *options, dropped=dropped)

        def trivial(n: int, junit: bool = True) -> float:
            files = [f"--junitxml={root / 'junit.xml'}"] if junit else []
            return run_pytest(["trivial_cases.py", *files], root, env | {"AMBIGQA_BENCH_N": str(n)})

        def bare(n: int, metrics: str) -> float:
            out = subprocess.run(
                [sys.executable, str(root / "bare.py"), str(data[n]), metrics],
                capture_output=True, text=True, check=True, env=os.environ | env,
            )  # fmt: skip
            return float(out.stdout.split()[-1])

        def resume(n: int, dropped: int = 0) -> float:
            store = root / f"stored{n}"
            if not store.exists():  # the first run fills the store once
                plugin(n, f"stored{n}", "--ambig-concurrency=64")
            return plugin(n, f"stored{n}", "--ambig-concurrency=64", "--ambig-resume", dropped=dropped)

        def read(n: int) -> float:
            out = subprocess.run(
                [sys.executable, str(root / "read.py"), str(root / f"stored{n}" / "answers.sqlite")],
                capture_output=True, text=True, check=True, env=os.environ | env,
            )  # fmt: skip
            return float(out.stdout.split()[-1])

        jobs: dict[tuple[str, int], Callable[[], float]] = {}
        for n in sizes:
            jobs[("P", n)] = lambda n=n: trivial(n)
            jobs[("S str_em", n)] = lambda n=n: bare(n, "str_em")
            jobs[("S every", n)] = lambda n=n: bare(n, "")
            jobs[("run str_em", n)] = lambda n=n: fresh(n, "--ambig-metrics=str_em")
            jobs[("run every", n)] = lambda n=n: fresh(n, "--ambig-concurrency=64")
        for n in resumed:
            jobs.setdefault(("P", n), lambda n=n: trivial(n))
            jobs[("resume", n)] = lambda n=n: resume(n)
            jobs[("read", n)] = lambda n=n: read(n)
        for n in parts:
            jobs.setdefault(("P", n), lambda n=n: trivial(n))
            jobs[("P without JUnit", n)] = lambda n=n: trivial(n, junit=False)
            jobs.setdefault(("S str_em", n), lambda n=n: bare(n, "str_em"))
            jobs.setdefault(("read", n), lambda n=n: read(n))
            for rung, (job, _, dropped, options) in enumerate(RUNGS):
                if job == "str_em":
                    jobs[(f"rung {rung}", n)] = lambda n=n, o=options, d=dropped: fresh(n, *o, dropped=d)
                else:
                    jobs[(f"rung {rung}", n)] = lambda n=n, d=dropped: resume(n, dropped=d)
        for n in sorted({*resumed, *parts}):  # the stores are filled before any round: no round pays for them
            resume(n)
        timed: dict[tuple[str, int], list[float]] = {}
        for round_ in range(args.rounds):
            order = list(jobs) if round_ % 2 == 0 else list(reversed(jobs))
            for name in order:
                timed.setdefault(name, []).append(jobs[name]())
        t = {name: statistics.median(values) for name, values in timed.items()}
    what = "the real ASQA dev sample" if source else "the bundled ASQA sample"
    cores = pool_size(None)
    print(
        f"ASQA items ({what}, repeated with fresh ids), 0 ms system, --ambig-report and --junitxml; "
        f"{cores} scoring workers (auto) for every metric; median of {args.rounds}; "
        f"load {load[0]:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; "
        f"{time.strftime('%Y-%m-%d %H:%M')}"
    )
    rows = []
    for n in sizes:
        p = t[("P", n)]
        for job, bare_name, scoring_cores in (
            ("run str_em", "S str_em", 1),
            ("run every", "S every", cores if n >= THRESHOLD else 1),
        ):
            s = t[(bare_name, n)] / scoring_cores
            us = t[(job, n)]
            own = (us - p - s) / n * 1000
            rows.append({"job": job, "n": n, "P": p, "S": s, "us": us, "ratio": us / (p + s), "own_ms": own})
            print(
                f"  {job:<10} {n:>6,}: P {p:6.2f} s + S {s:6.2f} s (bare {t[(bare_name, n)]:.2f} s / "
                f"{scoring_cores}) -> us {us:6.2f} s, {us / (p + s):.2f}x; own {own:.3f} ms an item"
            )
    for n in resumed:
        p, r, us = t[("P", n)], t[("read", n)], t[("resume", n)]
        own = (us - p - r) / n * 1000
        rows.append({"job": "resume", "n": n, "P": p, "S": r, "us": us, "ratio": us / (p + r), "own_ms": own})
        print(
            f"  resume     {n:>6,}: P {p:6.2f} s + read {r:6.2f} s -> us {us:6.2f} s, {us / (p + r):.2f}x; "
            f"{us / p:.2f}x P; own {own:.3f} ms an item"
        )
    for n in parts:
        print(f"  where the time above the floor goes, {n:,} items (each rung drops one more part):")
        before = None
        for rung, (job, part, dropped, _) in enumerate(RUNGS):
            p = t[("P", n)] if dropped < 2 else t[("P without JUnit", n)]
            s, s_name = (t[("S str_em", n)], "S") if job == "str_em" else (t[("read", n)], "read")
            us = t[(f"rung {rung}", n)]
            floor = f"P{'' if dropped < 2 else ' without JUnit'} {p:.2f} s + {s_name} {s:.2f} s"
            cost = f"; {part} cost {before - us:.2f} s" if part and before is not None else ""
            shown = f"without {part}" if part else "as run"
            print(f"    {job:<6} {shown:<26} {us:6.2f} s, {us / (p + s):.2f}x {floor}{cost}")
            rows.append(
                {"job": job, "n": n, "without": part, "P": p, "S": s, "us": us, "ratio": us / (p + s)}
            )
            before = us
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
