"""On the controller only (the one process of a plain run, or xdist's controller): the
results the test reports carry, the scorecard built from them, the gates and the reports.
Registered off-worker, as pytest registers its ``LogXML``."""

from __future__ import annotations

import dataclasses
import json
import platform
import re
import subprocess
import time
import warnings
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..card import storage
from ..card.saved import read_card
from ..card.scorecard import Scorecard, build, utc_stamp
from ..errors import AmbigQAWarning, ScorecardError, SpoolError, UnreadableFile
from ..options import runs_no_tests
from ..output import excerpt, for_terminal, json_text
from ..report import ci, pipeline, terminal
from ..schema import ItemResult
from ..store import FILE as STORE_FILE
from ..suites import SUITES
from . import selection
from .collection import ITEM_KEY, key_of, node_key
from .run import Run
from .runner import RESULT_ATTRIBUTE, RUNNER_KEY, UNREADABLE_OUTPUT
from .sequential import SKIPPED, SequentialGate
from .spool import Spool

if TYPE_CHECKING:
    from _pytest.terminal import TerminalReporter

    from ..card.calibration import Label

# Told of each builtin item's result as it arrives: (result, its test report, the report's payload).
Listener = Callable[[ItemResult, pytest.TestReport, dict[str, Any]], None]
_VERSIONED = ("pytest-ambigqa", "pytest", "pytest-xdist", "rouge-score", "nltk", "numpy")


class ScorecardPlugin:
    def __init__(self, run: Run) -> None:
        self.run = run
        self.spool = Spool()  # each result's free text, on disk (spool.py)
        self.results: dict[str, ItemResult] = {}
        self.expected: set[str] | None = None
        self._used: dict[str, dict[str, Any]] = {}
        self._described: set[str] = set()  # the systems' descriptions read (their JSON texts)
        self._started = time.time()
        self._began = utc_stamp()
        self.scorecard: Scorecard | None = None
        self._unmet: list[str] = []  # gates that cannot be evaluated, reports not written
        self._unreadable = 0  # stored answers that could not be read back (asked again)
        self.listeners: list[Listener] = []  # live progress (progress.py), when it is drawn
        self.baseline: Scorecard | None = None
        self.sequential: SequentialGate | None = None  # --ambig-sequential, from the first result
        self._gate_skipped: set[str] = set()  # items skipped once it decided
        self._by_node: dict[str, str] | None = None  # see _keys
        if run.cfg.gates.baseline is not None:  # read before any item runs: a bad file stops the run here
            try:
                self.baseline = read_card(run.cfg.gates.baseline)
            except ScorecardError as exc:
                raise pytest.UsageError(f"--ambig-baseline: {exc}") from None
        self.labels: list[Label] = []
        if run.cfg.human_labels is not None:  # read before any item runs, as the baseline is
            from ..card.calibration import read_labels

            try:
                suites_of: dict[str, list[str]] = {}
                for item in run.items:
                    suites_of.setdefault(item.id, []).append(item.suite)
                self.labels = read_labels(run.cfg.human_labels, suites_of)
            except UnreadableFile as exc:
                raise pytest.UsageError(f"--ambig-human-labels: {exc}") from None

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.expected = {item.stash[ITEM_KEY].key for item in session.items if ITEM_KEY in item.stash}

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """On the xdist controller: which items the workers will run."""
        keys = self._keys()
        found = {keys[k] for k in map(key_of, ids) if k in keys}
        self.expected = (self.expected or set()) | found

    def _keys(self) -> dict[str, str]:
        """Each item's key by the key its test's name holds (``collection.node_key``)."""
        if self._by_node is None:
            self._by_node = {node_key(i.key): i.key for i in self.run.items}
        return self._by_node

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.skipped and self.run.stop is not None and SKIPPED in str(report.longrepr):
            self._gate_skipped.add(self._keys().get(key_of(report.nodeid), ""))
        payload = getattr(report, RESULT_ATTRIBUTE, None) if report.when == "teardown" else None
        if payload is None:
            if report.when == "setup" and report.failed:
                self._setup_failed(report)
            return
        delattr(report, RESULT_ATTRIBUTE)  # the terminal keeps every report: not the record too
        result = self.spool.add(payload["result"])
        if key_of(report.nodeid) == node_key(result.key):  # builtin items only, not user tests
            self.results[result.key] = result
            if payload["system"] not in self._described:  # the same text for every item of a system
                self._described.add(payload["system"])
                system = json.loads(payload["system"])
                self._used.setdefault(system["label"], system)
            for listener in self.listeners:
                listener(result, report, payload)
            if self.run.stop is not None:
                self._sequential().observe(result)

    def _setup_failed(self, report: pytest.TestReport) -> None:
        """A builtin item whose test failed in its setup before the item was asked (an
        ``ambig_system`` fixture that raised, say): an error of the item, with the setup's
        message, not an item that was never reported. Another report of it (a rerun's) replaces it."""
        key = self._keys().get(key_of(report.nodeid))
        if key is None or key in self.results:
            return
        item = self.run.by_key[key]
        crash = getattr(report.longrepr, "reprcrash", None)
        message = getattr(crash, "message", None) or getattr(report.longrepr, "errorstring", None)
        message = message or str(report.longrepr).strip().rpartition("\n")[2] or "an error"
        error = f"its test's setup failed: {excerpt(message, 500)}"
        result = self.run.protocol.failed(SUITES[item.suite], item, self.run.scorers, "error", error)
        self.results[key] = self.spool.add(json_text(result.to_dict()))
        if self.run.stop is not None:
            self._sequential().observe(self.results[key])

    def _sequential(self) -> SequentialGate:
        if self.sequential is None:
            gates, expected, stop = self.run.cfg.gates, self.expected, self.run.stop
            assert gates.sequential is not None and stop is not None  # run.stop is set only then
            self.sequential = SequentialGate.start(
                gates.sequential,
                stop,
                [i for i in self.run.items if expected is None or i.key in expected],
                gates.fail_under,
                gates.fail_if_worse,
                self.baseline.results if self.baseline is not None else (),
            )
        return self.sequential

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        self._unreadable += getattr(node, "workeroutput", {}).get(UNREADABLE_OUTPUT, 0)

    @pytest.hookimpl(tryfirst=True)  # before the JUnit plugin writes its file (ci.junit)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        run, cfg = self.run, self.run.cfg
        if runs_no_tests(run.config):
            return
        self._unreadable += session.config.stash[RUNNER_KEY].evaluator.unreadable  # this process's own
        if self._unreadable:  # once for the run, whichever processes met them
            warnings.warn(
                AmbigQAWarning(
                    f"{self._unreadable} stored answer(s) in {run.cache_dir / STORE_FILE} could not be "
                    "read back (another version of the plugin wrote them, or the file is damaged): "
                    "their items were asked again"
                ),
                stacklevel=1,
            )
        if not self.results and not self.expected:
            if cfg.gates.fail_under and session.exitstatus in (
                pytest.ExitCode.OK,
                pytest.ExitCode.NO_TESTS_COLLECTED,
            ):
                self._unmet.append(
                    f"{ci.GATE_FAILED}no benchmark items ran, so --ambig-fail-under cannot be met"
                )
                session.exitstatus = pytest.ExitCode.TESTS_FAILED
            ci.junit(session.config, None, self._unmet)
            return
        try:
            self._finish(session)
        except SpoolError as exc:  # the run's own temporary file, damaged under it
            self._unmet.append(f"ambigqa: {exc}")
            self.scorecard = None
        ci.junit(session.config, self.scorecard, self._unmet)
        if (self.scorecard is not None and self.scorecard.shortfalls) or self._unmet:
            if session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _finish(self, session: pytest.Session) -> None:
        """The scorecard, its gates, its files and the CI surfaces."""
        run, cfg = self.run, self.run.cfg
        used = list(self._used.values()) or [run.describe(run.default_system)]
        system: dict[str, Any] = (
            used[0]
            if len(used) == 1
            else {  # several fixture systems: what any of them declares
                "label": " + ".join(u["label"] for u in used),
                "inputs": list(dict.fromkeys(i for u in used for i in u["inputs"])),
            }
        )
        expected = self.expected
        if expected is not None and self._gate_skipped:  # skipped once the gates were decided
            expected = expected - (self._gate_skipped - self.results.keys())
        card = build(
            run.loaded,
            self.results,
            expected,
            run.scorers,
            cfg.seed,
            system=system,
            config=cfg.to_dict()
            | run.device_used()
            | run.corpus_used()
            | {"selection": selection.record(run.config, [i.key for i in run.items], self.expected)},
            versions=_versions(run.config.invocation_params.dir),
            retrieval=run.retrieval_info(),
            judge=run.judge.describe() if run.judge else None,
            item_min=cfg.gates.item_min,
            protocols={suite.suite.name: run.setup(suite, system["inputs"]) for suite in run.loaded},
            repeats=cfg.repeats,
            sample=run.sample,
        )
        card = dataclasses.replace(card, started=self._began)
        if cfg.human_labels is not None:
            from ..card.calibration import calibrate

            metrics = {suite.name: list(suite.metrics) for suite in card.suites}
            calibration = calibrate(
                str(cfg.human_labels),
                self.labels,
                card.results,
                metrics,
                cfg.human_labels_system or self._labelled_system(str(system["label"])),
                cfg.seed,
            )
            card = dataclasses.replace(card, calibration=calibration)
        deferred = None
        if cfg.shard is not None and not cfg.gates.in_shards:
            number, count = cfg.shard
            deferred = f"shard {number}/{count}: the run's gates are applied by `pytest-ambigqa merge`"
        self.scorecard = pipeline.gated(
            card,
            cfg.gates.fail_under,
            cfg.gates.gate,
            cfg.gates.max_error_rate,
            cfg.gates.max_unscored_rate,
            deferred,
            baseline=self.baseline,
            margins=cfg.gates.fail_if_worse,
            baseline_path=cfg.gates.baseline,
            item_min=cfg.gates.item_min,
        )
        if self.sequential is not None and not deferred:
            self.scorecard = self.sequential.apply(
                self.scorecard, len(self._gate_skipped - self.results.keys())
            )
        if cfg.report_dir is not None:
            problems = pipeline.write_reports(
                self.scorecard, cfg.report_dir, time.time() - self._started, cfg.exports
            )
            self._unmet += [f"ambigqa: {problem}" for problem in problems]
        self._unmet += [f"ambigqa: {problem}" for problem in ci.publish(self.scorecard, cfg.pr_comment)]

    def _labelled_system(self, label: str) -> str:
        """The system label rows name: the run's, or under ``--ambig-rescore`` the saved run's
        (the replay's own label adds where its answers were saved)."""
        rescore = self.run.rescore
        replayed = rescore is not None and label == self.run.default_system.label
        return rescore.label if rescore is not None and replayed else label

    def close(self) -> None:
        """At the end of the run: the spool is removed, and a sequential gate's stop signal."""
        self.spool.close()
        if self.run.stop is not None:
            self.run.stop.clear()

    def pytest_terminal_summary(self, terminalreporter: TerminalReporter) -> None:
        """The scorecard, then what went wrong after it (a report not written, a gate with no
        item to meet): the last lines before pytest's short summary. Each failed gate and each
        report not written is counted on pytest's last line ("13 passed, 1 gate failed")."""
        if self.scorecard is not None:
            terminalreporter.write_sep("=", "ambigqa scorecard")
            for line in terminal.scorecard(self.scorecard):
                terminalreporter.write_line(for_terminal(line), red=line.startswith("gate FAILED"))
            if self.run.cfg.report_dir is not None and not self._unmet:
                terminalreporter.write_line(f"scorecard written to {storage.shown(self.run.cfg.report_dir)}")
        for line in self._unmet:
            terminalreporter.write_line(for_terminal(line), red=True)
        counted(terminalreporter.stats, self.scorecard, self._unmet)


def counted(stats: dict[str, list[Any]], card: Scorecard | None, unmet: list[str]) -> None:
    """The failed gates and the reports not written, in the terminal reporter's ``stats``:
    each under its own key, which pytest's last line counts ("1 gate failed", "2 reports not
    written"), and each again under "failed", not counted there (``count_towards_summary``),
    so that pytest's short summary lists it with its line and the last line is red."""
    failed = [(c.nodeid, c.line) for c in ci.gate_cases(card) if not c.passed] if card is not None else []
    failed += [(ci.unmet_nodeid(n, line), line) for n, line in enumerate(unmet, 1) if ci.unmet_gate(line)]
    other = [(ci.unmet_nodeid(n, line), line) for n, line in enumerate(unmet, 1) if not ci.unmet_gate(line)]
    for found, one, many in (
        (failed, "gate failed", "gates failed"),
        (other, "report not written", "reports not written"),
    ):
        if not found:
            continue
        reports = [_failed(nodeid, line) for nodeid, line in found]
        stats.setdefault(one if len(reports) == 1 else many, []).extend(reports)
        stats.setdefault("failed", []).extend(_failed(nodeid, line, _Listed) for nodeid, line in found)


class _Listed(pytest.TestReport):
    """A failure the short summary lists and the last line does not count (counted already)."""

    count_towards_summary = False


def _failed(nodeid: str, line: str, kind: type[pytest.TestReport] = pytest.TestReport) -> pytest.TestReport:
    name = nodeid.partition("::")[2]
    return kind(nodeid, ("ambigqa", None, name), {}, "failed", for_terminal(line), "call")


def _versions(directory: Path) -> dict[str, str]:
    """The packages that ran, and the git commit of the directory the run started in, where
    it is a checkout (``pytest-ambigqa history`` groups runs by it)."""
    found = {"python": platform.python_version()}
    for name in _VERSIONED:
        try:
            found[name] = _version(name)
        except metadata.PackageNotFoundError:
            found[name] = "not installed"
    commit = _commit(directory)
    if commit:
        found["commit"] = commit
    return found


def _version(name: str) -> str:
    """``importlib.metadata.version(name)``, read from the metadata's headers alone: it parses
    the whole file (a long description included) with the email parser, ~1.5 ms a package."""
    text = metadata.distribution(name).read_text("METADATA") or ""
    for line in text.splitlines():
        if not line.strip():
            break  # the headers end at the first blank line
        if line.startswith("Version:"):
            return line.removeprefix("Version:").strip()
    return metadata.version(name)  # PKG-INFO (an egg), or no Version header


def _commit(directory: Path) -> str | None:
    """``git rev-parse HEAD`` in ``directory``; None outside a checkout, without git, or when
    git does not answer within 5 seconds."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", "HEAD"],
            cwd=directory,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and _SHA.fullmatch(commit) else None


_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
