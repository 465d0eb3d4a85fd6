"""Metrics: worked examples from the official scorers and hypothesis properties."""

from __future__ import annotations

import string

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from pytest_ambigqa.metrics.conditional import (
    balanced_answer,
    citation_precision,
    cited_fragment,
    combined_score,
    count_adjustment,
    gold_fragment,
    greedy_match,
    match_score,
)
from pytest_ambigqa.metrics.coverage import exact_presence, str_em, str_em_hits, str_hit
from pytest_ambigqa.metrics.rouge import rouge_lsum
from pytest_ambigqa.metrics.text import normalize_answer, split_sentences, strip_alce_citations, word_count

words = st.text(alphabet=string.ascii_letters + string.digits, min_size=1, max_size=8)
phrases = st.lists(words, min_size=1, max_size=5).map(" ".join)
answer_lists = st.lists(phrases, min_size=1, max_size=3)
texts = st.lists(words, min_size=0, max_size=30).map(" ".join)
unit = st.floats(min_value=0, max_value=1, allow_nan=False)


# -- normalisation ------------------------------------------------------------------------


def test_normalize_answer_follows_squad_order():
    assert normalize_answer("The  Beatles!") == "beatles"
    assert normalize_answer("Simon & Garfunkel") == "simon garfunkel"
    # punctuation goes before articles are matched: "a-team" -> "ateam" keeps no article
    assert normalize_answer("A-Team") == "ateam"
    assert normalize_answer("an apple, the pear") == "apple pear"
    assert normalize_answer("theatre") == "theatre"


@given(phrases)
def test_normalize_is_idempotent(text):
    assert normalize_answer(normalize_answer(text)) == normalize_answer(text)


@given(phrases, st.sampled_from(["The ", "the ", "A ", "an "]), st.sampled_from(["", ".", "!", "?!", ","]))
def test_normalize_ignores_case_punctuation_articles(text, article, punct):
    assert normalize_answer(article + text.upper() + punct) == normalize_answer(text)


def test_strip_alce_citations_matches_alce():
    assert (
        strip_alce_citations("Paris is the capital [1][2]. It is big [3].")
        == "Paris is the capital. It is big."
    )


def test_word_count_and_sentences():
    assert word_count("  one two\nthree ") == 3
    assert split_sentences("It rained all day. He slept.") == ["It rained all day.", "He slept."]


# -- STR-EM ---------------------------------------------------------------------------------


def test_str_em_worked_example():
    pairs = [["Simon & Garfunkel", "Paul Simon"], ["Dami Im"]]
    hits = str_em_hits(pairs, "The original artists were Simon & Garfunkel.")
    assert hits == [True, False]
    # "&" is punctuation and is dropped, "and" is not: no match.
    assert str_em_hits(pairs, "Simon and Garfunkel") == [False, False]
    assert str_em(hits) == 0.5
    assert str_hit(hits) == 0.0


def test_str_em_is_substring_not_token_match():
    # Official exact *presence*: "1995" is found inside "19956"; "Tom" inside "Tomato".
    assert exact_presence(["Tom"], "a tomato")
    assert not exact_presence(["Tom Hanks"], "Tom and Hanks")


def test_str_em_needs_interpretations():
    with pytest.raises(ValueError):
        str_em([])


@given(st.lists(answer_lists, min_size=1, max_size=4), texts)
def test_str_em_bounds_and_hit(pairs, text):
    hits = str_em_hits(pairs, text)
    value = str_em(hits)
    assert 0 <= value <= 1
    assert str_hit(hits) <= value
    assert (str_hit(hits) == 1) == (value == 1)


@given(st.lists(answer_lists, min_size=1, max_size=4), texts, phrases, st.data())
def test_adding_a_gold_alias_never_lowers_str_em(pairs, text, alias, data):
    index = data.draw(st.integers(0, len(pairs) - 1))
    more = [list(p) for p in pairs]
    more[index].append(alias)
    assert str_em(str_em_hits(more, text)) >= str_em(str_em_hits(pairs, text))


@given(st.lists(answer_lists, min_size=1, max_size=4), texts, texts)
def test_extending_the_answer_never_lowers_str_em(pairs, text, extra):
    assert str_em(str_em_hits(pairs, text + " " + extra)) >= str_em(str_em_hits(pairs, text))


@given(st.lists(answer_lists, min_size=1, max_size=4), texts)
def test_str_em_ignores_case_and_punctuation_of_the_answer(pairs, text):
    assert str_em_hits(pairs, text) == str_em_hits(pairs, "The " + text.upper() + "!")


@given(st.lists(answer_lists, min_size=1, max_size=4))
def test_answer_containing_every_alias_scores_one(pairs):
    text = " . ".join(p[0] for p in pairs)
    assert str_em(str_em_hits(pairs, text)) == 1.0


# -- ROUGE-Lsum -------------------------------------------------------------------------


def test_rouge_identity_and_best_reference():
    reference = "Paris is the capital of France. It lies on the Seine."
    assert rouge_lsum(reference, [reference]) == pytest.approx(1.0)
    assert rouge_lsum(reference, ["Nothing in common here.", reference]) == pytest.approx(1.0)
    assert rouge_lsum("bananas", ["Paris is the capital of France."]) == 0.0


def test_rouge_is_case_insensitive_and_stemmed():
    assert rouge_lsum("PARIS IS CAPITALS", ["paris is capital"]) == pytest.approx(1.0)


@given(texts, st.lists(texts, min_size=1, max_size=3))
def test_rouge_bounds_and_monotone_in_references(prediction, references):
    value = rouge_lsum(prediction, references)
    assert 0 <= value <= 1
    assert rouge_lsum(prediction, references + ["some other reference text"]) >= value


# -- CondAmbigQA ----------------------------------------------------------------------------


def test_fragment_ids():
    assert gold_fragment("2. Tom Clancy's Rainbow Six Siege") == "F2"
    assert gold_fragment("Untitled") is None
    for cited in ("Fragment 2", "F2", "f2", "[2]", "2", " fragment #2 "):
        assert cited_fragment(cited) == "F2"
    assert cited_fragment("Wikipedia") == "Wikipedia"


def test_citation_precision_examples():
    assert citation_precision(["Fragment 1", "Fragment 3"], {"F1", "F2"}) == 0.5
    assert citation_precision([], {"F1"}) == 0.0
    assert citation_precision(["F1", "Fragment 1"], {"F1"}) == 1.0  # a set: duplicates count once


@given(
    st.lists(st.integers(1, 20).map(lambda n: f"F{n}"), max_size=6),
    st.sets(st.integers(1, 20).map(lambda n: f"F{n}")),
)
def test_citation_precision_bounds(cited, gold):
    value = citation_precision(cited, gold)
    assert 0 <= value <= 1
    assert citation_precision(cited, gold | set(cited)) == (1.0 if cited else 0.0)


@given(st.integers(0, 6), st.integers(0, 6), st.data())
def test_greedy_match_uses_each_gold_once(n_gen, n_gold, data):
    table = data.draw(
        st.lists(st.lists(unit, min_size=n_gold, max_size=n_gold), min_size=n_gen, max_size=n_gen)
    )
    pairs = greedy_match(n_gen, n_gold, lambda g, k: table[g][k])
    assert [g for g, _ in pairs] == list(range(n_gen))
    matched = [k for _, k in pairs if k is not None]
    assert len(matched) == len(set(matched)) == min(n_gen, n_gold)


def test_greedy_match_takes_best_unused_in_output_order():
    scores = {(0, 0): 0.9, (0, 1): 0.8, (1, 0): 1.0, (1, 1): 0.1}
    assert greedy_match(2, 2, lambda g, k: scores[g, k]) == [(0, 0), (1, 1)]
    assert greedy_match(1, 2, lambda g, k: 0.5) == [(0, 0)]  # ties keep the lowest gold
    assert match_score(1, 1, 1) == pytest.approx(1.0)
    assert match_score(0, 1, 0) == pytest.approx(0.5)


def test_count_adjustment_cases():
    assert count_adjustment(1, 3, 0.9) == 0.1
    assert count_adjustment(2, 2, 0.3) == 1.0
    # missing one of three with a good answer (q = 1): 1 - min(1/3 * 0.6 * 1, 0.2)
    assert count_adjustment(2, 3, 0.8) == pytest.approx(0.8)
    # extra: 1 over 2 expected, q = 0.5 -> r = 0.5, min(0.075, 0.075) * 1.5
    assert count_adjustment(3, 2, 0.1) == pytest.approx(1 - 0.075 * 1.5)
    # many extra: r = 2 > 1 -> min(0.6, 0.15) * (2 - 1)
    assert count_adjustment(6, 2, 1.0) == pytest.approx(0.85)


@given(st.integers(0, 8), st.integers(0, 8), unit)
def test_count_adjustment_bounds(n_gen, n_gold, answer):
    adj = count_adjustment(n_gen, n_gold, answer)
    assert 0.1 <= adj <= 1.0
    if n_gen == n_gold and not (n_gen == 1 and n_gold > 1):
        assert adj == 1.0


@given(unit, unit, unit, st.floats(0, 10), st.floats(0.1, 1))
def test_balanced_and_combined_bounds(condition, answer, citation, per_pair, adjustment):
    assert 0 <= balanced_answer(answer, adjustment) <= answer
    assert 0 <= combined_score(condition, answer, citation, per_pair, adjustment) <= 1


@given(unit, unit)
def test_balanced_answer_grows_with_adjustment(answer, adjustment):
    assume(adjustment < 1)
    assert balanced_answer(answer, 1.0) >= balanced_answer(answer, adjustment)


def test_combined_score_example():
    # GPT-4o-like item: cond 0.6, ans 0.6, one citation per pair, precision 1, adj 1.
    citation_q = 1.3
    quality = 0.5 * 0.6 + 0.5 * citation_q
    factor = 0.6 * quality + 0.4
    expected = (0.6 * factor + 0.6 * factor + min(citation_q * factor, 1)) / 3
    assert combined_score(0.6, 0.6, 1.0, 1, 1.0) == pytest.approx(expected)
