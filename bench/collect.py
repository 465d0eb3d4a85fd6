"""Collection time of 10,000 items (target: under 5 s), and pytest's own baseline for scale.

python bench/collect.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from _common import median_of, run_pytest, scaled


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        data = scaled("march", 10_000, directory)
        empty = median_of(3, lambda: run_pytest(["--co"], directory))
        collect = median_of(
            3, lambda: run_pytest(["--co", "--ambig-suite=march", f"--ambig-data={data}"], directory)
        )
    print(f"pytest --co, no plugin options (startup):   {empty:.2f} s")
    print(f"pytest --co over 10,000 MARCH items:        {collect:.2f} s (median of 3, wall clock)")


if __name__ == "__main__":
    main()
