"""The same job run by pytest-ambigqa, Inspect AI, deepeval and a bare thread pool (issue 10).

The job: N ASQA items (the real 40-item dev sample in ../shared/data repeated with fresh ids
when it is there, else our bundled sample), a system that waits L seconds and replays the
item's first annotated long answer, and STR-EM (our function, the ALCE scorer's arithmetic,
so that every runner must agree on the mean to the last digit). Each runner is its own
process, started in turn; printed: wall time and its ratio to the floor, peak RSS of the
process, time to the first scored item, and the mean STR-EM.

- floor: ``ThreadPoolExecutor(32)``, each task calling the system and scoring the answer;
- pytest-ambigqa with ``--ambig-metrics=str_em``: serial, ``--ambig-concurrency=32``, and
  ``-n 2`` with it; and at concurrency 32 with every ASQA metric (ROUGE-Lsum with NLTK's
  sentence splitter and its bootstrap, COVER-EM, length), which the peers do not compute;
- Inspect AI: a solver that awaits the system, a scorer for STR-EM, ``max_connections`` and
  ``max_samples`` 32, no display, errors-only logging, no sample logs;
- deepeval: ``assert_test`` under pytest (one test per item, its own plugin loaded, as
  ``deepeval test run`` would), and ``evaluate()`` with ``AsyncConfig(max_concurrent=32)``
  over test cases whose outputs a 32-thread pool fetched first, as deepeval's documentation
  has the user produce ``actual_output``.

Inspect AI and deepeval come from the ``bench`` extra (``pip install -e .[bench]``); a peer
that is not installed is skipped, and said so. deepeval is told not to phone home.

    python bench/peers.py [--items 500] [--latency 0.2] [--skip-serial]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REAL_ASQA, scaled

from pytest_ambigqa.suites import SUITES, LoadOptions

CONCURRENCY = 32

JOB = '''
"""What every runner shares: the items, the system, STR-EM, and the first result's time."""
import asyncio, json, os, time

from pytest_ambigqa.metrics.coverage import str_em, str_em_hits

LATENCY = float(os.environ["PEER_LATENCY"])
ITEMS = json.loads(open(os.environ["PEER_ITEMS"]).read())


def system(question, answer):
    time.sleep(LATENCY)
    return answer


async def async_system(question, answer):
    await asyncio.sleep(LATENCY)
    return answer


def answer(question, item):  # pytest-ambigqa's system spec: peer_job:answer
    return system(question, item.long_answers[0])


def score(pairs, text):
    try:
        fd = os.open(os.environ["PEER_FIRST"], os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        os.write(fd, repr(time.time()).encode())
        os.close(fd)
    except FileExistsError:
        pass
    return str_em(str_em_hits(pairs, text))


def report(scores):
    with open(os.environ["PEER_MEAN"], "w") as out:
        out.write(repr(sum(scores) / len(scores)))
'''

FIRST = """
import os, time

def pytest_runtest_logreport(report):
    if report.when == "call" and not os.path.exists(os.environ["PEER_FIRST"]):
        with open(os.environ["PEER_FIRST"], "w") as out:
            out.write(repr(time.time()))
"""

FLOOR = """
from concurrent.futures import ThreadPoolExecutor
from peer_job import ITEMS, report, score, system

def job(item):
    return score(item["pairs"], system(item["question"], item["answer"]))

with ThreadPoolExecutor(32) as pool:
    report(list(pool.map(job, ITEMS)))
"""

INSPECT = """
import os
from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import Score, mean, scorer
from inspect_ai.solver import solver
from peer_job import ITEMS, async_system, score

@solver
def replay():
    async def solve(state, generate):
        text = await async_system(state.input_text, state.metadata["answer"])
        state.output = ModelOutput.from_content(model="replay", content=text)
        return state
    return solve

@scorer(metrics=[mean()])
def str_em_scorer():
    async def run(state, target):
        return Score(value=score(state.metadata["pairs"], state.output.completion))
    return run

samples = [Sample(input=i["question"], id=i["id"], metadata={"answer": i["answer"], "pairs": i["pairs"]})
           for i in ITEMS]
task = Task(dataset=MemoryDataset(samples), solver=replay(), scorer=str_em_scorer())
log = eval(task, model="mockllm/model", max_connections=32, max_samples=32, display="none",
           log_level="error", log_samples=False, log_dir="inspect-logs")[0]
with open(os.environ["PEER_MEAN"], "w") as out:  # Inspect's own mean
    out.write(repr(log.results.scores[0].metrics["mean"].value))
"""

DEEPEVAL_METRIC = """
from deepeval.metrics import BaseMetric
from peer_job import score

class StrEm(BaseMetric):
    threshold = 0.0
    async_mode = True

    def __init__(self, pairs_by_input):
        self.pairs_by_input = pairs_by_input

    def measure(self, test_case, *args, **kwargs):
        self.score = score(self.pairs_by_input[test_case.input], test_case.actual_output)
        self.success = True
        return self.score

    async def a_measure(self, test_case, *args, **kwargs):
        return self.measure(test_case)

    def is_successful(self):
        return True

    @property
    def __name__(self):
        return "STR-EM"
"""

DEEPEVAL_ASSERT = """
import os
import pytest
from deepeval import assert_test
from deepeval.test_case import LLMTestCase
from peer_deepeval_metric import StrEm
from peer_job import ITEMS, system

PAIRS = {i["question"]: i["pairs"] for i in ITEMS}

@pytest.mark.parametrize("item", ITEMS, ids=[i["id"] for i in ITEMS])
def test_item(item):
    text = system(item["question"], item["answer"])
    metric = StrEm(PAIRS)
    assert_test(LLMTestCase(input=item["question"], actual_output=text), [metric], run_async=False)
    with open(os.environ["PEER_SCORES"], "a") as out:
        out.write(f"{metric.score!r}\\n")
"""

DEEPEVAL_EVALUATE = """
from concurrent.futures import ThreadPoolExecutor
from deepeval import evaluate
from deepeval.evaluate.configs import AsyncConfig, CacheConfig, DisplayConfig
from deepeval.test_case import LLMTestCase
from peer_deepeval_metric import StrEm
from peer_job import ITEMS, report, system

with ThreadPoolExecutor(32) as pool:
    texts = list(pool.map(lambda i: system(i["question"], i["answer"]), ITEMS))
cases = [LLMTestCase(input=i["question"], actual_output=t) for i, t in zip(ITEMS, texts)]
result = evaluate(
    cases,
    [StrEm({i["question"]: i["pairs"] for i in ITEMS})],
    async_config=AsyncConfig(run_async=True, max_concurrent=32),
    display_config=DisplayConfig(show_indicator=False, print_results=False),
    cache_config=CacheConfig(write_cache=False, use_cache=False),
)
report([r.metrics_data[0].score for r in result.test_results])
"""


def _items(n: int, root: Path) -> tuple[Path, Path]:
    root.mkdir(exist_ok=True)
    source = REAL_ASQA if REAL_ASQA.exists() else None
    data = scaled("asqa", n, root, source)
    items = SUITES["asqa"].load(data, LoadOptions()).items
    neutral = [
        {
            "id": item.id,
            "question": item.question,
            "answer": item.long_answers[0],
            "pairs": [list(i.short_answers) for i in item.interpretations],
        }
        for item in items
    ]
    path = root / "items.json"
    path.write_text(json.dumps(neutral))
    return data, path


def _run(cmd: list[str], root: Path, env: dict[str, str], data: Path | None = None) -> dict:
    """Wall time, peak RSS, first result and mean STR-EM (0-100) of one runner's process;
    ``data``: the ASQA file pytest-ambigqa reads (the others read ``PEER_ITEMS``)."""
    if data is not None:
        cmd = [f"--ambig-data={data}" if a.startswith("--ambig-data=") else a for a in cmd]
    files = {name: Path(env[name]) for name in ("PEER_FIRST", "PEER_MEAN", "PEER_SCORES")}
    for path in files.values():
        path.unlink(missing_ok=True)
    shutil.rmtree(root / "report", ignore_errors=True)
    started_at, started = time.time(), time.perf_counter()
    with open(root / "out.log", "w") as log:
        proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        tail = (root / "out.log").read_text()[-3000:]
        raise SystemExit(f"{' '.join(cmd)} failed ({os.waitstatus_to_exitcode(status)}):\n{tail}")
    if files["PEER_SCORES"].exists():  # one line per item
        values = [float(v) for v in files["PEER_SCORES"].read_text().split()]
        mean = sum(values) / len(values) * 100  # as the scorecard scales it: the mean, then x 100
    elif files["PEER_MEAN"].exists():
        mean = float(files["PEER_MEAN"].read_text()) * 100
    elif (root / "report" / "scorecard.json").exists():
        card = json.loads((root / "report" / "scorecard.json").read_text())
        mean = card["suites"][0]["metrics"]["str_em"]["mean"]
    else:
        mean = None
    first = float(files["PEER_FIRST"].read_text()) - started_at if files["PEER_FIRST"].exists() else None
    return {"wall": wall, "rss": usage.ru_maxrss / 1024, "first": first, "mean": mean}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=500)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--skip-serial", action="store_true", help="leave out the two serial runners")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        data, items = _items(args.items, root)
        warm_data, warm_items = _items(8, root / "warm")
        for name, text in {
            "peer_job.py": JOB,
            "peer_floor.py": FLOOR,
            "peer_inspect.py": INSPECT,
            "peer_deepeval_metric.py": DEEPEVAL_METRIC,
            "deepeval_job/test_peer_deepeval.py": DEEPEVAL_ASSERT,
            "peer_deepeval_evaluate.py": DEEPEVAL_EVALUATE,
            "peer_first.py": FIRST,
            "empty/test_nothing.py": "def test_nothing():\n    pass\n",
        }.items():
            (root / name).parent.mkdir(exist_ok=True)
            (root / name).write_text(text)
        (root / "ambig").mkdir()  # pytest-ambigqa's runs collect nothing but the benchmark items
        env = {
            **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE" and "PYTEST" not in k},
            "PYTHONPATH": str(root),
            "PEER_ITEMS": str(items),
            "PEER_LATENCY": str(args.latency),
            "PEER_FIRST": str(root / "first"),
            "PEER_MEAN": str(root / "mean"),
            "PEER_SCORES": str(root / "scores"),
            "DEEPEVAL_TELEMETRY_OPT_OUT": "1",
            "DEEPEVAL_DISABLE_DOTENV": "1",
            "DEEPEVAL_DISABLE_LEGACY_KEYFILE": "1",
            "HOME": str(root),  # deepeval's and Inspect's own files
        }
        py = sys.executable
        pytest = [py, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        ambig = [
            *pytest, "ambig", "--ambig-suite=asqa", f"--ambig-data={data}",
            "--ambig-system=peer_job:answer", f"--ambig-report={root / 'report'}", "-p", "peer_first",
        ]  # fmt: skip
        same_job = "--ambig-metrics=str_em"  # the peers compute STR-EM alone
        conc = f"--ambig-concurrency={CONCURRENCY}"
        runners: dict[str, tuple[list[str], str | None]] = {
            "floor: ThreadPoolExecutor(32)": ([py, "peer_floor.py"], None),
            f"pytest-ambigqa {conc}": ([*ambig, same_job, conc], None),
            f"pytest-ambigqa -n 2 {conc}": ([*ambig, same_job, "-n", "2", conc], "xdist"),
            "pytest-ambigqa, serial": ([*ambig, same_job], None),
            f"pytest-ambigqa {conc}, every ASQA metric": ([*ambig, conc], None),
            "Inspect AI (max_connections 32)": ([py, "peer_inspect.py"], "inspect_ai"),
            "deepeval evaluate() (max_concurrent 32)": ([py, "peer_deepeval_evaluate.py"], "deepeval"),
            "deepeval assert_test under pytest": (
                [*pytest, "-p", "deepeval", "deepeval_job"],
                "deepeval",
            ),
        }
        serial = ("pytest-ambigqa, serial", "deepeval assert_test under pytest")
        chosen = {}
        for name, (cmd, needs) in runners.items():
            if args.skip_serial and name in serial:
                print(f"  {name:<56} skipped (--skip-serial)")
            elif needs and importlib.util.find_spec(needs) is None:
                print(f"  {name:<56} skipped: {needs} is not installed (pip install -e .[bench])")
            else:
                chosen[name] = cmd
        # A warm-up round on a few items: bytecode caches written, indexes built, files read once.
        for cmd in chosen.values():
            _run(cmd, root, {**env, "PEER_ITEMS": str(warm_items)}, data=warm_data)
        start = _run([*pytest, "empty"], root, env)["wall"]
        source = "the real dev sample, repeated" if REAL_ASQA.exists() else "the bundled sample"
        print(f"{args.items} ASQA items ({source}), system {args.latency * 1000:.0f} ms, STR-EM")
        print(f"pytest's own start-up (one empty test): {start:.2f} s")
        floor = means = None
        for name, cmd in chosen.items():
            got = _run(cmd, root, env, data=data)
            floor = floor or got["wall"]
            means = means or got["mean"]
            first = f"{got['first']:.2f} s" if got["first"] is not None else "n/a"
            agree = "agrees" if got["mean"] is not None and abs(got["mean"] - means) < 1e-9 else "DIFFERS"
            print(
                f"  {name:<56} {got['wall']:7.2f} s  {got['wall'] / floor:5.2f}x floor  "
                f"RSS {got['rss']:5.0f} MB  first result {first:>7}  STR-EM {got['mean']!r} ({agree})"
            )
        ideal = args.items * args.latency / CONCURRENCY
        print(
            f"target: pytest-ambigqa {conc} within 1.3 x (floor + start-up) = {1.3 * (floor + start):.2f} s"
        )
        print(f"(the calls alone: {ideal:.2f} s at {CONCURRENCY} at a time)")


if __name__ == "__main__":
    main()
