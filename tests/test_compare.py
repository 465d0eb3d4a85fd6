"""Paired comparison of two runs (card/compare.py): alignment, figures that agree with the
scorecard's, the tests chosen per metric, regressions and their word diffs, the gate."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_ambigqa.card import compare
from pytest_ambigqa.card.scorecard import Scorecard, build
from pytest_ambigqa.metrics.coverage import exact_presence
from pytest_ambigqa.metrics.text import Normalized, normalize_answer
from pytest_ambigqa.report import terminal
from pytest_ambigqa.schema import Answer, ItemResult
from pytest_ambigqa.stats import paired
from pytest_ambigqa.suites import SUITES, LoadOptions, Scorers


@pytest.fixture(scope="module")
def march():
    return SUITES["march"].load(None, LoadOptions())


def card_of(
    loaded, scores: dict[str, dict[str, float]], texts: dict[str, str] | None = None, **kw
) -> Scorecard:
    """A scorecard of the MARCH sample with the given item scores (item scale) by item id;
    items not named are left out of the run."""
    results = {}
    for item in loaded.items:
        if item.id not in scores:
            continue
        text = (texts or {}).get(item.id, "an answer")
        results[item.key] = ItemResult(
            "march",
            item.id,
            "ok",
            ambiguity_type=item.ambiguity_type,
            scores=scores[item.id],
            answer=Answer(text),
            index=item.index,
        )
    chosen = dataclasses.replace(loaded, items=tuple(i for i in loaded.items if i.id in scores))
    return build(
        [chosen],
        results,
        None,
        Scorers(metrics=frozenset({"str_em", "str_hit", "length"})),
        0,
        system={"label": kw.get("label", "sys"), "inputs": kw.get("inputs", [])},
        config={"seed": 0, "suites": ["march"], **kw.get("config", {})},
        versions={},
    )


def ids(loaded, n=None):
    return [i.id for i in loaded.items][:n]


def test_identical_runs_show_no_change(march):
    scores = {i: {"str_em": 0.5, "str_hit": 0.0, "length": 10.0} for i in ids(march)}
    base = card_of(march, scores)
    result = compare.compare(base, card_of(march, scores), seed=0)
    for row in result.rows:
        if row.diff is None:
            continue
        assert row.diff == 0 and (row.low, row.high) == (0.0, 0.0) and row.p == 1.0
    assert result.regressions == [] and result.only_base == [] and result.only_new == []
    assert all(c.passed for c in compare.worse(result, [compare.Margin(None, "str_em", 0.0)]))


def test_items_in_one_run_are_listed_not_dropped(march):
    every = ids(march)
    base = card_of(march, {i: {"str_em": 1.0, "str_hit": 1.0, "length": 3.0} for i in every[:-2]})
    new = card_of(march, {i: {"str_em": 1.0, "str_hit": 1.0, "length": 3.0} for i in every[2:]})
    result = compare.compare(base, new, seed=0)
    assert result.only_base == [f"march-{i}" for i in every[:2]]
    assert result.only_new == [f"march-{i}" for i in every[-2:]]
    assert result.row("march", "str_em").n == len(every) - 4


def test_figures_match_the_scorecards_and_the_tests_are_chosen_per_metric(march):
    every = ids(march)
    base_scores = {i: {"str_em": 0.0, "str_hit": 0.0, "length": 5.0} for i in every}
    new_scores = {i: {"str_em": 1.0, "str_hit": 1.0, "length": 5.0} for i in every[:7]}
    new_scores |= {i: {"str_em": 0.5, "str_hit": 0.0, "length": 5.0} for i in every[7:]}
    new_scores[every[-1]] = {"str_em": 0.0, "str_hit": 0.0, "length": 5.0}
    base, new = card_of(march, base_scores), card_of(march, new_scores)
    result = compare.compare(base, new, seed=0)
    em = result.row("march", "str_em")
    assert em.base == pytest.approx(base.suites[0].metrics["str_em"].mean)
    assert em.new == pytest.approx(new.suites[0].metrics["str_em"].mean)
    assert em.diff == pytest.approx(em.new - em.base)
    assert em.test == "permutation" and (em.wins, em.ties, em.losses) == (len(every) - 1, 1, 0)
    hit = result.row("march", "str_hit")
    assert hit.test == "mcnemar" and hit.p == paired.mcnemar_exact(0, 7)  # 7 items went 0 -> 1
    # A length has no better direction: compared, but no wins or losses, and no gate on it.
    length = result.row("march", "length")
    assert length.diff == 0 and length.wins is None
    # Holm across every row with a test: the adjusted p is never below the raw one.
    tested = [r for r in result.rows if r.p is not None]
    assert all(r.p_holm >= r.p for r in tested)
    assert result.rows == [dataclasses.replace(r) for r in result.rows]  # plain data
    assert {r.slice for r in result.rows} == {"all", "semantic", "syntactic", "constraint"}


def test_regressions_worst_first_with_both_answers_diffed(march):
    every = ids(march, 4)
    base = card_of(
        march,
        {i: {"str_em": 1.0, "str_hit": 1.0, "length": 3.0} for i in every},
        texts={i: "Paris is the capital" for i in every},
    )
    new = card_of(
        march,
        {
            every[0]: {"str_em": 0.5, "str_hit": 0.0, "length": 3.0},
            every[1]: {"str_em": 0.0, "str_hit": 0.0, "length": 3.0},
            every[2]: {"str_em": 1.0, "str_hit": 1.0, "length": 3.0},
            every[3]: {"str_em": 1.0, "str_hit": 1.0, "length": 3.0},
        },
        texts={i: "Lyon is the capital" for i in every},
    )
    result = compare.compare(base, new, seed=0)
    assert [r.item_id for r in result.regressions] == [every[1], every[0]]
    worst = result.regressions[0]
    assert worst.drops == {"str_em": (1.0, 0.0), "str_hit": (1.0, 0.0)}
    assert worst.diff == [("-", "Paris"), ("+", "Lyon"), ("=", "is the capital")]


@pytest.mark.parametrize(
    ("better", "changes", "fails"), [(True, -10, True), (True, -0.5, False), (False, 10, True)]
)
def test_the_gate_rejects_non_inferiority_in_the_metrics_direction(better, changes, fails):
    metric = "str_em" if better else "answer_words"
    row = compare.Row("s", "all", metric, 9, 50, 50 + changes, changes, changes - 1, changes + 1, "permutation",
                      0.01, 0.02, 0, 0, 9)  # fmt: skip
    result = compare.Comparison({}, [row], [], [], [])
    (check,) = compare.worse(result, [compare.Margin(None, metric, 2)])
    assert check.passed is not fails and check.bound == -2
    if fails:
        assert "worse than the base run" in check.failure and "margin 2" in check.failure


def test_the_gate_line_never_prints_its_bound_like_the_margin():
    row = compare.Row(
        "s", "all", "str_em", 9, 50, 30, -20, -39.76, -19.0812, "permutation", 0.01, 0.02, 0, 0, 9
    )
    (check,) = compare.worse(
        compare.Comparison({}, [row], [], [], []), [compare.Margin(None, "str_em", 19.08)]
    )
    assert "95% CI [-39.760, -19.081], beyond the margin 19.08" in check.failure


def test_rows_say_which_items_one_run_left_unscored(march):
    every = ids(march)
    base = card_of(march, {i: {"str_em": 1.0, "str_hit": 1.0, "length": 3.0} for i in every})
    new_scores = {i: {"str_em": 1.0, "str_hit": 1.0, "length": 3.0} for i in every}
    new_scores[every[0]] = {"str_em": 1.0, "str_hit": 1.0}  # no length for one item
    result = compare.compare(base, card_of(march, new_scores), seed=0)
    assert (result.row("march", "length").n, result.row("march", "length").one_sided) == (len(every) - 1, 1)
    lines = terminal.comparison(result)
    assert "  Length: 1 item(s) scored in one run only, left out of its rows" in lines
    assert any(line.split()[:2] == ["STR-EM", str(len(every))] for line in lines)  # the n column


def test_a_metric_without_a_comparison_cannot_pass_the_gate(march):
    scores = {i: {"str_em": 0.5, "str_hit": 0.0, "length": 1.0} for i in ids(march)}
    result = compare.compare(card_of(march, scores), card_of(march, scores), seed=0)
    (check,) = compare.worse(result, [compare.Margin(None, "disambig_f1", 1)])
    assert not check.passed and "disambig_f1" in check.failure


def test_pooled_units_compare_as_the_scorecard_pools_them():
    """CondAmbigQA closed-book answers: a ratio of summed units, as the scorecard's mean."""
    base = [
        ItemResult("c", str(n), "ok", scores={"answer": 0.5}, units={"answer": [0.5] * (n + 1)})
        for n in range(4)
    ]
    new = [
        ItemResult("c", str(n), "ok", scores={"answer": 1.0}, units={"answer": [1.0] * (4 - n)})
        for n in range(4)
    ]
    row = compare._row(("c", "all", "answer"), list(zip(base, new, strict=True)), [None] * 4, seed=0)
    assert row.base == pytest.approx(0.5) and row.new == pytest.approx(1.0)
    assert row.wins == 4 and row.test == "permutation"


def test_dr_is_the_geometric_mean_of_its_parts():
    base = [ItemResult("a", str(n), "ok", scores={"disambig_f1": 0.25, "rouge_lsum": 0.64}) for n in range(5)]
    new = [ItemResult("a", str(n), "ok", scores={"disambig_f1": 0.36, "rouge_lsum": 0.64}) for n in range(5)]
    row = compare._row(("a", "all", "dr"), list(zip(base, new, strict=True)), [None] * 5, seed=0)
    assert row.base == pytest.approx(math.sqrt(25 * 64)) and row.new == pytest.approx(math.sqrt(36 * 64))
    assert row.wins is None  # no value per item


words = st.lists(st.sampled_from(["a", "the", "Paris", "capital", "is", "Lyon", "x"]), max_size=12)


@given(words, words)
def test_word_diff_rebuilds_both_answers(before, after):
    diff = compare.word_diff(" ".join(before), " ".join(after))
    assert " ".join(w for op, w in diff if op != "+").split() == before
    assert " ".join(w for op, w in diff if op != "-").split() == after


text = st.text(alphabet=st.sampled_from(list("ab tThe,.-Éé")), max_size=30)


@given(text, text)
def test_highlights_are_where_str_em_finds_the_answer(short, answer):
    spans = Normalized(answer).find(short)
    if spans:
        assert exact_presence([short], answer)
    for start, end in spans:
        assert normalize_answer(short) in normalize_answer(answer[start:end]) or normalize_answer(
            answer[start:end]
        ) in normalize_answer(short)
    if exact_presence([short], answer) and normalize_answer(short):
        assert spans  # the normalisation is followed exactly for these characters


@pytest.mark.parametrize("profile, hits", [("alce", [True, False]), ("asqa", [True, True])])
def test_drill_down_hits_are_the_ones_str_em_counted(profile, hits):
    """ALCE's scorer reads the first line with its citation marks out: a reading answered on the
    second line is a miss there, and the highlight lands on the answer's own characters."""
    from pytest_ambigqa.metrics.profiles import PROFILES
    from pytest_ambigqa.report.html import _gold
    from pytest_ambigqa.schema import AmbigItem, Interpretation

    text = "  The emperor [1][2] Shah Jahan [3] built it.\nHis father was Jahangir [4]."
    readings = (
        Interpretation("Who built it?", ("Shah Jahan",)),
        Interpretation("His father?", ("Jahangir",)),
    )
    item = AmbigItem("march", "x", "Who built the Taj Mahal?", readings)
    gold = _gold(item, text, Answer(text), PROFILES[profile])
    assert [i["hit"] for i in gold["interpretations"]] == hits
    scored = SUITES["march"].score(item, Answer(text), Scorers(profile=PROFILES[profile]))
    assert scored.scores["str_em"] == sum(hits) / 2
    start, end, reading = gold["spans"][0]
    assert (text[start:end], reading) == ("Shah Jahan", 0)
    assert len(gold["spans"]) == sum(hits)


def test_citations_through_the_retriever_are_matched_to_the_items_gold_passages(march):
    """A retriever cites a passage by its corpus id (``march/sem-01/p2``), the item's gold by
    its own id (``p2``): the same passage, gold, and not listed again as "gold, not cited"; a
    passage the corpus keeps once under another item's id is matched by content (issue 26,
    item 1)."""
    import dataclasses

    from pytest_ambigqa.report.html import PassageIds, _gold

    item = march.items[0]  # sem-01: gold p1, p2 (first reading), p3, p4 (second)
    twin = dataclasses.replace(
        march.items[1], id="twin", passages=(dataclasses.replace(item.passages[2], id="q9"),)
    )  # its q9 is sem-01's p3, word for word: the corpus keeps it as march/sem-01/p3
    answer = Answer("x", citations=("march/sem-01/p2", "p1", "march/sem-02/p1", "elsewhere/x"))
    gold = _gold(item, "x", answer, None, PassageIds([item, twin, *march.items[1:]]))
    assert [(c["id"], c["gold"], c.get("as")) for c in gold["citations"]] == [
        ("march/sem-01/p2", True, "p2"),
        ("p1", True, None),
        ("march/sem-02/p1", False, None),
        ("elsewhere/x", False, None),
    ]
    assert [c["id"] for c in gold["uncited"]] == ["p3", "p4"]
    deduplicated = _gold(
        twin, "x", Answer("x", citations=("march/sem-01/p3",)), None, PassageIds([item, twin])
    )
    assert deduplicated["citations"] == [
        {"id": "march/sem-01/p3", "title": item.passages[2].title, "gold": False, "as": "q9"}
    ]


def test_highlights_count_utf16_units_in_the_answer_the_page_shows(monkeypatch):
    """The page's script indexes strings in UTF-16 units and shows answers scrubbed of keys:
    the spans are counted in what it shows."""
    from pytest_ambigqa.metrics.profiles import PROFILES
    from pytest_ambigqa.output import safe_output
    from pytest_ambigqa.report.html import Highlights

    monkeypatch.setenv("OPENAI_API_KEY", "k3y-0123456789abcdef")
    text = "🎉🎉 k3y-0123456789abcdef: Shah Jahan 🏛 built it; Shah Jahan."
    shown = safe_output(text)
    units = shown.encode("utf-16-le")
    marks = Highlights(text, PROFILES["asqa"])  # the whole answer read
    hit, found = marks.found(["shah jahan"])
    assert hit and len(found) == 2
    for start, end in found:
        assert units[2 * start : 2 * end].decode("utf-16-le") == "Shah Jahan"
    assert "shah jahan" in marks.scored  # the hit is the scored text's


def test_a_metric_n_a_in_a_run_is_no_regression(march):
    """The errored item's 0 on a metric its run cannot score (n/a) is not listed as a drop."""
    every = ids(march, 3)
    base = card_of(march, {i: {"str_em": 1.0, "str_hit": 1.0, "length": 3.0} for i in every})
    new = card_of(march, {i: {"str_em": 1.0, "length": 3.0} for i in every})
    broken = dataclasses.replace(
        new.results[0], status="error", error="boom", scores={"str_em": 0.0, "str_hit": 0.0}
    )
    new = dataclasses.replace(new, results=[broken, *new.results[1:]])
    assert new.suites[0].metrics["str_hit"].mean is None  # n/a: no item of the run reports it
    result = compare.compare(base, new, seed=0)
    assert result.row("march", "str_hit").reason.startswith("n/a in this run")
    (regression,) = result.regressions
    assert regression.drops == {"str_em": (1.0, 0.0)} and regression.new_status == "error"


@pytest.mark.parametrize(
    ("key", "base", "new", "said"),
    [
        ("settings", {"march": "open-retrieval"}, {"march": "oracle-evidence"}, "the suites' settings"),
        ("judge", "gpt-4o-mini", "qwen3:8b", "the judge model (--ambig-judge): gpt-4o-mini in the base run"),
        ("reader", None, "roberta", "the reader (--ambig-reader): none in the base run, roberta in this one"),
        ("llm_model", "a", "b", "the model of the llm: system (--ambig-llm-model)"),
        (
            "metrics",
            ["str_em"],
            None,
            "the metrics computed (--ambig-metrics): str_em in the base run, every",
        ),
        ("costs", [[0, 0.1]], [[2, 0.7]], "the interactive costs (--ambig-costs)"),
        ("seed", 0, 1, "the seed (--ambig-seed: the --ambig-limit sample"),
        ("retriever", "bm25", "dense", "the retriever (--ambig-retriever): bm25 in the base run"),
        ("profile", "alce", "asqa", "the scorer profile (--ambig-scorer-profile): alce in the base run"),
    ],
)
def test_every_difference_that_can_move_the_numbers_is_said(march, key, base, new, said):
    """Issue 26, item 2: data, corpus, retriever, scorer profile, protocol and settings,
    metrics, models."""
    scores = {i: {"str_em": 0.5, "str_hit": 0.0, "length": 1.0} for i in ids(march)}
    result = compare.compare(
        card_of(march, scores, config={key: base}, inputs=["question", "retriever"]),
        card_of(march, scores, config={key: new}, inputs=["question", "retriever"]),
        seed=0,
    )
    assert any(said in note for note in result.notes), result.notes
    same = compare.compare(
        card_of(march, scores, config={key: base}), card_of(march, scores, config={key: base}), 0
    )
    assert same.notes == []
