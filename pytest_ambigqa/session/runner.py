"""On every process (an xdist worker, or the one process of a plain run): the systems the
tests ask, the pool that asks ahead, and what each test report carries to the controller."""

from __future__ import annotations

import threading
import warnings
from typing import Any

import pytest

from ..errors import AmbigQAWarning
from ..evaluate import Evaluator
from ..metrics import METRICS
from ..models.reader import HFReader
from ..report.output import json_text, safe_output
from ..schema import AmbigItem, ItemResult
from ..store import SharedStore
from ..store.pool import Prefetcher
from ..systems import System, from_object
from .collection import ITEM_KEY
from .run import Run

RUNNER_KEY: pytest.StashKey[Runner] = pytest.StashKey()
RESULT_PROPERTY = "ambigqa.result"
SYSTEM_PROPERTY = "ambigqa.system"


class Runner:
    def __init__(self, run: Run) -> None:
        self.run = run
        self.store = SharedStore(run.cache_dir)
        self.evaluator = Evaluator(run, self.store)
        self._systems: dict[int, tuple[Any, System]] = {}
        self._pool: Prefetcher | None = None
        self._warming: threading.Thread | None = None
        self._order: list[str] = []  # keys of the builtin items in the order this process runs them

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self._order = [item.stash[ITEM_KEY].key for item in session.items if ITEM_KEY in item.stash]

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist controller: every worker shares this run's id and cache, so they share its answers."""
        node.workerinput["ambigqa_run"] = self.run.run_id
        node.workerinput["ambigqa_cache"] = str(self.run.cache_dir)

    def system_for(self, obj: Any) -> System:
        """The :class:`System` for an ``ambig_system`` fixture value (wrapped once)."""
        known = self._systems.get(id(obj))
        if known is not None:
            return known[1]
        run = self.run
        if obj is not run.default_system and (run.cfg.system or run.rescore is not None):
            given = f"--ambig-system={run.default_system.label}" if run.cfg.system else "--ambig-rescore"
            pytest.fail(
                f"ambig_system fixture: {given} and an `ambig_system` fixture both name the system; "
                "remove one of them",
                pytrace=False,
            )
        try:
            system = from_object(obj)
            run.check_retriever_for(system)
        except (TypeError, pytest.UsageError) as exc:
            pytest.fail(f"ambig_system fixture: {exc}", pytrace=False)
        for problem in run.passage_problems(system):
            warnings.warn(AmbigQAWarning(problem), stacklevel=2)
        self._systems[id(obj)] = (obj, system)  # holding obj keeps its id from being reused
        return system

    def result_for(self, item: AmbigItem, system: System) -> ItemResult:
        """The item's result: from the pool when it runs ahead, else evaluated now."""
        run = self.run
        # Without the store's claims, the pools of xdist workers would ask each other's items.
        shared = not run.in_worker or self.store.get() is not None
        if run.cfg.concurrency > 1 and self._pool is None and shared:
            ready = threading.Event()
            self._warming = threading.Thread(target=self._warm, args=(ready,), name="ambigqa-warm")
            self._warming.daemon = True
            self._warming.start()
            self._pool = Prefetcher(lambda i: self.evaluator.prepare(i, system), run.cfg.concurrency, ready)
            ahead = self._order[self._order.index(item.key) :] if item.key in self._order else [item.key]
            self._pool.start([run.by_key[k] for k in ahead])
        result = self._pool.result(item) if self._pool is not None else None
        return result if result is not None else self.evaluator.evaluate(item, system)

    def _warm(self, ready: threading.Event) -> None:
        """Heavy imports and model loads, once, in one background thread, while the pool's
        first system calls are in flight; the scoring stage waits for ``ready``.

        A module first imported by several threads at once can be seen half-initialised
        (deepeval and httpx did that), so no scorer runs before this is done. A failure here
        is left to the scorers, which meet it again and report it on each item (n/a or error).
        """
        run, scorers = self.run, self.run.scorers
        try:
            for loaded in run.loaded:
                loaded.suite.warm(scorers)
            needs = {METRICS[m].needs for s in run.loaded for m in scorers.selected(s.suite.metrics)}
            if run.judge is not None and "judge" in needs:
                run.judge.warm(geval=any("deepeval" in s.suite.judge_packages for s in run.loaded))
            if isinstance(scorers.reader, HFReader) and "reader" in needs:
                scorers.reader.load()
        except Exception:  # noqa: BLE001, S110 - reported per item by the scorer that needs it
            pass
        finally:
            ready.set()

    def properties(self, result: ItemResult, system: System) -> list[tuple[str, object]]:
        """What a test report carries to the controller and to JUnit ``<properties>``:
        readable scores, then the full records of the result and of the system."""
        props: list[tuple[str, object]] = [("ambigqa.status", result.status)]
        props += [(f"ambigqa.{m}", round(v, 6)) for m, v in result.scores.items()]
        props += [(f"ambigqa.{m}", safe_output(f"n/a: {reason}")) for m, reason in result.unscored.items()]
        if result.error:
            props.append(("ambigqa.error", safe_output(result.error)))
        if "transcript" in result.details:  # an interactive episode, turn by turn
            props.append(("ambigqa.sequence", result.details.get("sequence", "")))
            props.append(("ambigqa.transcript", json_text(result.details["transcript"])))
        # ASCII JSON: it travels to the xdist controller whatever the answer's characters
        props.append((RESULT_PROPERTY, json_text(result.to_dict())))
        props.append((SYSTEM_PROPERTY, json_text(self.run.describe(system))))
        return props

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self) -> None:
        if self._pool is not None:
            self._pool.stop()  # -x, --maxfail, Ctrl-C: nothing new starts; stored answers stay

    def close(self) -> None:
        """At unconfigure (Ctrl-C too): the answers still queued are written. Imports the
        warm-up started are let finish: a module half imported by a thread that outlives the
        run breaks whoever imports it next in this process (a second session in one process,
        pytester's inline runs)."""
        if self._warming is not None:
            self._warming.join(timeout=120)
        self.store.close()
