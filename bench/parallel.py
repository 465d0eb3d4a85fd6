"""A 500-item ASQA run with a system that takes 20 ms: -n 2 against -n 0 (target: >= 1.6x).

    python bench/parallel.py

Fixed costs decide the ratio. rouge-score needs NLTK, and NLTK imports scikit-learn and
SciPy when they are installed (sentence-transformers, in the retrieval extra, brings them):
about 1.2 s more in every process, and in every xdist worker. The script says which case ran.
"""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path

from _common import median_of, run_pytest, scaled

SYSTEM = """
import time

def answer(question, item):
    time.sleep(0.020)
    return item.long_answers[0]
"""


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        (directory / "slow_system.py").write_text(SYSTEM)
        data = scaled("asqa", 500, directory)
        args = ["--ambig-suite=asqa", f"--ambig-data={data}", "--ambig-system=slow_system:answer"]
        serial = median_of(5, lambda: run_pytest(args, directory))
        parallel = median_of(5, lambda: run_pytest([*args, "-n", "2"], directory))
    print(f"500 ASQA items, 20 ms system, -n 0: {serial:.1f} s   (ideal 500 x 20 ms = 10.0 s + startup)")
    print(f"500 ASQA items, 20 ms system, -n 2: {parallel:.1f} s")
    print(f"speed-up: {serial / parallel:.2f}x (median of 5 runs each, wall clock)")
    heavy = importlib.util.find_spec("sklearn") is not None
    where = "scikit-learn installed (NLTK imports it)" if heavy else "core install (no scikit-learn)"
    print(f"environment: {where}")


if __name__ == "__main__":
    main()
