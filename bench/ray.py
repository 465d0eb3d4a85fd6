"""The Ray executor's throughput with one node and with two (issue 30, part 3).

    python bench/ray.py [--items 80] [--rounds 3] [--sleep 0.2]     # about 3 minutes

MARCH and ASQA items (the bundled samples, repeated with fresh ids, half each) and a system
that waits ``--sleep`` seconds per item with ``time.sleep`` (a pure wait, as a call to a remote
model is: it uses no CPU, so this machine's 2 cores are not what limits it) and returns the
item's first long answer. It is a class, constructed once per actor as a model would be, and
takes one item at a time (a lock, as a model on one device does), so an actor's capacity is
1 / ``--sleep`` items/s whatever it has in flight.

Two Ray clusters on 127.0.0.1 (``fixtures/ray_cluster.py``), started once: one node, and a
head with a second node; 1 CPU per node. Each Ray run joins one through ``RAY_ADDRESS`` with
actors of 1 CPU, one per node (so two nodes have twice the actors), at the default
``--ambig-concurrency`` (2 per actor: the next item waits in the actor). The reference is a
local run (``--ambig-executor=local --ambig-concurrency=2``): one instance of the system in
the pytest process. Every runner is its own pytest process, started in turn, round after
round (interleaved), after one untimed warm-up run each; medians printed:

- **items/s**: the items over the calls' span (the first call's start to the last call's end,
  as the system notes them), and over the whole run (the process's wall time);
- **start-up**: from the process's start to its first call, less the local run's: for Ray, the
  cluster joined and every actor placed and constructed (a worker process each, which imports
  Ray, the plugin and the system), fixed, whatever the items; and the end, from the last call
  to the process's exit (scoring the last items, the reports, the actors and Ray let go).

The nodes share this machine's cores and its loopback, so two nodes measure what the executor
makes of twice the actors, not a network. No GPU actors: no accelerator here.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

from _common import ROOT, arguments, run_pytest, scaled

from fixtures.ray_cluster import ENV, loopback_cluster

# The calls' log is the system's own file: the actors do not get the runs' environment, only
# the cluster's. (Not bench/ on any PYTHONPATH: this file's name would shadow Ray's package.)
SYSTEM = """
import os, threading, time

LOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "calls.log")


def _note(*words):
    with open(LOG, "a") as log:
        log.write(" ".join(map(str, words)) + "\\n")


def _node():
    import sys

    ray = sys.modules.get("ray")
    return ray.get_runtime_context().get_node_id() if ray and ray.is_initialized() else "-"


class Sleeper:
    def __init__(self):
        self._device = threading.Lock()  # one item at a time, as a model on one device
        _note("init", time.time(), os.getpid(), _node())

    def __call__(self, question, item):
        with self._device:
            start = time.time()
            time.sleep({sleep!r})
            _note("call", start, time.time(), os.getpid(), _node())
        return item.long_answers[0]
"""


def main() -> None:
    args = arguments(__doc__, items=80, rounds=3, sleep=0.2)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "sleeper.py").write_text(SYSTEM.format(sleep=args.sleep))
        log = root / "calls.log"

        def data(n: int, folder: str) -> str:
            (root / folder).mkdir()
            halves = {"march": n // 2, "asqa": n - n // 2}
            return ",".join(f"{s}={scaled(s, k, root / folder)}" for s, k in halves.items())

        items, warm = data(args.items, "items"), data(8, "warm")
        started = time.perf_counter()
        with loopback_cluster(1, 1, (str(root),)) as one, loopback_cluster(2, 1, (str(root),)) as two:
            clusters_s = time.perf_counter() - started

            def runner(*options: str, address: str | None = None):
                env = {"PYTHONPATH": os.pathsep.join([str(ROOT), str(root)])}
                if address:  # the cluster is on the loopback: so is every driver's address
                    env |= ENV | {"RAY_ADDRESS": address}

                def run(suites: str) -> dict:
                    log.unlink(missing_ok=True)
                    begun = time.time()
                    wall = run_pytest(
                        [
                            "--ambig-suite=march,asqa", f"--ambig-data={suites}",
                            "--ambig-system=sleeper:Sleeper", f"--ambig-cache-dir={root / 'cache'}",
                            *options,
                        ],
                        root,
                        env=env,
                    )  # fmt: skip
                    return measured(log, begun, wall)

                return run

            runners = {
                "Ray, 1 node: 1 actor": runner("--ambig-executor=ray", "--ambig-ray-actors=1", address=one),
                "Ray, 2 nodes: 2 actors": runner("--ambig-executor=ray", "--ambig-ray-actors=2", address=two),
                "local, concurrency 2 (reference)": runner("--ambig-executor=local", "--ambig-concurrency=2"),
            }
            for run in runners.values():  # bytecode caches written, each cluster's first workers started
                run(warm)
            runs: dict[str, list[dict]] = {name: [] for name in runners}
            for _ in range(args.rounds):
                for name, run in runners.items():
                    runs[name].append(run(items))
                    assert runs[name][-1]["items"] == args.items, f"{name}: not every item was called once"
        report(args, runs, clusters_s)


def measured(log: Path, begun: float, wall: float) -> dict:
    """One run's figures from the system's log (``begun``: the process's start, same clock)."""
    lines = [line.split() for line in log.read_text().splitlines()]
    calls = [(float(w[1]), float(w[2]), w[4]) for w in lines if w[0] == "call"]
    assert calls, "the system was never called"
    first, last = min(c[0] for c in calls), max(c[1] for c in calls)
    return {
        "items": len(calls),
        "span": last - first,
        "to_first": first - begun,
        "after_last": begun + wall - last,
        "wall": wall,
        "nodes": len({c[2] for c in calls}),
        "constructed": sum(w[0] == "init" for w in lines),
        "to_constructed": max(float(w[1]) for w in lines if w[0] == "init") - begun,
    }


def report(args, runs: dict[str, list[dict]], clusters_s: float) -> None:
    def median(name: str, key: str) -> float:
        return statistics.median(r[key] for r in runs[name])

    one, two, local = runs
    print(
        f"{args.items} items (MARCH and ASQA samples, repeated), a {args.sleep * 1000:g} ms time.sleep "
        f"system; median of {args.rounds} interleaved rounds"
    )
    print(f"(the two loopback clusters started in {clusters_s:.1f} s, before any run)")
    for name in runs:
        span, wall, first = median(name, "span"), median(name, "wall"), median(name, "to_first")
        start = f", {first - median(local, 'to_first'):+.2f} s of start-up" if name != local else ""
        last = runs[name][-1]
        print(f"  {name}: {last['nodes']} node(s) called, {last['constructed']} construction(s)")
        print(
            f"    {args.items / span:5.2f} items/s over the calls ({span:5.2f} s), "
            f"{args.items / wall:5.2f} over the run ({wall:5.2f} s)"
        )
        print(
            f"    system constructed {median(name, 'to_constructed'):.2f} s, first call {first:.2f} s "
            f"after the process's start{start}; "
            f"it ended {median(name, 'after_last'):.2f} s after the last call"
        )
    ideal = 1 / args.sleep
    ratio = median(one, "span") / median(two, "span")
    whole = median(one, "wall") / median(two, "wall")
    print(f"2 nodes / 1 node: {ratio:.2f}x over the calls, {whole:.2f}x over the run (ideal 2.00x)")
    print(
        f"per actor: 1 node {args.items / median(one, 'span') / ideal:.0%}, "
        f"2 nodes {args.items / median(two, 'span') / (2 * ideal):.0%} of the ideal {ideal:g} items/s"
    )
    print("load average: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()), f"on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
