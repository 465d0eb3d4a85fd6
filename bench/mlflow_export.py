"""What ``--ambig-mlflow`` costs a 500-item run (issue 43 §3), part by part.

One run of the oracle over ``--items`` MARCH items (the bundled sample repeated, bench/_common.py)
writes the scorecard and reports. Then, each the median of ``--runs``:

* in a fresh process, ``from mlflow.tracking import MlflowClient`` (what the logging loads, paid
  once a process);
* in this process, the run logged (``mlflow_log.log``: parameters, metrics, the item table, the
  three reports) to a new SQLite store (its tables made first) and to one that exists;
* the whole run without and with ``--ambig-mlflow`` to one SQLite store, interleaved after a
  warm-up: the difference is the price at the end of a run, the import included.

    python bench/mlflow_export.py [--items 500] [--runs 3]
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from _common import arguments, import_seconds, median_of, run_pytest, scaled

from pytest_ambigqa.card.saved import read_card
from pytest_ambigqa.report import mlflow_log, mlflow_target


def main() -> None:
    args = arguments(__doc__, items=500, runs=3)
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        data = scaled("march", args.items, directory)
        run = ["--ambig-suite=march", f"--ambig-data={data}", "--ambig-system=oracle", "--ambig-progress=off"]
        run_pytest([*run, "--ambig-report=plain"], directory)
        card = read_card(directory / "plain" / "scorecard.json")

        def logged(store: str) -> float:
            target = mlflow_target.target(f"sqlite:///{directory / store}", "bench", directory)
            started = time.perf_counter()
            failed = mlflow_log.log(card, target, directory / "plain", 0)
            assert failed is None, failed
            return time.perf_counter() - started

        imported = statistics.median(
            import_seconds("from mlflow.tracking import MlflowClient") for _ in range(args.runs)
        )
        fresh = statistics.median(logged(f"fresh{i}.db") for i in range(args.runs))
        logged("existing.db")
        existing = median_of(args.runs, lambda: logged("existing.db"))

        uri = f"--ambig-mlflow=sqlite:///{directory / 'runs.db'}"
        ends: dict[str, list[float]] = {"plain": [], "logged": []}
        run_pytest([*run, uri], directory)  # the store made, the bytecode cached
        for _ in range(args.runs):
            for name in ends:
                extra = [uri] if name == "logged" else []
                ends[name].append(run_pytest([*run, f"--ambig-report={name}", *extra], directory))
        plain, with_mlflow = (statistics.median(times) for times in ends.values())

    print(f"MLflow logging of {args.items} MARCH items (oracle), median of {args.runs}:")
    print(f"  MlflowClient imported (fresh process)    {imported:.2f} s")
    print(f"  the run logged to a new SQLite store     {fresh:.2f} s")
    print(f"  the run logged to an existing store      {existing:.2f} s")
    added = with_mlflow - plain
    print(f"  a run without / with --ambig-mlflow      {plain:.2f} s / {with_mlflow:.2f} s: +{added:.2f} s")


if __name__ == "__main__":
    main()
