"""The report view and its two text writers: one walk of blocks, printed two ways."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pytest_ambigqa import blocks
from pytest_ambigqa.report import markdown, terminal, view

BLOCKS = [
    blocks.Heading("Suite_1", 2),
    blocks.Para("Items: 3", only="markdown"),
    blocks.Notes((blocks.Note("protocol: p", 1), blocks.Note("note: n", 2))),
    blocks.Table(("metric", "score"), (("STR-EM", "29.5"), ("Length", "n/a")), "lr"),
    blocks.Gap(),
    blocks.Caption("regressions (1, worst first):"),
    blocks.Notes((blocks.Note("a: x", 2),), "terminal"),
    blocks.Notes((blocks.Note("a: x"), blocks.Note("word diff: [-x-]", nested=True)), "markdown"),
]


def test_the_writers_print_the_same_blocks_each_their_way():
    assert terminal.lines(BLOCKS) == [
        "  protocol: p",
        "    note: n",
        "  metric  score",
        "  STR-EM   29.5",
        "  Length    n/a",
        "",
        "  regressions (1, worst first):",
        "    a: x",
    ]
    assert markdown.document(BLOCKS).splitlines() == [
        "## Suite\\_1",
        "",
        "Items: 3",
        "",
        "- protocol: p",
        "- note: n",
        "",
        "| metric | score |",
        "|---|---:|",
        "| STR-EM | 29.5 |",
        "| Length | n/a |",
        "",
        "Regressions (1, worst first):",
        "",
        "- a: x",
        "  - word diff: \\[-x-\\]",
    ]


@given(st.text())
def test_markdown_keeps_any_cell_one_inert_cell(text):
    (row,) = markdown.document([blocks.Table(("h",), ((text,),), "l")]).splitlines()[2:]
    assert row.startswith("| ") and row.endswith(" |")
    inner = row[2:-2]
    assert "\n" not in inner and "<" not in inner
    assert all(inner[i - 1] == "\\" for i, c in enumerate(inner) if c == "|")


def test_numbers_are_formatted_once_by_metric():
    assert view.num(29.4871, "str_em") == "29.5"
    assert view.num(0.29487, "cover_em") == "0.295"
    assert view.num(None, "str_em") == "n/a"
    assert view.num(0.0625, "cover_em") == "0.062"  # Python's rounding: a tie to the even digit
    assert view.item_value(0.5, "str_em") == 50.0


def test_decimals_follow_the_printed_scale_episode_scores_too():
    """Three decimals for a 0-1 or 0-5 score, one for percentages, rewards and counts: an
    episode's reward and words print as the protocol's own tables print them (issue 26, item 7)."""
    assert view.num(-9.0812, "reward") == "-9.1"
    assert view.num(11.3333, "answer_words") == "11.3"
    assert view.num(2.4, "answer_count") == "2.4"
    assert view.num(3.1234, "judge") == "3.123"
    assert view.num(50.14, "length") == "50.1"
