"""The plugin's own cost per item, against a bare parametrized pytest test doing the same call
and STR-EM. Target (issue 10): under 1 ms per item on top.

Both runs take the same N MARCH items and the same zero-latency system (it returns the gold
long answer); the bare test calls it and computes STR-EM with our metric function, the
plugin run does what a user's run does (every MARCH metric, the answer store, the JUnit
properties, the scorecard). Per item is pytest's whole test protocol for the item
(``_timing.py``: setup, call, teardown, reports), so start-up and the session's end are
left out; the runs alternate and the medians of their per-item medians are compared.

The plugin's run is also made with its output on a pseudo-terminal, as a user sees it, with
the live status line (``--ambig-progress=on``) and without (``off``), in the same rounds:
their ratio is what the line costs per item, by the median item and by the mean one (the mean
holds the few items after which the line is drawn again, at most 4 a second, and its statistics
computed again, at most once a second; the first item, which loads what the run needs, is left
out of it).

    python bench/per_item.py [--items 1000] [--rounds 3]
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
from pathlib import Path

from _common import arguments, run_pytest, scaled

SYSTEM = """
def answer(question, item):
    return item.long_answers[0]
"""

BARE = """
import os
from pathlib import Path

import pytest

from bench_system import answer
from pytest_ambigqa.metrics.coverage import str_em, str_em_hits
from pytest_ambigqa.suites import SUITES, LoadOptions

ITEMS = SUITES["march"].load(Path(os.environ["AMBIGQA_BENCH_DATA"]), LoadOptions()).items


@pytest.mark.parametrize("item", ITEMS, ids=[item.key for item in ITEMS])
def test_item(item):
    text = answer(item.question, item)
    assert 0 <= str_em(str_em_hits([i.short_answers for i in item.interpretations], text)) <= 1
"""


def main() -> None:
    args = arguments(__doc__, items=1000, rounds=3)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "bench_system.py").write_text(SYSTEM)
        (root / "test_bare.py").write_text(BARE)
        data = scaled("march", args.items, root)
        times = root / "times.json"
        env = {
            "AMBIGQA_BENCH_TIMES": str(times),
            "AMBIGQA_BENCH_DATA": str(data),
            "PYTHONPATH": os.pathsep.join(
                filter(None, [str(Path(__file__).parent), str(root), os.environ.get("PYTHONPATH")])
            ),
        }
        ours = [
            "-p", "_timing", "--ambig-suite=march", f"--ambig-data={data}",
            "--ambig-system=bench_system:answer", f"--ambig-cache-dir={root / 'cache'}",
        ]  # fmt: skip
        runs = {  # name: (options, on a terminal)
            "bare pytest test": (["-p", "_timing", "test_bare.py"], False),
            "pytest-ambigqa": (ours, False),
            "terminal, progress off": ([*ours, "--ambig-progress=off"], True),
            "terminal, progress on": ([*ours, "--ambig-progress=on"], True),
        }
        per_item: dict[str, list[float]] = {name: [] for name in runs}
        mean: dict[str, list[float]] = {name: [] for name in runs}
        for round_ in range(args.rounds):
            order = list(runs) if round_ % 2 == 0 else list(reversed(runs))  # no place in a round favoured
            for name in order:
                options, terminal = runs[name]
                run_pytest(options, root, env=env, terminal=terminal)
                timed = json.loads(times.read_text())
                per_item[name].append(statistics.median(timed) * 1000)
                mean[name].append(statistics.mean(timed[1:]) * 1000)  # the first warms up
        bare, plugin = (statistics.median(per_item[name]) for name in list(runs)[:2])
        print(f"{args.items} MARCH items, zero-latency system, per-item protocol, median of {args.rounds}:")
        for name, values in per_item.items():
            each = ", ".join(f"{v:.3f}" for v in values)
            print(f"  {name:<24} {statistics.median(values):.3f} ms  ({each})")
        print(f"  the plugin's own cost: {plugin - bare:.3f} ms per item")
        for kind, values in (("median", per_item), ("mean", mean)):
            rounds = zip(values["terminal, progress on"], values["terminal, progress off"], strict=True)
            each = ", ".join(f"{a / b:.3f}" for a, b in rounds)
            on, off = (statistics.median(values[f"terminal, progress {m}"]) for m in ("on", "off"))
            ratio = f"on / off {on / off:.3f} ({on - off:+.3f} ms; by round {each})"
            print(f"  the status line, {kind} item: {ratio}")


if __name__ == "__main__":
    main()
