"""A resumed run over a complete store against the first run (issue 27, target 2: <= 10%).

N ASQA items (the real dev sample of ../shared/data repeated with fresh ids when it is there,
else our bundled sample), every ASQA metric, a system that replays the item's first annotated
long answer after ``--latency`` seconds at ``--ambig-concurrency=32``. Each round: the first run
into a fresh cache, then ``--ambig-resume`` over it (every answer and every score from the
store), then ``--ambig-resume`` with another scorer profile (the answers reused, every item
scored again: what a resume cost before scores were stored). Medians over the rounds.

    python bench/resume.py [--items 5000] [--latency 0.0] [--rounds 3]
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
from pathlib import Path

from _common import REAL_ASQA, arguments, run_pytest, scaled

SYSTEM = """
import os, time
def answer(question, item):
    time.sleep(float(os.environ.get("AMBIGQA_BENCH_SLEEP", "0")))
    return item.long_answers[0]
"""


def main() -> None:
    args = arguments(__doc__, items=5000, latency=0.0, rounds=3)
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        (directory / "replay_system.py").write_text(SYSTEM)
        data = scaled("asqa", args.items, directory, REAL_ASQA if REAL_ASQA.exists() else None)
        base = [
            "--ambig-suite=asqa", f"--ambig-data={data}", "--ambig-system=replay_system:answer",
            "--ambig-concurrency=32", "--ambig-cache-dir=cache",
        ]  # fmt: skip
        env = {"AMBIGQA_BENCH_SLEEP": str(args.latency)}
        times: dict[str, list[float]] = {"first": [], "resumed": [], "rescored": []}
        for _ in range(args.rounds):
            shutil.rmtree(directory / "cache", ignore_errors=True)
            times["first"].append(run_pytest(base, directory, env))
            times["resumed"].append(run_pytest([*base, "--ambig-resume"], directory, env))
            other = [*base, "--ambig-resume", "--ambig-scorer-profile=asqa"]
            times["rescored"].append(run_pytest(other, directory, env))
    first, resumed, rescored = (statistics.median(times[k]) for k in ("first", "resumed", "rescored"))
    print(f"{args.items} ASQA items, every metric, {args.latency * 1000:.0f} ms system, concurrency 32")
    print(f"first run:                              {first:.2f} s")
    print(f"resumed, answers and scores reused:     {resumed:.2f} s  ({resumed / first:.1%} of the first)")
    print(f"resumed, answers reused, scored again:  {rescored:.2f} s  ({rescored / first:.1%} of the first)")
    print(f"(medians of {args.rounds} rounds; per round {[round(t, 2) for t in times['resumed']]})")


if __name__ == "__main__":
    main()
