"""The ``pytest-ambigqa`` command: ``merge`` the shards of a run, ``compare`` two runs,
draw the ``history`` of many.

    pytest-ambigqa merge shard1/scorecard.json shard2/scorecard.json -o merged
    pytest-ambigqa merge 's3://bucket/run-42/shard-*/scorecard.json' -o s3://bucket/run-42/merged
    pytest-ambigqa compare base/scorecard.json new/scorecard.json [-o DIR] [--fail-if-worse M:X]
    pytest-ambigqa history runs/ [more/scorecard.json ...] -o DIR
    pytest-ambigqa data list
    pytest-ambigqa data fetch asqa [--revision R] [--split dev] [--from hf://...] [--to DIR]
    pytest-ambigqa export --to inspect report/scorecard.json -o DIR

``merge`` reads and writes local paths or object stores' URLs (card/storage.py; a URL
may be a glob); it puts the shards' per-item results back in file order and rebuilds the scorecard,
intervals and gates exactly as one run over all items would build them: same numbers, same
exit code (1 when a gate fails or an item errored, failed its --ambig-item-min or is missing);
with ``--mlflow`` it logs the merged run to the MLflow run the shards share and ends it
(report/mlflow_log.py; a failure there is said and changes no exit code).
``compare`` pairs the two runs item by item (card/compare.py); exit 1 when a
``--fail-if-worse`` margin is crossed. ``history`` writes ``history.html`` over every
scorecard.json named or found below a named directory (report/history.py); one it cannot
read is named and skipped; none readable is exit 2. ``data list`` shows where each suite's
benchmark is published (suites/<name>/sources.toml); ``data fetch`` downloads one into the Hub's
cache (or ``--to DIR``, a cache to carry to an air-gapped runner) and prints the ``hf://`` URL,
pinned to its commit, that reads it there. ``export`` writes a saved run in another tool's
format (report/writers.py's ``EXPORTS``: ``inspect``, an Inspect AI eval log per suite).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import os
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pluggy

from . import hookspecs
from .card import compare, gates, storage
from .card.gates import parse_margins, parse_thresholds
from .card.gold import reload
from .card.saved import read_card, read_scorecard
from .card.scorecard import PER_SHARD, Scorecard, build
from .errors import AmbigQAError, ScorecardError, UsageError
from .metrics.profiles import PROFILES
from .output import for_terminal, write_text
from .protocols import DEFAULT_PROTOCOL, suite_metrics
from .report import ci, history, mlflow_target, pipeline, terminal, view
from .report.writers import EXPORTS
from .schema import AmbigItem, ItemResult
from .suites import SUITES, LoadedSuite, Scorers, Setup, saved_settings

# Config fields that narrow the items a run selects: a shard that differs in one ran another part.
_NARROWING = {"limit": "--ambig-limit", "sample": "--ambig-sample", "split": "--ambig-split"}


def _read(path: storage.Location) -> dict[str, Any]:
    try:
        return read_scorecard(path)
    except ScorecardError as exc:
        raise UsageError(f"{storage.shown(path)}: not a readable scorecard.json ({exc.reason})") from None


def _same(
    cards: list[dict[str, Any]],
    paths: list[storage.Location],
    what: str,
    get: Callable[[dict[str, Any]], Any],
) -> None:
    first = get(cards[0])
    for card, path in zip(cards[1:], paths[1:], strict=True):
        if get(card) != first:
            raise UsageError(f"{path}: its {what} differs from {paths[0]}'s; these are not shards of one run")


def _same_config(cards: list[dict[str, Any]], paths: list[storage.Location]) -> None:
    """One run's configuration in every shard; a shard whose items were narrowed by another
    ``--ambig-limit`` (or sample, or split) is named with the option."""
    first = cards[0]["config"]
    for card, path in zip(cards[1:], paths[1:], strict=True):
        config = card["config"]
        for key, option in _NARROWING.items():
            if config.get(key) != first.get(key):
                mine, theirs = (
                    f"{option}={v}" if v is not None else f"no {option}"
                    for v in (config.get(key), first.get(key))
                )
                raise UsageError(
                    f"{_which(card, path)} ran {mine} where {_which(cards[0], paths[0])} ran {theirs}: "
                    "not the same selection of items"
                )
    _same(
        cards, paths, "configuration", lambda c: {k: v for k, v in c["config"].items() if k not in PER_SHARD}
    )


def _which(card: dict[str, Any], path: storage.Location) -> str:
    """``shard 2/4 (out/scorecard.json)``, or the file alone for a run that is no shard."""
    shard = card["config"].get("shard")
    return f"shard {shard[0]}/{shard[1]} ({storage.shown(path)})" if shard else storage.shown(path)


def _whole(cards: list[dict[str, Any]], paths: list[storage.Location]) -> list[str]:
    """Every shard ran all of its items; returns the notes on scorecards too old to say so."""
    unrecorded = []
    for card, path in zip(cards, paths, strict=True):
        chosen = card["config"].get("selection")
        if chosen is None:
            unrecorded.append(storage.shown(path))
        elif chosen["selected"] < chosen["items"]:
            raise UsageError(
                f"{_which(card, path)} {_narrowed(chosen)}: not the whole shard; "
                "run it again without narrowing it"
            )
    if not unrecorded:
        return []
    return [
        f"note: {', '.join(unrecorded)} record(s) no selection (written by an older version): "
        "merged as if each ran its whole shard"
    ]


def _narrowed(chosen: dict[str, Any]) -> str:
    """``ran 3 of its 5 items (narrowed by -k 'sem')`` (``session/selection.py`` records it)."""
    by = ", ".join(chosen.get("by") or ()) or "unknown"
    return f"ran {chosen['selected']} of its {chosen['items']} items (narrowed by {by})"


def _every_shard(cards: list[dict[str, Any]], paths: list[storage.Location]) -> None:
    """The scorecards must be the shards of one run, each once, none missing."""
    shards = [card["config"].get("shard") for card in cards]
    if not any(shards):
        return
    counts = {shard[1] if shard else None for shard in shards}
    if len(counts) != 1 or None in counts:
        raise UsageError("these scorecards mix runs split into different numbers of shards (or none)")
    count = counts.pop()
    assert count is not None  # None in counts raised above
    seen: dict[int, storage.Location] = {}
    for (number, _), path in zip(shards, paths, strict=True):
        if number in seen:
            raise UsageError(f"{path}: shard {number}/{count} is given twice (also {seen[number]})")
        seen[number] = path
    missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in seen]
    if missing:
        raise UsageError(f"shard {', '.join(missing)} missing: a merge needs every shard of the run")


def merge(
    paths: list[storage.Location],
    out: storage.Location,
    pr_comment: Path | None = None,
    mlflow: mlflow_target.Target | None = None,
) -> int:
    cards = [_read(p) for p in paths]
    read = [Scorecard.from_json(card) for card in cards]
    _same_config(cards, paths)
    _same(cards, paths, "data", lambda c: [(s["name"], s["sha256"], s.get("revision")) for s in c["suites"]])
    _same(cards, paths, "system", lambda c: c["system"]["label"])
    _every_shard(cards, paths)
    notes = _whole(cards, paths)
    results: dict[str, ItemResult] = {}
    for card, path in zip(read, paths, strict=True):
        for result in card.results:
            if result.key in results:
                raise UsageError(f"{path}: item {result.key} is in two shards")
            results[result.key] = result
    config = {**cards[0]["config"], "shard": None}
    config.pop("shard_scheduler", None)  # the merge is no shard
    chosen = [c["config"].get("selection") for c in cards]
    config.pop("selection", None)
    if all(chosen):  # the shards' selections together (each whole: ``_whole``)
        config["selection"] = {
            "items": sum(c["items"] for c in chosen),
            "selected": sum(c["selected"] for c in chosen),
            "by": [],
        }
    used = sorted({c["config"]["device_used"] for c in cards if c["config"].get("device_used")})
    if used:
        config["device_used"] = ", ".join(used)  # every device a shard's models ran on
    suites = config["suites"]
    info = {s.name: s for card in read for s in card.suites}
    loaded = []
    protocols: dict[str, Setup] = {}
    for name in suites:
        if name not in info:
            continue
        mine = sorted((r for r in results.values() if r.suite == name), key=lambda r: r.index)
        stubs = tuple(
            AmbigItem(name, r.item_id, "", (), ambiguity_type=r.ambiguity_type, index=r.index) for r in mine
        )
        s = info[name]
        loaded.append(
            LoadedSuite(
                *(SUITES[name], stubs, s.source, s.sha256, s.is_sample, s.items_in_file),
                revision=s.revision,
                files=s.files,
                release=s.release,
            )
        )
        protocols[name] = s.protocol  # what each shard said of its part gives way to ``build``'s
    protocol = config.get("protocol") or DEFAULT_PROTOCOL
    item_min = parse_thresholds(
        "--ambig-item-min",
        ",".join(config["item_min"]),
        tuple(suites),
        item_scale=True,
        metrics_of=partial(suite_metrics, protocol=protocol),
    )
    card = build(
        loaded,
        results,
        None,
        Scorers(
            settings=saved_settings(config),
            profile=PROFILES[config.get("profile") or "alce"],
            metrics=frozenset(config["metrics"]) if config.get("metrics") is not None else None,
        ),
        config["seed"],
        system=cards[0]["system"],
        config=config,
        versions=cards[0]["versions"],
        retrieval=cards[0].get("retrieval"),
        judge=cards[0].get("judge"),
        item_min=item_min,
        protocols=protocols,
        repeats=config.get("repeats") or 1,  # the shards' trials, each item's kept in its result
    )
    fail_under = parse_thresholds(
        "--ambig-fail-under",
        ",".join(config["fail_under"]),
        tuple(suites),
        item_scale=False,
        metrics_of=partial(suite_metrics, protocol=protocol),
    )
    warnings = {
        name: [w for card in read for x in card.suites if x.name == name for w in x.data_warnings]
        for name in info
    }
    suites = [
        dataclasses.replace(c, data_warnings=list(dict.fromkeys(warnings.get(c.name, []))))
        for c in card.suites
    ]
    baseline, margins, unmet = _baseline(config, tuple(info), protocol)
    gold, absent = reload(card)
    began = min((c.started for c in read if c.started), default=None)  # the first shard's start
    card = pipeline.gated(
        dataclasses.replace(card, suites=suites, gold=gold, gold_absent=absent, started=began),
        fail_under,
        config["gate"],
        config["max_error_rate"],
        config.get("max_unscored_rate"),
        baseline=baseline,
        margins=margins,
        baseline_path=Path(config["baseline"]) if baseline is not None else None,
        item_min=item_min,
    )
    if unmet:
        card = dataclasses.replace(card, shortfalls=[*card.shortfalls, unmet])
    problems = pipeline.write_reports(card, out) + ci.publish(card, pr_comment)
    print(for_terminal("\n".join(terminal.scorecard(card))))
    failed_items = [
        r.key for r in card.results if r.status != "ok" or gates.item_shortfalls(r.scores, r.suite, item_min)
    ]
    if failed_items:
        shown = ", ".join(failed_items[:10])
        print(
            for_terminal(f"{len(failed_items)} item(s) errored, missing or below --ambig-item-min: {shown}")
        )
    for problem in problems:
        print(for_terminal(f"pytest-ambigqa merge: {problem}"), file=sys.stderr)
    for note in notes:
        print(for_terminal(note))
    print(f"merged {len(results)} items from {len(paths)} scorecards into {storage.shown(out)}")
    status = 1 if card.shortfalls or failed_items or problems else 0
    if mlflow is not None:  # the run the shards share, completed; a failure is said, the status stands
        from .report import mlflow_log

        failed = mlflow_log.complete(card, mlflow, out, status)
        if failed:
            print(for_terminal(f"pytest-ambigqa merge: {failed}"), file=sys.stderr)
    return status


def _baseline(
    config: dict[str, Any], suites: tuple[str, ...], protocol: str
) -> tuple[Scorecard | None, tuple[compare.Margin, ...], str | None]:
    """The shards' --ambig-baseline, read again for the merged run: (scorecard, margins, the
    gate line when --ambig-fail-if-worse cannot be checked because the file is gone)."""
    if not config.get("baseline"):
        return None, (), None
    margins = parse_margins(
        "--ambig-fail-if-worse",
        ",".join(config.get("fail_if_worse") or ()),
        suites,
        partial(suite_metrics, protocol=protocol),
    )
    try:
        return read_card(Path(config["baseline"])), margins, None
    except ScorecardError as exc:
        print(for_terminal(f"pytest-ambigqa merge: no comparison with the base run: {exc}"), file=sys.stderr)
        unmet = f"--ambig-fail-if-worse cannot be checked: {exc}" if margins else None
        return None, (), unmet


def compare_runs(
    base_path: Path,
    new_path: Path,
    out: Path | None,
    margins_text: str | None,
    pr_comment: Path | None = None,
) -> int:
    base, new = _card(base_path), _card(new_path)
    if out is not None:
        for path in (base_path, new_path):
            if out.resolve() == path.resolve().parent:
                raise UsageError(f"-o {out}: it holds {path}; write the comparison into another directory")
    suites = tuple(s.name for s in new.suites)
    protocol = new.config.get("protocol") or DEFAULT_PROTOCOL
    margins = parse_margins(
        "--fail-if-worse", margins_text, suites, partial(suite_metrics, protocol=protocol)
    )
    comparison = compare.compare(base, new, int(new.config.get("seed") or 0), base_path)
    if not comparison.base["suites"]:
        raise UsageError(
            f"{new_path} and {base_path} have no suite to compare: {'; '.join(comparison.notes)}"
        )
    checks = compare.worse(comparison, margins)
    shortfalls = [c.failure for c in checks if c.failure]
    gold, absent = reload(new)
    card = dataclasses.replace(
        new,
        comparison=comparison,
        shortfalls=[*new.shortfalls, *shortfalls],
        checks=[*new.checks, *checks],
        config={**new.config, "fail_if_worse": [str(m) for m in margins]},
        gold=gold,
        gold_absent=absent,
    )
    print(for_terminal("\n".join(terminal.comparison(comparison)).lstrip("\n")))
    for line in terminal.lines(view.checks(checks, "terminal")):
        print(for_terminal(line))
    for line in shortfalls:
        print(for_terminal(f"gate FAILED: {line}"))
    problems = pipeline.write_reports(card, out) if out is not None else []
    problems += ci.publish(card, pr_comment)
    for problem in problems:
        print(for_terminal(f"pytest-ambigqa compare: {problem}"), file=sys.stderr)
    if out is not None and not problems:
        print(f"comparison written to {out} (scorecard.json, scorecard.md and report.html of {new_path})")
    return 1 if shortfalls or problems else 0


def history_page(paths: list[Path], out: Path) -> int:
    runs, skipped = history.gather(paths)
    for s in skipped:
        print(for_terminal(f"pytest-ambigqa history: skipped {s.path}: {s.reason}"), file=sys.stderr)
    if not runs:
        raise UsageError(f"no readable scorecard.json in {', '.join(map(str, paths))}")
    page = out / history.FILENAME
    try:
        out.mkdir(parents=True, exist_ok=True)
        write_text(page, history.render(runs, skipped))
    except OSError as exc:
        raise UsageError(f"-o {out}: could not write {history.FILENAME}: {exc}") from None
    left = f", {len(skipped)} skipped" if skipped else ""
    print(f"history of {len(runs)} runs written to {page}{left}")
    return 0


def data_list() -> int:
    """Each suite's known sources: repository, gated or not, license, size, revision seen."""
    for name, suite in SUITES.items():
        sources = suite.sources()
        print(f"{name} ({suite.title}):")
        if sources.unpublished:
            print(f"  no public copy: {sources.unpublished}")
        if not sources.sources and not sources.unpublished:
            print("  no known source; give a file with --ambig-data")
        for source in sources.sources:
            gated = "gated: your token and its accepted terms" if source.gated else "public"
            splits = f"; splits {', '.join(source.splits)}" if source.splits else ""
            print(f"  hf://{source.repo}  {source.title}; {gated}{splits}")
            print(f"    license: {source.license}")
            print(f"    size: {source.size}; format: {source.format or 'unknown'}")
            print(
                f"    revision seen: {source.revision_seen or 'none recorded'} "
                "(not verified by the maintainers)"
            )
    return 0


def data_fetch(suite: str, revision: str | None, split: str, url: str | None, to: Path | None) -> int:
    """Download a suite's benchmark (its first known source, or ``url``) into the Hub cache, and
    print the pinned URL that reads it offline."""
    from .suites.hub import fetch
    from .suites.sources import HubRef, is_hub, parse_hub

    if suite not in SUITES:
        raise UsageError(f"unknown suite '{suite}' (valid: {', '.join(SUITES)})")
    sources = SUITES[suite].sources()
    if url is not None:
        if not is_hub(url):
            raise UsageError(f"--from {url}: expected hf://OWNER/NAME[@REVISION][/FILE]")
        ref = parse_hub(url)
    elif sources.default is not None:
        ref = HubRef(sources.default.repo)
    else:
        raise UsageError(f"{suite}: no known source to fetch. {sources.unpublished or ''}".strip())
    if revision is not None:
        ref = HubRef(ref.repo, revision, ref.file)
    if to is not None:
        os.environ["HF_HUB_CACHE"] = str(to.resolve())
    fetched = fetch(ref, split, sources.find(ref.repo))
    for name, local, digest in fetched.files:
        print(for_terminal(f"{name}: sha256 {digest} ({local})"))  # names the server chose
    cache = f"HF_HUB_CACHE={to.resolve()} " if to is not None else ""
    print(for_terminal(f"fetched {ref} at commit {fetched.commit}"))
    offline = f"{cache}HF_HUB_OFFLINE=1 pytest --ambig-suite={suite} --ambig-data={fetched.pinned}"
    print(for_terminal(f"run it offline: {offline}"))
    return 0


def export(path: Path, to: str, out: Path) -> int:
    """A saved run (its scorecard.json, or the report directory holding it) in ``to``'s format,
    written into ``out``; the questions and gold answers read again from the run's data files."""
    chosen = EXPORTS[to]
    if importlib.util.find_spec(chosen.package) is None:
        raise UsageError(
            f"--to {to}: {chosen.package} is not installed (pip install 'pytest-ambigqa[{chosen.extra}]')"
        )
    card = _card(path / "scorecard.json" if path.is_dir() else path)
    if out.exists() and not out.is_dir():
        raise UsageError(f"-o {out}: exists and is not a directory")
    gold, absent = reload(card)
    problem = pipeline.export(chosen, dataclasses.replace(card, gold=gold, gold_absent=absent), out)
    if problem:
        raise UsageError(problem)
    for suite, why in absent.items():
        print(for_terminal(f"note: {suite}: no questions or gold answers in the logs: {why}"))
    print(f"{chosen.name} export of {len(card.suites)} suite(s) written to {out}")
    return 0


def _card(path: Path) -> Scorecard:
    try:
        return read_card(path)
    except ScorecardError as exc:
        raise UsageError(str(exc)) from None


class _Plugins(pluggy.PluginManager):
    """Takes a module's ``pytest_ambigqa_*`` functions as hook implementations, unmarked,
    as pytest's own plugin manager does."""

    def parse_hookimpl_opts(self, plugin: object, name: str) -> pluggy.HookimplOpts | None:
        opts = super().parse_hookimpl_opts(plugin, name)
        if opts is None and name.startswith("pytest_ambigqa_") and callable(getattr(plugin, name, None)):
            return {}  # type: ignore[return-value]  # pluggy fills in the defaults
        return opts


def _load_plugins(names: list[str]) -> Callable[[], None]:
    """The suites, metrics and writers of the plugins named with ``-p``, as a pytest run
    sees them; returns what takes them out again."""
    if not names:
        return lambda: None
    manager = _Plugins("pytest")
    manager.add_hookspecs(hookspecs)
    sys.path.insert(0, str(Path.cwd()))  # as pytest's -p finds a module beside the run
    try:
        for name in names:
            try:
                manager.register(importlib.import_module(name), name)
            except ImportError as exc:
                raise UsageError(f"-p {name}: cannot import it ({exc})") from None
    finally:
        sys.path.remove(str(Path.cwd()))
    try:
        return hookspecs.register_extensions(manager.hook)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _mlflow(args: argparse.Namespace) -> mlflow_target.Target | None:
    """``merge --mlflow``'s target: its default store is mlflow.db in the current directory."""
    if args.mlflow is None:
        if args.mlflow_experiment is not None:
            raise UsageError("--mlflow-experiment: the experiment of an MLflow run; set --mlflow")
        return None
    return mlflow_target.target(args.mlflow, args.mlflow_experiment, Path.cwd(), "--mlflow")


def build_parser() -> argparse.ArgumentParser:
    """The command's parser, every subcommand in it (docs/reference.py renders the command line
    reference from it)."""
    parser = argparse.ArgumentParser(prog="pytest-ambigqa", description="pytest-ambigqa tools")
    commands = parser.add_subparsers(dest="command", required=True)
    merge_parser = commands.add_parser("merge", help="merge the scorecard.json files of shards into one")
    merge_parser.add_argument(
        "scorecards", nargs="+", metavar="SCORECARD", help="a path, or an object store's URL (a glob too)"
    )
    merge_parser.add_argument("-o", "--output", required=True, metavar="DIR", help="a directory, or a URL")
    merge_parser.add_argument(
        "--mlflow",
        nargs="?",
        const=mlflow_target.AUTO,
        metavar="TRACKING_URI",
        help="log the merged run to the MLflow run its shards share (as --ambig-mlflow), and end it",
    )
    merge_parser.add_argument(
        "--mlflow-experiment",
        metavar="NAME",
        help="with --mlflow: its experiment (as --ambig-mlflow-experiment)",
    )
    compare_parser = commands.add_parser(
        "compare", help="compare two runs item by item: paired intervals and tests, regressions, a gate"
    )
    compare_parser.add_argument("base", type=Path, metavar="BASE", help="the earlier run's scorecard.json")
    compare_parser.add_argument("new", type=Path, metavar="NEW", help="the run to judge, its scorecard.json")
    compare_parser.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="DIR",
        help="write NEW's scorecard.json, .md and report.html with it",
    )
    compare_parser.add_argument(
        "--fail-if-worse",
        metavar="[SUITE:]METRIC:MARGIN,...",
        help="exit 1 if the 95%% interval of a change lies wholly below -MARGIN (printed scale)",
    )
    history_parser = commands.add_parser(
        "history", help="one page over many runs: trends with intervals, any two runs compared on a click"
    )
    history_parser.add_argument(
        "paths",
        nargs="+",
        type=Path,
        metavar="DIR_OR_FILE",
        help="scorecard.json files, or directories to search",
    )
    history_parser.add_argument(
        "-o", "--output", type=Path, required=True, metavar="DIR", help="where history.html is written"
    )
    history_parser.add_argument(
        "-p",
        dest="plugins",
        action="append",
        default=[],
        metavar="MODULE",
        help="a plugin module whose pytest_ambigqa_* hooks add the suites and metrics its runs used",
    )
    data_parser = commands.add_parser("data", help="where the benchmarks are published; fetch one")
    data_commands = data_parser.add_subparsers(dest="data_command", required=True)
    data_commands.add_parser("list", help="each suite's known sources: repository, license, size")
    fetch_parser = data_commands.add_parser(
        "fetch", help="download a suite's benchmark into the Hub cache, for a runner without network"
    )
    fetch_parser.add_argument("suite", metavar="SUITE", help="a suite with a known source (`data list`)")
    fetch_parser.add_argument("--revision", metavar="R", help="a branch, tag or commit (default: main)")
    fetch_parser.add_argument("--split", default="dev", help="the split to fetch (default: dev)")
    fetch_parser.add_argument("--from", dest="url", metavar="hf://OWNER/NAME", help="another source")
    fetch_parser.add_argument(
        "--to", type=Path, metavar="DIR", help="a Hub cache directory to fill (default: HF_HUB_CACHE)"
    )
    export_parser = commands.add_parser(
        "export", help="write a saved run in another tool's format: an Inspect AI eval log per suite"
    )
    export_parser.add_argument(
        "scorecard", type=Path, metavar="SCORECARD", help="a run's scorecard.json, or its report directory"
    )
    export_parser.add_argument(
        "--to", required=True, choices=list(EXPORTS), help="the format: inspect (Inspect AI eval logs, .eval)"
    )
    export_parser.add_argument(
        "-o",
        "--output",
        type=Path,
        required=True,
        metavar="DIR",
        help="the directory the files are written to",
    )
    audit_parser = commands.add_parser(
        "audit-user", help="the LLM user's precision and recall on the users' audit, against a model"
    )
    audit_parser.add_argument("--model", required=True, help="the user's model, as the server names it")
    audit_parser.add_argument("--base-url", help="an OpenAI-compatible server (default: $OPENAI_BASE_URL)")
    audit_parser.add_argument(
        "--data", nargs="*", default=[], metavar="SUITE=PATH", help="data files to build more cases from"
    )
    for sub in (merge_parser, compare_parser):
        sub.add_argument(
            "--pr-comment",
            type=Path,
            metavar="FILE",
            help="write a short Markdown for a pull-request comment (as --ambig-pr-comment)",
        )
        sub.add_argument(
            "-p",
            dest="plugins",
            action="append",
            default=[],
            metavar="MODULE",
            help="a plugin module whose pytest_ambigqa_* hooks add suites, metrics or writers (repeatable)",
        )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    unload = lambda: None  # noqa: E731
    try:
        unload = _load_plugins(getattr(args, "plugins", []))
        if args.command == "data" and args.data_command == "list":
            return data_list()
        if args.command == "data":
            return data_fetch(args.suite.lower(), args.revision, args.split, args.url, args.to)
        if args.command == "audit-user":
            from .protocols.interactive.audit import llm_audit

            return llm_audit(args.model, args.base_url, args.data)
        if args.command == "history":
            return history_page(args.paths, args.output)
        if args.command == "export":
            return export(args.scorecard, args.to, args.output)
        if args.command == "compare":
            return compare_runs(args.base, args.new, args.output, args.fail_if_worse, args.pr_comment)
        out = storage.location(args.output)
        if isinstance(out, str):
            storage.check(out)
        return merge(storage.expand(args.scorecards), out, args.pr_comment, _mlflow(args))
    except AmbigQAError as exc:  # what the user gave; anything else is our bug, with its traceback
        print(for_terminal(f"pytest-ambigqa {args.command}: {exc}"), file=sys.stderr)
        return 2
    finally:
        unload()


if __name__ == "__main__":
    sys.exit(main())
