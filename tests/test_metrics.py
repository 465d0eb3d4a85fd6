"""Metrics: worked examples from the official scorers and hypothesis properties."""

from __future__ import annotations

import re
import string

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_ambigqa.metrics.conditional import (
    SETTINGS,
    PairScores,
    balanced,
    citation_precision,
    cited_fragment,
    count_adjustment,
    gold_fragment,
    greedy_match,
    is_official_citation,
    item_scores,
)
from pytest_ambigqa.metrics.coverage import cover_em, exact_presence, str_em, str_em_hits, str_hit
from pytest_ambigqa.metrics.profiles import PROFILES
from pytest_ambigqa.metrics.rouge import rouge_lsum
from pytest_ambigqa.metrics.text import (
    normalize_answer,
    split_sentences,
    strip_alce_citations,
    treerare_normalize,
    word_count,
)
from pytest_ambigqa.stats.bootstrap import rouge_bootstrap_mid

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


# The official scorers' own steps, as ALCE eval.py and TreeRare's disambigF1.py write them: the
# package's faster forms (bytes.translate, words filtered) must give the same string for any text.
_TABLE = str.maketrans("", "", string.punctuation)
_ARTICLE = re.compile(r"\b(a|an|the)\b")
_tricky = st.sampled_from(
    ["a", "an", "the", "The", "AN", "x", "_", "-", ".", " ", "\t", "\x1c", "\x01", "\u00a0", "\u2028",
     "İ", "ı", "ß", "ǅ", "K", "é", "e\u0301", "’", "a’s", "the-", "²", "ａ", "1"]
)  # fmt: skip
any_text = st.one_of(st.text(), st.lists(st.one_of(_tricky, st.text(max_size=3))).map("".join))


@given(any_text)
def test_normalize_answer_is_the_official_steps(text):
    assert normalize_answer(text) == " ".join(_ARTICLE.sub(" ", text.lower().translate(_TABLE)).split())
    assert treerare_normalize(text) == " ".join(_ARTICLE.sub(" ", text).translate(_TABLE).split()).lower()


def test_strip_alce_citations_matches_alce():
    assert (
        strip_alce_citations("Paris is the capital [1][2]. It is big [3].")
        == "Paris is the capital. It is big."
    )


def test_word_count_and_sentences():
    assert word_count("  one two\nthree ") == 3
    assert split_sentences("It rained all day. He slept.") == ["It rained all day.", "He slept."]
    # the trained model knows its abbreviations; the untrained one would split after "dr."
    assert split_sentences("dr. smith went home. he slept.") == ["dr. smith went home.", "he slept."]


def test_profiles_prepare_the_text_their_scorer_reads():
    text = "  Paris [1] is the capital [2][3].\nSecond line [4].<|im_end|>"
    assert PROFILES["alce"].prepare(text) == "Paris is the capital."  # first line, no citations
    assert PROFILES["asqa"].prepare(text) == text  # ASQA scoring.py reads the answer whole
    assert PROFILES["alce"].prepare("A.<|im_end|> B [1]") == "A. B"


scorer_inputs = st.lists(st.sampled_from([*" \n\t[]|12ab", "<|im_end|>", " [3]", " |"]), max_size=20).map(
    "".join
)


@given(scorer_inputs, st.sampled_from(sorted(PROFILES)))
def test_located_text_is_what_the_scorer_reads_and_where(text, name):
    read, origin = PROFILES[name].located(text)
    assert read == PROFILES[name].prepare(text)
    assert "".join(text[i] for i in origin) == read
    assert list(origin) == sorted(set(origin))  # in order, each character once


def test_cover_em_follows_treerare():
    pairs = [["The Beatles"], ["Dami Im", "Im"]]
    assert cover_em(pairs, "The Beatles sang it; later Dami Im did.") == 1.0
    # lower-casing comes last: a capital "The" stays in the gold, a lower-case one goes
    assert cover_em(pairs, "the beatles") == 0.0 and cover_em(pairs, "The Beatles") == 0.5
    assert cover_em([["art"]], "a party") == 1.0  # a substring, not a token match
    assert treerare_normalize("The  Beatles, the band!") == "the beatles band"


@given(answer_lists.map(lambda a: [a]), texts, texts)
def test_cover_em_bounds_and_extension(pairs, text, extra):
    value = cover_em(pairs, text)
    assert value in (0.0, 1.0)
    assert cover_em(pairs, text + " " + extra) >= value


@pytest.mark.parametrize(
    "selected, computed",
    [
        (None, {"str_em", "str_hit", "cover_em"}),
        ({"str_em"}, {"str_em", "str_hit"}),
        ({"str_hit"}, {"str_em", "str_hit"}),
        ({"cover_em"}, {"cover_em"}),
        ({"str_em", "cover_em"}, {"str_em", "str_hit", "cover_em"}),
    ],
)
def test_the_long_form_scorer_computes_only_what_the_run_selects(selected, computed):
    """A run's ``--ambig-metrics`` leaves the long-form scorer's other metrics uncomputed, and
    those it computes are what it computes for a run of every metric."""
    from pytest_ambigqa.metrics.coverage import LONG_FORM
    from pytest_ambigqa.metrics.scoring import Scorers
    from pytest_ambigqa.models.usage import Usage
    from pytest_ambigqa.schema import Answer
    from pytest_ambigqa.suites import SUITES, LoadOptions

    for item in SUITES["asqa"].load(None, LoadOptions()).items[:5]:
        answer = Answer(text=item.long_answers[0])
        every = LONG_FORM.compute(item, answer, Scorers(), Usage()).scores
        scores = LONG_FORM.compute(
            item, answer, Scorers(metrics=selected and frozenset(selected)), Usage()
        ).scores
        assert set(scores) == computed
        assert scores == {m: every[m] for m in computed}


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


def _official_mid(values, seed):
    from rouge_score import scoring

    state = np.random.get_state()
    try:
        np.random.seed(seed)
        aggregator = scoring.BootstrapAggregator()
        for v in values:
            aggregator.add_scores({"rougeLsum": scoring.Score(v / 2, v, v)})
        return aggregator.aggregate()["rougeLsum"].mid.fmeasure
    finally:
        np.random.set_state(state)


@pytest.mark.slow  # each example runs the official aggregator's 1,000 resamples
@given(st.lists(unit, min_size=1, max_size=60), st.integers(0, 2**31 - 1))
def test_rouge_bootstrap_mid_is_the_official_aggregators(values, seed):
    """rouge-score's BootstrapAggregator, seeded through the global generator, gives the
    very number our seeded replica gives."""
    assert rouge_bootstrap_mid(values, seed) == _official_mid(values, seed)
    assert min(values) - 1e-12 <= rouge_bootstrap_mid(values, seed) <= max(values) + 1e-12


def test_rouge_bootstrap_mid_at_a_full_split_in_chunks():
    """ASQA dev's 948 items and more, resampled in chunks: still the aggregator's number."""
    values = list(np.random.default_rng(7).random(3000) * 0.6)
    assert rouge_bootstrap_mid(values, 11) == _official_mid(values, 11)


@given(texts, st.lists(texts, min_size=1, max_size=3))
def test_rouge_bounds_and_monotone_in_references(prediction, references):
    value = rouge_lsum(prediction, references)
    assert 0 <= value <= 1
    assert rouge_lsum(prediction, references + ["some other reference text"]) >= value


# -- CondAmbigQA ----------------------------------------------------------------------------


def test_fragment_ids_and_official_citation_forms():
    assert gold_fragment("2. Tom Clancy's Rainbow Six Siege") == "F2"
    assert gold_fragment("Untitled") is None and gold_fragment(" 2. Leading space") is None
    assert cited_fragment("Fragment 2") == cited_fragment("Fragment 2 (Siege)") == "F2"
    assert cited_fragment("F2") == "F2"  # our passage ids are the official scorer's own form
    for free_text in ("[2]", "2", "fragment 2", " Fragment 2", "F 2"):
        assert cited_fragment(free_text) == free_text  # kept as written: a wrong citation
        assert not is_official_citation(free_text)
    assert is_official_citation("Fragment 12") and is_official_citation("F12")
    assert (
        cited_fragment("Fragment 02") == "F02" != "F2"
    )  # digits as written, as the official scorer keeps them


def test_citation_precision_examples():
    assert citation_precision(["Fragment 1", "Fragment 3"], {"F1", "F2"}) == 0.5
    assert citation_precision([], {"F1"}) == 0.0
    assert citation_precision(["F1", "Fragment 1"], {"F1"}) == 1.0  # a set: duplicates count once
    assert citation_precision(["[1]", "F1"], {"F1"}) == 0.5  # "[1]" is not an official form


@given(
    st.lists(st.integers(1, 20).map(lambda n: f"F{n}"), max_size=6),
    st.sets(st.integers(1, 20).map(lambda n: f"F{n}")),
)
def test_citation_precision_bounds(cited, gold):
    value = citation_precision(cited, gold)
    assert 0 <= value <= 1
    assert citation_precision(cited, gold | set(cited)) == (1.0 if cited else 0.0)


pair_scores = st.builds(PairScores, unit, unit, unit)


@given(st.sampled_from(list(SETTINGS.values())), st.integers(0, 5), st.integers(0, 5), st.data())
def test_greedy_match_uses_each_gold_once_and_asks_only_unused(setting, n_gen, n_gold, data):
    table = data.draw(
        st.lists(st.lists(pair_scores, min_size=n_gold, max_size=n_gold), min_size=n_gen, max_size=n_gen)
    )
    asked = []

    def score(g, k):
        asked.append((g, k))
        return table[g][k]

    matches = greedy_match(setting, n_gen, n_gold, score)
    assert len(matches) == n_gen
    matched = [k for k, _ in matches if k is not None]
    assert len(matched) == len(set(matched)) == min(n_gen, n_gold)
    assert len(asked) == len(set(asked)) == sum(max(n_gold - g, 0) for g in range(n_gen))
    assert all(s is table[g][k] for g, (k, s) in enumerate(matches) if k is not None)


def test_greedy_match_takes_best_unused_in_output_order():
    main = SETTINGS["main"]
    table = {
        (0, 0): PairScores(0.9, 0.9, 1.0),
        (0, 1): PairScores(0.8, 0.8, 1.0),
        (1, 0): PairScores(1.0, 1.0, 1.0),
        (1, 1): PairScores(0.1, 0.1, 0.0),
    }
    assert [k for k, _ in greedy_match(main, 2, 2, lambda g, k: table[g, k])] == [0, 1]
    same = PairScores(0.5, 0.5, 0.5)
    assert [k for k, _ in greedy_match(main, 2, 3, lambda g, k: same)] == [0, 1]  # ties: lowest gold
    # closed book matches on the answer score alone, whatever the citations
    table = {(0, 0): PairScores(0, 0.2, 1.0), (0, 1): PairScores(0, 0.3, 0.0)}
    assert greedy_match(SETTINGS["closed-book"], 1, 2, lambda g, k: table[g, k])[0][0] == 1


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


def test_balanced_formulas_per_setting():
    # Closed book (pure_llm_experiment.py): answer x (0.6 answer + 0.4 adjustment); 1 of 3 answers.
    assert balanced("closed-book", 0, 0.5, 0, 0, 1, 3)[0] == pytest.approx(0.5 * (0.3 + 0.04))
    # Main (the visualizer): quality folds in condition and citation, citations boost quality.
    citation_q = 1.3  # precision 1, one citation per pair
    factor = 0.6 * (0.5 * 0.6 + 0.5 * citation_q) + 0.4
    answer, combined = balanced("main", 0.6, 0.6, 1.0, 1, 2, 2)
    assert answer == pytest.approx(0.6 * factor)
    assert combined == pytest.approx((0.6 * factor + 0.6 * factor + min(citation_q * factor, 1)) / 3)
    # No conditions: the released files give the visualizer no citation lists, so no boost.
    assert balanced("no-conditions", 0, 0.6, 1.0, 3, 2, 2) == balanced("no-conditions", 0, 0.6, 1.0, 0, 2, 2)
    # Gold conditions: the expected count is read from the output, so no count penalty.
    assert balanced("gold-conditions", 0, 0.6, 0.5, 1, 1, 3) == balanced(
        "gold-conditions", 0, 0.6, 0.5, 1, 1, 1
    )
    assert balanced("main", 0.6, 0.6, 0.5, 1, 1, 3)[0] < balanced("main", 0.6, 0.6, 0.5, 1, 3, 3)[0]


@given(
    st.sampled_from(list(SETTINGS)), unit, unit, unit, st.floats(0, 10), st.integers(0, 6), st.integers(1, 6)
)
def test_balanced_bounds(setting, condition, answer, citation, per_pair, n_gen, n_gold):
    score, combined = balanced(setting, condition, answer, citation, per_pair, n_gen, n_gold)
    assert 0 <= score <= 1 and 0 <= combined <= 1
    if setting == "closed-book":  # the factor is at most 1 there; citations can raise it elsewhere
        assert score <= answer + 1e-12


def _matches(*pairs):
    return [(k, None if k is None else PairScores(*s)) for k, s in pairs]


def test_item_scores_main_combined_is_the_plain_mean():
    scores = item_scores(SETTINGS["main"], _matches((0, (0.4, 0.6, 1.0)), (1, (0.2, 0.3, 0.5))), 2, 1.0)
    values = scores.values
    assert values["condition"] == pytest.approx(0.3) and values["answer"] == pytest.approx(0.45)
    assert values["citation_matched"] == pytest.approx(0.75)
    assert values["combined"] == pytest.approx((0.3 + 0.45 + 0.75) / 3)  # Table 2: plain mean
    assert values["balanced_combined"] != pytest.approx(values["combined"])
    assert scores.units == {}


def test_gold_conditions_counts_extra_pairs_as_zero():
    """Three perfect pairs against two gold properties: 2/3, not 1 (ground_truth_experiment.py)."""
    perfect = (1.0, 1.0, 1.0)
    matches = _matches((0, perfect), (1, perfect), (None, None))
    gold = item_scores(SETTINGS["gold-conditions"], matches, 2, 1.0).values
    assert gold["answer"] == pytest.approx(2 / 3) and gold["citation_matched"] == pytest.approx(2 / 3)
    # the main and no-conditions runs average over matched pairs only
    assert item_scores(SETTINGS["no-conditions"], matches, 2, 1.0).values["answer"] == 1.0
    assert set(gold) == {"answer", "citation_matched", "balanced"}


def test_closed_book_reports_every_generated_pair_as_a_unit():
    scores = item_scores(
        SETTINGS["closed-book"], _matches((1, (0, 0.4, 0)), (None, None), (0, (0, 0.8, 0))), 2, 0
    )
    assert scores.units == {"answer": [0.4, 0.0, 0.8]}
    assert scores.values["answer"] == pytest.approx(0.4)
    assert set(scores.values) == {"answer", "balanced"}


@given(
    st.sampled_from(list(SETTINGS.values())),
    st.lists(st.one_of(st.none(), pair_scores), max_size=5),
    st.integers(1, 5),
)
def test_item_scores_bounds_and_unmatched_pairs_never_help(setting, pairs, n_gold):
    matches = [(None, None) if s is None else (n, s) for n, s in enumerate(pairs)]
    values = item_scores(setting, matches, n_gold, 1.0).values
    assert set(values) == set(setting.metrics)
    assert all(0 <= v <= 1 + 1e-12 for v in values.values())
    kept = [m for m in matches if m[0] is not None]
    assert values["answer"] <= item_scores(setting, kept, n_gold, 1.0).values["answer"] + 1e-12
