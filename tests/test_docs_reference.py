"""The site's generated reference (docs/reference.py, added to the build by docs/hooks.py): every
option, metric, error, subcommand and scorecard field is on its page, and every reference entry
of the nav is a page. The page functions are called directly; `mkdocs build --strict` itself
runs in .ci/run."""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from pytest_ambigqa import cli, errors
from pytest_ambigqa.metrics import METRICS
from pytest_ambigqa.options import _OPTIONS
from pytest_ambigqa.suites import SUITES

ROOT = Path(__file__).resolve().parents[1]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ambigqa_docs_reference", ROOT / "docs" / "reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


reference = _load()


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return {uri: make() for uri, make in reference.PAGES.items()}


def _nav(node: object, section: str | None = None) -> list[tuple[str | None, str]]:
    """(top-level section, page) of every page in the nav."""
    if isinstance(node, str):
        return [(section, node)]
    if isinstance(node, list):
        return [entry for child in node for entry in _nav(child, section)]
    if isinstance(node, dict):
        return [entry for title, value in node.items() for entry in _nav(value, section or title)]
    return []


def _nav_pages() -> list[tuple[str | None, str]]:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8"))
    return _nav(config["nav"])


def test_every_option_is_on_the_options_page(pages):
    page = pages["reference/options.md"]
    for option in _OPTIONS:
        shown = f"{option.flag}={option.metavar}" if option.metavar is not None else option.flag
        shown = f"{option.flag}[={option.metavar}]" if option.const is not None else shown  # a value or none
        assert f'<span id="{option.flag[2:]}"></span>`{shown}`' in page, option.flag
        assert f"ini `{option.name}`" in page, option.name
        assert reference.cell(option.help) in page, option.flag
        for choice in option.choices or ():
            assert f"`{choice}`" in page
    assert "the command line wins" in page


def test_every_option_is_in_exactly_one_group():
    grouped = [o.flag for _, members in reference.option_groups() for o in members]
    assert grouped == [o.flag for o in _OPTIONS]
    starts = {flag for _, flag in reference.OPTION_GROUPS}
    assert starts <= set(grouped), "a group starts at an option that is gone"


def test_every_metric_is_on_the_metrics_page(pages):
    page = pages["reference/metrics.md"]
    for name, spec in METRICS.items():
        assert f"`{name}`" in page, name
        assert reference.cell(spec.label) in page, spec.label
        assert reference.cell(spec.source) in page, spec.source
    for suite in SUITES.values():
        assert f"### {suite.title} (`{suite.name}`)" in page


def test_every_error_is_on_the_errors_page(pages):
    page = pages["reference/errors.md"]
    classes = [c for c in vars(errors).values() if inspect.isclass(c) and c.__module__ == errors.__name__]
    assert "AmbigQAWarning" in [c.__name__ for c in classes]
    for cls in classes:
        assert f"### {cls.__name__} {{#{cls.__name__.lower()}}}" in page, cls.__name__
        first = inspect.cleandoc(cls.__doc__ or "").split("\n")[0]
        assert reference.rst(first) in page, cls.__name__


def test_the_error_table_is_read_whole():
    header, rows = reference._rst_table(errors.__doc__, spanning=True)
    assert header == ["error", "means", "turned into"]
    named = [r[0].lstrip("- ").split()[0] for r in rows]
    documented = {
        c.__name__ for c in vars(errors).values() if inspect.isclass(c) and issubclass(c, Exception)
    }
    assert set(named) == documented - {"AmbigQAError", "AmbigQAWarning"}
    unreadable = rows[named.index("UnreadableFile")]
    assert unreadable[2].endswith("gold data read again for the drill-down: absent")


def _subcommands(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                out += [sub, *_subcommands(sub)]
    return out


def test_every_subcommand_is_on_the_cli_page(pages):
    page = pages["reference/cli.md"]
    subcommands = _subcommands(cli.build_parser())
    progs = [sub.prog for sub in subcommands]
    assert {"pytest-ambigqa data list", "pytest-ambigqa data fetch", "pytest-ambigqa merge"} <= set(progs)
    for sub in subcommands:
        assert f"## {sub.prog} " in page, sub.prog
        for action in sub._actions:
            for flag in action.option_strings:
                if flag not in ("-h", "--help"):
                    assert f"`{flag}`" in page or f"`{flag} " in page, (sub.prog, flag)


def test_main_parses_with_the_documented_parser():
    args = cli.build_parser().parse_args(["data", "fetch", "asqa", "--split", "train"])
    assert (args.command, args.data_command, args.suite, args.split) == ("data", "fetch", "asqa", "train")


def test_every_top_level_scorecard_field_is_on_its_page(pages):
    page = pages["reference/scorecard.md"]
    schema = reference.scorecard_schema()
    assert "schema_version" in schema["properties"]
    for field in [*schema["properties"], *reference.written_fields()]:
        assert f"| `{field}` |" in page, field
    for record in schema["$defs"]:
        assert f"{{#record-{record.lower()}}}" in page
    assert '??? abstract "scorecard.json' in page  # the JSON Schema, folded
    assert "## Migrations" in page and "`migrate_1_to_2`" in page
    assert "??? abstract \"report.html's data" in page and '"ItemRow"' in page  # the page's data


def test_the_suites_page_includes_each_readme(pages):
    page = pages["reference/suites.md"]
    for name in SUITES:
        readme = (ROOT / "suites" / name / "README.md").read_text("utf-8")
        body = [line for line in readme.splitlines() if line and not line.startswith("#")]
        assert body[0] in page, name
        assert f"`suites/{name}/published.toml`" in page


def test_every_reference_entry_of_the_nav_is_a_page():
    nav = _nav_pages()
    reference_pages = [page for section, page in nav if section == "Reference"]
    assert reference_pages, "no Reference section in the nav"
    for page in reference_pages:
        assert page in reference.PAGES or page in reference.HAND_WRITTEN, page
    in_nav = {page for _, page in nav}
    for page in reference.PAGES:
        assert page in in_nav, f"{page} is generated but not in the nav"


def test_links_of_included_files_are_made_to_work_on_the_site(tmp_path):
    (tmp_path / "docs" / "how-to").mkdir(parents=True)
    (tmp_path / "docs" / "recipes" / "ray").mkdir(parents=True)
    (tmp_path / "docs" / "recipes" / "ray" / "README.md").write_text("# Ray\n")
    text = (
        "See [the data guide](docs/how-to/data.md#hub), [the tests](tests/README.md),\n"
        "[Ray](docs/recipes/ray/), [site](https://example.org/x.md), [here](#top), "
        "`[not](a/link.md)` and ![shot](docs/report.png).\n"
        "```bash\n[kept](docs/how-to/data.md)\n```\n"
        "[tests/README.md](tests/README.md), [`fixtures/`](fixtures/)\n"
        "[def]: tests/README.md\n"
    )
    out = reference.rewrite_links(text, "CHANGELOG.md", "changelog.md", tmp_path)
    assert "[the data guide](how-to/data.md#hub)" in out
    assert "the tests (`tests/README.md`)" in out
    assert "[Ray](recipes/ray/README.md)" in out
    assert "[site](https://example.org/x.md)" in out and "[here](#top)" in out
    assert "`[not](a/link.md)`" in out
    assert "![shot](report.png)" in out
    assert "[kept](docs/how-to/data.md)" in out  # code is left alone
    assert "`tests/README.md`, `fixtures/`" in out
    assert "[def]: #" in out
    nested = reference.rewrite_links(
        "[x](../../docs/how-to/data.md)", "suites/asqa/README.md", "reference/suites.md"
    )
    assert nested == "[x](../how-to/data.md)"


def test_the_changelog_and_contributing_pages_exist_without_their_files(tmp_path):
    assert "not in this checkout" in reference.changelog_page(tmp_path)
    (tmp_path / "CONTRIBUTING.md").write_text("# Contributing\n\nRun [the tests](tests/README.md).\n")
    page = reference.contributing_page(tmp_path)
    assert "# Contributing" in page and "the tests (`tests/README.md`)" in page


def test_table_cells_are_escaped():
    assert reference.cell("a|b <c> `x|<y>`") == "a\\|b &lt;c> `x|<y>`"


def test_the_readme_is_a_landing_page():
    """Issue 41: at most 200 lines; the rest is the site's."""
    lines = (ROOT / "README.md").read_text("utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines"


@pytest.mark.parametrize(
    "name",
    ["README.md", "CHANGELOG.md", "CONTRIBUTING.md", "tests/README.md", "baselines/README.md"]
    + [f"suites/{name}/README.md" for name in SUITES],
)
def test_the_links_of_files_read_on_github_resolve(name):
    """The files read in the repository (GitHub renders them) link only to files that are in
    it: the generated pages are not, so those are reached through the site."""
    path = ROOT / name
    fenced, broken = False, []
    for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        if fenced:
            continue
        for match in reference._LINK.finditer(reference._CODE_SPAN.sub("", line)):
            target = match.group(3).partition("#")[0]
            if not target or "://" in target or target.startswith(("mailto:", "/")):
                continue
            if not (path.parent / target).exists():
                broken.append(f"{name}:{number}: {target}")
    assert not broken, "\n".join(broken)
