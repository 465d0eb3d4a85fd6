"""The extractive reader (Disambig-F1) one item at a time against items read together.

A RoBERTa-large-shaped QA model with random weights (hidden 1024, 16 heads; ``--layers`` of
its 24, so the CPU finishes) and a vocabulary from the bundled samples reads the ASQA
sample's questions against their long answers: first one item after another, then from
``--threads`` threads at once, as ``--ambig-concurrency`` scores them, the reader's batcher
putting the windows of the items waiting together into one forward pass (up to 64 windows,
as on a GPU; on the CPU the reader itself keeps one item per pass). Items/s of both, and
whether every span agrees. ``--device cuda`` where a GPU is available.

    python bench/reader.py [--items 48] [--threads 8] [--layers 4] [--device cpu]
"""

from __future__ import annotations

import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _common import arguments

from fixtures.models import build_qa_model
from pytest_ambigqa.metrics.profiles import PROFILES
from pytest_ambigqa.models.reader import HFReader
from pytest_ambigqa.suites import SUITES, LoadOptions


def main() -> None:
    args = arguments(__doc__, items=48, threads=8, layers=4, device="cpu")
    sample = SUITES["asqa"].load(None, LoadOptions()).items
    items = [sample[i % len(sample)] for i in range(args.items)]
    cases = [([i.question for i in item.interpretations], item.long_answers[0]) for item in items]
    words = " ".join(q for qs, c in cases for q in qs) + " ".join(c for _, c in cases)
    with tempfile.TemporaryDirectory() as tmp:
        path = build_qa_model(Path(tmp), words, shape="roberta-large", layers=args.layers)
        lone = HFReader(path, PROFILES["asqa"].reader, args.device)
        lone.read(*cases[0])  # load and warm up
        started = time.perf_counter()
        alone = [lone.read(q, c) for q, c in cases]
        serial = time.perf_counter() - started
        together = HFReader(path, PROFILES["asqa"].reader, args.device)
        together.read(*cases[0])
        together.batcher.max_rows = 64  # as on a GPU, whatever the device
        passes = together.batcher.passes
        started = time.perf_counter()
        with ThreadPoolExecutor(args.threads) as pool:
            batched = list(pool.map(lambda case: together.read(*case), cases))
        concurrent = time.perf_counter() - started
    windows = sum(len(q) for q, _ in cases)
    shape = f"{args.layers}-layer RoBERTa-large shape"
    print(f"{args.items} ASQA items ({windows} questions), {shape}, {args.device}:")
    print(f"  one item at a time   {args.items / serial:6.2f} items/s  ({args.items} forward passes)")
    print(
        f"  {args.threads} threads, batched  {args.items / concurrent:6.2f} items/s  "
        f"({together.batcher.passes - passes} forward passes), {serial / concurrent:.2f}x"
    )
    print(f"  spans agree: {alone == batched}")


if __name__ == "__main__":
    main()
