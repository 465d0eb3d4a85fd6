"""report.html opened in a real headless Chromium, used as a person would: the overview, an
item's drill-down, the filters, the comparison, a malicious answer, 20,000 items.

The reports come from real runs of the plugin (a subprocess per run, once per module); the
20,000-item one is built in process from the MARCH sample's items, copied. Screenshots land
in the browser artifacts directory (fixtures/browser.py).
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fixtures.pages import shown
from pytest_ambigqa.card.scorecard import Scorecard, build
from pytest_ambigqa.report import html, view
from pytest_ambigqa.schema import Answer, ItemResult
from pytest_ambigqa.suites import SUITES, LoadOptions, Scorers

SYSTEM = """
def answer(question, item):
    if item.id == "sem-01":
        return '</script><script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> ' + item.long_answers[0]
    if item.id == "con-03":
        raise RuntimeError("boom: the system fell over")
    if item.id in ("syn-01", "con-01"):
        return "I could not say."
    return item.long_answers[0]
"""
EVIL = "</script><script>window.__pwned = 1</script>"


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, Path]:
    """report.html of the oracle (the base) and of SYSTEM compared with it."""
    root = _base_and_new(
        tmp_path_factory.mktemp("reports"),
        "mysys",
        SYSTEM,
        "march",
        "-p",
        "no:randomly",
        "--ambig-max-error-rate=0.5",
    )
    return {"base": root / "base" / "report.html", "new": root / "new" / "report.html"}


def _base_and_new(root: Path, module: str, source: str, suite: str, *options: str) -> Path:
    """Two runs of ``suite`` in ``root``: the oracle's report in ``base``, then ``module``'s
    (its ``answer``, from ``source``) compared with it in ``new``."""
    (root / f"{module}.py").write_text(source)
    # ``root`` on the path before what was there (a checkout's PYTHONPATH stays in front of an install)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])),
    }
    common = [f"--ambig-suite={suite}", "-p", "no:cacheprovider", "-q", *options]
    for report, args in (
        ("base", ["--ambig-system=oracle"]),
        ("new", [f"--ambig-system={module}:answer", "--ambig-baseline=base/scorecard.json"]),
    ):
        run = subprocess.run(
            [sys.executable, "-m", "pytest", *common, *args, f"--ambig-report={report}"],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
        )
        assert (root / report / "report.html").is_file(), run.stdout[-2000:] + run.stderr[-2000:]
    return root


@pytest.fixture
def open_page(open_page):
    """``open_page`` (fixtures/browser.py), returning once the report has drawn itself and
    unpacked its items' details (its ``main`` is no longer busy), which may end after the load
    event."""

    def open_report(path: Path, **options):
        page = open_page(path, **options)
        page.wait_for_selector("main:not([aria-busy])", state="attached")
        return page

    return open_report


def clean(page) -> None:
    """No console error, no script error, and nothing asked of the network."""
    assert page.console_errors == []
    assert page.blocked == []
    assert all(url.startswith(("file:", "data:", "about:")) for url in page.requests)


def test_the_overview_renders(open_page, reports):
    page = open_page(reports["base"])
    assert page.locator("#overview h2").first.text_content() == "MARCH"
    rows = page.locator("#overview table.metrics tr[data-metric]")
    assert rows.count() == 14
    em = page.locator('#overview tr[data-metric="str_em"] td')
    assert em.nth(1).text_content() == "100.0"
    assert page.locator('#overview tr[data-metric="str_em"] svg circle').count() == 1
    assert page.locator("#overview .multiple").count() >= 3  # small multiples per ambiguity type
    assert page.locator("#gates").text_content() == "Gates passed"
    # Every gate evaluated, passed ones too, with its value, bound and margin (issue 26, item 4)
    cells = page.locator("#checks tr").nth(1).locator("td").all_text_contents()
    assert cells == [
        "march",
        "--ambig-max-error-rate=0.5",
        "errored or missing items, share",
        "0",
        "≤ 0.5",
        "+0.5",
        "passed",
    ]
    # The terminal's lines on the published rows, n/c and why, on the page too (issue 26, item 7)
    card = Scorecard.from_json(json.loads((reports["base"].parent / "scorecard.json").read_text()))
    lines = view.published_lines(card.suites[0], view.published_rows(card.suites[0]))
    assert lines and page.locator("#overview .published").all_text_contents() == lines
    assert lines[0].startswith("n/c: MARCH (Park et al., 2025), Table 3, 27 rows: this run is an upper bound")
    page.screenshot("overview")
    clean(page)


def test_an_item_opens_its_drill_down(open_page, reports):
    page = open_page(reports["new"])
    page.click("#tab-items")
    page.click('.row[data-key="march-sem-02"]')
    detail = page.locator("#detail")
    question = SUITES["march"].load(None, LoadOptions()).items[1].question
    assert detail.locator("#question").text_content() == question
    readings = detail.locator("ol.readings li")
    assert readings.count() == 2 and readings.locator(".badge.hit").count() == 2
    assert detail.locator("#answer-text mark").count() >= 2  # the gold answers it found
    assert "Base run" in detail.text_content()
    # A reading's colour names the reading, never hit or miss: no mark is green or red, the
    # legend says so, and the two answers are labelled (issue 26, item 7)
    colours = detail.locator("mark").evaluate_all("ms => ms.map(m => getComputedStyle(m).backgroundColor)")
    badges = detail.locator(".badge.hit, .badge.miss").evaluate_all(
        "bs => bs.map(b => getComputedStyle(b).backgroundColor)"
    )
    assert colours and not set(colours) & set(badges)
    assert all(not _green_or_red(c) for c in colours), colours
    assert "one colour per reading" in detail.locator("#highlight-legend").text_content()
    assert detail.locator(".side .label").all_text_contents() == ["base run", "this run"]
    page.screenshot("item")
    clean(page)


def _green_or_red(css: str) -> bool:
    """A colour whose hue reads as hit (green) or miss (red)."""
    import colorsys

    r, g, b = (int(x) / 255 for x in css[css.index("(") + 1 : css.index(")")].split(",")[:3])
    hue, _, saturation = colorsys.rgb_to_hls(r, g, b)
    return saturation > 0.2 and (hue * 360 < 20 or hue * 360 > 330 or 75 < hue * 360 < 165)


def count(page) -> str:
    return page.locator("#count").text_content()


def test_filters_and_search_change_the_list(open_page, reports):
    page = open_page(reports["new"])
    page.click("#tab-items")
    assert count(page) == "13 of 13 items"
    page.select_option("#f-type", "semantic")
    assert count(page) == "4 of 13 items"
    page.select_option("#f-type", "")
    page.select_option("#f-status", "error")
    assert count(page) == "1 of 13 items"
    assert page.locator(".row").first.get_attribute("data-key") == "march-con-03"
    page.select_option("#f-status", "")
    page.fill("#search", "fell over")  # the error's text
    assert count(page) == "1 of 13 items"
    page.fill("#search", "")
    page.select_option("#f-metric", "str_em")
    page.fill("#f-max", "0")
    keys = {page.locator(".row").nth(n).get_attribute("data-key") for n in range(3)}
    assert count(page) == "3 of 13 items" and keys == {"march-syn-01", "march-con-01", "march-con-03"}
    page.check("#f-regressed")
    assert count(page) == "3 of 13 items"
    clean(page)


def test_a_malicious_answer_stays_text(open_page, reports):
    page = open_page(reports["new"])
    page.click("#tab-items")
    page.click('.row[data-key="march-sem-01"]')
    answer = page.locator("#answer-text").text_content()
    assert answer.startswith(EVIL)
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.locator("#detail img, #detail script").count() == 0
    page.fill("#search", "pwned")
    assert count(page) == "1 of 13 items"
    assert page.evaluate("typeof window.__pwned") == "undefined"
    clean(page)


def test_the_comparison_shows_changes_and_regressions(open_page, reports):
    page = open_page(reports["new"])
    page.click("#tab-comparison")
    em = page.locator('#comparison tr[data-metric="str_em"][data-slice="all"] td')
    assert em.nth(3).text_content() == "100.0" and em.nth(5).text_content().startswith("-")
    regressions = page.locator("#comparison .regression")
    assert regressions.count() == 3  # the two non-answers and the error
    page.screenshot("comparison")
    # Every number as scorecard.md prints it (a change of 0 as "+0.0"), and its notes
    markdown = (reports["new"].parent / "scorecard.md").read_text()
    unescaped = markdown.replace("\\[", "[").replace("\\]", "]").replace("&gt;", ">")
    printed = {
        cells[1]: cells[2:]  # n, base, new, change, CI, p (test), Holm p, W/T/L
        for line in unescaped.splitlines()
        if line.startswith("| all | ") and " n/a (" not in line
        for cells in [[c.strip() for c in line.strip("|").split(" | ")]]
    }
    assert "STR-EM" in printed
    for metric, cells in printed.items():
        row = page.locator(f'#comparison tr[data-slice="all"]:has(td:text-is("{metric}")) td')
        shown = [row.nth(n).text_content() for n in (2, 3, 4, 5, 6, 8, 9, 10)]
        assert shown == cells, metric
    notes = [line[2:] for line in unescaped.splitlines() if "scored in one run only" in line]
    assert notes and page.locator("#comparison .one-sided").all_text_contents() == notes
    drops = regressions.filter(has_text="march-syn-01").locator(".meta").text_content().removeprefix(" · ")
    assert f"march-syn-01: {drops.replace('→', '->')}" in unescaped
    labels = regressions.filter(has_text="march-syn-01").locator(".side .label").all_text_contents()
    assert labels == ["base run", "this run"]
    page.click('#comparison .regression[data-key="march-syn-01"] button')
    assert page.locator("#detail h2").text_content() == "march-syn-01"
    assert page.locator("#detail del").count() >= 1 and page.locator("#detail ins").count() >= 1
    clean(page)


MANY = 20_000


@pytest.fixture(scope="module")
def many(tmp_path_factory) -> tuple[Path, list[str], int]:
    """report.html of 20,000 items (the MARCH sample's items copied, seeded scores), written by
    the plugin's writer without running pytest over them; their keys, and how many answered
    "no idea"."""
    loaded = SUITES["march"].load(None, LoadOptions())
    rng = random.Random(0)
    items, results = [], {}
    for n in range(MANY):
        base = loaded.items[n % len(loaded.items)]
        item = dataclasses.replace(base, id=f"{base.id}-{n}", index=n)
        items.append(item)
        em = rng.choice([0.0, 0.5, 1.0])
        results[item.key] = ItemResult(
            "march", item.id, "ok", item.ambiguity_type, scores={"str_em": em, "str_hit": float(em == 1.0)},
            answer=Answer(base.long_answers[0] if em else "no idea"), index=n,
        )  # fmt: skip
    card = build(
        [dataclasses.replace(loaded, items=tuple(items), total=len(items))],
        results,
        None,
        Scorers(metrics=frozenset({"str_em", "str_hit"})),
        0,
        system={"label": "copies", "inputs": []},
        config={"seed": 0, "suites": ["march"]},
        versions={},
    )
    path = tmp_path_factory.mktemp("big") / "report.html"
    path.write_text(html.render(card))
    no_idea = sum(r.answer is not None and r.answer.text == "no idea" for r in results.values())
    return path, [i.key for i in items], no_idea


def test_twenty_thousand_items_open_and_stay_light(open_page, many):
    """The page unpacks its items (packed: a tenth of their JSON, here far less) and draws them;
    the list keeps only the rows in view; a search reads every answer; an item opens, from a
    click and from the address (issue 27, target 4)."""
    from playwright.sync_api import expect  # the test extra: imported when a browser runs

    path, keys, no_idea = many
    assert path.stat().st_size < len(shown(path).encode("utf-8")) / 10
    page = open_page(path)
    assert page.locator("#overview h2").first.text_content() == "MARCH"
    assert page.locator("#tab-items").text_content() == f"Items ({MANY})"
    page.click("#tab-items")
    assert count(page) == f"{MANY} of {MANY} items"
    assert page.locator(".row").count() < 100  # only the rows in view exist
    page.locator("#list").evaluate("box => { box.scrollTop = box.scrollHeight; }")
    page.wait_for_selector(f'.row[data-key="{keys[-1]}"]')
    page.fill("#search", "no idea")  # in the answers: every item's detail searched
    assert count(page) == f"{no_idea} of {MANY} items"
    page.fill("#search", "sem-01-99")
    found = [k for k in keys if "sem-01-99" in k]
    assert count(page) == f"{len(found)} of {MANY} items"
    page.click(f'.row[data-key="{found[0]}"]')
    question = SUITES["march"].load(None, LoadOptions()).items[0].question
    assert page.locator("#detail h2").text_content() == found[0]
    assert page.locator("#detail #question").text_content() == question  # put back from its row
    assert page.locator("#detail #scores td.num").first.text_content() in ("0.0", "50.0", "100.0")
    # An item opened from the address is shown in its place in the list (issue 26, item 7)
    page.goto(page.url.split("#")[0] + "#item=" + keys[14000])
    row = page.locator(f'.row[data-key="{keys[14000]}"]')
    assert page.locator("#detail h2").text_content() == keys[14000] and row.count() == 1
    box, shown_row = page.locator("#list").bounding_box(), row.bounding_box()
    assert box["y"] <= shown_row["y"] and shown_row["y"] + shown_row["height"] <= box["y"] + box["height"]
    assert "selected" in row.get_attribute("class")
    # Loaded afresh with an item in the address and a search typed at once: both wait for the
    # details, still inflating, and then are done
    page.goto("about:blank")
    page.goto(path.as_uri() + "#item=" + keys[9000])
    page.fill("#search", "no idea")
    page.wait_for_selector("main:not([aria-busy])", state="attached")
    assert page.locator("#detail h2").text_content() == keys[9000]
    expect(page.locator("#count")).to_have_text(f"{no_idea} of {MANY} items")
    clean(page)


def test_an_episode_shows_its_transcript(open_page, tmp_path):
    """An interactive run: the items are episodes, the drill-down has the turns, and the
    overview the section's tables, the forced policies with n and errors per row."""
    args = ["--ambig-suite=march", "--ambig-protocol=interactive", "--ambig-limit=1", "--ambig-costs=0:0.1"]
    args.append("--ambig-steerability")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args, "--ambig-report=out"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout[-2000:]
    page = open_page(tmp_path / "out" / "report.html")
    policies = page.locator("#overview table.section").filter(has_text="ORACLE")
    assert policies.count() == 1
    assert "ambig. errors" in policies.text_content() and "unambig. n" in policies.text_content()
    page.click("#tab-items")
    page.locator(".row").first.click()
    turns = page.locator("#transcript .turn")
    assert turns.count() >= 2 and turns.first.text_content().startswith("user (query):")
    assert "episode:" in page.locator("#detail").text_content()
    # The whole key, its episode suffix included, and an episode's scores printed as the
    # scorecard prints them (issue 26, item 7)
    key = page.locator(".row .key").first
    full = json.loads((tmp_path / "out" / "scorecard.json").read_text())["items"][0]
    assert key.text_content() == f"{full['suite']}-{full['item_id']}" and re.search(
        r"-a0-b0\.1$", full["item_id"]
    )
    assert key.evaluate("k => k.scrollWidth <= k.clientWidth")
    reward = page.locator('#scores tr:has(td:text-is("Reward")) td').nth(1).text_content()
    assert re.fullmatch(r"-?\d+\.\d", reward), reward
    clean(page)


HOSTILE = """
def answer(question, item):
    if item.index == 0:  # one token wider than any screen, and an unterminated right-to-left override
        return {"text": "x" * 5000 + " \\u202e2000; 2001", "citations": ["F3\\u202e", "F1"]}
    if item.index == 1:
        raise RuntimeError("down")
    return {"text": "one", "interpretations": [{"condition": "c", "answer": "a", "citations": []}]}
"""


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> dict[str, Path]:
    """CondAmbigQA: the oracle, then a system with hostile strings and too few answers (its
    Count diff below 0) compared with it."""
    root = _base_and_new(tmp_path_factory.mktemp("hostile"), "hsys", HOSTILE, "condambigqa")
    return {"new": root / "new" / "report.html", "items": root / "new" / "scorecard.json"}


def test_negative_values_and_metrics_without_a_direction_are_drawn_as_they_are(open_page, hostile):
    page = open_page(hostile["new"])
    plot = page.locator('#overview tr[data-metric="count_diff"] svg')
    dot = float(plot.locator("circle").get_attribute("cx"))
    low, high = (float(plot.locator("line.ci").get_attribute(a)) for a in ("x1", "x2"))
    assert low < dot < high  # on an axis that reaches below 0, not clamped to it
    page.click("#tab-comparison")
    length = page.locator('#comparison tr[data-metric="length"][data-slice="all"] svg circle')
    assert length.get_attribute("class") == "dot"  # no better direction: neither green nor red
    precision = page.locator('#comparison tr[data-metric="citation"][data-slice="all"] svg circle')
    assert precision.get_attribute("class") == "dot worse"
    assert "errored or missing" in page.locator("#unanswered").text_content()
    clean(page)


def test_hostile_strings_keep_to_their_place(open_page, hostile):
    page = open_page(hostile["new"])
    page.click("#tab-comparison")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")  # the token wraps
    page.screenshot("comparison")
    parts = page.locator("#comparison .regression .diff > *")
    assert parts.count() > 0
    assert set(parts.evaluate_all("nodes => nodes.map(n => getComputedStyle(n).unicodeBidi)")) == {"isolate"}
    page.click("#tab-items")
    page.locator(".row").first.click()
    cited = page.locator("#citations .id").all_text_contents()
    assert cited[:2] == ["F3⟨U+202E⟩", "F1"]  # the invisible character named, the two ids apart
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    clean(page)


def test_the_address_opens_an_item_and_a_malformed_one_is_ignored(open_page, hostile):
    page = open_page(hostile["new"])
    url = page.url
    page.goto(url + "#item=%E0%A4%A")  # not a URI escape
    assert page.locator("#overview").is_visible()
    first = json.loads(hostile["items"].read_text())["items"][0]
    key = f"{first['suite']}-{first['item_id']}"
    page.goto(url + "#item=" + key)  # the address changed in an open page
    assert page.locator("#detail h2").text_content() == key and page.locator("#items").is_visible()
    clean(page)


def test_a_gold_passage_cited_through_the_retriever_is_gold(open_page, tmp_path):
    """The lexical baseline cites what the retriever found by corpus id (march/sem-01/p2): a
    gold passage is gold, named as the item's own, and not listed again as uncited (issue
    26, item 1)."""
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--ambig-suite=march",
         "--ambig-system=lexical", "--ambig-report=out"],
        cwd=tmp_path, capture_output=True, text=True,
    )  # fmt: skip
    assert (tmp_path / "out" / "report.html").is_file(), run.stdout[-2000:]
    items = {i.id: i for i in SUITES["march"].load(None, LoadOptions()).items}
    chosen = None
    for record in json.loads((tmp_path / "out" / "scorecard.json").read_text())["items"]:
        gold = {p for i in items[record["item_id"]].interpretations for p in i.passage_ids}
        own = [c for c in record["answer"]["citations"] if c.rpartition("/")[2] in gold]
        if own and all(c.startswith(f"march/{record['item_id']}/") for c in own):
            chosen = (record["item_id"], own[0], gold)
            break
    assert chosen, "the lexical baseline cited no gold passage of its own item"
    item_id, cited, gold = chosen
    page = open_page(tmp_path / "out" / "report.html")
    page.goto(page.url + f"#item=march-{item_id}")
    line = page.locator("#citations li").filter(has_text=cited)
    assert line.locator(".badge").text_content() == "gold"
    assert f"(this item's {cited.rpartition('/')[2]})" in line.text_content()
    uncited = (
        page.locator("#citations li").filter(has_text="gold, not cited").locator(".id").all_text_contents()
    )
    assert cited.rpartition("/")[2] not in uncited and set(uncited) <= gold
    clean(page)


def test_an_llm_items_trace_shows_each_step_and_what_the_method_made(open_page, tmp_path, chat_server):
    """report.html's trace of an llm: system: each call with its prompt kind, tokens,
    latency and cost, the totals, and the method's intermediate outputs; an interactive
    episode's turns likewise (issue 26, part 10)."""
    from fixtures.network import GUARD

    (tmp_path / "conftest.py").write_text(GUARD)  # nothing may leave 127.0.0.1
    common = [
        "--ambig-suite=march", "--ambig-limit=1", "--ambig-llm-model=scripted-m", "--ambig-llm-price=1,2",
        f"--ambig-llm-base-url={chat_server.url}",
    ]  # fmt: skip
    for report, args in (
        ("agent", ["--ambig-system=llm:clarion"]),
        ("episodes", ["--ambig-system=llm:policy", "--ambig-protocol=interactive", "--ambig-costs=0:0.1"]),
    ):
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *common, *args, f"--ambig-report={report}"],
            cwd=tmp_path, capture_output=True, text=True,
        )  # fmt: skip
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    answer = json.loads((tmp_path / "agent" / "scorecard.json").read_text())["items"][0]["answer"]
    llm = answer["metadata"]["llm"]
    page = open_page(tmp_path / "agent" / "report.html")
    page.click("#tab-items")
    page.locator(".row").first.click()
    rows = page.locator("#trace tr")
    assert rows.count() == 1 + len(llm["steps"]) + 1  # the head, a row per call, the totals
    first = rows.nth(1).locator("td").all_text_contents()
    step = llm["steps"][0]
    assert first == ["1", step["step"], f"{step['prompt_tokens']:,}", f"{step['completion_tokens']:,}",
                     f"{step['seconds']:.2f} s", f"${step['cost']:.4f}", ""]  # fmt: skip
    total = rows.last.locator("td").all_text_contents()
    assert total[1:4] == [
        f"{len(llm['steps'])} calls",
        f"{llm['prompt_tokens']:,}",
        f"{llm['completion_tokens']:,}",
    ]
    assert total[5] == f"${llm['cost']:.4f}"
    plan = page.locator('#outputs .output[data-name="plan"] li').all_text_contents()
    assert plan == answer["metadata"]["plan"]
    assert page.locator('#outputs .output[data-name="searches"] li').count() == len(
        answer["metadata"]["searches"]
    )
    page.locator("#trace").scroll_into_view_if_needed()
    page.screenshot("trace")
    clean(page)
    episode = open_page(tmp_path / "episodes" / "report.html")
    episode.click("#tab-items")
    episode.locator(".row").first.click()
    steps = [r.locator("td").nth(1).text_content() for r in episode.locator("#trace tr").all()[1:-1]]
    assert steps and all(s.startswith("turn ") for s in steps)
    assert episode.locator("#transcript .turn").count() >= 2
    clean(episode)


def test_the_judge_against_human_labels_is_a_section_of_the_overview(open_page, tmp_path):
    """--ambig-human-labels: the overview shows the notes and both tables as scorecard.md has them."""
    from pytest_ambigqa.card.calibration import Label, calibrate

    loaded = SUITES["march"].load(None, LoadOptions())
    results = {
        i.key: ItemResult("march", i.id, "ok", i.ambiguity_type, scores={"judge": float(n % 5)}, index=n)
        for n, i in enumerate(loaded.items)
    }
    card = build(
        [loaded],
        results,
        None,
        Scorers(metrics=frozenset({"judge"})),
        0,
        system={"label": "sys", "inputs": []},
        config={"seed": 0, "suites": ["march"]},
        versions={},
    )
    labels = [Label("line 1", i.id, None, None, {None: float(n % 3)}) for n, i in enumerate(loaded.items[:8])]
    calibration = calibrate("labels.jsonl", labels, card.results, {"march": ["judge"]}, "sys", 0)
    card = dataclasses.replace(card, calibration=calibration)
    path = tmp_path / "report.html"
    path.write_text(html.render(card))
    page = open_page(path)
    section = page.locator("#calibration")
    assert section.locator("h2").text_content() == "Judge against human labels"
    assert section.locator(".meta").first.text_content() == view.calibration_notes(calibration)[0]
    agreement, ppi = view.calibration_rows(calibration, {"march": "MARCH"})
    tables = section.locator("table")
    assert tables.nth(0).locator("tr").nth(1).locator("td").all_text_contents() == list(agreement[0])
    assert tables.nth(1).locator("tr").nth(1).locator("td").all_text_contents() == list(ppi[0])
    clean(page)
