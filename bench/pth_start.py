"""What ``pytest-ambigqa.pth`` costs every Python process of the environment at start-up.

Target (issue 27): the start-up line costs at most 1 ms. Python's own ``-X importtime`` times
the gate's import (what the ``.pth`` line runs) inside ``python -c pass``, with bytecode
cached as on a user's machine; the median of the rounds is printed beside the whole start.

    python bench/pth_start.py [--rounds 21]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

from _common import arguments


def _round() -> tuple[float, float]:
    """(the gate's import in ms, the whole interpreter start in ms) of one ``python -c pass``."""
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "pass"], env=environ, capture_output=True, text=True
    )
    whole = (time.perf_counter() - started) * 1000
    for line in done.stderr.splitlines():
        if line.rstrip().endswith("pytest_ambigqa_gate"):
            return int(line.split("|")[1]) / 1000, whole
    raise SystemExit("the gate was not imported at start-up: is pytest-ambigqa installed here?")


def main() -> None:
    args = arguments(__doc__, rounds=21)
    _round()  # writes the bytecode cache once
    rounds = [_round() for _ in range(args.rounds)]
    gate = statistics.median(r[0] for r in rounds)
    whole = statistics.median(r[1] for r in rounds)
    print(f"gate import at interpreter start: {gate:.2f} ms (median of {args.rounds}; target <= 1 ms)")
    print(
        f"whole `python -c pass` (with -X importtime): {whole:.1f} ms; the gate is {gate / whole:.1%} of it"
    )


if __name__ == "__main__":
    main()
