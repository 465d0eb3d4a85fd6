"""Fast runs: the pool against a slow system, harness overhead, resume, shards merged.

    python bench/concurrency.py          # about 1.5 minutes

Targets (issue 5): 200 items at 200 ms serial take about 40 s; with --ambig-concurrency=32
within 1.5x of the ideal 200 x 0.2 / 32 = 1.25 s plus the harness's own time; overhead with a
zero-latency system under 2 ms per item; a resumed run over a complete 500-item store makes
zero system calls and finishes under 10 s; two merged shards give byte-identical metrics.
Issue 10: 100 ASQA items at 200 ms with --ambig-concurrency=25 keep the calls' span within
1.25x of the ideal 0.8 s (no call waits for scoring or for the scorers' imports).
"""

from __future__ import annotations

import json
import statistics
import tempfile
from pathlib import Path

from _common import run_pytest, scaled

from pytest_ambigqa.cli import main as merge_cli

SYSTEM = """
import os, time
LOG = os.environ["AMBIGQA_BENCH_CALLS"]
def answer(question, item):
    start = time.time()
    time.sleep(float(os.environ.get("AMBIGQA_BENCH_SLEEP", "0")))
    with open(LOG, "a") as log:
        log.write(f"{item.id} {start} {time.time()}\\n")
    return item.long_answers[0]
"""


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "bench_system.py").write_text(SYSTEM)
        calls = root / "calls.log"
        times = root / "times.json"
        env = {
            "AMBIGQA_BENCH_CALLS": str(calls),
            "AMBIGQA_BENCH_TIMES": str(times),
            "PYTHONPATH": str(Path(__file__).parent),
        }

        def pytest(data: Path, *args: str, sleep: float = 0.0) -> float:
            return run_pytest(
                [
                    "-p",
                    "_timing",
                    "--ambig-suite=march",
                    f"--ambig-data={data}",
                    "--ambig-system=bench_system:answer",
                    f"--ambig-cache-dir={root / 'cache'}",
                    *args,
                ],
                root,
                env={**env, "AMBIGQA_BENCH_SLEEP": str(sleep)},
            )

        def asked() -> int:
            return len(calls.read_text().splitlines()) if calls.exists() else 0

        items200 = scaled("march", 200, root)
        zero = pytest(items200)
        per_item = statistics.median(json.loads(times.read_text())) * 1000
        serial = pytest(items200, sleep=0.2)
        pooled = pytest(items200, "--ambig-concurrency=32", sleep=0.2)
        ideal = 200 * 0.2 / 32
        print(f"200 items, 200 ms system, serial:            {serial:6.1f} s")
        print(
            f"200 items, 200 ms system, concurrency 32:    {pooled:6.1f} s   "
            f"(ideal {ideal:.2f} s + harness {zero:.1f} s = {ideal + zero:.2f} s; "
            f"ratio {pooled / (ideal + zero):.2f})"
        )
        print(f"zero-latency system: per item median {per_item:.2f} ms; whole run of 200 items {zero:.1f} s")

        asqa100 = scaled("asqa", 100, root)
        calls.unlink()
        run_pytest(
            [
                "--ambig-suite=asqa",
                f"--ambig-data={asqa100}",
                "--ambig-system=bench_system:answer",
                f"--ambig-cache-dir={root / 'cache'}",
                "--ambig-concurrency=25",
            ],
            root,
            env={**env, "AMBIGQA_BENCH_SLEEP": "0.2"},
        )
        spans = [line.split()[1:] for line in calls.read_text().splitlines()]
        span = max(float(end) for _, end in spans) - min(float(start) for start, _ in spans)
        print(
            f"100 ASQA items, 200 ms system, concurrency 25: the calls span {span:.2f} s "
            f"(ideal 0.80 s; ratio {span / 0.8:.2f})"
        )

        items500 = scaled("march", 500, root)
        pytest(items500)
        before = asked()
        resumed = pytest(items500, "--ambig-resume", sleep=0.2)
        print(f"resume over a complete 500-item store: {asked() - before} system calls, {resumed:.1f} s")

        whole = root / "whole"
        pytest(items500, f"--ambig-report={whole}")
        for i in (1, 2):
            pytest(items500, f"--ambig-shard={i}/2", f"--ambig-report={root / f'shard{i}'}")
        merge_cli(
            [
                "merge",
                str(root / "shard1/scorecard.json"),
                str(root / "shard2/scorecard.json"),
                "-o",
                str(root / "merged"),
            ]
        )

        def metrics(path: Path) -> str:
            card = json.loads((path / "scorecard.json").read_text())
            return json.dumps([(s["metrics"], s["slices"]) for s in card["suites"]], sort_keys=True)

        same = metrics(whole) == metrics(root / "merged")
        print(f"two shards merged: metrics byte-identical to the single run: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
