"""``--ambig-shard=auto``: each scheduler's variables give the right shard, the shards of a
simulated array partition the items, a bad or missing environment is one line, the scorecard
records the scheduler (and a damaged record is refused), and the merge of auto shards equals
one run."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fixtures.process import ambig_run
from pytest_ambigqa.cli import main as cli
from pytest_ambigqa.errors import UsageError
from pytest_ambigqa.schedulers import COUNT_VARIABLE, INDEX_VARIABLES, SCHEDULERS, detect
from pytest_ambigqa.suites import SUITES, LoadOptions, shard

ITEMS = tuple(
    i for name in ("march", "condambigqa", "asqa") for i in SUITES[name].load(None, LoadOptions()).items
)


def metrics_of(card: dict) -> list:
    return [
        (s["name"], s["metrics"], s["slices"], s["items"], s["errors"], s["missing"]) for s in card["suites"]
    ]


def slurm(task: int, first: int, count: int, step: int = 1) -> dict[str, str]:
    """What Slurm sets in a task of ``sbatch --array=FIRST-LAST:STEP``."""
    return {
        "SLURM_ARRAY_JOB_ID": "4242",
        "SLURM_ARRAY_TASK_ID": str(task),
        "SLURM_ARRAY_TASK_MIN": str(first),
        "SLURM_ARRAY_TASK_MAX": str(first + (count - 1) * step),
        "SLURM_ARRAY_TASK_STEP": str(step),
        "SLURM_ARRAY_TASK_COUNT": str(count),
    }


def array(scheduler: str, count: int, first: int = 0, step: int = 1) -> list[dict[str, str]]:
    """The environments of every task of an array of ``count`` tasks run by ``scheduler``."""
    if scheduler == "kubernetes":
        return [{"JOB_COMPLETION_INDEX": str(i), COUNT_VARIABLE: str(count)} for i in range(count)]
    if scheduler == "slurm":
        return [slurm(first + i * step, first, count, step) for i in range(count)]
    if scheduler == "gitlab":
        return [{"CI_NODE_INDEX": str(i + 1), "CI_NODE_TOTAL": str(count)} for i in range(count)]
    if scheduler == "circleci":
        return [{"CIRCLE_NODE_INDEX": str(i), "CIRCLE_NODE_TOTAL": str(count)} for i in range(count)]
    assert scheduler == "buildkite"
    return [
        {"BUILDKITE_PARALLEL_JOB": str(i), "BUILDKITE_PARALLEL_JOB_COUNT": str(count)} for i in range(count)
    ]


@pytest.mark.parametrize(
    ("env", "count", "expected"),
    [
        ({"JOB_COMPLETION_INDEX": "0", COUNT_VARIABLE: "4"}, None, ("kubernetes", 0, (1, 4))),
        ({"JOB_COMPLETION_INDEX": "3"}, "4", ("kubernetes", 3, (4, 4))),
        ({"JOB_COMPLETION_INDEX": "2", COUNT_VARIABLE: "3"}, "3", ("kubernetes", 2, (3, 3))),
        (slurm(1, 1, 8), None, ("slurm", 1, (1, 8))),
        (slurm(8, 1, 8), None, ("slurm", 8, (8, 8))),
        (slurm(14, 10, 3, step=2), None, ("slurm", 14, (3, 3))),  # --array=10-14:2
        ({"SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_MIN": "5", "SLURM_ARRAY_TASK_COUNT": "2"}, None,
         ("slurm", 5, (1, 2))),  # MAX and STEP unset: step 1, nothing to check them against
        ({"CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "5"}, None, ("gitlab", 1, (1, 5))),
        ({"CI_NODE_INDEX": "5", "CI_NODE_TOTAL": "5"}, "5", ("gitlab", 5, (5, 5))),
        ({"CIRCLE_NODE_INDEX": "0", "CIRCLE_NODE_TOTAL": "1"}, None, ("circleci", 0, (1, 1))),
        ({"CIRCLE_NODE_INDEX": "2", "CIRCLE_NODE_TOTAL": "3"}, None, ("circleci", 2, (3, 3))),
        ({"BUILDKITE_PARALLEL_JOB": "0", "BUILDKITE_PARALLEL_JOB_COUNT": "2"}, None, ("buildkite", 0, (1, 2))),
        ({"BUILDKITE_PARALLEL_JOB": "1", "BUILDKITE_PARALLEL_JOB_COUNT": "2"}, None, ("buildkite", 1, (2, 2))),
        # GitLab sets CI_NODE_TOTAL=1 in every job; without CI_NODE_INDEX it names no shard
        ({"CI_NODE_TOTAL": "1", "CIRCLE_NODE_INDEX": "1", "CIRCLE_NODE_TOTAL": "2"}, None,
         ("circleci", 1, (2, 2))),
        # two schedulers that agree (a Buildkite agent inside a Kubernetes Indexed Job)
        ({"JOB_COMPLETION_INDEX": "1", "BUILDKITE_PARALLEL_JOB": "1", "BUILDKITE_PARALLEL_JOB_COUNT": "3"}, "3",
         ("kubernetes", 1, (2, 3))),
        ({"CI_NODE_INDEX": " 2 ", "CI_NODE_TOTAL": "2", "JOB_COMPLETION_INDEX": ""}, None, ("gitlab", 2, (2, 2))),
    ],
)  # fmt: skip
def test_each_schedulers_variables_give_its_shard(env, count, expected):
    found = detect(env, count)
    assert (found.scheduler, found.index, found.shard) == expected
    assert found.to_dict() == {"scheduler": expected[0], "index": expected[1]}


@pytest.mark.parametrize(
    ("env", "count", "message"),
    [
        ({}, None, "no scheduler's shard variable is set (looked for " + ", ".join(INDEX_VARIABLES) + ")"),
        ({"CI_NODE_TOTAL": "1"}, None, "no scheduler's shard variable is set"),
        ({"JOB_COMPLETION_INDEX": "1"}, None, "JOB_COMPLETION_INDEX=1 (a Kubernetes Indexed Job) gives no shard "
         f"count; set --ambig-shard-count or ${COUNT_VARIABLE} to the Job's completions"),
        ({"JOB_COMPLETION_INDEX": "4"}, "4", "JOB_COMPLETION_INDEX=4 is outside 0 to 3 (4 shards)"),
        ({"JOB_COMPLETION_INDEX": "one"}, "4", "JOB_COMPLETION_INDEX='one' is not a whole number"),
        ({"JOB_COMPLETION_INDEX": "-1"}, "4", "JOB_COMPLETION_INDEX='-1' is not a whole number"),
        ({"JOB_COMPLETION_INDEX": "0"}, "0", "--ambig-shard-count: expected a whole number from 1 to"),
        ({"JOB_COMPLETION_INDEX": "0"}, "x", "--ambig-shard-count: expected a whole number from 1 to"),
        ({"JOB_COMPLETION_INDEX": "0", COUNT_VARIABLE: "3"}, "4", f"--ambig-shard-count=4 and {COUNT_VARIABLE}=3 "
         "disagree"),
        ({"JOB_COMPLETION_INDEX": "0", COUNT_VARIABLE: "0"}, None, f"{COUNT_VARIABLE}=0 is out of range (1 to"),
        ({"CI_NODE_INDEX": "0", "CI_NODE_TOTAL": "2"}, None, "CI_NODE_INDEX=0 is outside 1 to 2 (2 shards)"),
        ({"CI_NODE_INDEX": "3", "CI_NODE_TOTAL": "2"}, None, "CI_NODE_INDEX=3 is outside 1 to 2 (2 shards)"),
        ({"CI_NODE_INDEX": "1"}, None, "CI_NODE_INDEX is set but CI_NODE_TOTAL is not"),
        ({"CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "0"}, None, "CI_NODE_TOTAL=0 is out of range (1 to"),
        ({"CIRCLE_NODE_INDEX": "2", "CIRCLE_NODE_TOTAL": "2"}, None, "CIRCLE_NODE_INDEX=2 is outside 0 to 1"),
        ({"CIRCLE_NODE_INDEX": "1.0", "CIRCLE_NODE_TOTAL": "2"}, None, "CIRCLE_NODE_INDEX='1.0' is not a whole"),
        ({"BUILDKITE_PARALLEL_JOB": "0", "BUILDKITE_PARALLEL_JOB_COUNT": "9999999"}, None,
         "a count of 9999999 shards is out of range (1 to 1000000)"),
        ({"SLURM_ARRAY_TASK_ID": "3"}, None, "SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_MIN is not"),
        ({"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "1"}, None,
         "SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not"),
        ({**slurm(3, 1, 4), "SLURM_ARRAY_TASK_MAX": "9"}, None, "SLURM_ARRAY_TASK_MIN=1, SLURM_ARRAY_TASK_MAX=9 and "
         "SLURM_ARRAY_TASK_STEP=1 do not make SLURM_ARRAY_TASK_COUNT=4 tasks; auto needs an evenly spaced array "
         "(--array=MIN-MAX or MIN-MAX:STEP)"),
        ({**slurm(3, 1, 4), "SLURM_ARRAY_TASK_STEP": "0"}, None, "SLURM_ARRAY_TASK_STEP=0 is out of range"),
        ({**slurm(3, 1, 3, step=2), "SLURM_ARRAY_TASK_ID": "4"}, None,
         "SLURM_ARRAY_TASK_ID=4 is not MIN=1 plus a multiple of STEP=2"),
        ({**slurm(3, 2, 3), "SLURM_ARRAY_TASK_ID": "1"}, None,
         "SLURM_ARRAY_TASK_ID=1 is below SLURM_ARRAY_TASK_MIN=2"),
        ({"SLURM_ARRAY_TASK_ID": "9", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "3"}, None,
         "SLURM_ARRAY_TASK_ID=9 is past the array's 3 tasks (MIN=1, STEP=1)"),
        ({**slurm(2, 1, 4), "CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "4"}, None,
         "the schedulers disagree: slurm says 2/4, gitlab says 1/4"),
        ({"JOB_COMPLETION_INDEX": "0", "CIRCLE_NODE_INDEX": "0", "CIRCLE_NODE_TOTAL": "3"}, "2",
         "the schedulers disagree: kubernetes says 1/2, circleci says 1/3"),
        (slurm(1, 1, 4), "2", "slurm runs 4 shards, but --ambig-shard-count or AMBIG_SHARD_COUNT says 2"),
    ],
)  # fmt: skip
def test_a_bad_environment_is_one_line_naming_the_variable(env, count, message):
    with pytest.raises(UsageError) as refused:
        detect(env, count)
    text = str(refused.value)
    assert message in text and "\n" not in text
    if not text.startswith("--ambig-shard-count"):
        assert text.startswith("--ambig-shard=auto: ")


@given(
    scheduler=st.sampled_from(sorted(SCHEDULERS)),
    count=st.integers(1, 40),
    first=st.integers(0, 1000),
    step=st.integers(1, 7),
    items=st.integers(0, len(ITEMS)),
)
def test_the_auto_shards_of_an_array_hold_every_item_once(scheduler, count, first, step, items):
    """Every task of a simulated array runs the shard its variables name: together they run
    each item exactly once, whatever the array's size, ids and step."""
    chosen = ITEMS[:items]
    shards = [detect(env).shard for env in array(scheduler, count, first, step)]
    assert sorted(shards) == [(i, count) for i in range(1, count + 1)]
    ran = [item.key for s in shards for item in shard(chosen, *s)]
    assert sorted(ran) == sorted(item.key for item in chosen)


@pytest.fixture
def system(pytester, monkeypatch):
    pytester.makepyfile(mysys="def answer(question, item):\n    return item.long_answers[0]\n")
    for name in (*INDEX_VARIABLES, COUNT_VARIABLE):
        monkeypatch.delenv(name, raising=False)
    return pytester


def run(pytester, *args, report):
    return ambig_run(pytester, "--ambig-suite=march", "--ambig-system=mysys:answer", *args, report=report)


@pytest.mark.parametrize("scheduler", ["slurm", "kubernetes"])
def test_merged_auto_shards_equal_one_run(system, monkeypatch, capsys, scheduler):
    """The existing identity (tests/test_plugin_runs.py) with the shards named by a scheduler:
    each scorecard records it, the merge equals the single run."""
    whole, single = run(system, "--ambig-fail-under=str_em=50", report="whole")
    for task, env in enumerate(array(scheduler, 2, first=3, step=4)):
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        result, card = run(
            system, "--ambig-fail-under=str_em=50", "--ambig-shard=auto", report=f"shard{task}"
        )
        assert result.ret == 0, result.stdout.str()
        assert card["config"]["shard"] == [task + 1, 2]
        index = 3 + 4 * task if scheduler == "slurm" else task
        assert card["config"]["shard_scheduler"] == {"scheduler": scheduler, "index": index}
    shards = [str(system.path / f"shard{i}/scorecard.json") for i in (0, 1)]
    code = cli(["merge", *shards, "-o", str(system.path / "merged")])
    merged = json.loads((system.path / "merged/scorecard.json").read_text())
    assert code == whole.ret == 0 and "merged 13 items from 2 scorecards" in capsys.readouterr().out
    assert metrics_of(merged) == metrics_of(single) and merged["gates"] == single["gates"]
    assert [r["item_id"] for r in merged["items"]] == [r["item_id"] for r in single["items"]]
    assert "shard_scheduler" not in merged["config"] and merged["config"]["shard"] is None


def test_an_explicit_shard_records_no_scheduler(system, monkeypatch):
    monkeypatch.setenv("CI_NODE_INDEX", "2")
    monkeypatch.setenv("CI_NODE_TOTAL", "2")
    _, card = run(system, "--ambig-shard=1/2", report="explicit")
    assert card["config"]["shard"] == [1, 2] and "shard_scheduler" not in card["config"]
    bad = system.runpytest("--ambig-suite=march", "--ambig-shard=1/2", "--ambig-shard-count=2")
    bad.stderr.fnmatch_lines(["ERROR: --ambig-shard-count: only with --ambig-shard=auto"])
    assert bad.ret == 4


def test_a_usage_error_before_any_item_runs(system, monkeypatch):
    monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "x")
    bad = system.runpytest("--ambig-suite=march", "--ambig-shard=auto")
    bad.stderr.fnmatch_lines(["ERROR: --ambig-shard=auto: SLURM_ARRAY_TASK_ID='x' is not a whole number"])
    assert bad.ret == 4 and "Traceback" not in bad.stderr.str()


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        ({"scheduler": "gitlab", "index": 1}, "gitlab's index 1 is not shard 2/2"),
        ({"scheduler": "nomad", "index": 1}, "field config.shard_scheduler.scheduler"),
        ({"scheduler": "slurm", "index": -3}, "field config.shard_scheduler.index"),
        ({"scheduler": "slurm", "index": "3"}, "field config.shard_scheduler.index"),
        ({"scheduler": "slurm", "index": 3, "host": "x"}, "not a field of this record"),
    ],
)
def test_a_damaged_scheduler_record_is_refused_on_readback(system, monkeypatch, capsys, record, problem):
    for task, env in enumerate(array("gitlab", 2)):
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        run(system, "--ambig-shard=auto", report=f"shard{task}")
    path = system.path / "shard1/scorecard.json"
    card = json.loads(path.read_text())
    card["config"]["shard_scheduler"] = record
    path.write_text(json.dumps(card))
    assert cli(["merge", str(system.path / "shard0/scorecard.json"), str(path), "-o", "m"]) == 2
    err = capsys.readouterr().err
    assert problem in err and err.count("\n") == 1 and str(path) in err
