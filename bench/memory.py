"""The controller's memory per item (issue 27, target 4: at most 15 KB per item at 20,000).

Runs of N MARCH and ASQA items with a zero-latency system (the oracle baseline), every
report written (``--ambig-report``), each its own pytest process, whose resident memory
(RSS) ``_memory.py`` reads: after collection (the data and the tests), after the last item
(what the run holds per item), after the session's end (scorecard, gates, reports) and its
peak (``VmHWM``, the process's own: ``getrusage`` would count this script's memory at the
fork too, the items it made included); and the share of the items' run its garbage
collector took. ``per item``: each growth over the items, from the RSS after collection;
``slope``: the peak's growth per item from the smaller size to the larger. ``--before DIR``:
the same runs with the package found in DIR (a checkout of an earlier commit,
``git archive``'d), alternating with this one's, so that both are measured on the same
machine in the same minutes. ``--skip-writers html``: leave those report writers out (the
page's own memory is measured apart, ``bench/report.py``).

    python bench/memory.py [--sizes 2000,20000] [--suites march,asqa] [--before DIR]
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from _common import arguments, run_pytest, scaled

MB = 2**20


def measure(root: Path, data: Path, suite: str, code: str | None, skip: str) -> dict[str, float]:
    out = root / "memory.json"
    path = [str(Path(__file__).parent), *([code] if code else []), os.environ.get("PYTHONPATH", "")]
    env = {
        "AMBIGQA_BENCH_MEMORY": str(out),
        "AMBIGQA_BENCH_SKIP_WRITERS": skip,
        "PYTHONPATH": os.pathsep.join(filter(None, path)),
    }
    run_pytest(
        [
            "-p",
            "_timing",
            "-p",
            "_memory",
            f"--ambig-suite={suite}",
            f"--ambig-data={data}",
            "--ambig-system=oracle",
            f"--ambig-cache-dir={root / 'cache'}",
            f"--ambig-report={root / 'out'}",
        ],  # fmt: skip
        root / "run",
        env=env,
    )
    return json.loads(out.read_text())


def main() -> None:
    args = arguments(__doc__, sizes="2000,20000", suites="march,asqa", before="", skip_writers="")
    sizes = [int(n) for n in args.sizes.split(",")]
    codes = {"this checkout": None} | ({"before": args.before} if args.before else {})
    print(f"load: {os.getloadavg()[0]:.2f} (1-minute average), {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "run").mkdir()
        for suite in args.suites.split(","):
            peaks: dict[str, list[float]] = {name: [] for name in codes}
            for n in sizes:
                data = scaled(suite, n, root)
                for name, code in codes.items() if n % 2 == 0 else reversed(codes.items()):
                    m = measure(root, data, suite, code, args.skip_writers)
                    peaks[name].append(m["peak"])
                    each = {k: (m[k] - m["collected"]) / n / 1024 for k in ("ran", "finished", "peak")}
                    print(
                        f"{suite} {n:>6} items, {name:<13}: after collection {m['collected'] / MB:.0f} MB; "
                        f"per item: run {each['ran']:.1f} KB, session end {each['finished']:.1f} KB, "
                        f"peak {each['peak']:.1f} KB (peak {m['peak'] / MB:.0f} MB); "
                        f"GC {100 * m['gc'] / m['run_s']:.1f}% of the items' {m['run_s']:.1f} s"
                    )
            if len(sizes) > 1:
                for name, values in peaks.items():
                    slope = (values[-1] - values[0]) / (sizes[-1] - sizes[0]) / 1024
                    print(f"{suite} {name}: peak slope {sizes[0]}->{sizes[-1]}: {slope:.1f} KB per item")


if __name__ == "__main__":
    main()
