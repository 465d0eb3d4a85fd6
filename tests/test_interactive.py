"""The interactive clarification protocol's pure parts (Berant, Chen, Fisch et al. 2025,
"Learning Steerable Clarification Policies with Collaborative Self-play"): episodes, the
offline user, reward, metrics and steerability, with scripted policies whose numbers are
known exactly."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_ambigqa.errors import PolicyError
from pytest_ambigqa.metrics.interactive import reward, words
from pytest_ambigqa.metrics.text import STOPWORDS
from pytest_ambigqa.protocols.interactive import (
    COST_GRID,
    PLANS,
    Episode,
    OfflineUser,
    episodes,
    ignores,
    leaks,
    optimal_sequences,
    play,
    sequence,
    steerability,
)
from pytest_ambigqa.protocols.interactive.scoring import (
    failed_result,
    scored_result,
    settled,
    unscored_result,
)
from pytest_ambigqa.protocols.interactive.section import section
from pytest_ambigqa.protocols.interactive.users import DO_NOT_KNOW, REPLY_WORDS, disambiguation, gives_away
from pytest_ambigqa.schema import AmbigItem, Interpretation
from pytest_ambigqa.suites import SUITES, LoadOptions

MARCH = SUITES["march"].load(None, LoadOptions()).items
ITEM = AmbigItem(
    "toy",
    "1",
    "How many championships does Louisville have?",
    (
        Interpretation("How many men's basketball championships does Louisville have?", ("2",)),
        Interpretation("How many women's basketball championships does Louisville have?", ("none",)),
    ),
)


def answer_first_gold(question, history, alpha, beta, allowed):
    return "answer", ITEM.interpretations[0].short_answers[0]


def clarify_then_answer(question, history, alpha, beta, allowed):
    if "clarify" in allowed:
        return "clarify", "Men's or women's?"
    reading = history[-1][1]
    return "answer", "2" if "men's" in reading and "women's" not in reading else "none"


def multi_answer(question, history, alpha, beta, allowed):
    return "multi-answer", "Men's basketball: 2\nWomen's basketball: none"


def test_episodes_are_enumerated_per_interpretation_and_cost_with_two_ambiguous_to_one_unambiguous():
    found = episodes(MARCH)
    per_cost = [e for e in found if (e.alpha, e.beta) == COST_GRID[0]]
    assert len(found) == len(per_cost) * len(COST_GRID)
    ambiguous_queries = {e.query for e in per_cost if e.ambiguous}
    unambiguous_queries = {e.query for e in per_cost if not e.ambiguous}
    assert len(ambiguous_queries) == sum(len(i.interpretations) > 1 for i in MARCH)
    assert len(unambiguous_queries) == -(-len(ambiguous_queries) // 2)  # 2 : 1, rounded up
    # Ten ambiguous queries: five unambiguous ones, not six (2 / 3 in floats rounds up).
    ten = [AmbigItem("toy", str(n), "q?", ITEM.interpretations) for n in range(10)]
    assert sum(not e.ambiguous for e in episodes(ten, [(0, 0)])) == 5
    assert sum(e.ambiguous for e in per_cost) == sum(
        len(i.interpretations) for i in MARCH if len(i.interpretations) > 1
    )
    assert len({e.key for e in found}) == len(found) and episodes(MARCH) == found  # stable ids, deterministic
    assert all(
        e.question != next(i for i in MARCH if i.key == e.item).question for e in per_cost if not e.ambiguous
    )


def test_an_answer_policy_with_the_first_gold_gets_f1_100_on_that_interpretation_and_pays_beta_per_word():
    for alpha, beta in COST_GRID:
        first, second = (Episode(ITEM.key, n, True, ITEM.question, alpha, beta) for n in (0, 1))
        outcome, why, _ = play(ITEM, first, answer_first_gold)
        assert why is None and outcome.f1 == 100 and outcome.sequence == "QAF"
        assert outcome.reward == pytest.approx(100 - beta * 1)
        other, _, _ = play(ITEM, second, answer_first_gold)
        assert other.f1 == 0 and other.reward == pytest.approx(-beta)


def test_a_clarify_policy_pays_alpha_once_per_episode():
    for alpha, beta in COST_GRID:
        for n in (0, 1):
            outcome, why, transcript = play(
                ITEM, Episode(ITEM.key, n, True, ITEM.question, alpha, beta), clarify_then_answer
            )
            assert why is None and outcome.sequence == "QCRAF" and outcome.f1 == 100
            assert outcome.reward == pytest.approx(100 - alpha - beta)
            assert [t["action"] for t in transcript] == ["query", "clarify", "respond", "answer", "finalize"]


def test_a_multi_answer_is_read_for_the_users_interpretation_and_costs_all_its_words():
    outcome, _, transcript = play(ITEM, Episode(ITEM.key, 1, True, ITEM.question, 0, 0.7), multi_answer)
    assert transcript[-1]["text"] == "none"  # the answer of the user's part of it
    assert outcome.f1 == 100 and outcome.sequence == "QMF"
    assert outcome.final_words == 6 and outcome.reward == pytest.approx(100 - 0.7 * 6)  # every word costs
    user, episode = OfflineUser(), Episode(ITEM.key, 0, True, "q", 0, 0)
    assert user.finalize(ITEM, episode, "A: 1. B: 2", "answer") == "A: 1. B: 2"  # an answer is kept whole


@given(st.floats(0, 100), st.integers(0, 3), st.integers(0, 500), st.floats(0, 50), st.floats(0, 10))
def test_reward_is_accuracy_less_the_costs(acc, clarifications, final_words, alpha, beta):
    assert reward(acc, clarifications, final_words, alpha, beta) == pytest.approx(
        acc - alpha * clarifications - beta * final_words
    )
    assert reward(acc, clarifications, final_words + 1, alpha, beta) <= reward(
        acc, clarifications, final_words, alpha, beta
    )


@given(st.lists(st.text(alphabet="ab ", max_size=8), max_size=6))
def test_words_are_whitespace_separated(parts):
    assert words(" ".join(parts)) == len(" ".join(parts).split())


class TellingUser(OfflineUser):
    """A user who gives the answer away, and one who answers from its own knowledge."""

    def reply(self, item, episode, clarification):
        return "the 2 one"

    def finalize(self, item, episode, assistant_text, action):
        return "I know it is 2 titles"


def test_a_user_that_leaks_makes_the_episode_unscored_one_that_ignores_the_assistant_is_counted():
    assert leaks("I mean the one where the answer is 2", ["2"]) and not leaks("men's basketball", ["2"])
    assert ignores("the answer is forty two", "42") and not ignores("forty two", "it is forty two")
    episode = Episode(ITEM.key, 0, True, ITEM.question, 2, 0.1)
    outcome, why, _ = play(ITEM, episode, clarify_then_answer, TellingUser())
    assert outcome is None and why == "the user's reply gives the answer away"
    # The paper filters such rollouts from its training data only (sections 3.2, 4.2): scored, marked.
    outcome, why, _ = play(ITEM, episode, answer_first_gold, TellingUser())
    assert why is None and outcome.ignores and outcome.f1 > 0
    outcome, _, _ = play(ITEM, episode, answer_first_gold)
    assert not outcome.ignores


def test_the_offline_user_replies_with_what_its_reading_adds_never_the_whole_reading():
    user = OfflineUser()
    replies = [user.reply(ITEM, Episode(ITEM.key, n, True, ITEM.question, 0, 0), "Which?") for n in (0, 1)]
    assert replies == ["men's basketball", "women's basketball"]
    ask = "When did the first harry potter come out?"
    cases = {
        "When did the first harry potter book come out in the uk?": "book in uk",  # in order
        ask: DO_NOT_KNOW,  # the unambiguous query: the reading adds nothing
        "The first harry potter, when did it come out?": DO_NOT_KNOW,  # reordered: nothing added
        "When did the first harry potter come out of the?": DO_NOT_KNOW,  # stopwords only
        "When did the first harry potter come out, in 1997 or in 2001 or in 2005 or later?": (
            "in 1997 or in 2001 or in 2005"  # at most REPLY_WORDS words
        ),
        "Lisa Fischer": "Lisa",  # a condition sharing no word with the question: never all of it
        "1997": DO_NOT_KNOW,  # nothing left once the whole is withheld
    }
    for reading, expected in cases.items():
        got = disambiguation(reading, ask)
        assert got == expected, (reading, got)
        assert not gives_away(got, reading)
    assert len(disambiguation(" ".join(f"w{n}" for n in range(30)), ask).split()) == REPLY_WORDS


WORDS = st.sampled_from(["the", "of", "in", "uk", "book", "Book,", "film", "1997", "x-ray", "know", "?"])


@given(st.lists(WORDS | st.text(min_size=1, max_size=6), max_size=12), st.text(max_size=60))
def test_the_offline_users_reply_never_contains_the_whole_reading(reading_words, question):
    reading = " ".join(reading_words)
    reply = disambiguation(reading, question)
    assert not gives_away(reply, reading)
    assert len(reply.split()) <= REPLY_WORDS
    if reply not in (DO_NOT_KNOW, "?"):  # something that reads: not stopwords alone
        assert any("".join(c for c in w.casefold() if c.isalnum()) not in STOPWORDS for w in reply.split())


def _every_episode_reply(items):
    user = OfflineUser()
    for episode in episodes(items, [(0, 0)]):
        item = next(i for i in items if i.key == episode.item)
        reading = item.interpretations[episode.interpretation]
        whole = reading.question or reading.condition
        reply = user.reply(item, episode, "Which one do you mean?")
        yield whole, reply


@pytest.mark.parametrize("suite", ["march", "condambigqa", "asqa"])
def test_no_reply_of_the_offline_user_gives_a_bundled_samples_reading_away(suite):
    items = SUITES[suite].load(None, LoadOptions()).items
    checked = 0
    for whole, reply in _every_episode_reply(items):
        assert reply and not gives_away(reply, whole), (whole, reply)
        checked += 1
    assert checked >= len(items)


@pytest.mark.parametrize(
    ("suite", "path"),
    [("asqa", "asqa/asqa_dev_sample40.jsonl"), ("condambigqa", "condambigqa/condambigqa_sample20.json")],
)
def test_no_reply_of_the_offline_user_gives_a_real_samples_reading_away(shared_data, suite, path):
    items = SUITES[suite].load(shared_data / path, LoadOptions()).items
    for whole, reply in _every_episode_reply(items):
        assert reply and not gives_away(reply, whole), (whole, reply)


def test_the_budget_allows_one_clarification_then_forbids_it():
    seen = []

    def greedy(question, history, alpha, beta, allowed):
        seen.append(allowed)
        return ("clarify", "which?") if "clarify" in allowed else ("answer", "2")

    play(ITEM, Episode(ITEM.key, 0, True, ITEM.question, 0, 0), greedy)
    assert seen == [("clarify", "answer", "multi-answer"), ("answer", "multi-answer")]

    def stubborn(question, history, alpha, beta, allowed):
        return "clarify", "which?"

    with pytest.raises(PolicyError, match="not one of answer, multi-answer"):
        play(ITEM, Episode(ITEM.key, 0, True, ITEM.question, 0, 0, max_clarifications=0), stubborn)


def test_forced_plans_allow_one_action_per_turn():
    seen = []

    def obliging(question, history, alpha, beta, allowed):
        seen.append(allowed)
        return allowed[0], "which?" if allowed[0] == "clarify" else "Men's: 2\nWomen's: none"

    for name, plan in PLANS.items():
        seen.clear()
        outcome, _, _ = play(ITEM, Episode(ITEM.key, 0, True, ITEM.question, 0, 0), obliging, plan=plan)
        assert [a[0] for a in seen] == list(plan) and all(len(a) == 1 for a in seen)
        assert outcome.sequence == {"ANSWER": "QAF", "CLARIFY": "QCRAF", "MULTI-ANSWER": "QMF"}.get(
            name, "QCRMF"
        )
    assert sequence(["clarify", "multi-answer"]) == "QCRMF"


def test_steerability_tells_a_policy_that_follows_the_costs_from_one_that_ignores_them():
    queries = [f"q{n}" for n in range(6)]
    # Optimal: clarify when clarifying is free (alpha 0), answer when it costs 20.
    optimal = {
        (q, a, b): ("QCRAF" if a == 0 else "QAF") for q in queries for a in (0, 20) for b in (0.1, 5.0)
    }
    follows = dict(optimal)
    flat = {key: "QCRAF" for key in optimal}
    assert steerability(optimal, follows, "alpha", 0, 20) == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    assert steerability(optimal, flat, "alpha", 0, 20) == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    backwards = {(q, a, b): ("QAF" if a == 0 else "QCRAF") for q, a, b in optimal}
    assert steerability(optimal, backwards, "alpha", 0, 20)["precision"] == 0.0  # +C is not -C


def test_steerability_averages_over_every_value_of_the_fixed_cost():
    # Appendix D step 4 and Table 4's caption: the mean over the three betas, one of which has
    # nothing to steer (the optimum never changes, nor does the policy): it counts 0, not skipped.
    queries = [f"q{n}" for n in range(4)]
    optimal = {
        (q, a, b): ("QCRAF" if a == 0 and b < 5 else "QAF")
        for q in queries
        for a in (0, 20)
        for b in (0.1, 0.7, 5)
    }
    assert steerability(optimal, dict(optimal), "alpha", 0, 20) == pytest.approx(
        {"precision": 2 / 3, "recall": 2 / 3, "f1": 2 / 3}
    )


def _episode_result(query, n, alpha, reward=None, forced=None, status="ok"):
    """A settled-to-be result of the toy item's reading ``n`` at (alpha, 0.1)."""
    episode = Episode(f"toy-{query}", n, True, ITEM.question, alpha, 0.1)
    item = AmbigItem("toy", episode.key, ITEM.question, ITEM.interpretations)
    if status != "ok":
        result = failed_result(item, "error", "boom", episode=episode)
    elif reward is None:
        result = unscored_result(item, "the user's reply gives the answer away")
    else:
        result = scored_result(item, {"reward": reward, "episode_f1": max(reward, 0)}, None, 0.0)
    details = {"episode": episode.describe(), **({"sequence": "QAF"} if reward is not None else {})}
    return dataclasses.replace(result, details=details | ({"forced": forced} if forced else {}))


def _forced(reward, spoiled=None):
    return {plan: {"sequence": "QAF", "reward": reward, "f1": 0.0} for plan in PLANS} | (
        {spoiled: {"unscored": "the user's reply gives the answer away"}} if spoiled else {}
    )


def test_every_row_of_the_table_is_over_the_same_episodes_and_the_headline_over_its_own_plays():
    results = [
        _episode_result("a", 0, 0, 90, _forced(50)),
        _episode_result("a", 1, 0, 80, _forced(40, spoiled="CLARIFY")),  # the system answered
        _episode_result("b", 0, 0, None, _forced(60)),  # the system's play was spoiled
        _episode_result("b", 1, 0, 70, _forced(30)),
    ]
    rows = settled(results)
    # The headline reads the system's own plays only: a spoiled forced play does not move it.
    assert [("reward" in r.scores) for r in rows] == [True, True, False, True]
    alone = settled([dataclasses.replace(r, details={"episode": r.details["episode"]}) for r in results])
    assert [r.scores for r in rows] == [r.scores for r in alone]
    done = section(rows)
    assert sum(done["unscored"].values()) == 1
    reference = done["reference"]
    assert list(reference["left_out"]) == ["the user spoiled the forced CLARIFY play: "
                                           "the user's reply gives the answer away"]  # fmt: skip
    policies = reference["policies"]
    assert list(policies)[0] == "SYSTEM"
    assert {p["ambiguous"]["episodes"] for p in policies.values()} == {2}  # episodes a0 and b1
    assert policies["SYSTEM"]["ambiguous"]["reward"] == pytest.approx((90 + 70) / 2)  # one per query


def test_a_failed_episode_counts_the_same_with_and_without_the_forced_policies():
    forced = [_forced(-30), _forced(-50), _forced(-40)]
    results = [
        _episode_result("a", 0, 2, 40, forced[0]),
        _episode_result("a", 1, 2, 10, forced[1]),
        _episode_result("b", 0, 2, status="error", forced=forced[2]),
    ]
    alone = [
        dataclasses.replace(r, details={k: v for k, v in r.details.items() if k != "forced"}) for r in results
    ]
    with_forced, without = settled(results), settled(alone)
    # The system's worst is a wrong one-word answer after its one clarification, -2 x 1 - 0.1;
    # the forced plays' -50 (once in one pool with the system's) no longer moves it.
    assert with_forced[2].scores == without[2].scores == {"reward": -2.1, "episode_f1": 0.0}
    # Each row is priced from its own plays: the forced rows' errors at their own worst.
    floors = section(with_forced)["reference"]["error_rewards"]["ANSWER"]
    assert floors == [{"alpha": 2, "beta": 0.1, "reward": -50}]


def test_the_hindsight_best_sequence_has_the_highest_mean_reward():
    assert optimal_sequences({"QAF": [10, 30], "QCRAF": [25, 15], "QMF": [5]}) == {"QAF", "QCRAF"}
    assert optimal_sequences({"QAF": [1.0], "QMF": [2.0]}) == {"QMF"}
