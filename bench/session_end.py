"""The session's end for 2,000 items: scorecard (bootstrap intervals for every metric and
slice), gates, JSON and Markdown reports, terminal summary. Target (issue 10): under 0.5 s.

Measured inside pytest, from the last item's report to the end of unconfigure
(``_timing.py``), with the oracle system and ``--ambig-report``, per suite and for all three
suites in one run (6,000 items).

    python bench/session_end.py [--items 2000] [--runs 3]
"""

from __future__ import annotations

import json
import statistics
import tempfile
from pathlib import Path

from _common import arguments, run_pytest, scaled


def main() -> None:
    args = arguments(__doc__, items=2000, runs=3)
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        data = {suite: scaled(suite, args.items, directory) for suite in ("march", "asqa", "condambigqa")}
        runs = {suite: [f"--ambig-suite={suite}", f"--ambig-data={path}"] for suite, path in data.items()}
        every = ",".join(f"{suite}={path}" for suite, path in data.items())
        runs["all three"] = ["--ambig-suite=march,asqa,condambigqa", f"--ambig-data={every}"]
        out = directory / "end.json"
        env = {"AMBIGQA_BENCH_END": str(out), "PYTHONPATH": str(Path(__file__).parent)}
        print(f"session end, {args.items} items per suite, oracle system, median of {args.runs}:")
        for name, options in runs.items():
            ends = []
            for _ in range(args.runs):
                report = directory / "report"
                run_pytest(["-p", "_timing", *options, "--ambig-system=oracle", f"--ambig-report={report}"],
                           directory, env=env)  # fmt: skip
                ends.append(json.loads(out.read_text()))
            print(f"  {name:<12} {statistics.median(ends):.3f} s  ({min(ends):.3f}-{max(ends):.3f})")


if __name__ == "__main__":
    main()
