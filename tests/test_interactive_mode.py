"""``--ambig-protocol=interactive`` end to end: every episode a test, the offline user and an
LLM user on a real server on 127.0.0.1, exact numbers from scripted policies, the
scorecard's section (sequences, costs, forced-action policies, oracle, steerability), and
the house's options (xdist, resume, shards and merge, gates, JUnit) working with it."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

from fixtures.network import GUARD
from fixtures.process import ambig_run
from pytest_ambigqa.cli import main as cli
from pytest_ambigqa.metrics.qa import token_f1
from pytest_ambigqa.metrics.text import normalize_answer
from pytest_ambigqa.protocols.interactive import COST_GRID, episodes
from pytest_ambigqa.suites import SUITES, LoadOptions

MARCH = SUITES["march"].load(None, LoadOptions()).items
BY_KEY = {item.key: item for item in MARCH}
COSTS = "0:0.1,20:0.1,0:5,20:5"
EXAMPLE_LINES = [f"Example {n}:" for n in range(1, 6)]  # the reference policies' worked examples

# Scripted policies. Each reads the gold item (so it is an upper bound, which is fine here)
# and obeys the actions a turn allows, so the forced-action policies can be played with it.
POLICIES = """
import os
import re

CALLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "calls.txt")


def _log():
    with open(CALLS, "a") as f:
        f.write("x\\n")


def _words(text):
    return set(re.findall(r"\\w+", text.lower()))


# The reading the user means: the one asked (an unambiguous query), else the one whose words
# the user's reply (the words its reading adds to the question) shares most.
def _reading(item, question, history):
    asked = next((i for i in item.interpretations if i.question == question), None)
    if asked is not None or not history:
        return asked
    said = _words(history[-1]["answer"])
    return max(item.interpretations, key=lambda i: len(said & _words(i.question or i.condition)))


def _act(item, history, actions, wants, question=""):
    _log()
    action = wants if wants in actions else actions[0]
    if action == "clarify":
        return {"action": "clarify", "text": "Which one do you mean?"}
    if action == "multi-answer":
        lines = [f"{i.question or i.condition}: {i.short_answers[0]}" for i in item.interpretations]
        return {"action": "multi-answer", "text": "\\n".join(lines)}
    reading = _reading(item, question, history) or item.interpretations[0]
    return {"action": "answer", "text": reading.short_answers[0]}


def answer_first(question, item):
    _log()
    return item.interpretations[0].short_answers[0]


def clarify(question, history, actions, item):
    return _act(item, history, actions, "clarify", question)


def flat(question, history, alpha, beta, actions, item):
    return _act(item, history, actions, "clarify", question)


def follows(question, history, alpha, beta, actions, item):
    return _act(item, history, actions, "clarify" if alpha < 10 else "answer", question)


def my_model(question, history):
    return "2"


# The example policy of docs/how-to/interactive.md, as written there: it does not look at what a forced turn allows.
def readme(question, history, alpha, beta, actions, retriever=None):
    if "clarify" in actions and alpha < 5:
        return {"action": "clarify", "text": "Which one do you mean?"}
    if "multi-answer" in actions and beta < 1:
        return {"action": "multi-answer", "text": "Men's: 2\\nWomen's: none"}
    return my_model(question, history)  # a str is an answer


def rude(question, history, actions, item):
    if item.id.startswith("sem-01-"):
        return {"action": "clarify", "text": "again?"} if history else {"action": "dance", "text": "x"}
    return _act(item, history, actions, "answer", question)
"""


@pytest.fixture
def policies(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(policies=POLICIES)
    pytester.makeconftest(GUARD)
    return pytester


def run(pytester, system: str, *args: str, report: str = "report"):
    return ambig_run(
        pytester,
        "--ambig-suite=march",
        "--ambig-protocol=interactive",
        f"--ambig-system=policies:{system}",
        "--ambig-cache-dir=cache",
        *args,
        report=report,
    )


def gold(item_key: str, n: int) -> tuple[str, ...]:
    return BY_KEY[item_key].interpretations[n].short_answers


def f1(answer: str, golds) -> float:
    return 100 * max(token_f1(answer, g) for g in golds)


def test_every_episode_is_a_test_with_a_stable_node_id(policies):
    result = policies.runpytest(
        "--ambig-suite=march",
        "--ambig-protocol=interactive",
        f"--ambig-costs={COSTS}",
        "--collect-only",
        "-q",
    )
    ids = [line for line in result.outlines if "::test_ambig[" in line]
    expected = [e.key for e in episodes(MARCH, [(0, 0.1), (20, 0.1), (0, 5), (20, 5)])]
    assert [line.split("[", 1)[1][:-1] for line in ids] == expected
    assert ids[0] == "ambigqa::test_ambig[march-sem-01-i0-a0-b0.1]"


def test_an_answer_policy_gets_f1_100_on_the_first_readings_episodes_less_beta_per_word(policies):
    result, card = run(policies, "answer_first")
    episodes_run = len(episodes(MARCH, COST_GRID))
    result.assert_outcomes(passed=episodes_run)
    rewards: dict[tuple, list[float]] = {}  # by query and cost pair: each query weighs the same
    for item in card["items"]:
        e = item["details"]["episode"]
        answer = gold(e["item"], 0)[0]
        expected_f1 = f1(answer, gold(e["item"], e["interpretation"]))
        if e["interpretation"] == 0:
            assert expected_f1 == 100
        expected = expected_f1 - e["beta"] * len(answer.split())
        assert item["scores"]["reward"] == pytest.approx(expected)
        assert item["scores"]["episode_f1"] == pytest.approx(expected_f1 / 100)
        assert item["details"]["sequence"] == "QAF" and item["scores"]["clarify_rate"] == 0
        rewards.setdefault((e["query"], e["alpha"], e["beta"]), []).append(expected)
    (suite,) = card["suites"]
    per_query = [sum(r) / len(r) for r in rewards.values()]
    assert suite["metrics"]["reward"]["mean"] == pytest.approx(sum(per_query) / len(per_query))
    plain = [r for group in rewards.values() for r in group]
    assert suite["metrics"]["reward"]["mean"] != pytest.approx(sum(plain) / len(plain))  # not per reading
    assert suite["metrics"]["reward"]["n"] == episodes_run  # n still counts episodes
    assert suite["metrics"]["clarify_rate"]["mean"] == 0
    assert [s["name"] for s in suite["slices"]] == ["ambiguous", "unambiguous"]
    assert suite["interactive"]["sequences"]["all"] == {"QAF": episodes_run}
    assert suite["protocol"]["name"] == "interactive"
    result.stdout.fnmatch_lines(
        ["MARCH: * episodes, bundled sample*", "  protocol: interactive clarification*"]
    )


def test_a_clarify_policy_pays_alpha_once_per_episode(policies):
    result, card = run(policies, "clarify", f"--ambig-costs={COSTS}")
    for item in card["items"]:
        e = item["details"]["episode"]
        answer = gold(e["item"], e["interpretation"])[0]
        words = len(answer.split())
        assert item["details"]["sequence"] == "QCRAF"
        if normalize_answer(answer):
            assert item["scores"]["reward"] == pytest.approx(100 - e["alpha"] - e["beta"] * words)
        actions = [t["action"] for t in item["details"]["transcript"]]
        assert actions == ["query", "clarify", "respond", "answer", "finalize"]
    costs = {(r["alpha"], r["beta"]): r for r in card["suites"][0]["interactive"]["costs"]}
    assert costs[(20, 0.1)]["reward"] == pytest.approx(costs[(0, 0.1)]["reward"] - 20)  # alpha, once


def test_the_transcript_is_in_the_scorecard_and_the_junit_properties(policies):
    result, card = run(policies, "clarify", "--ambig-costs=2:0.7", "--junitxml=junit.xml")
    first = card["items"][0]
    assert first["details"]["transcript"][1] == {
        "role": "assistant",
        "action": "clarify",
        "text": "Which one do you mean?",
    }
    cases = ET.parse(policies.path / "junit.xml").getroot().iter("testcase")
    props = {p.get("name"): p.get("value") for p in next(iter(cases)).iter("property")}
    assert json.loads(props["ambigqa.transcript"]) == first["details"]["transcript"]
    assert props["ambigqa.sequence"] == "QCRAF" and "ambigqa.reward" in props


def test_steerability_tells_a_policy_that_follows_the_costs_from_a_flat_one(policies):
    _, flat = run(policies, "flat", f"--ambig-costs={COSTS}", "--ambig-steerability", report="flat")
    _, follows = run(policies, "follows", f"--ambig-costs={COSTS}", "--ambig-steerability", report="follows")
    flat_ref = flat["suites"][0]["interactive"]["reference"]
    follows_ref = follows["suites"][0]["interactive"]["reference"]
    assert flat_ref["steerability"]["alpha"]["f1"] == 0 and flat_ref["steerability"]["alpha"]["recall"] == 0
    # It drops its clarification wherever the optimum does, and also where the optimum
    # never clarified (a tie goes to the shorter QAF) or kept clarifying: precision below 1.
    steered = follows_ref["steerability"]["alpha"]
    assert steered["recall"] > 0 and 0 < steered["precision"] < 1 and steered["f1"] > 0
    assert (
        follows_ref["steerability"]["alpha"]["from"] == 0 and follows_ref["steerability"]["alpha"]["to"] == 20
    )
    # The forced policies are the same for both (both obey the allowed actions), so is the oracle.
    del flat_ref["policies"]["SYSTEM"], follows_ref["policies"]["SYSTEM"]  # each its own plays
    assert flat_ref["policies"] == follows_ref["policies"]
    oracle, answer = flat_ref["policies"]["ORACLE"], flat_ref["policies"]["ANSWER"]
    for split in ("ambiguous", "unambiguous"):
        best = max(p[split]["reward"] for name, p in flat_ref["policies"].items() if name != "ORACLE")
        assert oracle[split]["reward"] >= best - 1e-9 and oracle[split]["reward"] >= answer[split]["reward"]
    rates = {(r["alpha"], r["beta"]): r["clarify_rate"] for r in follows["suites"][0]["interactive"]["costs"]}
    assert rates[(0, 0.1)] == 1 and rates[(20, 0.1)] == 0  # corpus level: clarifications fall with alpha
    markdown = (policies.path / "follows" / "scorecard.md").read_text()
    for line in (
        "| queries | QAF | QCRAF |",
        "| ORACLE |",
        "Prompt-level steerability, alpha 0 → 20: recall",
        "| Berant et al. 2025, Table 2 (AmbigQA) | SGP / Gemma-2-9b | ambiguous | 6.63 | 19.94 | 40.25 | 18.22 |",
    ):
        assert line in markdown, line
    plain, _ = run(policies, "flat", f"--ambig-costs={COSTS}", report="plain")
    plain_card = json.loads((policies.path / "plain" / "scorecard.json").read_text())
    assert "--ambig-steerability" in plain_card["suites"][0]["interactive"]["reference"]["reason"]


@pytest.mark.parametrize("system", ["readme", "follows"])
def test_every_reference_row_is_over_the_same_episodes_and_the_oracle_is_never_below_one(policies, system):
    _, card = run(policies, system, f"--ambig-costs={COSTS}", "--ambig-steerability")
    (suite,) = card["suites"]
    reference = suite["interactive"]["reference"]
    rows = reference["policies"]
    assert list(rows) == ["SYSTEM", "ANSWER", "CLARIFY", "MULTI-ANSWER", "CLARIFY-AND-MA", "ORACLE"]
    unscored = sum(suite["interactive"]["unscored"].values())
    left_out = unscored + sum(reference["left_out"].values())
    episodes_in = {s["name"]: s["items"] for s in suite["slices"]}
    assert sum(rows["ANSWER"][split]["episodes"] for split in rows["ANSWER"]) + left_out == suite["items"]
    # The headline is over the episodes the user did not spoil in the system's own play.
    assert suite["metrics"]["reward"]["n"] + unscored == suite["items"]
    for split in ("ambiguous", "unambiguous"):
        assert len({row[split]["episodes"] for row in rows.values()}) == 1  # the same n in every row
        assert rows["ANSWER"][split]["episodes"] <= episodes_in[split]
        for name, row in rows.items():
            assert rows["ORACLE"][split]["reward"] >= row[split]["reward"] - 1e-9, name
    errors = {name: sum(row[split]["errors"] for split in row) for name, row in rows.items()}
    if system == "readme":  # forced to clarify at alpha 20, or to list readings at beta 5, it answers
        assert errors["ANSWER"] == 0 and errors["CLARIFY"] > 0 and errors["MULTI-ANSWER"] > 0
        rewards = {"system": suite["interactive"]["error_rewards"], **reference["error_rewards"]}
        floors = {row: {(f["alpha"], f["beta"]): f["reward"] for f in got} for row, got in rewards.items()}
        for item in card["items"]:  # a crash never beats an answer of its row at its costs
            e = item["details"]["episode"]
            pair = (e["alpha"], e["beta"])
            assert "reward" not in item["scores"] or item["scores"]["reward"] >= floors["system"][pair]
            for plan, played in item["details"]["forced"].items():
                assert "reward" not in played or played["reward"] >= floors[plan][pair]
    else:
        assert set(errors.values()) == {0}
    markdown = (policies.path / "report" / "scorecard.md").read_text()
    assert "| policy | ambig. n | ambig. errors | ambig. reward | ambig. F1 | unambig. n |" in markdown
    page = (policies.path / "report" / "report.html").read_text()
    assert "ambig. errors" in page and "hindsight-best oracle" in page


def test_a_bad_turn_errors_only_its_own_episode(policies):
    result, card = run(policies, "rude", "--ambig-costs=0:0.1")
    bad = [i for i in card["items"] if i["status"] == "error"]
    assert bad and all(i["item_id"].startswith("sem-01-") for i in bad)
    assert "system returned action 'dance'" in bad[0]["error"]
    # In the denominator, at F1 0 and the worst reward scored at its costs (or a wrong one-word
    # answer's, -alpha x budget - beta, were that lower): a crash never beats an answer.
    floor = min([-0.1] + [i["scores"]["reward"] for i in card["items"] if i["status"] == "ok"])
    assert bad[0]["scores"] == {"reward": floor, "episode_f1": 0.0}
    assert card["suites"][0]["interactive"]["error_rewards"] == [{"alpha": 0, "beta": 0.1, "reward": floor}]
    assert all(i["status"] == "ok" and "reward" in i["scores"] for i in card["items"] if i not in bad)
    result.assert_outcomes(passed=len(card["items"]) - len(bad), errors=len(bad))
    # The forced policies' plays price their own rows' errors: the headline is the same with them.
    _, steered = run(policies, "rude", "--ambig-costs=0:0.1", "--ambig-steerability", report="steered")
    assert not steered["suites"][0]["interactive"]["unscored"]  # no play spoiled: the same episodes
    assert steered["suites"][0]["metrics"] == card["suites"][0]["metrics"]
    assert [i["scores"] for i in steered["items"]] == [i["scores"] for i in card["items"]]


def test_xdist_resume_shards_and_merge_give_the_same_numbers(policies, capsys):
    args = (f"--ambig-costs={COSTS}", "--ambig-steerability")
    _, serial = run(policies, "follows", *args, report="serial")
    (policies.path / "calls.txt").unlink()
    _, parallel = run(policies, "follows", *args, "-n", "2", "--ambig-concurrency=2", report="xdist")

    def numbers(card):
        suite = card["suites"][0]
        return suite["metrics"], suite["slices"], suite["interactive"], [i["scores"] for i in card["items"]]

    assert numbers(parallel) == numbers(serial)
    (policies.path / "calls.txt").unlink()
    _, resumed = run(policies, "follows", *args, "--ambig-resume", report="resumed")
    assert not (policies.path / "calls.txt").exists()  # every turn came from the store
    assert numbers(resumed) == numbers(serial)
    for i in (1, 2):
        run(policies, "follows", *args, f"--ambig-shard={i}/2", report=f"shard{i}")
    shards = [str(policies.path / f"shard{i}/scorecard.json") for i in (1, 2)]
    assert cli(["merge", *shards, "-o", str(policies.path / "merged")]) == 0, capsys.readouterr().err
    merged = json.loads((policies.path / "merged" / "scorecard.json").read_text())
    assert numbers(merged) == numbers(serial)


def test_a_comparison_of_two_interactive_runs_weighs_queries_as_the_scorecards_do(policies):
    _, base = run(policies, "answer_first", f"--ambig-costs={COSTS}", report="base")
    _, new = run(policies, "clarify", f"--ambig-costs={COSTS}", "--ambig-baseline=base/scorecard.json")
    rows = {(r["slice"], r["metric"]): r for r in new["comparison"]["rows"]}
    for metric in ("reward", "episode_f1"):
        row = rows[("all", metric)]
        assert row["base"] == pytest.approx(base["suites"][0]["metrics"][metric]["mean"])
        assert row["new"] == pytest.approx(new["suites"][0]["metrics"][metric]["mean"])
        for part in new["suites"][0]["slices"]:
            assert rows[(part["name"], metric)]["new"] == pytest.approx(part["metrics"][metric]["mean"])
        # Paired by query, as the scorecard's interval resamples: every reading and cost pair whole.
        queries = {i["details"]["episode"]["query"] for i in new["items"]}
        assert row["n"] == len(queries) < new["suites"][0]["items"]
        assert row["wins"] + row["ties"] + row["losses"] == len(queries)


def test_gates_read_the_episode_metrics(policies):
    result, card = run(policies, "answer_first", "--ambig-costs=0:0.1", "--ambig-fail-under=reward=100")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*gate FAILED: march reward (Reward) mean * < 100*"])
    result, _ = run(policies, "answer_first", "--ambig-costs=0:0.1", "--ambig-item-min=episode_f1=1")
    assert result.ret == 1 and result.parseoutcomes()["failed"] > 0
    result = policies.runpytest(
        "--ambig-suite=march", "--ambig-protocol=interactive", "--ambig-fail-under=str_em=5"
    )
    result.stderr.fnmatch_lines(
        ["ERROR: --ambig-fail-under: unknown metric 'str_em' for march (valid: *reward*"]
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--ambig-costs=0:0.1",), "ERROR: --ambig-costs: only with --ambig-protocol=interactive"),
        (
            ("--ambig-protocol=interactive", "--ambig-costs=0"),
            "ERROR: --ambig-costs: expected ALPHA:BETA, got '0'",
        ),
        (
            ("--ambig-protocol=interactive", "--ambig-costs=-1:2"),
            "ERROR: --ambig-costs: -1 must be between 0*",
        ),
        (("--ambig-protocol=interactive", "--ambig-user=llm"), "ERROR: --ambig-user=llm: *set --ambig-judge"),
        (
            ("--ambig-protocol=chat",),
            "ERROR: --ambig-protocol: 'chat' is not one of single-shot, interactive",
        ),
        (
            ("--ambig-protocol=interactive", "--ambig-costs=0:0.1,0:0.1000001"),
            "ERROR: --ambig-costs: 0:0.1000001 is given twice (costs count to 6 decimal places)",
        ),
        (
            ("--ambig-clarifications=2",),
            "ERROR: --ambig-clarifications: only with --ambig-protocol=interactive",
        ),
        (
            ("--ambig-protocol=interactive", "--ambig-retrieval-report"),
            "ERROR: --ambig-retrieval-report: an interactive run scores episodes with the protocol's own*",
        ),
        (
            ("--ambig-protocol=interactive", "--ambig-judge=m"),
            "ERROR: --ambig-judge: an interactive run judges*",
        ),
    ],
)
def test_interactive_options_are_checked(pytester, args, message):
    result = pytester.runpytest("--ambig-suite=march", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_an_llm_user_and_the_prompted_reference_policy_on_a_local_server(pytester, chat_server):
    pytester.makeconftest(GUARD)
    result = pytester.runpytest(
        "--ambig-suite=march",
        "--ambig-protocol=interactive",
        "--ambig-costs=0:0.1,20:0.1,0:5,20:5",
        "--ambig-limit=4",
        "--ambig-system=llm:policy",
        "--ambig-llm-model=policy-m",
        f"--ambig-llm-base-url={chat_server.url}",
        "--ambig-user=llm",
        "--ambig-judge=user-m",
        f"--ambig-judge-base-url={chat_server.url}",
        "--ambig-steerability",
        "--ambig-cache-dir=cache",
        "--ambig-report=report",
    )
    card = json.loads((pytester.path / "report" / "scorecard.json").read_text())
    result.assert_outcomes(passed=len(card["items"]))
    users = [b for b in chat_server.requests if b["model"] == "user-m"]
    assert users and all("You play a person" in b["messages"][0]["content"] for b in users)
    # PROMPTED's prompt has "several examples" (section 4.2): ours, five, each a full turn.
    policy = [b["messages"][0]["content"] for b in chat_server.requests if b["model"] == "policy-m"]
    assert policy and all(re.findall(r"^Example \d+:$", p, re.M) == EXAMPLE_LINES for p in policy)
    assert all(p.count("\nReply: {") == 5 and '"thought"' not in p for p in policy)
    for item in card["items"]:
        transcript = item["details"]["transcript"]
        if item["details"]["sequence"] == "QCRAF":  # the user replied with the reading, in its words
            assert transcript[2]["text"] == item["details"]["episode"]["question"] or transcript[2]["text"]
        assert item["usage"]["requests"] + item["usage"]["cached"] > 0  # the user's calls are counted
    # The scripted model clarifies when alpha < 10: the prompted policy follows the costs.
    rates = {(r["alpha"], r["beta"]): r["clarify_rate"] for r in card["suites"][0]["interactive"]["costs"]}
    assert rates[(0, 0.1)] == 1 and rates[(20, 0.1)] == 0
    assert set(card["suites"][0]["interactive"]["reference"]["policies"]) >= {
        "ANSWER",
        "CLARIFY-AND-MA",
        "ORACLE",
    }


def test_a_user_that_cannot_answer_leaves_the_episode_unscored_not_zero(pytester, chat_server):
    pytester.makepyfile(policies=POLICIES)
    pytester.makeconftest(GUARD)

    def with_llm_user(*args: str) -> pytest.RunResult:
        return pytester.runpytest(
            "--ambig-suite=march",
            "--ambig-protocol=interactive",
            "--ambig-costs=0:0.1",
            "--ambig-system=policies:clarify",
            "--ambig-user=llm",
            "--ambig-judge=user-m",
            f"--ambig-judge-base-url={chat_server.url}",
            "-p",
            "no:randomly",
            *args,
        )

    chat_server.faults = ["invalid"] * 3  # the first user call and both re-asks
    result = with_llm_user("--ambig-report=report")
    card = json.loads((pytester.path / "report" / "scorecard.json").read_text())
    spoiled = [i for i in card["items"] if "reward" in i["unscored"]]
    assert len(spoiled) == 1 and spoiled[0]["status"] == "ok" and not spoiled[0]["scores"]
    assert spoiled[0]["unscored"]["reward"].startswith(
        "the simulated user failed: user reply still unusable after 3 attempts"
    )
    assert card["suites"][0]["metrics"]["reward"]["unscored"] == 1
    assert card["suites"][0]["interactive"]["unscored"] == {spoiled[0]["unscored"]["reward"]: 1}
    result.assert_outcomes(passed=len(card["items"]))
    assert result.ret == 0  # one episode of 34: the run stands, unless bounded
    chat_server.faults = ["invalid"] * 3
    bounded = with_llm_user("--ambig-cache-dir=fresh", "--ambig-max-unscored-rate=0.01")
    assert bounded.ret == 1
    bounded.stdout.fnmatch_lines(
        ["*gate FAILED: march: 1 of 34 episodes unscored (3%) > 0.01: the simulated user*"]
    )
    chat_server.faults = ["500"] * 10_000  # a dead user model: no episode finishes
    dead = with_llm_user("--ambig-limit=2", "--ambig-judge-retries=0", "--ambig-cache-dir=dead")
    assert dead.ret == 1
    dead.stdout.fnmatch_lines(["*gate FAILED: march: the simulated user finished no episode: *"])


def test_an_interactive_system_answers_a_single_shot_run(policies):
    result = policies.runpytest("--ambig-suite=march", "--ambig-system=policies:clarify", "--ambig-report=r")
    result.assert_outcomes(passed=len(MARCH))
    card = json.loads((policies.path / "r" / "scorecard.json").read_text())
    assert card["suites"][0]["errors"] == 0  # only "answer" is allowed, and the policy obeys
    assert card["config"]["protocol"] == "single-shot"


@pytest.mark.parametrize(
    ("method", "sequence"),
    [
        ("policy-answer", "QAF"),
        ("policy-clarify", "QCRAF"),
        ("policy-multi-answer", "QMF"),
        ("policy-clarify-and-ma", "QCRMF"),
    ],
)
def test_the_forced_reference_policies_take_their_actions(pytester, chat_server, method, sequence):
    pytester.makeconftest(GUARD)
    common = ("--ambig-suite=march", f"--ambig-system=llm:{method}", "--ambig-llm-model=policy-m")
    common += (f"--ambig-llm-base-url={chat_server.url}", "--ambig-limit=3", "--ambig-cache-dir=cache")
    result = pytester.runpytest(
        *common, "--ambig-protocol=interactive", "--ambig-costs=20:5", "--ambig-report=i"
    )
    card = json.loads((pytester.path / "i" / "scorecard.json").read_text())
    assert {item["details"]["sequence"] for item in card["items"]} == {sequence}
    turns = 2 if "C" in sequence else 1  # the cost line counts every turn's call
    assert {item["answer"]["metadata"]["llm"]["calls"] for item in card["items"]} == {turns}
    result.assert_outcomes(passed=len(card["items"]))
    single = pytester.runpytest(*common, "--ambig-report=s")  # a single-shot run gets a bare answer
    single.assert_outcomes(passed=3)


@pytest.mark.parametrize(
    ("suite", "evidence", "shown"),
    [
        ("march", "retrieved", 10),
        ("condambigqa", "given", None),
    ],  # open retrieval: top 10; else the fragments
)
def test_prompted_cot_thinks_first_and_every_policy_reads_the_evidence(
    pytester, chat_server, suite, evidence, shown
):
    pytester.makeconftest(GUARD)
    result = pytester.runpytest(
        f"--ambig-suite={suite}",
        "--ambig-protocol=interactive",
        "--ambig-costs=0:0.1,20:5",
        "--ambig-limit=2",
        "--ambig-system=llm:policy-cot",
        "--ambig-llm-model=policy-m",
        f"--ambig-llm-base-url={chat_server.url}",
        "--ambig-steerability",
        "--ambig-cache-dir=cache",
        "--ambig-report=report",
    )
    card = json.loads((pytester.path / "report" / "scorecard.json").read_text())
    result.assert_outcomes(passed=len(card["items"]))
    asked = [b["messages"] for b in chat_server.requests if b["model"] == "policy-m"]
    assert asked and all("think it through" in m[0]["content"] for m in asked)
    # PROMPTED-COT's at least five worked examples (Appendix E.2), each with its thought.
    assert all(re.findall(r"^Example \d+:$", m[0]["content"], re.M) == EXAMPLE_LINES for m in asked)
    assert all(m[0]["content"].count('\nReply: {"thought": ') == 5 for m in asked)
    assert all('"thought"' in m[-1]["content"] for m in asked)
    # Every turn, forced ones too, reads the evidence the single-shot methods read.
    assert all(m[-1]["content"].startswith("Passages:\n[") for m in asked)
    prompts = "\n".join(m[-1]["content"] for m in asked)
    for item in card["items"]:
        metadata = item["answer"]["metadata"]
        assert metadata["method"] == "policy-cot" and metadata["thought"].startswith("alpha ")
        assert metadata["evidence"] == evidence and metadata["retrieved"]
        assert shown is None or len(metadata["retrieved"]) == shown
        assert all(f"[{pid}] " in prompts for pid in metadata["retrieved"])
    rates = {(r["alpha"], r["beta"]): r["clarify_rate"] for r in card["suites"][0]["interactive"]["costs"]}
    assert rates[(0, 0.1)] == 1 and rates[(20, 5)] == 0


def test_selected_metrics_missing_episodes_and_single_shot_rows_stay_apart(policies):
    result, card = run(policies, "clarify", f"--ambig-costs={COSTS}", "--ambig-metrics=clarify_rate")
    (suite,) = card["suites"]
    assert list(suite["metrics"]) == ["clarify_rate"] and suite["metrics"]["clarify_rate"]["mean"] == 100
    assert all(row["scored"] == row["episodes"] for row in suite["interactive"]["costs"])
    assert any("not computed (--ambig-metrics): reward, episode_f1" in n for n in suite["protocol"]["notes"])
    # -x stops after the first failure: the episodes never run stay in their slices and costs.
    result, card = run(policies, "clarify", f"--ambig-costs={COSTS}", "--ambig-item-min=reward=100", "-x")
    (suite,) = card["suites"]
    assert suite["missing"] > 0 and sum(s["items"] for s in suite["slices"]) == suite["items"]
    assert sum(row["episodes"] for row in suite["interactive"]["costs"]) == suite["items"]
    # A single-shot run is shown no row of the interactive protocol, not even as n/c.
    policies.runpytest("--ambig-suite=asqa", "--ambig-report=single")
    single = json.loads((policies.path / "single" / "scorecard.json").read_text())
    assert single["suites"][0]["published"] and all(
        "Berant" not in row["source"] for row in single["suites"][0]["published"]
    )
    rescore = policies.runpytest("--ambig-rescore=report/scorecard.json")
    rescore.stderr.fnmatch_lines(["ERROR: --ambig-rescore replays single-shot answers; an interactive*"])


def test_an_errored_episode_keeps_the_calls_of_its_turns(pytester, chat_server):
    """A reference policy whose model never gives a usable reply errors each episode; each
    keeps what its calls cost and the last reply, and the cost line counts them (issue 25)."""
    pytester.makeconftest(GUARD)
    chat_server.faults = ["invalid"] * 10_000
    result = pytester.runpytest(
        "--ambig-suite=march",
        "--ambig-protocol=interactive",
        "--ambig-costs=0:0.1",
        "--ambig-limit=2",
        "--ambig-system=llm:policy",
        "--ambig-llm-model=policy-m",
        f"--ambig-llm-base-url={chat_server.url}",
        "--ambig-llm-price=1,2",
        "--ambig-cache-dir=cache",
        "--ambig-report=report",
    )
    card = json.loads((pytester.path / "report" / "scorecard.json").read_text())
    assert card["items"] and all(item["status"] == "error" for item in card["items"])
    for item in card["items"]:
        calls = item["details"]["calls"]
        assert calls["requests"] >= 1 and calls["cost"] > 0 and calls["last_reply"] == "this is not JSON"
    assert card["system"]["model_calls"]["errored"] == len(card["items"])
    result.stdout.fnmatch_lines(
        [f"*over {len(card['items'])} items (0 answered, {len(card['items'])} errored)"]
    )
