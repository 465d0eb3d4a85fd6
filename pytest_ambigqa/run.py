"""The state of one ambigqa session, registered as a plugin at ``pytest_configure``.

Like ``_pytest/junitxml.py``'s LogXML, one object holds everything and implements the
hooks; ``plugin.py`` only creates it. Workers answer items and attach each
:class:`ItemResult` to its test report; the controller (``xdist/dsession.py`` style)
gathers them and builds the scorecard, gates and reports.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import json
import os
import platform
import shutil
import sqlite3
import sys
import tempfile
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Generator
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from . import retrieval
from .answers import FILE as ANSWERS_FILE
from .answers import AnswerStore, answer_key
from .assertions import explain
from .config import ITEM_KEY, RUN_KEY, RunConfig
from .errors import AmbigQAWarning
from .judge import Judge, JudgeSettings, LLMReader
from .local_models import DeviceUnavailable, find_local_model, pick_device
from .metrics import METRICS
from .metrics.profiles import PROFILES
from .metrics.reader import HFReader
from .pool import Prefetcher, Scoring
from .report import gates, render
from .report.output import clean, json_document, json_text, safe_output, write_text
from .report.scorecard import Scorecard, build
from .rescore import load_saved
from .retrieval import Retriever
from .retrieval.corpus import Corpus, load_corpus, suite_corpus
from .retrieval.evidence import evidence_recall
from .schema import AmbigItem, Answer, ItemResult, Passage, safe_str
from .suites import SUITES, DataError, LoadedSuite, LoadOptions, Protocol, Scorers, shard, stratified_sample
from .systems import System, SystemFailure, from_object, load_system

RESULT_PROPERTY = "ambigqa.result"
SYSTEM_PROPERTY = "ambigqa.system"
COLLECTOR_NAME = "ambigqa"
TEST_NAME = "test_ambig"
_VERSIONED = ("pytest-ambigqa", "pytest", "pytest-xdist", "rouge-score", "nltk", "numpy")


class AmbigItems(pytest.Collector):
    """The benchmark items of the selected suites, as ``test_ambig[<suite>-<id>]`` tests."""

    def collect(self):
        run: AmbigRun = self.config.stash[RUN_KEY]
        fixtureinfo = None  # the same for every item: resolve fixtures once, not 10,000 times
        for item in run.items:
            function = AmbigFunction.from_parent(
                self, name=f"{TEST_NAME}[{item.key}]", callobj=_test_ambig, fixtureinfo=fixtureinfo
            )
            fixtureinfo = function._fixtureinfo
            function.stash[ITEM_KEY] = item
            yield function


class AmbigFunction(pytest.Function):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # pytest >= 9.2 keeps node ids structured and splits "name[params]" when it reads
        # stored ids (--lf, --deselect); build ours the same way so they compare equal.
        node_id = getattr(self, "_id", None)
        if node_id is not None and hasattr(type(node_id), "parse"):
            self._id = type(node_id).parse(self.nodeid)

    def reportinfo(self):
        return self.path, None, self.name


def _test_ambig(ambig_result: ItemResult, request: pytest.FixtureRequest) -> None:
    """One benchmark item: the system answered (in setup) and meets ``--ambig-item-min``."""
    run: AmbigRun = request.config.stash[RUN_KEY]
    failures = gates.item_shortfalls(ambig_result.scores, ambig_result.suite, run.cfg.item_min)
    if failures:
        item = request.node.stash[ITEM_KEY]
        pytest.fail(explain(item, ambig_result.answer, failures), pytrace=False)


class RetrieverUnavailable(Exception):
    """The configured retriever could not be opened (model, index or corpus trouble)."""


class AmbigRun:
    def __init__(self, config: pytest.Config, cfg: RunConfig) -> None:
        self.config = config
        self.cfg = cfg
        self._temporary_cache: Path | None = None
        self._cache_dir = self._choose_cache_dir()
        self.judge = self._judge()
        self.scorers = Scorers(
            reader=self._reader(),
            judge=self.judge,
            condambigqa_setting=cfg.condambigqa_setting,
            march_setting=cfg.march_setting,
            profile=PROFILES[cfg.profile],
            metrics=frozenset(cfg.metrics) if cfg.metrics is not None else None,
        )
        self.rescore = load_saved(cfg.rescore) if cfg.rescore else None
        pools: list[tuple[AmbigItem, ...]] = []  # every item of each file: the corpus ignores --ambig-limit
        self.loaded = [self._load(name, pools) for name in cfg.suites]
        self.items: list[AmbigItem] = [item for suite in self.loaded for item in suite.items]
        self._by_key = {item.key: item for item in self.items}
        self.corpus = self._corpus([item for pool in pools for item in pool])
        self._retriever: Retriever | None = None
        self._retriever_error: str | None = None
        self._lock = threading.RLock()
        self._store: AnswerStore | None = None
        self._store_problem: str | None = None  # why the store is off, once it failed
        self._pool: Prefetcher | None = None
        self._warming: threading.Thread | None = None
        self._order: list[str] = []  # keys of the builtin items in the order this process runs them
        worker = getattr(config, "workerinput", None)
        self.run_id = worker["ambigqa_run"] if worker and "ambigqa_run" in worker else uuid.uuid4().hex
        search_dir = Path(config.invocation_params.dir)
        if self.rescore is not None:
            self.default_system = self.rescore.system(cfg.rescore)
        else:
            self.default_system = load_system(cfg.system or "lexical", search_dir)
        self.system_is_default = cfg.system is None and self.rescore is None
        self.check_retriever_for(self.default_system)
        if self.rescore is None:
            for problem in self._passage_problems(self.default_system):
                config.issue_config_time_warning(AmbigQAWarning(problem), stacklevel=2)
        if cfg.retrieval_report:
            self.check_retriever_for(None)
        if cfg.report_dir is not None and cfg.report_dir.exists() and not cfg.report_dir.is_dir():
            raise pytest.UsageError(f"--ambig-report: {cfg.report_dir} exists and is not a directory")
        self.anchor = _anchor_directory(config)
        self.results: dict[str, ItemResult] = {}
        self.expected: set[str] | None = None
        self._systems: dict[int, tuple[Any, System]] = {}
        self._used: dict[str, dict[str, Any]] = {}
        self._started = time.time()
        self.scorecard: Scorecard | None = None
        self._unmet: str | None = None  # a gate that cannot be evaluated, or a report not written

    def _load(self, name: str, pools: list[tuple[AmbigItem, ...]]) -> LoadedSuite:
        options = LoadOptions(split=self.cfg.split, fields=self.cfg.march_fields)
        try:
            loaded = SUITES[name].load(self.cfg.data.get(name), options)
        except DataError as exc:
            raise pytest.UsageError(f"--ambig-data ({name}): {exc}") from None
        pools.append(loaded.items)
        items = loaded.items
        if self.rescore is not None:
            items = tuple(i for i in items if i.key in self.rescore.answers)
        if self.cfg.limit is not None:
            items = stratified_sample(items, self.cfg.limit, self.cfg.seed)
        if self.cfg.shard is not None:
            items = shard(items, *self.cfg.shard)
        return dataclasses.replace(loaded, items=items)

    # -- models -------------------------------------------------------------------------

    def _judge(self) -> Judge | None:
        if not self.cfg.judge:
            return None
        needs = ["openai"] + (["deepeval"] if "condambigqa" in self.cfg.suites else [])
        missing = [m for m in needs if importlib.util.find_spec(m) is None]
        if missing:
            raise pytest.UsageError(
                f"--ambig-judge needs {', '.join(missing)}: pip install 'pytest-ambigqa[judge]'"
            )
        price = self.cfg.judge_price or (None, None)
        settings = JudgeSettings(
            model=self.cfg.judge,
            base_url=self.cfg.judge_base_url,
            seed=self.cfg.seed,
            timeout=self.cfg.judge_timeout,
            max_retries=self.cfg.judge_retries,
            max_reasks=self.cfg.judge_reasks,
            concurrency=self.cfg.judge_concurrency,
            price_in=price[0],
            price_out=price[1],
        )
        return Judge(settings, self.cache_dir(), samples=self.cfg.judge_samples)

    def _reader(self):
        spec = self.cfg.reader
        if spec is None or not {"march", "asqa"} & set(self.cfg.suites):
            return None
        if spec.lower() == "llm":
            return LLMReader(self.judge)
        missing = [m for m in ("transformers", "torch") if importlib.util.find_spec(m) is None]
        if missing:
            raise pytest.UsageError(
                f"--ambig-reader needs {', '.join(missing)}: pip install 'pytest-ambigqa[reader]'"
            )
        path = find_local_model(spec)
        if path is None:
            raise pytest.UsageError(
                f"--ambig-reader: '{spec}' is neither a model directory nor a model in the local "
                "Hugging Face cache (nothing is downloaded)"
            )
        self._check_device("reader")
        return HFReader(path, PROFILES[self.cfg.profile], self.cfg.device)

    def _check_device(self, model: str) -> None:
        """An explicit accelerator that is not there stops the run before any item, not on the
        first item (``auto`` never fails: it falls back to the CPU)."""
        if self.cfg.device.startswith("cuda"):
            try:
                pick_device(self.cfg.device)
            except DeviceUnavailable as exc:
                raise pytest.UsageError(
                    f"--ambig-device: {exc}, so the {model} cannot run there; use auto or cpu"
                ) from None

    # -- retrieval ----------------------------------------------------------------------

    def _corpus(self, items: list[AmbigItem]) -> Corpus:
        if self.cfg.corpus is None:
            return suite_corpus(items, self.cfg.suites)
        try:
            return load_corpus(self.cfg.corpus)
        except DataError as exc:
            raise pytest.UsageError(f"--ambig-corpus: {exc}") from None

    def check_retriever_for(self, system: System | None) -> None:
        """Fail early when a retriever is needed (by ``system``, or the report if None) but unusable."""
        if system is not None and "retriever" not in system.inputs:
            return
        who = f"the system '{system.label}'" if system else "--ambig-retrieval-report"
        required = system is None or system.requires_retriever
        if self.cfg.retriever == "none":
            if required:
                raise pytest.UsageError(f"{who} needs a retriever, but --ambig-retriever=none")
            return
        if not len(self.corpus) and not required:
            return  # nothing to search: a system that can do without is given no retriever
        if not len(self.corpus):
            raise pytest.UsageError(
                f"{who} needs a retriever, but the corpus ({self.corpus.source}) has no passages; "
                "give one with --ambig-corpus"
            )
        problem = retrieval.unavailable(self.cfg.retriever, self.cfg.embedder)
        if problem:
            raise pytest.UsageError(f"{who}: {problem}")
        if self.cfg.retriever in ("dense", "hybrid"):
            self._check_device("dense embedder")

    def retriever(self) -> Retriever | None:
        """The configured retriever, opened (or built once per machine) on first use.

        If it cannot be opened, every item that needs it errors with the same one-line reason.
        """
        with self._lock:
            return self._open_retriever()

    def _open_retriever(self) -> Retriever | None:
        if self._retriever is None and self.cfg.retriever != "none":
            if self._retriever_error is None:
                try:
                    self._retriever = retrieval.open_retriever(
                        self.cfg.retriever, self.corpus, self.cache_dir(), self.cfg.embedder, self.cfg.device
                    )
                except Exception as exc:  # a model or index that will not load: say so, once per item
                    self._retriever_error = f"{type(exc).__name__}: {exc}"
            if self._retriever is None:
                raise RetrieverUnavailable(
                    f"cannot open the {self.cfg.retriever} retriever: {self._retriever_error}"
                )
        return self._retriever

    def cache_dir(self) -> Path:
        """Where indexes, answers and judge calls are kept (writable: see ``_choose_cache_dir``)."""
        return self._cache_dir

    def _choose_cache_dir(self) -> Path:
        """``--ambig-cache-dir`` or pytest's cache; if it cannot be written, a temporary one.

        A read-only cache must not cost the run: it goes on with a fresh cache of its own
        (one warning), which only means nothing is reused from earlier runs. xdist workers
        take the controller's choice, so they still share one store.
        """
        worker = getattr(self.config, "workerinput", None)
        if worker and "ambigqa_cache" in worker:
            return Path(worker["ambigqa_cache"])
        wanted: Path | str = "pytest's cache directory"
        try:
            if self.cfg.cache_dir is not None:
                wanted = self.cfg.cache_dir
            elif getattr(self.config, "cache", None) is not None:
                wanted = Path(self.config.cache.mkdir("ambigqa"))
            else:
                wanted = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pytest-ambigqa"
            problem = _unwritable(Path(wanted))
        except OSError as exc:
            problem = exc.strerror or type(exc).__name__
        if problem is None:
            return Path(wanted)
        fallback = Path(tempfile.mkdtemp(prefix="ambigqa-cache-"))
        self._temporary_cache = fallback  # removed when the run ends (``close``)
        self.config.issue_config_time_warning(
            AmbigQAWarning(
                f"the cache directory {wanted} cannot be written ({problem}): this run keeps its "
                f"indexes, answers and judge calls in {fallback}, so nothing from earlier runs is "
                "reused (--ambig-resume finds no answers)"
            ),
            stacklevel=2,
        )
        return fallback

    # -- collection ---------------------------------------------------------------------

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector) -> Generator[None, Any, Any]:
        report = yield
        if isinstance(collector, pytest.Directory) and collector.path == self.anchor and self.items:
            nodeid = (
                COLLECTOR_NAME if collector.nodeid in ("", ".") else f"{collector.nodeid}/{COLLECTOR_NAME}"
            )
            report.result.append(AmbigItems.from_parent(collector, name=COLLECTOR_NAME, nodeid=nodeid))
        return report

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """A user's test taking ``ambig_item`` runs once per selected item."""
        if "ambig_item" in metafunc.fixturenames:
            metafunc.parametrize("ambig_item", self.items, ids=[i.key for i in self.items])

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self._order = [item.stash[ITEM_KEY].key for item in session.items if ITEM_KEY in item.stash]
        self.expected = set(self._order)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist controller: every worker shares this run's id and cache, so they share its answers."""
        node.workerinput["ambigqa_run"] = self.run_id
        node.workerinput["ambigqa_cache"] = str(self.cache_dir())

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """On the xdist controller: which items the workers will run."""
        keys = {i.key for i in self.items}
        found = {_key_of(nodeid) for nodeid in ids} & keys
        self.expected = (self.expected or set()) | found

    # -- running ------------------------------------------------------------------------

    def system_for(self, obj: Any) -> System:
        """The :class:`System` for an ``ambig_system`` fixture value (wrapped once)."""
        known = self._systems.get(id(obj))
        if known is not None:
            return known[1]
        if obj is not self.default_system and (self.cfg.system or self.rescore is not None):
            given = f"--ambig-system={self.default_system.label}" if self.cfg.system else "--ambig-rescore"
            pytest.fail(
                f"ambig_system fixture: {given} and an `ambig_system` fixture both name the system; "
                "remove one of them",
                pytrace=False,
            )
        try:
            system = from_object(obj)
            self.check_retriever_for(system)
        except (TypeError, pytest.UsageError) as exc:
            pytest.fail(f"ambig_system fixture: {exc}", pytrace=False)
        for problem in self._passage_problems(system):
            warnings.warn(AmbigQAWarning(problem), stacklevel=2)
        self._systems[id(obj)] = (obj, system)  # holding obj keeps its id from being reused
        return system

    def result_for(self, item: AmbigItem, system: System) -> ItemResult:
        """The item's result: from the pool when it runs ahead, else evaluated now."""
        # Without the store's claims, the pools of xdist workers would ask each other's items.
        shared = not hasattr(self.config, "workerinput") or self.store() is not None
        if self.cfg.concurrency > 1 and self._pool is None and shared:
            ready = threading.Event()
            self._warming = threading.Thread(target=self._warm, args=(ready,), name="ambigqa-warm")
            self._warming.daemon = True
            self._warming.start()
            self._pool = Prefetcher(lambda i: self._call(i, system), self.cfg.concurrency, ready)
            ahead = self._order[self._order.index(item.key) :] if item.key in self._order else [item.key]
            self._pool.start([self._by_key[k] for k in ahead])
        result = self._pool.result(item) if self._pool is not None else None
        return result if result is not None else self.evaluate(item, system)

    def _passage_problems(self, system: System) -> list[str]:
        """A system that reads `passages`, under a protocol that hands them over, from a data
        file that has none: it would get [] on every item without knowing why."""
        if "passages" not in system.inputs:
            return []
        problems = []
        for loaded in self.loaded:
            if not loaded.items or any(item.passages for item in loaded.items):
                continue
            probe = dataclasses.replace(loaded.items[0], passages=(Passage("p", "", "probe"),))
            if loaded.suite.inputs(probe, self.scorers)["passages"]:
                problems.append(
                    f"{loaded.suite.title}: {loaded.source} gives its items no passages, so the "
                    f"system's `passages` argument is [] on every item (a retriever over "
                    "--ambig-corpus, or a file with passages such as ALCE's, gives it evidence)"
                )
        return problems

    def _warm(self, ready: threading.Event) -> None:
        """Heavy imports and model loads, once, in one background thread, while the pool's
        first system calls are in flight; the scoring stage waits for ``ready``.

        A module first imported by several threads at once can be seen half-initialised
        (deepeval and httpx did that), so no scorer runs before this is done. A failure here
        is left to the scorers, which meet it again and report it on each item (n/a or error).
        """
        try:
            asqa = any(s.suite.name == "asqa" for s in self.loaded)
            if asqa and self.scorers.wants("rouge_lsum"):  # NLTK: sentences for ROUGE-Lsum
                from .metrics.rouge import rouge_lsum

                rouge_lsum("warm up", ["warm up"])
            needs = {METRICS[m].needs for s in self.loaded for m in self.scorers.selected(s.suite.metrics)}
            if self.judge is not None and "judge" in needs:
                self.judge.warm(geval=any(s.suite.name == "condambigqa" for s in self.loaded))
            if isinstance(self.scorers.reader, HFReader) and "reader" in needs:
                self.scorers.reader.load()
        except Exception:  # noqa: BLE001, S110 - reported per item by the scorer that needs it
            pass
        finally:
            ready.set()

    def evaluate(self, item: AmbigItem, system: System) -> ItemResult:
        return self._call(item, system)()

    def _call(self, item: AmbigItem, system: System) -> Scoring:
        """Ask the system (the pool's first stage); what is returned scores the answer (its second)."""
        suite = SUITES[item.suite]
        extras = suite.inputs(item, self.scorers)
        try:
            searchable = self.cfg.retriever != "none" and len(self.corpus) > 0
            if "retriever" in system.inputs and "retriever" not in extras and searchable:
                extras["retriever"] = self.retriever()
            evidence = None
            if self.cfg.retrieval_report:
                evidence = evidence_recall(item, self.corpus, self.retriever(), self.cfg.top_k)
        except RetrieverUnavailable as exc:
            unopened = suite.failed_result(item, self.scorers, "error", str(exc))
            return lambda: unopened
        if system.requires_retriever and extras.get("retriever", True) is None:
            reason = f"the system requires a retriever, and the {suite.title} setting gives none"
            refused = suite.failed_result(item, self.scorers, "error", reason)
            return lambda: refused
        started = time.perf_counter()
        answer, error, trace, cached = self._answer(item, system, extras)
        duration = time.perf_counter() - started
        if answer is None:
            failed = suite.failed_result(item, self.scorers, "error", error, duration)
            return lambda: dataclasses.replace(failed, evidence=evidence, cached=cached, trace=trace)
        return lambda: self._score(item, answer, duration, evidence, cached)

    def _score(
        self, item: AmbigItem, answer: Answer, duration: float, evidence: Any, cached: bool
    ) -> ItemResult:
        suite = SUITES[item.suite]
        try:
            scored = suite.score(item, answer, self.scorers)
        except Exception as exc:  # noqa: BLE001 - a scorer bug: this item says so, the run goes on
            error = f"scoring failed: {type(exc).__name__}: {safe_str(exc)[:300]}"
            failed = suite.failed_result(item, self.scorers, "error", error, duration)
            return dataclasses.replace(failed, answer=answer, evidence=evidence, cached=cached)
        keep = self.scorers.keep
        return ItemResult(
            suite=item.suite,
            item_id=item.id,
            status="ok",
            ambiguity_type=item.ambiguity_type,
            scores=keep(scored.scores),
            unscored=keep(scored.unscored),
            answer=answer,
            duration=duration,
            evidence=evidence,
            samples=keep(scored.samples),
            units=keep(scored.units),
            details=scored.details,
            usage=scored.usage,
            index=item.index,
            cached=cached,
        )

    def _answer(
        self, item: AmbigItem, system: System, extras: dict[str, Any]
    ) -> tuple[Answer | None, str, str | None, bool]:
        """(answer, error, traceback, from the store): each item is asked once per run across processes."""
        if self.rescore is not None:  # saved answers, no system at all
            return _outcome(lambda: system.answer(item, self.cfg.timeout, extras)) + (True,)
        key = answer_key(system.label, self._config_fingerprint(system), item)
        # Only the pools of xdist workers (several processes, one run) can race for an item: claim it.
        pools = self.cfg.concurrency > 1 and hasattr(self.config, "workerinput")
        while pools or self.cfg.resume:
            stored = self._stored(lambda store: store.done(key, self.run_id, self.cfg.resume))
            if stored is not None:  # "from the store" means from an earlier run, not another worker
                state, payload, earlier = stored
                return (
                    (Answer.from_dict(payload), "", None, earlier)
                    if state == "ok"
                    else (None, payload, None, earlier)
                )
            if not pools or self._stored(lambda store: store.claim(key, self.run_id), default=True):
                break
            time.sleep(0.02)  # another process is asking; its answer will be stored
        if self.cfg.rate:
            time.sleep(self._stored(lambda store: store.reserve_slot(self.cfg.rate), default=0.0))
        answer, error, trace = _outcome(lambda: system.answer(item, self.cfg.timeout, extras))
        payload = clean(answer.to_dict() if answer else error, secrets=True)  # no key reaches the disk
        self._stored(lambda store: store.put(key, self.run_id, "ok" if answer else "error", payload))
        return answer, error, trace, False

    def _stored(self, operation: Callable[[AnswerStore], Any], default: Any = None) -> Any:
        """``operation(store)``, or ``default`` once the store has failed: the run goes on
        without it (one warning), asking the system for every item it has not answered."""
        store = self.store()
        if store is None:
            return default
        try:
            return operation(store)
        except (sqlite3.Error, OSError) as exc:
            self._disable_store(exc)
            return default

    def store(self) -> AnswerStore | None:
        """The response store, or None when it cannot be used (see ``_stored``)."""
        with self._lock:
            if self._store is None and self._store_problem is None:
                try:
                    self._store = AnswerStore(self.cache_dir() / ANSWERS_FILE)
                except (sqlite3.Error, OSError) as exc:
                    self._disable_store(exc)
            return self._store

    def _disable_store(self, exc: Exception) -> None:
        with self._lock:
            if self._store_problem is not None:
                return
            broken, self._store = self._store, None
            self._store_problem = f"{type(exc).__name__}: {safe_str(exc)}"
        if broken is not None:
            with contextlib.suppress(Exception):  # its writer thread ends; what it can still write, it writes
                broken.close()
        warnings.warn(
            AmbigQAWarning(
                f"the response store {self.cache_dir() / ANSWERS_FILE} cannot be used "
                f"({self._store_problem}): answers are not kept, --ambig-resume and the claims that "
                "share items between xdist workers are off for the rest of this run"
            ),
            stacklevel=2,
        )

    def _config_fingerprint(self, system: System) -> str:
        """What, besides the item and the system, shapes an answer: the inputs this run gives."""
        parts: dict[str, Any] = {
            "setting": self.cfg.condambigqa_setting,
            "march_setting": self.cfg.march_setting,
        }
        if "retriever" in system.inputs:
            parts |= {
                "retriever": self.cfg.retriever,
                "corpus": self.corpus.sha256,
                "embedder": self.cfg.embedder,
            }
        return json.dumps(parts, sort_keys=True)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "teardown":
            return
        props = dict(report.user_properties)
        if RESULT_PROPERTY not in props:
            return
        result = ItemResult.from_dict(json.loads(props[RESULT_PROPERTY]))
        if _key_of(report.nodeid) == result.key:  # builtin items only, not user tests
            self.results[result.key] = result
            system = json.loads(props[SYSTEM_PROPERTY])
            self._used.setdefault(system["label"], system)

    def describe(self, system: System) -> dict[str, Any]:
        gold_conditions = self.cfg.condambigqa_setting == "gold-conditions"
        if self.rescore is not None and system is self.default_system:  # what the saved run's system read
            system = dataclasses.replace(system, inputs=self.rescore.inputs)
        return system.describe(gold_conditions) | {
            "default": self.system_is_default and system is self.default_system
        }

    def properties(self, result: ItemResult, system: System) -> list[tuple[str, object]]:
        """What a test report carries to the controller and to JUnit ``<properties>``:
        readable scores, then the full records of the result and of the system."""
        props: list[tuple[str, object]] = [("ambigqa.status", result.status)]
        props += [(f"ambigqa.{m}", round(v, 6)) for m, v in result.scores.items()]
        props += [(f"ambigqa.{m}", safe_output(f"n/a: {reason}")) for m, reason in result.unscored.items()]
        if result.error:
            props.append(("ambigqa.error", safe_output(result.error)))
        # ASCII JSON: it travels to the xdist controller whatever the answer's characters
        props.append((RESULT_PROPERTY, json_text(result.to_dict())))
        props.append((SYSTEM_PROPERTY, json_text(self.describe(system))))
        return props

    # -- the end ------------------------------------------------------------------------

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self._pool is not None:
            self._pool.stop()  # -x, --maxfail, Ctrl-C: nothing new starts; stored answers stay
        if hasattr(self.config, "workerinput") or self.config.option.collectonly:
            return  # an xdist worker (the controller reports), or nothing ran
        if not self.results and not self.expected:
            if self.cfg.fail_under and session.exitstatus in (
                pytest.ExitCode.OK,
                pytest.ExitCode.NO_TESTS_COLLECTED,
            ):
                self._unmet = "gate FAILED: no benchmark items ran, so --ambig-fail-under cannot be met"
                session.exitstatus = pytest.ExitCode.TESTS_FAILED
            return
        used = list(self._used.values()) or [self.describe(self.default_system)]
        system = used[0] if len(used) == 1 else {"label": " + ".join(u["label"] for u in used), "inputs": []}
        card = build(
            self.loaded,
            self.results,
            self.expected,
            self.scorers,
            self.cfg.seed,
            system=system,
            config=self.cfg.to_dict() | self._device_used(),
            versions=_versions(),
            retrieval=self._retrieval_info(),
            judge=self.judge.describe() if self.judge else None,
            item_min=self.cfg.item_min,
            protocols={suite.suite.name: self._protocol(suite, system["inputs"]) for suite in self.loaded},
        )
        shortfalls = gates.shortfalls(
            card.suites,
            self.cfg.fail_under,
            self.cfg.gate,
            self.cfg.max_error_rate,
            self.cfg.max_unscored_rate,
        )
        deferred = None
        if self.cfg.shard is not None and not self.cfg.shard_gates:
            number, count = self.cfg.shard
            deferred = f"shard {number}/{count}: suite gates are applied by `pytest-ambigqa merge`"
            shortfalls = []
        self.scorecard = dataclasses.replace(card, shortfalls=shortfalls, gates_deferred=deferred)
        if self.cfg.report_dir is not None:
            try:
                self._write_reports(self.scorecard)
            except OSError as exc:
                self._unmet = f"ambigqa: could not write the scorecard to {self.cfg.report_dir}: {exc}"
        if (shortfalls or self._unmet) and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _device_used(self) -> dict[str, str]:
        """Where the local models ran (what ``--ambig-device=auto`` chose), when this process
        ran them; every process of a run on one machine picks alike. torch is never imported
        for it: an xdist controller whose workers ran the models records nothing."""
        reader = self.scorers.reader
        if not isinstance(reader, HFReader) and self.cfg.retriever not in ("dense", "hybrid"):
            return {}
        if "torch" not in sys.modules:
            return {}
        try:
            device = reader.device if isinstance(reader, HFReader) else pick_device(self.cfg.device)
            return {"device_used": device}
        except (DeviceUnavailable, ImportError):
            return {}

    def _protocol(self, loaded: LoadedSuite, inputs: list[str]) -> Protocol:
        """The suite's protocol for this run, with what makes it an upper bound or easier."""
        suite = loaded.suite
        has_passages = any(item.passages for item in loaded.items)
        protocol = suite.protocol(self.scorers, inputs, has_passages)
        notes = list(protocol.notes)
        searched = "retriever" in inputs and self.cfg.retriever != "none" and len(self.corpus) > 0
        if searched and self.cfg.corpus is None and protocol.name == "open-retrieval":
            gold = ", MARCH's being its gold evidence" if suite.name == "march" else ""
            notes.append(
                f"the retriever searches the {len(self.corpus)} passages of the selected suites' own "
                f"files{gold}, not Wikipedia as the papers do: an easier search (give a corpus with "
                "--ambig-corpus)"
            )
        if self.cfg.metrics is not None:
            left = [m for m in suite.metrics if m not in self.cfg.metrics]
            if left:
                notes.append(f"not computed (--ambig-metrics): {', '.join(left)}")
        if loaded.is_sample:
            notes.append("the items are the bundled sample, written for this project, not the benchmark's")
        elif len(loaded.items) < loaded.total:
            notes.append(f"a subset: {len(loaded.items)} of the file's {loaded.total} items")
        upper = protocol.upper_bound
        if "item" in inputs:
            upper = "the system reads the gold item (it declares `item`)"
        return dataclasses.replace(protocol, upper_bound=upper, notes=tuple(notes))

    def close(self) -> None:
        """At unconfigure (Ctrl-C too): the answers still queued are written, then a temporary
        cache made for this run goes with it. Imports the warm-up started are let finish: a
        module half imported by a thread that outlives the run breaks whoever imports it next
        in this process (a second session in one process, pytester's inline runs)."""
        if self._warming is not None:
            self._warming.join(timeout=120)
        if self._store is not None:
            try:
                self._store.close()
            except (sqlite3.Error, OSError) as exc:
                self._disable_store(exc)
        if self._temporary_cache is not None:
            shutil.rmtree(self._temporary_cache, ignore_errors=True)

    def _retrieval_info(self) -> dict[str, Any] | None:
        if not self.cfg.retrieval_report:
            return None
        return {
            "retriever": self.cfg.retriever,
            "k": self.cfg.top_k,
            "corpus": self.corpus.source,
            "passages": len(self.corpus),
            "embedder": self.cfg.embedder,
        }

    def _write_reports(self, card: Scorecard) -> None:
        directory = self.cfg.report_dir
        assert directory is not None
        directory.mkdir(parents=True, exist_ok=True)
        payload = json_document(card.to_json(duration=time.time() - self._started))
        write_text(directory / "scorecard.json", payload + "\n")
        write_text(directory / "scorecard.md", render.markdown(card))

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self._unmet:
            terminalreporter.write_line(safe_output(self._unmet), red=True)
        if self.scorecard is None:
            return
        terminalreporter.write_sep("=", "ambigqa scorecard")
        for line in render.terminal_lines(self.scorecard):
            terminalreporter.write_line(safe_output(line), red=line.startswith("gate FAILED"))
        if self.cfg.report_dir is not None and not self._unmet:
            terminalreporter.write_line(f"scorecard written to {self.cfg.report_dir}")

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        suites = ", ".join(
            f"{s.suite.name} ({len(s.items)} items{', bundled sample' if s.is_sample else ''})"
            for s in self.loaded
        )
        system = (
            "ambig_system fixture, default lexical baseline"
            if self.system_is_default
            else self.default_system.label
        )
        lines = [f"ambigqa: {suites}; system: {system}"]
        if self.cfg.retriever != "none":
            lines.append(
                f"ambigqa retrieval: {self.cfg.retriever} top-{self.cfg.top_k} over {len(self.corpus)} "
                f"passages ({self.corpus.source}); indexes in {self.cache_dir()}"
            )
        return lines


def _unwritable(directory: Path) -> str | None:
    """Why ``directory`` cannot hold the plugin's files, or None if it can (raises OSError too)."""
    directory.mkdir(parents=True, exist_ok=True)
    if not os.access(directory, os.W_OK | os.X_OK):
        return "permission denied"
    probe = directory / f".probe-{os.getpid()}-{threading.get_ident()}"
    probe.write_bytes(b"")
    probe.unlink()
    return None


def _key_of(nodeid: str) -> str:
    head, _, params = nodeid.rpartition(f"::{TEST_NAME}[")
    return params[:-1] if head and params.endswith("]") else ""


def _anchor_directory(config: pytest.Config) -> Path | None:
    """The first directory pytest was asked to collect: the builtin items live there.

    Naming only files (``pytest tests/test_x.py``) runs just those files' tests.
    """
    for arg in config.args:
        path = Path(config.invocation_params.dir, arg.split("::")[0]).resolve()
        if path.is_dir():
            return path
    return None


def _versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for name in _VERSIONED:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "not installed"
    return found


def _outcome(call) -> tuple[Answer | None, str, str | None]:
    """(answer, error, the system's traceback)."""
    try:
        return call(), "", None
    except SystemFailure as exc:
        return None, str(exc), exc.trace
