"""``--ambig-shard=auto``: the shard this process runs, read from the variables the user's
scheduler sets in each of the array's tasks, so one command line serves every task.

==========  ==================================  ===========================================
scheduler   index (its base)                    count
==========  ==================================  ===========================================
kubernetes  ``JOB_COMPLETION_INDEX`` (0)        ``--ambig-shard-count`` or ``$AMBIG_SHARD_COUNT``
                                                (the Job's ``completions``: no variable says it)
slurm       ``SLURM_ARRAY_TASK_ID`` (``..._MIN``, ``SLURM_ARRAY_TASK_COUNT``, checked against
            stepping by ``..._STEP``)           ``..._MAX`` and ``..._STEP``
gitlab      ``CI_NODE_INDEX`` (1)               ``CI_NODE_TOTAL``
circleci    ``CIRCLE_NODE_INDEX`` (0)           ``CIRCLE_NODE_TOTAL``
buildkite   ``BUILDKITE_PARALLEL_JOB`` (0)      ``BUILDKITE_PARALLEL_JOB_COUNT``
==========  ==================================  ===========================================

A scheduler is present when its index variable is set (not empty). Anything malformed, out
of range or inconsistent is refused with one line naming the variable; so is an environment
where none is present, or where two present ones (a Slurm job inside a CI runner) name
different shards. ``--ambig-shard-count`` (or the variable), where given, must agree with
the scheduler's count.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .options import refuse

# A scheduler: the shard its environment names (given --ambig-shard-count, if any), or None.
ReadShard = Callable[[Mapping[str, str], int | None], "SchedulerShard | None"]

COUNT_VARIABLE = "AMBIG_SHARD_COUNT"
MAX_SHARDS = 1_000_000  # a larger count is a typo: no scheduler runs arrays that wide
_LARGEST = 10**9  # of any variable read (a Slurm task id may exceed the count)
_WHOLE = re.compile(r"[0-9]+")
_OPTION = "--ambig-shard=auto"


@dataclass(frozen=True)
class SchedulerShard:
    """The shard the scheduler's variables name: ``shard`` is (I, N), 1-based, as
    ``--ambig-shard=I/N``; ``index`` is the scheduler's own index, as its variable gave it."""

    scheduler: str  # a SCHEDULERS name
    index: int
    shard: tuple[int, int]

    def to_dict(self) -> dict[str, Any]:
        return {"scheduler": self.scheduler, "index": self.index}


def _read(env: Mapping[str, str], name: str, *, low: int = 0) -> int | None:
    """A variable's whole number; None when it is unset or empty."""
    raw = env.get(name, "").strip()
    if not raw:
        return None
    if not _WHOLE.fullmatch(raw):
        refuse(f"{_OPTION}: {name}='{raw}' is not a whole number")
    value = int(raw)
    if not low <= value <= _LARGEST:
        refuse(f"{_OPTION}: {name}={raw} is out of range ({low} to {_LARGEST})")
    return value


def _needed(env: Mapping[str, str], name: str, because: str, *, low: int = 0) -> int:
    value = _read(env, name, low=low)
    if value is None:
        refuse(f"{_OPTION}: {because} is set but {name} is not")
    return value


def _counted(index: int, base: int, count: int, what: str, scheduler: str) -> SchedulerShard:
    if not 1 <= count <= MAX_SHARDS:
        refuse(f"{_OPTION}: a count of {count} shards is out of range (1 to {MAX_SHARDS})")
    if not base <= index < base + count:
        refuse(f"{_OPTION}: {what}={index} is outside {base} to {base + count - 1} ({count} shards)")
    return SchedulerShard(scheduler, index, (index - base + 1, count))


def _kubernetes(env: Mapping[str, str], count: int | None) -> SchedulerShard | None:
    index = _read(env, "JOB_COMPLETION_INDEX")
    if index is None:
        return None
    if count is None:
        refuse(
            f"{_OPTION}: JOB_COMPLETION_INDEX={index} (a Kubernetes Indexed Job) gives no shard count; "
            f"set --ambig-shard-count or ${COUNT_VARIABLE} to the Job's completions"
        )
    return _counted(index, 0, count, "JOB_COMPLETION_INDEX", "kubernetes")


def _slurm(env: Mapping[str, str], count: int | None) -> SchedulerShard | None:
    """A Slurm job array (``sbatch --array=MIN-MAX[:STEP]``): the shard is the task's place
    in the array. An array whose ids are not evenly spaced (``--array=1,4,9``) cannot say it
    from the variables alone and is refused."""
    task = _read(env, "SLURM_ARRAY_TASK_ID")
    if task is None:
        return None
    first = _needed(env, "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_ID")
    tasks = _needed(env, "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_ID", low=1)
    step = _read(env, "SLURM_ARRAY_TASK_STEP", low=1) or 1
    last = _read(env, "SLURM_ARRAY_TASK_MAX")
    if last is not None and last != first + (tasks - 1) * step:
        refuse(
            f"{_OPTION}: SLURM_ARRAY_TASK_MIN={first}, SLURM_ARRAY_TASK_MAX={last} and "
            f"SLURM_ARRAY_TASK_STEP={step} do not make SLURM_ARRAY_TASK_COUNT={tasks} tasks; "
            "auto needs an evenly spaced array (--array=MIN-MAX or MIN-MAX:STEP)"
        )
    if task < first:
        refuse(f"{_OPTION}: SLURM_ARRAY_TASK_ID={task} is below SLURM_ARRAY_TASK_MIN={first}")
    if (task - first) % step:
        refuse(f"{_OPTION}: SLURM_ARRAY_TASK_ID={task} is not MIN={first} plus a multiple of STEP={step}")
    place = (task - first) // step
    if place >= tasks:
        refuse(
            f"{_OPTION}: SLURM_ARRAY_TASK_ID={task} is past the array's {tasks} tasks "
            f"(MIN={first}, STEP={step})"
        )
    shard = _counted(place, 0, tasks, "SLURM_ARRAY_TASK_ID", "slurm")
    return SchedulerShard("slurm", task, shard.shard)


def _fixed(scheduler: str, index_name: str, count_name: str, base: int) -> ReadShard:
    """A CI runner that numbers its parallel jobs from ``base`` and says how many there are."""

    def read(env: Mapping[str, str], count: int | None) -> SchedulerShard | None:
        index = _read(env, index_name)
        if index is None:
            return None
        total = _needed(env, count_name, index_name, low=1)
        return _counted(index, base, total, index_name, scheduler)

    return read


SCHEDULERS: dict[str, ReadShard] = {
    "kubernetes": _kubernetes,
    "slurm": _slurm,
    "gitlab": _fixed("gitlab", "CI_NODE_INDEX", "CI_NODE_TOTAL", 1),
    "circleci": _fixed("circleci", "CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL", 0),
    "buildkite": _fixed("buildkite", "BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT", 0),
}
# The scheduler's index of shard I, where it is fixed by I (Slurm's depends on the array's ids).
BASES = {"kubernetes": 0, "gitlab": 1, "circleci": 0, "buildkite": 0}
INDEX_VARIABLES = (
    "JOB_COMPLETION_INDEX",
    "SLURM_ARRAY_TASK_ID",
    "CI_NODE_INDEX",
    "CIRCLE_NODE_INDEX",
    "BUILDKITE_PARALLEL_JOB",
)


def _count(env: Mapping[str, str], option: str | None) -> int | None:
    """``--ambig-shard-count``, else ``$AMBIG_SHARD_COUNT``; both given, they must agree."""
    from_env = _read(env, COUNT_VARIABLE, low=1)
    if option is None:
        return from_env
    if not _WHOLE.fullmatch(option.strip()) or not 1 <= int(option) <= MAX_SHARDS:
        refuse(f"--ambig-shard-count: expected a whole number from 1 to {MAX_SHARDS}, got '{option}'")
    count = int(option)
    if from_env is not None and from_env != count:
        refuse(f"--ambig-shard-count={count} and {COUNT_VARIABLE}={from_env} disagree")
    return count


def detect(env: Mapping[str, str], count_option: str | None = None) -> SchedulerShard:
    """The shard the environment's scheduler names (``--ambig-shard-count``'s text given as
    ``count_option``); a usage error where none is present or they disagree."""
    count = _count(env, count_option)
    found = [s for s in (read(env, count) for read in SCHEDULERS.values()) if s is not None]
    if not found:
        refuse(
            f"{_OPTION}: no scheduler's shard variable is set (looked for {', '.join(INDEX_VARIABLES)}); "
            "give --ambig-shard=I/N"
        )
    named = {f"{s.scheduler} says {s.shard[0]}/{s.shard[1]}" for s in found if s.shard != found[0].shard}
    if named:
        first = found[0]
        refuse(
            f"{_OPTION}: the schedulers disagree: {first.scheduler} says "
            f"{first.shard[0]}/{first.shard[1]}, {', '.join(sorted(named))}"
        )
    if count is not None and found[0].shard[1] != count:
        refuse(
            f"{_OPTION}: {found[0].scheduler} runs {found[0].shard[1]} shards, "
            f"but --ambig-shard-count or {COUNT_VARIABLE} says {count}"
        )
    return found[0]
