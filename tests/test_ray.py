"""The Ray executor (``--ambig-executor=ray``) on a real Ray cluster that each run starts on
127.0.0.1 and stops at its end: the same scorecard as a local run, the calls made in the actors;
an actor killed mid-run loses only the item it had in flight, which says why, and a fresh actor
takes the rest; what cannot go with it is one usage line. The runs with Ray are fresh processes
(Ray's workers and its state outlive no test), each bounded in time."""

from __future__ import annotations

import fnmatch
import importlib.util

import pytest

from fixtures.process import ambig_run
from fixtures.ray_cluster import comparable

pytestmark = [
    pytest.mark.ray,
    pytest.mark.skipif(
        importlib.util.find_spec("ray") is None,
        reason="ray is not installed: pip install 'pytest-ambigqa[ray]' (it is in the test extra)",
    ),
]

# Each call notes the process, the Ray actor and the Ray node it ran in ("-" outside an actor).
SYSTEM = """
import os
import sys


def note():
    ray = sys.modules.get("ray")
    context = ray.get_runtime_context() if ray and ray.is_initialized() else None
    actor, node = (context.get_actor_id(), context.get_node_id()) if context else ("-", "-")
    with open(os.path.join({here!r}, "calls.txt"), "a") as out:
        out.write(f"{{os.getpid()}} {{actor}} {{node}}\\n")


def answer(question, item):
    note()
    return item.long_answers[0]


class Answerer:
    # a system that loads something once: constructed once per actor, never in the test process

    def __init__(self):
        note()

    def __call__(self, question, item, retriever=None):  # the run's retriever, sent to the actors
        found = retriever(question, k=1) if retriever is not None else []
        return {{"text": answer(question, item), "citations": [p.id for p in found]}}
"""
# MARCH's 5th item kills the embedder's actor that the run's dense retriever encodes queries with.
EMBEDDER_KILLER = """
from pathlib import Path

import ray
from mysys import Answerer as Honest


class Answerer(Honest):
    def __call__(self, question, item, retriever=None):
        if item.suite == "march" and item.index == 4:
            ray.kill(retriever.embedder.actor, no_restart=True)
            Path(__file__).with_name("killed.txt").write_text(item.id)
        return super().__call__(question, item, retriever)
"""
# The first item that runs on the second node takes that node down: it kills the node's raylet
# (its actors' parent), as a machine that is lost would.
NODE_KILLER = """
import os
import signal
import time

import ray
from mysys import answer as honest, note


def answer(question, item):
    context = ray.get_runtime_context()
    head = [n["NodeID"] for n in ray.nodes() if "node:__internal_head__" in n["Resources"]]
    if context.get_node_id() not in head and not os.path.exists({gone!r}):
        open({gone!r}, "w").write(item.id)
        note()
        with open(f"/proc/{{os.getppid()}}/cmdline", "rb") as cmdline:
            assert b"raylet" in cmdline.read(), "an actor's parent is its node's raylet"
        os.kill(os.getppid(), signal.SIGKILL)
        time.sleep(60)
    return honest(question, item)
"""
KILLER = """
import os
import signal
import time

from mysys import answer as honest, note


def answer(question, item):
    if item.index == 4:  # the 5th item: its actor's process is killed while it runs it
        note()
        os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(60)
    return honest(question, item)
"""
# Whether the pytest process loaded a model library, one line per run.
LOADED = """
import sys

def pytest_unconfigure(config):
    with open("loaded.txt", "a") as out:
        out.write(("transformers" if "transformers" in sys.modules else "-") + "\\n")
"""
RUN = ("--ambig-suite=march", "--ambig-fail-under=str_em=50")
TIMEOUT = 300  # seconds a run with Ray may take on a loaded machine (two CI runs on 2 cores took over 150)


@pytest.fixture
def systems(pytester, monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)  # each run starts its own cluster
    gone = str(pytester.path / "gone.txt")
    pytester.makepyfile(
        mysys=SYSTEM.format(here=str(pytester.path)),
        killer=KILLER,
        noder=NODE_KILLER.format(gone=gone),
        embedder_killer=EMBEDDER_KILLER,
    )
    return pytester


def calls(pytester) -> list[tuple[str, str, str]]:
    path = pytester.path / "calls.txt"
    lines = path.read_text().split("\n") if path.exists() else []
    path.unlink(missing_ok=True)
    return [tuple(line.split()) for line in lines if line]


def separate_run(pytester, *args: str, report: str):
    """A run in a process of its own, bounded in time, and the scorecard it wrote ({} if none):
    Ray's state, and the models a local run loads (torch, faiss), stay out of this process."""
    import json

    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", f"--ambig-report={report}", *args, timeout=TIMEOUT
    )
    path = pytester.path / report / "scorecard.json"
    return result, json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def ray_run(pytester, *args: str, run: tuple[str, ...] = RUN):
    return separate_run(pytester, "--ambig-executor=ray", *run, *args, report="ray")


def test_a_ray_run_gives_the_local_scorecard_its_calls_made_in_the_actors(systems):
    both = ("--ambig-system=mysys:Answerer", "--ambig-suite=march,asqa")
    local, expected = ambig_run(systems, *RUN, *both, report="local")
    assert local.ret == 0
    assert {actor for _, actor, _ in calls(systems)} == {"-"}
    assert all(item["answer"]["citations"] for item in expected["items"])  # the retriever answered
    result, card = ray_run(systems, *both, "--ambig-ray-actors=2")
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=23)
    assert comparable(card) == comparable(expected)
    said = {"executor": "ray", "ray_actors": 2, "ray_cpus": 1.0, "ray_gpus": 0.0, "concurrency": 4}
    assert {k: card["config"][k] for k in said} == said
    made = calls(systems)
    assert len(made) == 23 + 2  # each item once, and the class constructed once per actor
    assert len({actor for _, actor, _ in made}) == 2  # both actors got items, the test process none
    assert "-" not in {actor for _, actor, _ in made}
    assert len({node for _, _, node in made}) == 1  # a cluster of the run's own: one node


def test_the_reader_and_the_embedder_in_actors_of_their_own_give_the_local_scorecard_one_lost(
    systems, tiny_qa_model
):
    """The models in actors of their own give the local run's numbers; and the system's actors
    hold the embedder actor's handle, so once the system kills that actor (the 5th item), they
    encode their queries themselves, with the same model: every item is retrieved for as before."""
    models = ("--ambig-suite=march,asqa", "--ambig-retriever=dense", f"--ambig-reader={tiny_qa_model}")
    systems.makeconftest(LOADED)
    local, expected = separate_run(systems, *RUN, "--ambig-system=mysys:Answerer", *models, report="local")
    assert local.ret == 0, local.stdout.str()
    calls(systems)
    args = (
        "--ambig-system=embedder_killer:Answerer",
        "--ambig-ray-models=reader,embedder",
        "--ambig-ray-actors=1",
    )
    result, card = ray_run(systems, *models, *args)
    assert result.ret == 0, result.stdout.str()
    assert (systems.path / "killed.txt").exists()
    for part in ("items", "suites"):  # all but the system's name
        assert comparable(card)[part] == comparable(expected)[part]
    asqa = next(s for s in card["suites"] if s["name"] == "asqa")["metrics"]
    assert asqa["disambig_f1"]["n"] == 10  # the reader read every item, in its actor
    assert card["config"]["ray_models"] == ["reader", "embedder"] and card["config"]["device_used"] == "cpu"
    assert all(
        item["answer"]["citations"] for item in card["items"]
    )  # dense retrieval, in the system's actors
    assert "-" not in {actor for _, actor, _ in calls(systems)}
    # the models were loaded in the local run's process, and in the Ray run's actors only
    assert (systems.path / "loaded.txt").read_text().split() == ["transformers", "-"]


BROKEN = """
class Answerer:
    def __init__(self):
        raise RuntimeError("no model at /models/qa")

    def __call__(self, question):
        return "never"
"""


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (
            ["--ambig-system=mysys:answer", "--ambig-ray-cpus=1000"],
            "2 system actor(s) of 1000 CPU each need 2000 CPUs; the Ray cluster has *"
            " (fewer actors, or fractional CPUs per actor)",
        ),
        (
            ["--ambig-system=broken:Answerer"],
            "the system could not be constructed in a Ray actor: *RuntimeError*no model at /models/qa*",
        ),
    ],
)
def test_actors_that_cannot_start_error_every_item_with_the_reason_at_once(systems, args, error):
    systems.makepyfile(broken=BROKEN)
    result, card = ray_run(systems, "--ambig-limit=3", *args)
    assert result.ret == 1
    result.assert_outcomes(errors=3)
    assert {item["status"] for item in card["items"]} == {"error"}
    for item in card["items"]:
        assert fnmatch.fnmatch(item["error"], error), item["error"]
    assert "Traceback" not in result.stdout.str()


@pytest.mark.parametrize("actors", [1, 2])
def test_a_killed_actor_loses_only_its_item_in_flight_and_is_replaced(systems, actors):
    _, expected = ambig_run(systems, *RUN, "--ambig-system=mysys:answer", report="local")
    calls(systems)
    # One item in flight per actor: the killed actor had only the 5th (with 2 actors, the
    # other actor's item in flight is untouched).
    result, card = ray_run(
        systems,
        "--ambig-system=killer:answer",
        f"--ambig-ray-actors={actors}",
        f"--ambig-concurrency={actors}",
    )
    assert result.ret == 1, result.stdout.str()  # the errored item fails its test; the run went on
    result.assert_outcomes(passed=12, errors=1)
    errored = [item for item in card["items"] if item["status"] != "ok"]
    assert [item["item_id"] for item in errored] == ["syn-01"]
    assert errored[0]["error"].startswith("the Ray actor running this item was lost (")
    assert errored[0]["error"].endswith("; the actor was replaced")
    kept = [item for item in comparable(card)["items"] if item["item_id"] != "syn-01"]
    assert kept == [item for item in comparable(expected)["items"] if item["item_id"] != "syn-01"]
    assert card["suites"][0]["errors"] == 1
    made = [actor for _, actor, _ in calls(systems)]  # in the order the items ran
    if actors == 1:  # the items after the kill ran on the actor that replaced it
        assert len(made) == 13 and len(set(made[:5])) == 1 and len(set(made[5:])) == 1
        assert made[5] != made[0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--ambig-executor=dask"], "--ambig-executor: 'dask' is not local, ray or ray://HOST:PORT"),
        (["--ambig-executor=ray://"], "--ambig-executor=ray://: name the cluster, ray://HOST:PORT"),
        (["--ambig-ray-actors=2"], "--ambig-ray-actors: only with --ambig-executor=ray or ray://HOST:PORT"),
        (
            ["--ambig-executor=local", "--ambig-ray-cpus=2"],
            "--ambig-ray-cpus: only with --ambig-executor=ray or ray://HOST:PORT",
        ),
        (
            ["--ambig-executor=ray", "--ambig-ray-actors=0"],
            "--ambig-ray-actors: 0 must be between 1 and 1024",
        ),
        (["--ambig-executor=ray", "--ambig-ray-cpus=x"], "--ambig-ray-cpus: 'x' is not a number"),
        (["--ambig-ray-gpus=1"], "--ambig-ray-gpus: only with --ambig-executor=ray or ray://HOST:PORT"),
        (
            ["--ambig-executor=ray", "-n", "2"],
            "--ambig-executor=ray: not with xdist's -n; the Ray actors are",
        ),
        (
            ["--ambig-executor=ray", "--ambig-ray-models=reader,judge"],
            "--ambig-ray-models: 'judge' is not reader or embedder",
        ),
        (
            ["--ambig-executor=ray", "--ambig-ray-models=reader"],
            "--ambig-ray-models=reader: the run has no local reader (--ambig-reader=MODEL_DIR)",
        ),
        (
            ["--ambig-executor=ray", "--ambig-ray-models=embedder"],
            "--ambig-ray-models=embedder: --ambig-retriever=bm25 embeds nothing (dense or hybrid do)",
        ),
        (
            ["--ambig-executor=ray", "--ambig-ray-model-gpus=1"],
            "--ambig-ray-model-gpus: only with --ambig-ray-models",
        ),
    ],
)
def test_what_cannot_go_with_the_executor_is_one_usage_line(systems, args, message):
    result = systems.runpytest(*RUN, "--ambig-system=mysys:answer", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {message}*"])
    assert "Traceback" not in result.stderr.str()


def test_a_fixture_system_is_refused_with_ray(systems):
    """The actors construct the system from --ambig-system; a fixture's object stays here."""
    systems.makeconftest(
        "import pytest\n\n@pytest.fixture\ndef ambig_system():\n    return lambda question: 'x'\n"
    )
    result = systems.runpytest(*RUN, "--ambig-limit=1", "--ambig-executor=ray")
    result.assert_outcomes(errors=1)  # at setup, as the fixture's other refusals
    result.stdout.fnmatch_lines(["*--ambig-executor=ray constructs the system in each Ray actor*"])
    assert not (systems.path / "calls.txt").exists()


@pytest.fixture
def two_nodes(ray_two_nodes, monkeypatch):
    """A head and a second node on 127.0.0.1 (``fixtures/ray_cluster.py``), which the runs join
    through ``RAY_ADDRESS``."""
    monkeypatch.setenv("RAY_ADDRESS", ray_two_nodes)
    return ray_two_nodes


def test_a_run_on_a_two_node_cluster_spreads_its_actors_and_gives_the_local_scorecard(systems, two_nodes):
    _, expected = ambig_run(systems, *RUN, "--ambig-system=mysys:Answerer", report="local")
    calls(systems)
    result, card = ray_run(systems, "--ambig-system=mysys:Answerer", "--ambig-ray-actors=2")
    assert result.ret == 0, result.stdout.str()
    assert comparable(card) == comparable(expected)
    made = calls(systems)
    assert len({node for _, _, node in made}) == 2  # one CPU per node, one per actor: one actor on each


def test_a_lost_node_loses_only_its_item_in_flight_and_its_actor_is_replaced_on_the_head(systems, two_nodes):
    _, expected = ambig_run(systems, *RUN, "--ambig-system=mysys:answer", report="local")
    calls(systems)
    # Half a CPU per actor, spread: one actor on each node, and room on the head for a third.
    args = (
        "--ambig-system=noder:answer",
        "--ambig-ray-actors=2",
        "--ambig-ray-cpus=0.5",
        "--ambig-concurrency=2",
    )
    result, card = ray_run(systems, *args)
    assert result.ret == 1, result.stdout.str()
    result.assert_outcomes(passed=12, errors=1)
    lost = (systems.path / "gone.txt").read_text()
    errored = [item for item in card["items"] if item["status"] != "ok"]
    assert [item["item_id"] for item in errored] == [lost]
    assert errored[0]["error"].startswith("the Ray actor running this item was lost (")
    assert errored[0]["error"].endswith("; the actor was replaced")
    kept = [item for item in comparable(card)["items"] if item["item_id"] != lost]
    assert kept == [item for item in comparable(expected)["items"] if item["item_id"] != lost]
    made = calls(systems)
    assert (
        len({node for _, _, node in made}) == 2
    )  # the lost item ran on the second node, the rest on the head


def test_an_interactive_run_on_ray_gives_the_local_scorecard(systems):
    """Episodes ask the system turn by turn: each turn is a call to an actor."""
    episodes = ("--ambig-protocol=interactive", "--ambig-system=lexical", "--ambig-limit=3")
    local, expected = ambig_run(systems, "--ambig-suite=march", *episodes, report="local")
    assert local.ret == 0, local.stderr.str()
    result, card = ray_run(systems, "--ambig-suite=march", *episodes, run=())
    assert result.ret == 0, result.stderr.str()
    assert len(card["items"]) == len(expected["items"]) > 3
    assert comparable(card) == comparable(expected)


def test_a_cluster_address_where_nothing_listens_errors_every_item_at_once(systems, monkeypatch):
    """Ray would try a head's HOST:PORT for minutes (and put the machine's own address for
    127.0.0.1); the run says at once that nothing answers there."""
    import socket

    with socket.socket() as probe:  # a port nothing listens on: bound, never listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{port}")
        result, card = ray_run(systems, "--ambig-system=mysys:answer", "--ambig-limit=2")
    assert result.ret == 1
    result.assert_outcomes(errors=2)
    for item in card["items"]:
        assert item["error"].startswith(f"Ray could not start or join 127.0.0.1:{port}: "), item["error"]
        assert "refused" in item["error"].lower()
