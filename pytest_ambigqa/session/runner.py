"""On every process (an xdist worker, or the one process of a plain run): the systems the
tests ask, the pool that asks ahead, and what each test report carries to the controller."""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
import warnings
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import AmbigQAWarning
from ..evaluate import Evaluator
from ..judge import batch
from ..metrics import METRICS
from ..models.reader import LLMReader
from ..options import runs_no_tests
from ..output import bounded, cut, for_terminal, json_text, recurring, safe_output
from ..schema import AmbigItem, ItemResult
from ..store import SharedStore, scoring
from ..store.pool import Prefetcher
from ..systems import System, from_object
from .collection import ITEM_KEY, shortfall
from .deal import DEAL_INPUT, DealScheduling, deals, share
from .heap import Heap
from .run import HUB_INPUT, Run

if TYPE_CHECKING:
    from ..metrics.scoring import Scorers
    from ..suites.base import Suite

RUNNER_KEY: pytest.StashKey[Runner] = pytest.StashKey()
PAYLOAD_KEY: pytest.StashKey[dict[str, Any]] = pytest.StashKey()
# The attribute of a builtin test's teardown report that carries {"result", "system"} to the controller.
RESULT_ATTRIBUTE = "ambigqa"
UNREADABLE_OUTPUT = "ambigqa_unreadable"  # a worker's count of stored rows it could not read back
JUNIT_TEXT = 2000  # characters of one text in a JUnit property


@functools.cache
def _property(metric: str) -> str:
    """A metric's JUnit property name, made once and shared by every item's."""
    return sys.intern(f"ambigqa.{metric}")


class Runner:
    def __init__(self, run: Run) -> None:
        self.run = run
        self.store = SharedStore(run.cache_dir)
        self.evaluator = Evaluator(run.context(), self.store)
        self._systems: dict[int, tuple[Any, System]] = {}
        self._described: dict[int, tuple[System, str]] = {}  # each system's description, as JSON text
        self._pool: Prefetcher | None = None
        self._scoring: scoring.ScoringPool | None = None  # the pure scorers on the other cores
        self._said = False  # a scoring worker's death was warned about
        self._warming: threading.Thread | None = None
        self._warming_lock = threading.Lock()
        self._order: list[str] = []  # keys of the builtin items this process runs, in their order
        self._dealer: DealScheduling | None = None  # the xdist controller's, when it deals
        self._priming: batch.Priming | None = None  # batch judging's first phase (judge/batch.py)
        self._batch_checked = False  # the judge's batches looked for (collected, or sent and waited for)
        self.heap = Heap(run.config)  # out of the cycle collector's walks where it can be (heap.py)
        heavy = _scored_here(run)
        self._preload = Preload(heavy, run.scorers) if heavy else None
        if self._preload is not None:
            self.evaluator.ready = self._preload.wait

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        items = session.items if self.run.dealt is None else share(session.items, *self.run.dealt)
        self._order = [item.stash[ITEM_KEY].key for item in items if ITEM_KEY in item.stash]
        self.heap.freeze()  # the items, their tests and the modules, until close (heap.py)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist controller: every worker shares this run's id and cache, so they share its
        answers; when its pool asks ahead, its slot in the deal (session/deal.py)."""
        node.workerinput["ambigqa_run"] = self.run.run_id
        node.workerinput["ambigqa_cache"] = str(self.run.cache_dir)
        node.workerinput[HUB_INPUT] = self.run.pinned_data()  # the workers read the commit resolved here
        asks_ahead = self.run.cfg.concurrency > 1 or self.run.cfg.models.judge_batch is not None
        if self._dealer is None and asks_ahead and deals(self.run.config):
            self._dealer = DealScheduling(self.run.config, node.workerinput["workercount"])
        if self._dealer is not None:
            node.workerinput[DEAL_INPUT] = self._dealer.seat(node)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, log: Any) -> DealScheduling | None:
        if self._dealer is not None:
            self._dealer.log = log.dealsched
        return self._dealer

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        """Once a sequential gate has decided the run, a builtin item whose call has not
        started is skipped (one whose call is in flight finishes and counts)."""
        stop = self.run.stop
        if stop is None or ITEM_KEY not in item.stash:
            return
        reason = stop.reason()
        if reason is not None and not (self._pool is not None and self._pool.started(item.stash[ITEM_KEY])):
            pytest.skip(reason)

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
        executor = run.executor
        if obj is not run.default_system and executor.constructs:
            pytest.fail(
                f"ambig_system fixture: --ambig-executor={executor.label} constructs the system in "
                f"{executor.constructs} from --ambig-system; name it there instead of in a fixture",
                pytrace=False,
            )
        try:
            system = from_object(obj)
            if obj is not run.default_system:  # its calls run where the run's executor runs them
                system = executor.through(system)
            problem = run.evidence_problem(system)
            if problem:
                raise pytest.UsageError(problem)
            run.check_retriever_for(system)
        except (TypeError, pytest.UsageError) as exc:
            pytest.fail(for_terminal(f"ambig_system fixture: {exc}"), pytrace=False)
        self._systems[id(obj)] = (obj, system)  # holding obj keeps its id from being reused
        return system

    def test(self, node: pytest.Item, item: AmbigItem, obj: Any) -> ItemResult:
        """What a test of ``item`` gets (``ambig_result``, a builtin item's setup): the result
        of asking the ``ambig_system`` value ``obj``, attached to the test's report; a system
        that failed fails the test where this is called, with the system's own frames."""
        system = self.system_for(obj)
        result = self.result_for(item, system)
        self.attach(node, result, system)
        if result.status == "error":
            message = f"ambigqa {result.key}: {result.error}"
            if result.trace and node.config.getoption("tbstyle", "auto") != "no":
                message += "\n\n" + result.trace  # the system's frames, not ours
            pytest.fail(for_terminal(message), pytrace=False)
        return result

    def verdict(self, node: pytest.Function, item: AmbigItem, obj: Any) -> str | None:
        """A builtin test's setup (``collection.AmbigFunction``): :meth:`test`, and why the
        item falls short of ``--ambig-item-min`` (None: it does not), for the test's call."""
        return shortfall(node.config, item, self.test(node, item, obj))

    def result_for(self, item: AmbigItem, system: System) -> ItemResult:
        """The item's result: from batch judging's first phase, from the pool when it runs
        ahead, else evaluated now."""
        run = self.run
        if not self._batch_checked:
            self._batch_checked = True
            self._batch(item, system)
        if self._priming is not None:
            primed = self._priming.take(item)
            if primed is None:
                return self.evaluator.evaluate(item, system)
            return primed if isinstance(primed, ItemResult) else primed()
        # Without the store's claims, the pools of xdist workers would ask each other's items.
        shared = not self.evaluator.context.claims or self.store.get() is not None
        if run.cfg.concurrency > 1 and self._pool is None and shared:
            ahead = self._order[self._order.index(item.key) :] if item.key in self._order else [item.key]
            suites = [loaded.suite for loaded in run.loaded]
            self._scoring = scoring.start(
                run.cfg.score_workers, len(ahead), suites, run.scorers, lazy=run.cfg.resume
            )
            self.evaluator.offload = self._scoring
            ready = threading.Event()
            warm = functools.partial(self._start_warming, ready)
            if not run.cfg.resume:  # resuming, items whose scores are stored need no scorer: wait for one
                warm()
            threads = run.cfg.concurrency if self._models() else 1  # pure scoring: one thread computes
            prepare = functools.partial(self.evaluator.prepare, system=system)
            stop = run.stop
            self._pool = Prefetcher(
                prepare,
                run.cfg.concurrency,
                ready,
                threads,
                warm=warm if run.cfg.resume else None,
                halted=(lambda: stop.reason() is not None) if stop is not None else None,
                lazy=run.cfg.resume,
            )
            if run.cfg.resume:
                self.evaluator.asking = self._pool.widen
            self._pool.start([run.by_key[k] for k in ahead])
        result = self._pool.result(item) if self._pool is not None else None
        result = result if result is not None else self.evaluator.evaluate(item, system)
        self._say_died()  # in the test that first meets it: pytest's summary lists it
        return result

    def _batch(self, item: AmbigItem, system: System) -> None:
        """Before the first result: the judge's batches. Without batch mode, those an earlier
        run left are collected (a request pending in one is never asked again); with it, the
        items from ``item`` on are answered and their judge requests sent as batches."""
        run = self.run
        if run.judge is None:
            return
        settings = run.cfg.models.batch_settings()
        states = batch.attach(run.judge.clients, settings, run.run_id)  # a panel's every judge
        if settings is None:
            return
        if run.in_worker and run.dealt is None:
            warnings.warn(
                AmbigQAWarning(
                    "--ambig-judge-batch: with a --dist of your own no worker knows its items ahead, "
                    "so this worker asks the judge call by call (leave --dist to its default)"
                ),
                stacklevel=3,
            )
            for state in states:
                state.client.batch = None
            return
        for state in states:
            state.say = self._say
        self._priming = batch.Priming(states, run.cfg.concurrency)
        ahead = self._order[self._order.index(item.key) :] if item.key in self._order else [item.key]
        self._priming.run(
            [run.by_key[k] for k in ahead], functools.partial(self.evaluator.prepare, system=system)
        )

    def _say(self, text: str) -> None:
        """A line of batch progress on the terminal (a plain run's; a worker has none)."""
        config = self.run.config
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None or self.run.in_worker:
            return
        capture = config.pluginmanager.get_plugin("capturemanager")
        with capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext():
            reporter.write_line(for_terminal(f"ambigqa: {text}"))

    def in_flight(self) -> int:
        """Items this process's pool is asking or scoring now (0 without a pool)."""
        return self._pool.running if self._pool is not None else 0

    def _start_warming(self, ready: threading.Event) -> None:
        with self._warming_lock:
            if self._warming is None:
                self._warming = threading.Thread(target=self._warm, args=(ready,), name="ambigqa-warm")
                self._warming.daemon = True
                self._warming.start()

    def _warm(self, ready: threading.Event) -> None:
        """Heavy imports and model loads, once, in one background thread, while the pool's
        first system calls are in flight; the scoring stage waits for ``ready``.

        A module first imported by several threads at once can be seen half-initialised
        (deepeval and httpx did that), so no scorer runs before this is done. A failure here
        is left to the scorers, which meet it again and report it on each item (n/a or error).
        """
        run, scorers = self.run, self.run.scorers
        try:
            if self._preload is not None:  # one thread imports at a time
                self._preload.wait()
            if self._scoring is None:  # else the scoring workers import what they need
                for loaded in run.loaded:
                    loaded.suite.warm(scorers)
            needs = self._models()
            if run.judge is not None and "judge" in needs:
                run.judge.warm(geval=any("deepeval" in s.suite.judge_packages for s in run.loaded))
            reader = scorers.reader
            if reader is not None and not isinstance(reader, LLMReader) and "reader" in needs:
                reader.load()
        except Exception:  # noqa: BLE001 - reported per item by the scorer that needs it
            pass
        finally:
            ready.set()

    def _models(self) -> set[str]:
        """The models ("judge", "reader") this run's selected metrics score with."""
        run, scorers = self.run, self.run.scorers
        needs = {METRICS[m].needs for s in run.loaded for m in scorers.selected(s.suite.reported())}
        return {need for need in needs if need and getattr(scorers, need) is not None}

    def attach(self, node: pytest.Item, result: ItemResult, system: System) -> None:
        """What the test's final report carries: readable properties (to JUnit ``<properties>``),
        and, as the report's attribute :data:`RESULT_ATTRIBUTE`, the result's record, bounded
        (``--ambig-max-text``), for the controller: xdist serialises a report's attributes,
        JUnit writes none of them."""
        limit = self.run.cfg.max_text
        record = result.to_dict()
        text = json_text(record)  # ASCII JSON: it travels whatever the answer's characters
        if len(text) > limit:
            record = bounded(record, limit)
            text = json_text(record)
        # JUnit's properties are for reading in a CI page: each text at most JUNIT_TEXT characters.
        # Names and reasons repeat on every item and the items outlive the run: shared, not copied.
        props: list[tuple[str, object]] = [("ambigqa.status", result.status)]
        props += [(_property(m), round(v, 6)) for m, v in result.scores.items()]
        unscored = record["unscored"].items()
        props += [(_property(m), recurring(f"n/a: {why}", JUNIT_TEXT)) for m, why in unscored]
        if record["error"]:
            props.append(("ambigqa.error", safe_output(cut(record["error"], JUNIT_TEXT))))
        details = record["details"]
        if "transcript" in details:  # an interactive episode, turn by turn
            props.append(("ambigqa.sequence", safe_output(details.get("sequence") or "")))
            props.append(("ambigqa.transcript", json_text(cut(details["transcript"], JUNIT_TEXT))))
        described = self._described.get(id(system))
        if described is None or described[0] is not system:  # one text per system, not per item
            described = self._described[id(system)] = (system, json_text(self.run.describe(system)))
        node.stash[PAYLOAD_KEY] = {"result": text, "system": described[1]}
        if self._pool is not None:  # live progress counts the calls a worker's pool has in flight
            node.stash[PAYLOAD_KEY]["in_flight"] = self._pool.running
        # Added at teardown, so only the final report carries them, not all three; a node
        # finalizer runs even after a setup error.
        node.addfinalizer(lambda: node.user_properties.extend(props))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo) -> Any:
        report = yield
        if call.when == "teardown" and PAYLOAD_KEY in item.stash:
            setattr(report, RESULT_ATTRIBUTE, item.stash[PAYLOAD_KEY])
            del item.stash[PAYLOAD_KEY]  # the item outlives its run: the record is the report's alone
        return report

    @pytest.hookimpl(wrapper=True)  # before every session end, the scorecard's included
    def pytest_sessionfinish(self, session: pytest.Session) -> Generator[None]:
        if self._pool is not None:
            self._pool.stop()  # -x, --maxfail, Ctrl-C: nothing new starts; stored answers stay
        self._close_scoring()
        if self.run.in_worker:  # what xdist hands the controller when this worker is done
            # workeroutput: set by xdist on its workers only
            session.config.workeroutput[UNREADABLE_OUTPUT] = self.evaluator.unreadable  # type: ignore[attr-defined]
        return (yield)

    def close(self) -> None:
        """At unconfigure (Ctrl-C too): the answers still queued are written. Imports the
        warm-up started are let finish: a module half imported by a thread that outlives the
        run breaks whoever imports it next in this process (a second session in one process,
        pytester's inline runs)."""
        self._close_scoring()
        for thread in (self._warming, self._preload.thread if self._preload is not None else None):
            if thread is not None:
                thread.join(timeout=120)
        self.store.close()
        self.heap.thaw()  # pytest's collection at unconfigure sees the whole heap

    def _close_scoring(self) -> None:
        """The scoring workers end (no process is left behind)."""
        if self._scoring is not None:
            self._scoring.close()
            self._say_died()
            self._scoring = self.evaluator.offload = None

    def _say_died(self) -> None:
        """A scoring worker that died, said once: its items were scored here, to the same numbers."""
        pool = self._scoring
        if pool is not None and pool.died and not self._said:
            self._said = True
            warnings.warn(
                AmbigQAWarning(
                    f"{pool.died}; its items were scored in the run's process instead (same scores)"
                ),
                stacklevel=2,
            )


class Preload:
    """The suites' heavy imports (``Suite.heavy``: ASQA's rouge-score and NLTK, seconds), made
    by a background thread from the run's configuration on, so that they overlap collection
    and the first system calls instead of following the first answer (issue 44, target 5).
    Scoring waits for it (``Evaluator.ready``), so no scorer meets a module half imported.

    A failure is left to the scorers: they import again, meet the same error and report it as
    they did before (the item's "scoring failed: ..."); the thread itself says nothing.
    """

    def __init__(self, suites: list[Suite], scorers: Scorers) -> None:
        self.thread = threading.Thread(target=self._import, args=(suites, scorers), name="ambigqa-preload")
        self.thread.daemon = True
        self.thread.start()

    @staticmethod
    def _import(suites: list[Suite], scorers: Scorers) -> None:
        for suite in suites:
            try:
                suite.warm(scorers)
            except Exception:  # noqa: BLE001 - met again, and reported, by the scorer that needs it
                pass

    def wait(self) -> None:
        self.thread.join()


def _scored_here(run: Run) -> list[Suite]:
    """The suites with heavy imports that this process's own scorers will need: none on the
    xdist controller (its workers score), in a collect-only or resumed run (it may score
    nothing), or where a scoring pool's processes will score (``store/scoring.py`` starts one
    for :data:`~..store.scoring.THRESHOLD` items ahead or more, and they import for themselves)."""
    cfg, option = run.cfg, run.config.option
    elsewhere = not run.in_worker and getattr(option, "dist", "no") != "no"  # the workers score
    if runs_no_tests(run.config) or cfg.resume or elsewhere:
        return []
    processes = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    pooled = scoring.pool_size(cfg.score_workers) >= 2 and len(run.items) // processes >= scoring.THRESHOLD
    if cfg.concurrency > 1 and pooled:
        return []
    return [loaded.suite for loaded in run.loaded if loaded.suite.heavy(run.scorers)]
