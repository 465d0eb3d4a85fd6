"""Harness overhead per item with the oracle system (no model): target median under 5 ms.

Per-item time is the wall time of pytest's whole test protocol for the item (setup, call,
teardown and reporting: system call, scoring, report properties), over 1,000 items.

    python bench/overhead.py
"""

from __future__ import annotations

import json
import statistics
import tempfile
from pathlib import Path

from _common import run_pytest, scaled

N = 1000


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        for suite in ("march", "asqa", "condambigqa"):
            data = scaled(suite, N, directory)
            out = directory / f"{suite}.times.json"
            run_pytest([f"--ambig-suite={suite}", f"--ambig-data={data}", "--co"], directory)  # warm-up
            wall = run_pytest(
                ["-p", "_timing", f"--ambig-suite={suite}", f"--ambig-data={data}", "--ambig-system=oracle"],
                directory,
                env={"AMBIGQA_BENCH_TIMES": str(out), "PYTHONPATH": str(Path(__file__).parent)},
            )
            times = sorted(json.loads(out.read_text()))
            p95 = times[int(0.95 * len(times))]
            print(
                f"{suite:<12} {N} items: per item median {statistics.median(times) * 1000:.2f} ms, "
                f"p95 {p95 * 1000:.2f} ms; whole run {wall:.1f} s "
                f"({wall / N * 1000:.1f} ms/item incl. startup)"
            )


if __name__ == "__main__":
    main()
