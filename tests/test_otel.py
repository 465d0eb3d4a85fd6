"""``--ambig-otel``: a trace per run, exported by OpenTelemetry's own OTLP/HTTP exporter to a
real receiver on 127.0.0.1 (fixtures/otlp.py), which decodes it with the protocol's classes."""

from __future__ import annotations

import math

import pytest

from fixtures.network import GUARD
from fixtures.otlp import OtlpReceiver, ReceivedSpan
from fixtures.process import ambig_run
from fixtures.servers import SECRET
from pytest_ambigqa.suites import SUITES, LoadOptions

pytest.importorskip("opentelemetry.sdk", reason="the otel extra: pip install 'pytest-ambigqa[otel]'")

EVENT = "gen_ai.evaluation.result"
# A system that echoes the judge's API key into its answer: what a scrubbed trace must not carry.
LEAKY = """
import os
def answer(question, item):
    return (item.long_answers or (question,))[0] + " key=" + os.environ["OPENAI_API_KEY"]
"""


def judged(pytester: pytest.Pytester, server, *args: str) -> tuple[pytest.RunResult, dict]:
    pytester.makeconftest(GUARD)  # nothing may leave 127.0.0.1, in xdist workers too
    return ambig_run(
        pytester,
        "--ambig-suite=march,condambigqa",
        "--ambig-limit=3",
        f"--ambig-judge-base-url={server.url}",
        "--ambig-judge=judge-m",
        "--ambig-judge-price=2.5,10",
        "--ambig-cache-dir=cache",
        *args,
    )


def tree(receiver: OtlpReceiver) -> tuple[ReceivedSpan, dict[str, ReceivedSpan], list[ReceivedSpan]]:
    """The session span, the suite spans by suite and the item spans, checked to be one tree
    in one trace: each suite under the session, each item under its suite, each call under an item."""
    (session,) = receiver.named("ambigqa session")
    assert session.parent_id == ""
    assert {s.trace_id for s in receiver.spans} == {session.trace_id}
    suites = {s.attributes["ambigqa.suite"]: s for s in receiver.named("ambigqa suite ")}
    assert all(s.parent_id == session.span_id for s in suites.values())
    items = receiver.named("ambigqa item ")
    assert all(i.parent_id == suites[i.attributes["ambigqa.suite"]].span_id for i in items)
    ids = {i.span_id for i in items}
    agents = [s for s in receiver.spans if s.name.startswith("invoke_agent ")]
    assert agents and all(a.parent_id in ids for a in agents)
    ids |= {
        a.span_id for a in agents
    }  # a model call is the item's (a judge's) or the system's (an llm: step)
    calls = [*agents, *(s for s in receiver.spans if s.name.startswith("chat "))]
    assert all(c.parent_id in ids for c in calls)
    assert len(receiver.spans) == 1 + len(suites) + len(items) + len(calls)
    return session, suites, items


def evaluations(span: ReceivedSpan) -> dict[str, dict]:
    found = {a["gen_ai.evaluation.name"]: a for name, a in span.events if name == EVENT}
    assert len(found) == len(span.events)  # one event per metric, nothing else
    return found


def assert_numbers_are_the_scorecards(card: dict, suites: dict, items: list[ReceivedSpan]) -> None:
    """Each item's evaluation events are its scores and n/a reasons in scorecard.json, and each
    suite span's metric means are the scorecard's."""
    by_key = {(r["suite"], r["item_id"]): r for r in card["items"]}
    assert len(items) == len(by_key)
    for span in items:
        record = by_key[(span.attributes["ambigqa.suite"], span.attributes["ambigqa.item.id"])]
        events = evaluations(span)
        assert set(events) == set(record["scores"]) | set(record["unscored"])
        for metric, score in record["scores"].items():
            assert events[metric]["gen_ai.evaluation.score.value"] == score
        for metric, reason in record["unscored"].items():
            assert events[metric]["gen_ai.evaluation.score.label"] == "n/a"
            assert events[metric]["gen_ai.evaluation.explanation"] == reason
        assert span.attributes["ambigqa.status"] == record["status"]
    for suite in card["suites"]:
        attributes = suites[suite["name"]].attributes
        for metric, summary in suite["metrics"].items():
            if summary["mean"] is not None:
                assert math.isclose(attributes[f"ambigqa.metric.{metric}.mean"], summary["mean"])
            assert attributes[f"ambigqa.metric.{metric}.n"] == summary["n"]


def test_a_traced_run_is_one_tree_with_the_scorecards_numbers(pytester, chat_server, otlp_receiver):
    result, card = judged(pytester, chat_server, "--ambig-system=oracle", "--ambig-otel")
    result.assert_outcomes(passed=6)
    session, suites, items = tree(otlp_receiver)
    assert session.resource["service.name"] == "pytest-ambigqa"
    assert session.attributes["ambigqa.suites"] == ["march", "condambigqa"]
    assert session.attributes["ambigqa.exit_status"] == 0
    assert_numbers_are_the_scorecards(card, suites, items)
    # Each item asked the system once (the GenAI agent span) and the judge (chat spans).
    agents = otlp_receiver.named("invoke_agent ")
    assert sorted(a.parent_id for a in agents) == sorted(i.span_id for i in items)
    assert agents[0].attributes["gen_ai.operation.name"] == "invoke_agent"
    assert agents[0].attributes["gen_ai.agent.name"].startswith("oracle")
    chats = otlp_receiver.named("chat ")
    usage = card["judge"]["usage"]
    assert len(chats) == usage["requests"] == len(chat_server.requests)
    assert sum(c.attributes["gen_ai.usage.input_tokens"] for c in chats) == usage["prompt_tokens"]
    assert sum(c.attributes["gen_ai.usage.output_tokens"] for c in chats) == usage["completion_tokens"]
    assert math.isclose(sum(c.attributes["ambigqa.usage.cost_usd"] for c in chats), usage["cost"])
    chat = chats[0].attributes
    assert chats[0].kind == 3  # SPAN_KIND_CLIENT
    assert chat["gen_ai.operation.name"] == "chat" and chat["gen_ai.request.model"] == "judge-m"
    assert chat["gen_ai.provider.name"] == "openai" and chat["server.address"] == "127.0.0.1"
    assert chat["ambigqa.role"] == "judge" and chat["gen_ai.response.model"] == "judge-m"
    # Prompts and answers stay out of a trace unless asked for.
    sent = b"".join(otlp_receiver.bodies)
    assert b"gen_ai.input.messages" not in sent and b"gen_ai.output.messages" not in sent
    assert SECRET.encode() not in sent


def test_xdist_workers_put_their_items_in_the_controllers_trace(pytester, chat_server, otlp_receiver):
    result, card = judged(pytester, chat_server, "--ambig-system=oracle", "--ambig-otel", "-n", "2")
    result.assert_outcomes(passed=6)
    _, suites, items = tree(otlp_receiver)  # one trace: the workers' items under the controller's suites
    assert_numbers_are_the_scorecards(card, suites, items)
    assert len(otlp_receiver.named("chat ")) == card["judge"]["usage"]["requests"]


def test_content_on_request_and_never_a_secret(pytester, chat_server, otlp_receiver):
    pytester.makepyfile(leaky=LEAKY)
    result, card = judged(
        pytester, chat_server, "--ambig-system=leaky:answer", "--ambig-otel", "--ambig-otel-content"
    )
    result.assert_outcomes(passed=6)
    tree(otlp_receiver)
    sent = b"".join(otlp_receiver.bodies)
    assert SECRET.encode() not in sent
    agent = otlp_receiver.named("invoke_agent ")[0].attributes
    assert '"role": "user"' in agent["gen_ai.input.messages"]
    assert "key=[redacted]" in agent["gen_ai.output.messages"]
    chat = otlp_receiver.named("chat ")[0].attributes
    assert "[redacted]" in chat["gen_ai.input.messages"]  # the judge read the answer, key and all
    assert '"role": "assistant"' in chat["gen_ai.output.messages"]
    assert SECRET not in result.stdout.str()


@pytest.mark.parametrize("xdist", [(), ("-n", "2")], ids=["one-process", "xdist"])
def test_a_dead_receiver_warns_once_and_changes_nothing(pytester, chat_server, otlp_receiver, xdist):
    plain, card = judged(pytester, chat_server, "--ambig-system=oracle", *xdist)
    otlp_receiver.down()
    traced, traced_card = judged(pytester, chat_server, "--ambig-system=oracle", "--ambig-otel", *xdist)
    assert traced.ret == plain.ret == 0
    traced.assert_outcomes(passed=6, warnings=1)
    assert traced.stdout.str().count("the trace receiver at") == 1
    assert [s["metrics"] for s in traced_card["suites"]] == [s["metrics"] for s in card["suites"]]
    assert [(r["item_id"], r["scores"]) for r in traced_card["items"]] == [
        (r["item_id"], r["scores"]) for r in card["items"]
    ]


def test_content_without_otel_is_a_usage_error(pytester):
    result = pytester.runpytest("--ambig-suite=march", "--ambig-system=oracle", "--ambig-otel-content")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ambig-otel-content*set --ambig-otel*"])


def test_shards_join_the_ci_jobs_trace(pytester, otlp_receiver, monkeypatch):
    """With ``TRACEPARENT`` (W3C) set, as a CI job passes its span down, each shard's session
    is that span's child: the shards' runs are one trace."""
    trace_id, parent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    monkeypatch.setenv("TRACEPARENT", f"00-{trace_id}-{parent}-01")
    for shard in ("1/2", "2/2"):
        result = pytester.runpytest("--ambig-suite=march", "--ambig-otel", f"--ambig-shard={shard}")
        assert result.ret == 0
    sessions = otlp_receiver.named("ambigqa session")
    assert len(sessions) == 2
    assert all(s.trace_id == trace_id and s.parent_id == parent for s in sessions)
    assert {s.trace_id for s in otlp_receiver.spans} == {trace_id}
    march = SUITES["march"].load(None, LoadOptions()).items  # the bundled sample, split between the shards
    items = [s.attributes["ambigqa.item.id"] for s in otlp_receiver.named("ambigqa item ")]
    assert sorted(items) == sorted(item.id for item in march)


def test_an_llm_systems_steps_nest_under_its_call_with_a_pool(pytester, chat_server, otlp_receiver):
    """An ``llm:`` system's model calls run inside the system's call (in the thread that
    times it, under ``--ambig-concurrency``'s pool): each is a ``chat`` span under the item's
    ``invoke_agent`` span."""
    pytester.makeconftest(GUARD)
    result, card = ambig_run(
        pytester,
        "--ambig-suite=march",
        "--ambig-system=llm:naive-rag",
        "--ambig-llm-model=scripted-m",
        f"--ambig-llm-base-url={chat_server.url}",
        "--ambig-llm-price=1,2",
        "--ambig-cache-dir=cache",
        "--ambig-concurrency=3",
        "--ambig-otel",
    )
    assert result.ret == 0
    _, suites, items = tree(otlp_receiver)
    assert_numbers_are_the_scorecards(card, suites, items)
    agents = {a.span_id: a for a in otlp_receiver.named("invoke_agent ")}
    assert len(agents) == len(items)
    chats = otlp_receiver.named("chat ")
    assert len(chats) == len(chat_server.requests) > 0
    assert all(c.parent_id in agents and c.attributes["gen_ai.request.model"] == "scripted-m" for c in chats)
    assert {c.attributes["ambigqa.role"] for c in chats} == {"model"}  # an llm: system's steps
    assert all(c.attributes["ambigqa.usage.cost_usd"] > 0 for c in chats)  # --ambig-llm-price


def test_each_interactive_episode_is_a_span_with_its_turns(pytester, otlp_receiver):
    pytester.makepyfile(
        policy="def act(question, history):\n    return {'action': 'answer', 'text': question}\n"
    )
    pytester.makeconftest(GUARD)
    result, card = ambig_run(
        pytester,
        "--ambig-suite=march",
        "--ambig-protocol=interactive",
        "--ambig-system=policy:act",
        "--ambig-cache-dir=cache",
        "--ambig-otel",
    )
    assert result.ret == 0, result.stdout.str()[-2000:]
    _, suites, items = tree(otlp_receiver)
    assert_numbers_are_the_scorecards(card, suites, items)
    assert len(items) == len(card["items"]) > 0


# A system constructed in Ray actors that makes a span of its own with OpenTelemetry's API,
# exported by a provider of its own: the run's trace context reaches it.
TRACED_IN_ACTOR = """
import os
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

class Answerer:
    def __init__(self):
        self.provider = TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))

    def __call__(self, question, item):
        with self.provider.get_tracer("mysys").start_as_current_span("my retrieval step"):
            return item.long_answers[0]
"""


@pytest.mark.ray
def test_the_runs_trace_context_reaches_the_ray_actors(pytester, otlp_receiver, monkeypatch):
    pytest.importorskip("ray", reason="the ray extra: pip install 'pytest-ambigqa[ray]'")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)  # a cluster of the run's own
    pytester.makepyfile(traced=TRACED_IN_ACTOR)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--ambig-suite=march", "--ambig-system=traced:Answerer",
        "--ambig-executor=ray", "--ambig-ray-actors=1", "--ambig-otel", "--ambig-limit=3", timeout=150,
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-3000:]
    _, _, items = tree_with_steps(otlp_receiver)
    agents = {a.span_id for a in otlp_receiver.named("invoke_agent ")}
    steps = otlp_receiver.named("my retrieval step")
    assert len(steps) == len(items) == 3
    assert all(step.parent_id in agents for step in steps)  # made in the actor, under the run's call


def tree_with_steps(
    receiver: OtlpReceiver,
) -> tuple[ReceivedSpan, dict[str, ReceivedSpan], list[ReceivedSpan]]:
    """:func:`tree`, with the spans a system made itself set aside (checked by the caller)."""
    own = [s for s in receiver.spans if s.name == "my retrieval step"]
    receiver.spans = [s for s in receiver.spans if s.name != "my retrieval step"]
    try:
        session, suites, items = tree(receiver)
    finally:
        receiver.spans += own
    assert {s.trace_id for s in own} == {session.trace_id}
    return session, suites, items
