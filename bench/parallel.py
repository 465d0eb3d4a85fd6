"""xdist against one process, on jobs that wait and on jobs that compute (issue 27, target 3).

    python bench/parallel.py [--items 500] [--rounds 5] [--jobs waiting,computing,mixed] [--before DIR]

Three jobs on N ASQA items (the real dev sample of ../shared/data repeated with fresh ids when
it is there, else the bundled sample), every runner its own process, started in turn, round
after round (interleaved), with the median of each printed and the ratios of those medians:

- **waiting**: a 200 ms system, STR-EM (the job of ``bench/peers.py``): one process with
  ``--ambig-concurrency=32`` against ``-n 2 --ambig-concurrency=16``, the same 32 calls in
  flight. Target: ``-n 2`` no slower (ratio <= 1.0 within the noise);
- **computing**: a 0 ms system, every ASQA metric (ROUGE-Lsum, STR-EM, COVER-EM, length):
  ``-n 0`` against ``-n 2``, where xdist's second process puts scoring on a second core;
- **mixed**: a 20 ms system, every ASQA metric, serial: ``-n 0`` against ``-n 2`` (the target
  of issue 5, >= 1.6x);
- **xdist alone** (with the waiting job): two empty tests, no suite, ``-n 2`` against ``-n 0``:
  what starting and stopping two workers costs whatever the plugin does, to set beside the
  waiting job's difference.

``--before DIR``: a checkout of an earlier version (``git archive COMMIT | tar -x -C DIR``)
whose package runs the waiting job too, in the same rounds, for before and after figures.
Every runner imports the package of its checkout (this one's, not an editable install's).
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import tempfile
from pathlib import Path

from _common import REAL_ASQA, ROOT, arguments, run_pytest, scaled

SYSTEM = """
import os, time

LATENCY = float(os.environ["AMBIGQA_BENCH_SLEEP"])

def answer(question, item):
    time.sleep(LATENCY)
    return item.long_answers[0]
"""


def main() -> None:
    args = arguments(__doc__, items=500, rounds=5, jobs="waiting,computing,mixed", before="")
    jobs = set(args.jobs.split(","))
    before = Path(args.before).resolve() if args.before else None
    if before is not None and not (before / "pytest_ambigqa" / "__init__.py").is_file():
        raise SystemExit(f"--before {before}: no pytest_ambigqa package there")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "slow_system.py").write_text(SYSTEM)
        source = REAL_ASQA if REAL_ASQA.exists() else None
        data = scaled("asqa", args.items, root, source)
        (root / "warm").mkdir()
        warm = scaled("asqa", 8, root / "warm", source)
        (root / "ambig").mkdir()  # collects nothing but the benchmark items
        (root / "bare").mkdir()
        (root / "bare" / "test_bare.py").write_text("def test_a():\n    pass\n\n\ndef test_b():\n    pass\n")

        def runner(checkout: Path, sleep: float, *options: str):
            path = os.pathsep.join([str(checkout), str(root)])  # the checkout's package, the system
            env = {"PYTHONPATH": path, "AMBIGQA_BENCH_SLEEP": str(sleep)}

            def run(items: Path) -> float:
                return run_pytest(
                    [
                        "ambig", "--ambig-suite=asqa", f"--ambig-data={items}",
                        "--ambig-system=slow_system:answer", f"--ambig-cache-dir={root / 'cache'}",
                        *options,
                    ],
                    root,
                    env=env,
                )  # fmt: skip

            return run

        str_em = "--ambig-metrics=str_em"
        runners = {}
        for label, checkout in [("", ROOT), (", before", before)] if "waiting" in jobs else []:
            if checkout is not None:
                runners |= {
                    f"waiting{label}: one process, --ambig-concurrency=32": runner(
                        checkout, 0.2, str_em, "--ambig-concurrency=32"
                    ),
                    f"waiting{label}: -n 2 --ambig-concurrency=16": runner(
                        checkout, 0.2, str_em, "-n", "2", "--ambig-concurrency=16"
                    ),
                }
        if "waiting" in jobs:

            def bare(*options: str):
                return lambda items: run_pytest(["bare", *options], root, env={"PYTHONPATH": str(ROOT)})

            runners |= {
                "xdist alone: two empty tests, -n 0": bare(),
                "xdist alone: two empty tests, -n 2": bare("-n", "2"),
            }
        if "computing" in jobs:
            runners |= {"computing: -n 0": runner(ROOT, 0.0), "computing: -n 2": runner(ROOT, 0.0, "-n", "2")}
        if "mixed" in jobs:
            runners |= {"mixed: -n 0": runner(ROOT, 0.02), "mixed: -n 2": runner(ROOT, 0.02, "-n", "2")}
        for run in runners.values():  # bytecode caches written, files read once
            run(warm)
        times: dict[str, list[float]] = {name: [] for name in runners}
        for _ in range(args.rounds):
            for name, run in runners.items():
                times[name].append(run(data))
        median = {name: statistics.median(values) for name, values in times.items()}
        where = "the real dev sample, repeated" if source else "the bundled sample"
        print(f"{args.items} ASQA items ({where}); median of {args.rounds} interleaved rounds")
        for name, value in median.items():
            spread = f"{min(times[name]):.2f}-{max(times[name]):.2f}"
            print(f"  {name:<56} {value:6.2f} s  (range {spread} s)")

        def ratio(label: str, slow: str, fast: str) -> None:
            if slow in median and fast in median:
                print(f"{label}: {median[slow] / median[fast]:.2f}x")

        ratio(
            "waiting, -n 2 --ambig-concurrency=16 / one process --ambig-concurrency=32 (target <= 1.0)",
            "waiting: -n 2 --ambig-concurrency=16",
            "waiting: one process, --ambig-concurrency=32",
        )
        alone = ("xdist alone: two empty tests, -n 2", "xdist alone: two empty tests, -n 0")
        waiting = ("waiting: -n 2 --ambig-concurrency=16", "waiting: one process, --ambig-concurrency=32")
        if all(name in median for name in alone + waiting):
            print(
                f"  -n 2 takes {median[waiting[0]] - median[waiting[1]]:.2f} s more; "
                f"xdist alone takes {median[alone[0]] - median[alone[1]]:.2f} s more for two empty tests"
            )
        ratio(
            "  the same, before",
            "waiting, before: -n 2 --ambig-concurrency=16",
            "waiting, before: one process, --ambig-concurrency=32",
        )
        ratio("computing (0 ms, every ASQA metric): speed-up of -n 2", "computing: -n 0", "computing: -n 2")
        ratio("mixed (20 ms, every ASQA metric): speed-up of -n 2 (>= 1.6)", "mixed: -n 0", "mixed: -n 2")
        heavy = importlib.util.find_spec("sklearn") is not None
        print("environment:", "scikit-learn installed (NLTK imports it)" if heavy else "core install")
        print("load average: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()), f"on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
