"""The recipes of docs/recipes/, tested as far as this machine allows: each file parses; the
GitHub matrix names every shard once; the Kubernetes manifests validate against the Kubernetes
schema (kubernetes-validate's bundled schemas, strict, every bundled version); the Slurm scripts
pass ``bash -n``. Then each recipe's own commands run here, as its scheduler would run them
(the matrix's values, each Indexed Job pod's ``JOB_COMPLETION_INDEX``, each array task's
``SLURM_ARRAY_*``), writing to a bucket of a real S3 API on 127.0.0.1 (fixtures/storage.py)
in place of ``s3://my-bucket``, and their ``merge`` gives the whole run."""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path
from typing import cast

import pytest

from fixtures.process import QUIET
from fixtures.ray_cluster import ENV as RAY_LOOPBACK
from fixtures.ray_cluster import comparable
from pytest_ambigqa.suites import SUITES, LoadOptions

yaml = pytest.importorskip("yaml", reason="PyYAML is not installed (the test extra)")

RECIPES = Path(__file__).parent.parent / "docs" / "recipes"
WORKFLOW = RECIPES / "github-actions.yml"
PR_GATE = RECIPES / "pr-gate.yml"  # shown in docs/tutorials/gating-a-pull-request.md
MANIFESTS = (RECIPES / "kubernetes" / "indexed-job.yaml", RECIPES / "kubernetes" / "merge-job.yaml")
SLURM = (RECIPES / "slurm" / "array.sbatch", RECIPES / "slurm" / "submit.sh")
RAY = (RECIPES / "ray" / "run.sh", RECIPES / "ray" / "README.md")
RAY_S = 150  # seconds the Ray recipe may take on a loaded machine (about 10 on a quiet one)
BUCKET = "s3://my-bucket"  # the recipes' placeholder
MERGE = 'pytest-ambigqa merge "$RUN/shard-*/scorecard.json" -o "$RUN/merged"'
ITEMS = len(SUITES["march"].load(None, LoadOptions()).items)  # the recipes run MARCH
EXPRESSION = re.compile(r"\$\{\{\s*(.+?)\s*\}\}")


def run_shell(
    shell: str, script: str, env: dict[str, str], cwd: Path, timeout: float = 600
) -> subprocess.CompletedProcess:
    """``script`` run by ``shell`` as the scheduler would, with this environment's Python
    (its ``pytest`` and ``pytest-ambigqa``) first on the PATH."""
    (done,) = run_together(shell, [(script, env)], cwd, timeout)
    return done


def run_together(
    shell: str, tasks: list[tuple[str, dict[str, str]]], cwd: Path, timeout: float = 600
) -> list[subprocess.CompletedProcess]:
    """Each (script, its environment) at once, as a scheduler starts an array's tasks; one
    that runs past ``timeout`` seconds fails the test, killed with what it started."""
    started = []
    for script, env in tasks:
        environ = {**os.environ, **env, "PYTEST_ADDOPTS": f"{QUIET} -p no:cacheprovider"}
        environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), environ["PATH"]])
        started.append(
            subprocess.Popen(
                [shell, "-c", script],
                env=environ,
                cwd=cwd,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                start_new_session=True,  # its own process group: what it starts ends with it
            )
        )
    finished = []
    for process in started:
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            out, err = process.communicate()
            pytest.fail(
                f"{cast(list[str], process.args)[-1]!r} ran past {timeout:g} s:\n{out[-3000:]}{err[-3000:]}"
            )
        finished.append(subprocess.CompletedProcess(process.args, process.returncode, out, err))
    return finished


def succeeded(runs: list[subprocess.CompletedProcess]) -> None:
    for done in runs:
        assert done.returncode == 0, done.stdout + done.stderr


def merged_run(s3, run: str) -> dict:
    key = run.removeprefix(f"s3://{s3.bucket}/") + "/merged/scorecard.json"
    return s3.json(key)


# GitHub Actions


def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text())


def render(text: str, values: dict[str, str]) -> str:
    """GitHub's ``${{ ... }}`` replaced by ``values`` (an expression not there fails the test)."""

    def value(match: re.Match[str]) -> str:
        assert match.group(1) in values, f"{WORKFLOW.name}: unexpected expression {match.group(0)}"
        return values[match.group(1)]

    return EXPRESSION.sub(value, text)


def matrix_runs(flow: dict, contexts: dict[str, str]) -> list[str]:
    """The shard job's pytest command of each matrix combination, as GitHub renders it."""
    job = flow["jobs"]["shard"]
    matrix = job["strategy"]["matrix"]
    assert set(matrix) == {"shard"}, "one dimension: the shard"
    steps = [s["run"] for s in job["steps"] if "pytest " in s.get("run", "")]
    assert len(steps) == 1
    total = str(len(matrix["shard"]))
    return [
        render(steps[0], {**contexts, "matrix.shard": str(value), "strategy.job-total": total})
        for value in matrix["shard"]
    ]


def option(command: str, name: str) -> str:
    return next(a.split("=", 1)[1] for a in shlex.split(command) if a.startswith(f"{name}="))


CONTEXTS = {"github.run_id": "42", "github.run_attempt": "1"}


def test_the_github_matrix_names_every_shard_once():
    flow = workflow()
    secrets = {f"secrets.{n}": f"<{n}>" for n in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
    commands = matrix_runs(flow, {**CONTEXTS, **secrets})
    shards = sorted(tuple(map(int, option(c, "--ambig-shard").split("/"))) for c in commands)
    assert shards == [(i, len(commands)) for i in range(1, len(commands) + 1)]
    assert flow["jobs"]["shard"]["strategy"]["fail-fast"] is False
    env = {k: render(str(v), {**CONTEXTS, **secrets}) for k, v in flow["env"].items()}
    assert env["RUN"] == "s3://my-bucket/ambigqa/run-42-1"
    reports = [option(c, "--ambig-report").replace("$RUN", env["RUN"]) for c in commands]
    merge = flow["jobs"]["merge"]
    assert merge["needs"] == "shard" and merge["if"] == "${{ !cancelled() }}"
    (command,) = [s["run"] for s in merge["steps"] if "pytest-ambigqa merge" in s.get("run", "")]
    assert command == MERGE
    glob = shlex.split(command)[2].replace("$RUN", env["RUN"])
    assert all(fnmatch.fnmatch(f"{r}/scorecard.json", glob) for r in reports)
    assert len(set(reports)) == len(reports)
    assert not fnmatch.fnmatch(f"{env['RUN']}/merged/scorecard.json", glob)


def test_the_github_workflow_runs_and_merges_through_s3(s3, tmp_path):
    flow = workflow()
    secrets = {f"secrets.{n}": os.environ[n] for n in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
    env = {k: render(str(v), {**CONTEXTS, **secrets}) for k, v in flow["env"].items()}
    env["RUN"] = env["RUN"].replace(BUCKET, f"s3://{s3.bucket}")
    env["SYSTEM"] = "lexical"
    succeeded(run_together("bash", [(command, env) for command in matrix_runs(flow, CONTEXTS)], tmp_path))
    done = run_shell("bash", MERGE, env, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"merged {ITEMS} items from 4 scorecards into {env['RUN']}/merged" in done.stdout
    assert len(merged_run(s3, env["RUN"])["items"]) == ITEMS


def test_the_pull_request_gate_evaluates_then_gates_on_the_saved_baseline(tmp_path):
    """pr-gate.yml's evaluate step, with the lexical baseline for ``mypkg.qa:answer``: the main
    branch's run (no baseline) writes the scorecard and the comment; a pull request's run,
    with that scorecard restored as its baseline, gates on it and passes (the same system)."""
    flow = yaml.safe_load(PR_GATE.read_text())
    (step,) = [s for s in flow["jobs"]["evaluate"]["steps"] if "pytest " in s.get("run", "")]
    script = step["run"].replace("mypkg.qa:answer", "lexical")
    first = run_shell("bash", script, {}, tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    assert (tmp_path / "out" / "comment.md").is_file() and (tmp_path / "out" / "junit.xml").is_file()
    assert "Compared with the base run" not in (tmp_path / "out" / "comment.md").read_text()
    (tmp_path / "baseline").mkdir()
    os.replace(tmp_path / "out" / "scorecard.json", tmp_path / "baseline" / "scorecard.json")
    second = run_shell("bash", script, {}, tmp_path)
    assert second.returncode == 0, second.stdout + second.stderr
    comment = (tmp_path / "out" / "comment.md").read_text()
    assert "gates passed: 2 of 2" in comment and "Compared with the base run" in comment


# Kubernetes


def manifests() -> list[dict]:
    return [yaml.safe_load(path.read_text()) for path in MANIFESTS]


def bundled_versions() -> list[str]:
    kubernetes_validate = pytest.importorskip(
        "kubernetes_validate", reason="kubernetes-validate is not installed (the test extra)"
    )
    folder = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
    found = sorted(
        (d.name.removeprefix("v").removesuffix("-local") for d in folder.glob("v*-local")),
        key=lambda v: tuple(map(int, v.split("."))),
    )
    assert found, "kubernetes-validate bundles no schema"
    return found


def test_the_kubernetes_manifests_validate_against_the_kubernetes_schema():
    import kubernetes_validate

    versions = bundled_versions()
    for path, manifest in zip(MANIFESTS, manifests(), strict=True):
        for version in versions:
            try:
                kubernetes_validate.validate(manifest, version, strict=True)
            except kubernetes_validate.ValidationError as exc:
                pytest.fail(f"{path.name} against Kubernetes {version}: {exc.message} at {list(exc.path)}")
    # the validation is no formality: a misspelled field and a wrong type are caught
    job = manifests()[0]
    job["spec"]["completionsMode"] = job["spec"].pop("completionMode")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(job, versions[-1], strict=True)
    job = manifests()[0]
    job["spec"]["completions"] = "4"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(job, versions[-1], strict=True)


def container(manifest: dict) -> dict:
    (found,) = manifest["spec"]["template"]["spec"]["containers"]
    return found


def test_the_indexed_job_names_its_shard_count():
    job, merge = manifests()
    spec = job["spec"]
    env = {e["name"]: e["value"] for e in container(job)["env"]}
    assert spec["completionMode"] == "Indexed" and int(env["AMBIG_SHARD_COUNT"]) == spec["completions"]
    assert spec["template"]["spec"]["restartPolicy"] == "Never"
    assert "--ambig-shard=auto" in container(job)["args"][0]
    assert container(merge)["args"] == [MERGE]
    merge_env = {e["name"]: e["value"] for e in container(merge)["env"]}
    assert merge_env["RUN"] == env["RUN"]  # the merge reads what the shards wrote


def test_the_indexed_job_runs_and_merges_through_s3(s3, tmp_path):
    job, merge = manifests()
    shard = container(job)
    env = {e["name"]: e["value"] for e in shard["env"]}
    env["RUN"] = env["RUN"].replace(BUCKET, f"s3://{s3.bucket}")
    env["SYSTEM"] = "lexical"
    assert shard["command"] == ["sh", "-c"]
    pods = [
        (shard["args"][0], {**env, "JOB_COMPLETION_INDEX": str(i)}) for i in range(job["spec"]["completions"])
    ]
    succeeded(run_together("sh", pods, tmp_path))  # the pods Kubernetes starts
    for index in range(job["spec"]["completions"]):
        card = s3.json(env["RUN"].removeprefix(f"s3://{s3.bucket}/") + f"/shard-{index}/scorecard.json")
        assert card["config"]["shard_scheduler"] == {"scheduler": "kubernetes", "index": index}
        assert card["config"]["shard"] == [index + 1, job["spec"]["completions"]]
    done = run_shell("sh", container(merge)["args"][0], env, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(merged_run(s3, env["RUN"])["items"]) == ITEMS


# Slurm


def test_the_slurm_scripts_pass_bash_n():
    for path in SLURM:
        done = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True, check=False)
        assert done.returncode == 0, f"{path.name}: {done.stderr}"
        assert path.read_text().startswith("#!/bin/bash\n") and os.access(path, os.X_OK)


def array_range(script: str) -> tuple[int, int, int]:
    """``#SBATCH --array=MIN-MAX[:STEP]`` of the script."""
    found = re.search(r"^#SBATCH --array=(\d+)-(\d+)(?::(\d+))?$", script, re.MULTILINE)
    assert found, "array.sbatch names an evenly spaced --array"
    return int(found.group(1)), int(found.group(2)), int(found.group(3) or 1)


def test_the_slurm_submission_merges_after_every_task():
    submit = SLURM[1].read_text()
    assert re.search(r"sbatch --parsable --export=ALL array\.sbatch", submit)
    assert '--dependency="afterany:${array%%;*}"' in submit  # every task ended, failed or not
    (wrapped,) = re.findall(r'--wrap="(.+)"', submit)
    assert wrapped == MERGE.replace('"', "'")


def test_the_slurm_array_runs_and_merges_through_s3(s3, tmp_path):
    script = SLURM[0].read_text()
    first, last, step = array_range(script)
    tasks = range(first, last + 1, step)
    run = f"s3://{s3.bucket}/ambigqa/run-42"
    array = []
    for task in tasks:  # what Slurm sets in each task of the array
        env = {
            "RUN": run,
            "SYSTEM": "lexical",
            "SLURM_ARRAY_JOB_ID": "4242",
            "SLURM_ARRAY_TASK_ID": str(task),
            "SLURM_ARRAY_TASK_MIN": str(first),
            "SLURM_ARRAY_TASK_MAX": str(last),
            "SLURM_ARRAY_TASK_STEP": str(step),
            "SLURM_ARRAY_TASK_COUNT": str(len(tasks)),
        }
        array.append((f"bash {shlex.quote(str(SLURM[0]))}", env))
    succeeded(run_together("bash", array, tmp_path))
    (wrapped,) = re.findall(r'--wrap="(.+)"', SLURM[1].read_text())
    done = run_shell("bash", wrapped.replace("$RUN", run), {"RUN": run}, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    merged = merged_run(s3, run)
    assert len(merged["items"]) == ITEMS and merged["config"]["shard"] is None
    without_run = run_shell("bash", f"bash {shlex.quote(str(SLURM[0]))}", {"RUN": ""}, tmp_path)
    assert without_run.returncode != 0 and "set RUN to the prefix" in without_run.stderr


def test_every_recipe_is_in_the_guides():
    """Every recipe is named in the site's how-to guides (docs/how-to/shards.md lists them)."""
    guides = "\n".join(page.read_text() for page in sorted((RECIPES.parent / "how-to").glob("*.md")))
    for path in (WORKFLOW, PR_GATE, *MANIFESTS, *SLURM, *RAY):
        assert str(path.relative_to(RECIPES.parent.parent)) in guides, path


# Ray

# Notes the process, Ray actor and Ray node of each call ("-" outside an actor).
RAY_SYSTEM = """
import os
import sys


def note():
    ray = sys.modules.get("ray")
    context = ray.get_runtime_context() if ray and ray.is_initialized() else None
    actor, node = (context.get_actor_id(), context.get_node_id()) if context else ("-", "-")
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "calls.txt"), "a") as out:
        out.write(f"{os.getpid()} {actor} {node}\\n")


class Answerer:
    def __call__(self, question, item):
        note()
        if item.id == "syn-01":
            raise ValueError("no answer for this one")
        return item.long_answers[0]
"""


def test_the_ray_script_passes_bash_n_and_needs_a_cluster(tmp_path):
    done = subprocess.run(["bash", "-n", str(RAY[0])], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert RAY[0].read_text().startswith("#!/bin/bash\n") and os.access(RAY[0], os.X_OK)
    without = run_shell("bash", f"bash {shlex.quote(str(RAY[0]))}", {"RAY_ADDRESS": ""}, tmp_path)
    assert without.returncode != 0 and "set RAY_ADDRESS to the head" in without.stderr
    assert not list(tmp_path.iterdir())  # nothing started


def test_the_ray_run_merges_through_s3_into_the_local_scorecard(s3, ray_two_nodes, tmp_path):
    (tmp_path / "mysys.py").write_text(RAY_SYSTEM)
    run = f"s3://{s3.bucket}/ambigqa/run-42"
    env = {"RUN": run, "SYSTEM": "mysys:Answerer", "SHARDS": "2", "ACTORS": "1"}
    env |= RAY_LOOPBACK | {"RAY_ADDRESS": ray_two_nodes}  # the nodes are on 127.0.0.1, the runs too
    done = run_shell("bash", f"bash {shlex.quote(str(RAY[0]))}", env, tmp_path, timeout=RAY_S)
    logs = "".join(p.read_text() for p in sorted(tmp_path.glob("ambigqa-shard-*.log")))
    # one shard's item failed: that shard exits 1, having written its scorecard; the merge gates
    assert done.returncode == 1, done.stdout + done.stderr + logs
    assert sorted(re.findall(r"^shard \d/2: exit (\d) ", done.stdout, re.MULTILINE)) == ["0", "1"]
    assert f"merged {ITEMS} items from 2 scorecards into {run}/merged" in done.stdout
    calls = [line.split() for line in (tmp_path / "calls.txt").read_text().splitlines()]
    assert len(calls) == ITEMS and "-" not in {actor for _, actor, _ in calls}  # all in actors
    assert len({node for _, _, node in calls}) == 2  # one CPU a node, one actor a shard: both nodes
    local = run_shell(
        "bash", "pytest --ambig-suite=march --ambig-system=mysys:Answerer --ambig-report=local", {}, tmp_path
    )
    assert local.returncode == 1, local.stdout + local.stderr
    single = json.loads((tmp_path / "local" / "scorecard.json").read_text())
    assert comparable(merged_run(s3, run)) == comparable(single)  # but for timing and the executor
