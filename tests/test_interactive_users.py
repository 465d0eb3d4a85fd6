"""The simulated users answer only what they are asked (Berant, Chen, Fisch et al. 2025,
"Learning Steerable Clarification Policies with Collaborative Self-play", section 3.1 and
Appendix E.2): the offline user's rule, its CondAmbigQA replies, and the users' audit, whose
figures docs/how-to/interactive.md gives ("The users' audit")."""

from __future__ import annotations

import pytest

from pytest_ambigqa.cli import main
from pytest_ambigqa.protocols.interactive import Episode, OfflineUser, episodes
from pytest_ambigqa.protocols.interactive.audit import IRRELEVANT, cases, measure, written
from pytest_ambigqa.protocols.interactive.users import (
    DO_NOT_KNOW,
    REPLY,
    asks_about_readings,
    distinguishing,
    says_do_not_know,
)
from pytest_ambigqa.schema import AmbigItem, Interpretation
from pytest_ambigqa.suites import SUITES, LoadOptions

BUNDLED = ("march", "condambigqa", "asqa")
SHARED = {"asqa": "asqa/asqa_dev_sample40.jsonl", "condambigqa": "condambigqa/condambigqa_sample20.json"}
# Irrelevant to every reading of the bundled and shared samples (the audit's others each
# share a word with some reading there: "long", "cover", "school").
UNRELATED = ("What is your favourite colour?", "Would you like the answer in French?")

HARRY = AmbigItem(
    "toy",
    "hp",
    "When did the first harry potter come out?",
    (
        Interpretation("When did the first harry potter book come out in the uk in 1997?", ("1997",)),
        Interpretation("When did the first harry potter movie come out?", ("2001",)),
    ),
)


def _bundled(suite):
    return SUITES[suite].load(None, LoadOptions()).items


def _shared(shared_data, suite):
    return SUITES[suite].load(shared_data / SHARED[suite], LoadOptions()).items


def test_the_user_answers_a_question_about_what_tells_the_readings_apart_and_nothing_else():
    asks = {
        "Did you mean the book or the movie?": True,  # offers the readings
        "Do you mean the movie?": True,  # names one (yes or no)
        "Which one do you mean?": True,  # asks which reading
        "Which harry potter?": True,  # a choice on the question's own words
        "Which year?": True,  # a time, where a reading adds a year
        "What is your favourite colour?": False,
        "Did you mean hard cover or soft cover?": False,  # the paper's Appendix E.2 example
        "Which colour do you mean?": False,  # a choice, of an aspect no reading decides
        "Is this for school?": False,
    }
    assert {q: asks_about_readings(HARRY, q) for q in asks} == asks
    undated = AmbigItem(
        "toy",
        "u",
        HARRY.question,
        (Interpretation("When did the first harry potter book come out?", ()),) * 2,
    )
    assert not asks_about_readings(undated, "Which year?")  # no reading names a time
    user, episode = OfflineUser(), Episode(HARRY.key, 0, True, HARRY.question, 0, 0)
    assert user.reply(HARRY, episode, "Did you mean the book or the movie?") == "book in uk in 1997"
    assert user.reply(HARRY, episode, "did you mean hard cover or soft cover?") == DO_NOT_KNOW


def test_a_condition_reply_is_its_distinguishing_words_not_boilerplate():
    items = _bundled("condambigqa")
    war = next(
        i for i in items if i.id == "c52e9f10-7d3a-4b81-8f6e-1a9d0b4c2e57"
    )  # "The question refers to ..."
    said = [distinguishing(war, Episode(war.key, n, True, war.question, 0, 0)) for n in range(3)]
    assert said == [
        "Europe surrender Nazi Germany",
        "whole came surrender Japan Pacific",
        "legal state between Japan Allied powers",
    ]
    for item, episode in _each_reading(items):
        reply = distinguishing(item, episode)
        assert not {"question", "refers", "asks", "the", "of"} & set(reply.casefold().split()), reply


def _each_reading(items):
    by_key = {item.key: item for item in items}
    for episode in episodes(items, [(0, 0)]):
        yield by_key[episode.item], episode


def _irrelevant_gets_do_not_know(items):
    user = OfflineUser()
    for item, episode in _each_reading(items):
        for question in UNRELATED:
            assert user.reply(item, episode, question) == DO_NOT_KNOW, (
                item.key,
                episode.interpretation,
                question,
            )


def _offering_gets_its_own(items):
    user, offered = OfflineUser(), 0
    for item, episode in _each_reading(items):
        if not episode.ambiguous:
            continue
        said = [
            distinguishing(item, Episode(item.key, n, True, item.question, 0, 0))
            for n in range(len(item.interpretations))
        ]
        options = [s for s in said if s != DO_NOT_KNOW]
        question = f"Do you mean {', '.join(options[:-1])} or {options[-1]}?"
        reply = user.reply(item, episode, question)
        assert reply == said[episode.interpretation], (
            item.key,
            question,
            reply,
        )  # its own, or "I do not know"
        offered += reply != DO_NOT_KNOW
    assert offered


@pytest.mark.parametrize("suite", BUNDLED)
def test_an_irrelevant_question_gets_do_not_know_on_every_bundled_item(suite):
    _irrelevant_gets_do_not_know(_bundled(suite))


@pytest.mark.parametrize("suite", sorted(SHARED))
def test_an_irrelevant_question_gets_do_not_know_on_every_shared_item(shared_data, suite):
    _irrelevant_gets_do_not_know(_shared(shared_data, suite))


@pytest.mark.parametrize("suite", BUNDLED)
def test_a_question_offering_the_readings_gets_the_users_own_on_the_bundled_samples(suite):
    _offering_gets_its_own(_bundled(suite))


@pytest.mark.parametrize("suite", sorted(SHARED))
def test_a_question_offering_the_readings_gets_the_users_own_on_the_shared_samples(shared_data, suite):
    _offering_gets_its_own(_shared(shared_data, suite))


def test_the_offline_users_audit_on_the_bundled_samples_holds_the_docs_figures():
    audit = [case for suite in BUNDLED for case in cases(_bundled(suite), written()[suite])]
    assert {case.kind for case in audit} >= {"irrelevant", "written: answer", "written: do not know"}
    assert len(audit) == 988 and sum(case.answer for case in audit) == 454
    found = measure(OfflineUser(), audit)
    assert found["precision"] >= 0.975 and found["recall"] >= 0.958, found  # docs/how-to/interactive.md
    written_ids = {suite: set(ids) for suite, ids in written().items()}
    assert all(written_ids[s] == {i.id for i in _bundled(s)} for s in BUNDLED)  # every bundled item


def test_the_offline_users_audit_on_the_shared_samples(shared_data):
    audit = [case for suite in sorted(SHARED) for case in cases(_shared(shared_data, suite))]
    assert sum(case.kind in ("irrelevant",) for case in audit) == len(IRRELEVANT) * sum(
        len(i.interpretations) for s in SHARED for i in _shared(shared_data, s) if len(i.interpretations) > 1
    )
    found = measure(OfflineUser(), audit)
    assert found["precision"] >= 0.963 and found["recall"] == 1.0, found  # docs/how-to/interactive.md


def test_the_llm_user_is_told_to_decline_and_its_audit_runs_against_a_server(chat_server, capsys):
    assert "reply that you do not know" in REPLY
    assert (
        says_do_not_know("I don't know.")
        and says_do_not_know(DO_NOT_KNOW)
        and not says_do_not_know("the book")
    )
    assert main(["audit-user", "--model", "user-m", "--base-url", chat_server.url]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == list(BUNDLED)
    # The scripted server replies with the whole reading every time: it never declines, so
    # its recall is 1 and its precision the share of answer cases. A model's figures need a model.
    assert all('"recall": 1.0' in line for line in lines)
    # A data file named with a suite that does not exist: one line, exit 2, no traceback.
    assert (
        main(["audit-user", "--model", "user-m", "--base-url", chat_server.url, "--data", "nope=x.json"]) == 2
    )
    assert capsys.readouterr().err.startswith(
        "pytest-ambigqa audit-user: --data nope=x.json: write SUITE=PATH"
    )
