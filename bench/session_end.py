"""The session's end for 2,000 items: scorecard (bootstrap intervals for every metric and
slice), gates, JSON and Markdown reports, terminal summary. Target (issue 10): under 0.5 s.

Measured inside pytest, from the last item's report to the end of unconfigure
(``_timing.py``), with the oracle system and ``--ambig-report``, per suite and for all three
suites in one run (6,000 items); each also without ``report.html``, interleaved, to price the
page within the same run (issue 14 added it after the target was set).

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
        print(f"session end, {args.items} items per suite, oracle system, median of {args.runs},")
        print("every writer / all but report.html, runs interleaved:")
        report = directory / "report"
        for name, options in runs.items():
            ends: dict[str, list[float]] = {"": [], "html": []}
            for _ in range(args.runs):
                for skipped, times in ends.items():
                    command = ["-p", "_timing", *options, "--ambig-system=oracle", f"--ambig-report={report}"]
                    run_pytest(command, directory, env={**env, "AMBIGQA_BENCH_SKIP_WRITERS": skipped})
                    times.append(json.loads(out.read_text()))
            every, without = (statistics.median(times) for times in ends.values())
            print(f"  {name:<12} {every:.3f} s ({min(ends['']):.3f}-{max(ends['']):.3f})"
                  f" / {without:.3f} s ({min(ends['html']):.3f}-{max(ends['html']):.3f}):"
                  f" report.html {every - without:.3f} s")  # fmt: skip


if __name__ == "__main__":
    main()
