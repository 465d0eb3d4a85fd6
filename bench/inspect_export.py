"""The Inspect AI export of a 500-item run (issue 43 §2): what ``--ambig-export=inspect`` adds to
a run's end, and what ``pytest-ambigqa export --to inspect`` spends, part by part.

One run of the oracle over ``--items`` MARCH items (the bundled sample repeated, bench/_common.py)
writes the scorecard. Then, each the median of ``--runs`` after a warm-up:

* in a fresh process, ``import inspect_ai.log`` (what the export loads, paid once a process);
* in this process, the parts: the saved run read back with its questions (``read_card``,
  ``reload``), the logs built with Inspect's classes and scrubbed (``inspect_log.logs``), and
  written by ``write_eval_log`` (.eval, one per suite);
* the whole run with and without ``--ambig-export=inspect``, interleaved: the difference is the
  export's price at the end of a run, its import included.

    python bench/inspect_export.py [--items 500] [--runs 5]
"""

from __future__ import annotations

import dataclasses
import statistics
import tempfile
import time
from pathlib import Path

from _common import arguments, import_seconds, median_of, run_pytest, scaled

from pytest_ambigqa.card.gold import reload
from pytest_ambigqa.card.saved import read_card
from pytest_ambigqa.report import inspect_log


def _seconds(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def main() -> None:
    args = arguments(__doc__, items=500, runs=5)
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        data = scaled("march", args.items, directory)
        run = ["--ambig-suite=march", f"--ambig-data={data}", "--ambig-system=oracle"]
        run_pytest([*run, "--ambig-report=plain"], directory)
        card = read_card(directory / "plain" / "scorecard.json")
        gold, absent = reload(card)
        assert not absent and len(gold) == args.items, absent
        full = dataclasses.replace(card, gold=gold, gold_absent=absent)
        out = directory / "logs"

        imported = statistics.median(import_seconds("import inspect_ai.log") for _ in range(args.runs))
        read = median_of(
            args.runs, lambda: _seconds(lambda: reload(read_card(directory / "plain" / "scorecard.json")))
        )
        built = median_of(args.runs, lambda: _seconds(lambda: inspect_log.logs(full)))
        written = median_of(args.runs, lambda: _seconds(lambda: inspect_log.write(full, out)))
        size = sum(p.stat().st_size for p in out.iterdir())

        ends: dict[str, list[float]] = {"plain": [], "exported": []}
        for _ in range(args.runs):
            for name in ends:
                extra = ["--ambig-export=inspect"] if name == "exported" else []
                ends[name].append(run_pytest([*run, f"--ambig-report={name}", *extra], directory))
        plain, exported = (statistics.median(times) for times in ends.values())

    print(f"Inspect export of {args.items} MARCH items (oracle), median of {args.runs}:")
    print(f"  import inspect_ai.log (fresh process)   {imported:.3f} s")
    print(f"  scorecard read back with its questions   {read:.3f} s")
    print(
        f"  logs built and scrubbed                  {built:.3f} s ({built / args.items * 1000:.2f} ms/item)"
    )
    print(f"  logs built and written (.eval)           {written:.3f} s, {size / 1024:.0f} KiB")
    added = exported - plain
    print(f"  a run without / with the export          {plain:.2f} s / {exported:.2f} s: +{added:.2f} s")


if __name__ == "__main__":
    main()
