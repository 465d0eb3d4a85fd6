"""What ``--ambig-sequential`` spends and how often it errs, by simulation: items needed to
decide a gate, and the wrong decisions, against watching a fixed-n 95% interval.

Populations of N binary scores (an exact-match metric) whose mean lies a given distance from
the gate's bound; each seed draws a random order; both rules look after every item and stop
at their first decision. Prints, per distance, the mean items used and the share of wrong
decisions (a pass for a mean under the bound, a fail for one over it).

With ``--cost N`` it measures instead what the gate costs a run (issue 44, target 6: at most
2% of a 20,000-item run that never stops early): N ASQA items (the real dev sample of
``../shared/data``, repeated with fresh ids), a zero-latency system that returns the item's
first annotated long answer, STR-EM alone, ``--ambig-fail-under=str_em=`` the true mean (cut
below it at the fourth decimal, so that the gate decides only at the last item), with and
without ``--ambig-sequential``, in alternating rounds. Printed: the whole run's wall clock and
the mean of the per-item protocol (``_timing.py``: the controller's gate runs in each item's
report), medians over the rounds, their ratios, and the load average before and after; the
processes' CPU time (user and system) beside the wall clock; and, measured inside the gated run
(``_gate_time.py``), the CPU time of the gate's own controller code as a share of that run's wall
clock: the direct measure, since a few percent is under this shared machine's run-to-run noise.

    python bench/sequential.py [--items 500] [--seeds 300]
    python bench/sequential.py --cost 20000 [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import REAL_ASQA, ROOT, run_pytest, scaled  # noqa: F401 - ROOT: the fixtures on the path

from fixtures.watching import fixed_n_watched
from pytest_ambigqa.stats.sequential import ConfidenceSequence, decide

BOUND = 0.5


SYSTEM = """
def answer(question, item):
    return item.long_answers[0]
"""


def cost(items: int, rounds: int) -> None:
    """The gate's cost to a run that never stops early (the module's docstring)."""
    from pytest_ambigqa.metrics.scoring import Scorers
    from pytest_ambigqa.schema import Answer
    from pytest_ambigqa.suites import SUITES, LoadOptions

    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "bench_system.py").write_text(SYSTEM)
        data = scaled("asqa", items, root, REAL_ASQA if REAL_ASQA.exists() else None)
        scorers = Scorers(metrics=frozenset({"str_em"}))
        loaded = SUITES["asqa"].load(data, LoadOptions()).items
        scores = [
            SUITES["asqa"].score(i, Answer(text=i.long_answers[0]), scorers).scores["str_em"] for i in loaded
        ]
        bound = math.floor(statistics.fmean(scores) * 100 * 10**4) / 10**4  # printed scale, just under
        times, gate = root / "times.json", root / "gate.json"
        env = {
            "AMBIGQA_BENCH_TIMES": str(times),
            "AMBIGQA_BENCH_GATE": str(gate),
            "PYTHONPATH": os.pathsep.join(
                filter(None, [str(Path(__file__).parent), str(root), os.environ.get("PYTHONPATH")])
            ),
        }
        base = [
            "-p", "_timing", "-p", "_gate_time", "--ambig-suite=asqa", f"--ambig-data={data}",
            "--ambig-system=bench_system:answer", "--ambig-metrics=str_em",
            f"--ambig-fail-under=str_em={bound}", "--ambig-report=report",
        ]  # fmt: skip
        runs = {"without the gate": base, "--ambig-sequential": [*base, "--ambig-sequential"]}
        wall: dict[str, list[float]] = {name: [] for name in runs}
        mean: dict[str, list[float]] = {name: [] for name in runs}
        cpu: dict[str, list[float]] = {name: [] for name in runs}
        own: list[float] = []  # the gate's controller code, a share of its run's wall clock
        for round_ in range(rounds):
            for name in list(runs) if round_ % 2 == 0 else list(reversed(runs)):
                cache = root / f"cache-{round_}-{len(wall[name])}-{name[:3]}"
                gate.unlink(missing_ok=True)
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                started = time.perf_counter()
                run_pytest([*runs[name], f"--ambig-cache-dir={cache}"], root, env=env)
                wall[name].append(time.perf_counter() - started)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[name].append(
                    sum(getattr(after, f) - getattr(before, f) for f in ("ru_utime", "ru_stime"))
                )
                if name != "without the gate":
                    own.append(json.loads(gate.read_text()) / wall[name][-1])
                mean[name].append(statistics.fmean(json.loads(times.read_text())[1:]) * 1000)
    load_after = os.getloadavg()[0]
    print(
        f"{items} ASQA items, zero-latency system, STR-EM, bound {bound} (just under the mean), "
        f"median of {rounds} alternating rounds (load average {load[0]:.2f} before, {load_after:.2f} after, "
        f"{os.cpu_count()} cores):"
    )
    for name in runs:
        print(
            f"  {name:<18} run {statistics.median(wall[name]):7.2f} s  "
            f"({', '.join(f'{w:.2f}' for w in wall[name])})  CPU {statistics.median(cpu[name]):7.2f} s  "
            f"per item {statistics.median(mean[name]):.4f} ms"
        )
    ratio = statistics.median(wall["--ambig-sequential"]) / statistics.median(wall["without the gate"])
    per = statistics.median(mean["--ambig-sequential"]) / statistics.median(mean["without the gate"])
    used = statistics.median(cpu["--ambig-sequential"]) / statistics.median(cpu["without the gate"])
    print(
        f"  the gate's cost: {ratio - 1:+.1%} of the run, {used - 1:+.1%} of its CPU time, "
        f"{per - 1:+.1%} of the mean item; its own controller code {statistics.median(own):.2%} "
        f"of the gated run ({', '.join(f'{o:.2%}' for o in own)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=500)
    parser.add_argument("--seeds", type=int, default=300)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--cost", type=int, default=0, help="measure the gate's cost to an N-item run")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    if args.cost:
        cost(args.cost, args.rounds)
        return
    n = args.items
    print(f"N={n} items, {args.seeds} seeds, alpha {args.alpha}, bound {BOUND}")
    print("true mean  right  sequential: items used, wrong  |  fixed-n watched: items used, wrong")
    for mean in (0.3, 0.4, 0.45, 0.48, 0.52, 0.55, 0.6, 0.7):
        ones = round(mean * n)
        population = np.array([1.0] * ones + [0.0] * (n - ones))
        right = "pass" if ones / n >= BOUND else "fail"
        used, wrong, naive_used, naive_wrong = [], 0, [], 0
        for seed in range(args.seeds):
            x = np.random.default_rng(seed).permutation(population)
            sequence, decision = ConfidenceSequence(n, args.alpha), None
            for v in x:
                looked = sequence.look(float(v), BOUND)
                decision = decide(looked, BOUND) if looked is not None else None
                if decision:
                    break
            used.append(sequence.n)
            wrong += decision != right
            said, at = fixed_n_watched(x, BOUND)
            naive_used.append(at)
            naive_wrong += said != right
        spent, watched = np.mean(used), np.mean(naive_used)
        print(
            f"{mean:9.2f}  {right:5}  {spent:10.0f} ({spent / n:4.0%}), {wrong / args.seeds:5.1%}"
            f"  |  {watched:10.0f} ({watched / n:4.0%}), {naive_wrong / args.seeds:5.1%}"
        )


if __name__ == "__main__":
    main()
