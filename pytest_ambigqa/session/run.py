"""What one ambigqa session is made of, built once at ``pytest_configure`` in every process:
its options, suites and items, the system, models (judge, reader), corpus and retriever,
and the cache directory. No hooks here: the plugins of ``session/`` read it.
"""

from __future__ import annotations

import dataclasses
import gc
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import threading
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .. import retrieval
from ..errors import (
    AmbigQAWarning,
    DataError,
    DeviceUnavailable,
    RetrieverUnavailable,
    ScorecardError,
    UsageError,
)
from ..evaluate import Context
from ..judge import Judge
from ..metrics import METRICS
from ..metrics.profiles import PROFILES
from ..models.cache import CallCache
from ..models.chat import ChatClient
from ..models.local import find_local_model, pick_device
from ..models.reader import HFReader, LLMReader, Reader
from ..protocols import PROTOCOLS
from ..retrieval import Retriever
from ..retrieval.corpus import Corpus, load_corpus, suite_corpus
from ..schema import AmbigItem
from ..suites import SUITES, LoadedSuite, LoadOptions, Scorers, Setup, shard, stratified_sample
from ..suites.sample import Sample, draw
from ..suites.sources import HubRef, parse_hub
from ..systems import System, load_system
from ..systems.replay import load_saved
from ..telemetry import NO_TRACER, Tracer
from .config import RunConfig
from .deal import DEAL_INPUT

if TYPE_CHECKING:
    from .sequential import StopSignal

LLM_CACHE_FILE = "llm.sqlite"  # the llm:<method> systems' calls, beside the judge's
HUB_INPUT = "ambigqa_hub"  # workerinput: {suite: the hf:// URL at the commit the controller read}
RUN_KEY: pytest.StashKey[Run] = pytest.StashKey()  # the session's run, when a suite is selected


class Run:
    def __init__(self, config: pytest.Config, cfg: RunConfig) -> None:
        self.config = config
        self.cfg = cfg
        worker = getattr(config, "workerinput", None)
        self.in_worker = worker is not None
        # [slot, count] when the controller deals the items (session/deal.py): no claims needed
        self.dealt: list[int] | None = worker.get(DEAL_INPUT) if worker else None
        self.run_id = worker["ambigqa_run"] if worker and "ambigqa_run" in worker else uuid.uuid4().hex
        self._temporary_cache: Path | None = None
        self.executor = cfg.executor  # where the system's calls (and placed models) run
        self.tracer: Tracer = NO_TRACER  # --ambig-otel (session/tracing.py opens it)
        self.cache_dir = self._choose_cache_dir()
        self.judge = self._judge()
        if cfg.models.judge_batch is not None and self.judge is None:
            raise pytest.UsageError("--ambig-judge-batch: batch judging needs a judge (--ambig-judge)")
        self.scorers = Scorers(
            reader=self._reader(),
            judge=self.judge,
            settings=cfg.settings,
            profile=PROFILES[cfg.profile],
            metrics=frozenset(cfg.metrics) if cfg.metrics is not None else None,
        )
        self.rescore = None
        if cfg.rescored is not None:
            try:
                self.rescore = load_saved(cfg.rescored)
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                where = cfg.rescore or Path("--ambig-rescore")  # rescored is read from rescore
                raise pytest.UsageError(f"--ambig-rescore: {ScorecardError(where, str(exc))}") from None
        self.protocol = PROTOCOLS[cfg.protocol].configured(cfg.protocol_options, self.judge)
        pools: list[tuple[AmbigItem, ...]] = []  # every item of each file: the corpus ignores --ambig-limit
        self.loaded = [self._load(name, pools) for name in cfg.suites]
        self.sample: Sample | None = None  # --ambig-sample: what was drawn, for the scorecard's weights
        if cfg.sample is not None:
            self._draw(cfg.sample)
        if self.rescore is not None:
            self._check_rescored(pools)
        self.items: list[AmbigItem] = [item for suite in self.loaded for item in suite.items]
        self.stop: StopSignal | None = None  # --ambig-sequential: the controller's decision to stop
        if cfg.gates.sequential is not None:
            from .sequential import StopSignal, seeded_order

            self.items = seeded_order(self.items, cfg.seed)
            self.stop = StopSignal(self.cache_dir, self.run_id, self.in_worker)
        self.by_key = {item.key: item for item in self.items}
        self.corpus = self._corpus([item for pool in pools for item in pool])
        # each suite's own passages, which the default corpus is made of (a search for its items)
        self._own_passages = {
            loaded.suite.name: sum(len(item.passages) for item in pool)
            for loaded, pool in zip(self.loaded, pools, strict=True)
        }
        if not self.in_worker:  # each process loads the data; one says what was repaired
            for problem in (*(r for s in self.loaded for r in s.repairs), *self.corpus.repairs):
                config.issue_config_time_warning(AmbigQAWarning(problem), stacklevel=2)
        self._retriever: Retriever | None = None
        self._promised: dict[tuple[str, tuple[str, ...]], str] = {}
        self._retriever_error: str | None = None
        self._lock = threading.Lock()
        if self.rescore is not None and cfg.rescore is not None:
            self.default_system = self.rescore.system(cfg.rescore)
        else:
            search_dir = Path(config.invocation_params.dir)
            spec = cfg.system or "lexical"
            here = self.executor.constructs is None  # else only read: the executor's workers build it
            try:
                local = load_system(spec, search_dir, self._llm_client, construct=here)
            except UsageError as exc:
                raise pytest.UsageError(str(exc)) from None
            self.executor.setup(spec, search_dir, cfg.concurrency)
            self.default_system = self.executor.through(local)
        self.system_is_default = cfg.system is None and self.rescore is None
        if cfg.retrieval.report:  # an option's own conflict first
            self.check_retriever_for(None)
        # a conftest's ambig_system fixture is the run's system: checked when a test first asks
        if self.rescore is None and not (self.system_is_default and _fixture_system(config)):
            no_evidence = self.evidence_problem(self.default_system)
            if no_evidence:
                raise pytest.UsageError(no_evidence)
        self.check_retriever_for(self.default_system)
        report = cfg.report_dir
        if isinstance(report, Path) and report.exists() and not report.is_dir():
            raise pytest.UsageError(f"--ambig-report: {cfg.report_dir} exists and is not a directory")

    def _load(self, name: str, pools: list[tuple[AmbigItem, ...]]) -> LoadedSuite:
        data = self.cfg.data.get(name)
        worker = getattr(self.config, "workerinput", None) or {}
        pinned = worker.get(HUB_INPUT, {}).get(name)
        if pinned is not None:  # an xdist worker reads the commit the controller resolved, from the cache
            data = parse_hub(pinned)
        options = LoadOptions(self.cfg.loader, offline=pinned is not None)
        # Tens of thousands of items, none cyclic: the cycle collector walked the growing heap
        # again and again while they were made (a third of a 20,000-item load, issue 44).
        collecting = gc.isenabled()
        gc.disable()
        try:
            loaded = SUITES[name].load(data, options)
        except DataError as exc:
            raise pytest.UsageError(f"--ambig-data ({name}): {exc}") from None
        finally:
            if collecting:
                gc.enable()
        pools.append(loaded.items)
        items = loaded.items
        if self.rescore is not None:
            items = tuple(i for i in items if i.key in self.rescore.answers)
        if self.cfg.limit is not None:
            items = stratified_sample(items, self.cfg.limit, self.cfg.seed)
        items = self.protocol.expand(items)
        if self.cfg.shard is not None:
            items = shard(items, *self.cfg.shard)
        return dataclasses.replace(loaded, items=items)

    def pinned_data(self) -> dict[str, str]:
        """Each hf:// source at the commit this process read: what xdist workers read, and the
        URL that repeats the run exactly."""
        return {
            s.suite.name: s.source
            for s in self.loaded
            if isinstance(self.cfg.data.get(s.suite.name), HubRef) and s.revision
        }

    def _draw(self, asked: int | float) -> None:
        """Keep the stratified sample of every selected suite's items (``suites/sample.py``)."""
        try:
            chosen, self.sample = draw([i for s in self.loaded for i in s.items], asked, self.cfg.seed)
        except ValueError as exc:
            raise pytest.UsageError(f"--ambig-sample={asked}: {exc}") from None
        keys = {item.key for item in chosen}
        self.loaded = [
            dataclasses.replace(s, items=tuple(i for i in s.items if i.key in keys)) for s in self.loaded
        ]

    def _check_rescored(self, pools: list[tuple[AmbigItem, ...]]) -> None:
        """Every selected suite must find its items among the saved answers: a rescore of
        none of them would end in "no tests ran", one of some suites drop the others unsaid."""
        assert self.rescore is not None
        saved: dict[str, int] = {}
        for result in self.rescore.answers.values():
            saved[result.suite] = saved.get(result.suite, 0) + 1
        held = ", ".join(f"{name} ({n} answers)" for name, n in saved.items()) or "no answers"
        where = f"--ambig-rescore: {self.cfg.rescore} holds {held}"
        for loaded, pool in zip(self.loaded, pools, strict=True):
            name = loaded.suite.name
            if name not in saved:
                raise pytest.UsageError(f"{where}, none for the selected suite {name}")
            if not any(item.key in self.rescore.answers for item in pool):
                raise pytest.UsageError(
                    f"{where}, but none of its {name} answers is for an item of {loaded.source} "
                    "(the saved run read other data: give it with --ambig-data)"
                )

    def context(self) -> Context:
        """What evaluating an item needs of this run (the evaluator gets nothing else)."""
        cfg = self.cfg
        return Context(
            scorers=self.scorers,
            protocol=self.protocol,
            corpus=self.corpus,
            retriever=self.retriever,
            searchable=self.searchable,
            promised=self.promised,
            retrieval=cfg.retrieval,
            settings=cfg.settings,
            scoring=self._scoring_fingerprint(),
            run_id=self.run_id,
            replaying=self.rescore is not None,
            claims=cfg.concurrency > 1 and self.in_worker and self.dealt is None,
            resume=cfg.resume,
            timeout=cfg.timeout,
            rate=cfg.rate,
            repeats=cfg.repeats,
            tracer=self.tracer,
        )

    def _scoring_fingerprint(self) -> str:
        """What, besides the item and the answer, decides an item's scores: a resumed run
        reuses a stored score only when this is unchanged (issue 27). The scoring code as
        installed (every module of the package and of the registered suites and metrics, by
        size and time), the metrics and profile, the suites' settings, the seed, and the judge
        and reader by identity (a local reader by its files)."""
        cfg, reader = self.cfg, self.scorers.reader
        models = cfg.models
        judge = None
        if self.judge is not None:
            judge = [models.judge, models.judge_urls() or "", models.judge_samples]
            if len(self.judge.clients) > 1:
                judge.append(models.judge_panel)  # the disagreement flagged is no score's
        read: Any = None
        if isinstance(reader, LLMReader):
            read = "llm"
        elif reader is not None:  # a local model, wherever it runs (that changes no score)
            read = [_stamp([reader.path]), cfg.device]
        parts = {
            "code": _stamp(_scoring_modules()),
            "metrics": sorted(cfg.metrics) if cfg.metrics is not None else None,
            "profile": cfg.profile,
            "settings": sorted(cfg.settings.items()),
            "seed": cfg.seed,
            "judge": judge,
            "reader": read,
        }
        return json.dumps(parts, sort_keys=True)

    # -- models -------------------------------------------------------------------------

    def _judge(self) -> Judge | None:
        settings = self.cfg.models.judge_settings(self.cfg.seed)
        if not settings:
            return None
        needs = ["openai"]
        if PROTOCOLS[self.cfg.protocol].judges_suites:  # else the judge model is a user: the client only
            needs += sorted({need for name in self.cfg.suites for need in SUITES[name].judge_packages})
        missing = [m for m in needs if importlib.util.find_spec(m) is None]
        if missing:
            raise pytest.UsageError(
                f"--ambig-judge needs {', '.join(missing)}: pip install 'pytest-ambigqa[judge]'"
            )
        models = self.cfg.models
        return Judge(
            settings,
            self.cache_dir,
            samples=models.judge_samples,
            panel=models.judge_panel,
            disagreement=models.judge_disagreement,
        )

    def _llm_client(self) -> ChatClient | None:
        """The client of the ``llm:<method>`` systems: the judge's limits, with its own model,
        cache file and price, sized for ``--ambig-concurrency`` items at once."""
        settings = self.cfg.models.llm_settings(self.cfg.seed, self.cfg.concurrency)
        if settings is None:
            return None
        return ChatClient(settings, CallCache(self.cache_dir / LLM_CACHE_FILE, "model"))

    def _reader(self) -> Reader | None:
        spec = self.cfg.reader
        reads = {METRICS[m].needs for name in self.cfg.suites for m in SUITES[name].reported()}
        if spec is None or "reader" not in reads:
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
        reader = HFReader(path, PROFILES[self.cfg.profile].reader, self.cfg.device)
        if "reader" in self.executor.models:  # its device is the executor's to check, where it runs
            return self.executor.place_reader(reader, self.cfg.concurrency)
        self._check_device("reader")
        return reader

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

    def device_used(self) -> dict[str, str]:
        """Where the local models ran (what ``--ambig-device=auto`` chose), when this process
        ran them; every process of a run on one machine picks alike. torch is never imported
        for it: an xdist controller whose workers ran the models records nothing."""
        placed = self.executor.device_used()  # the executor's, where it ran the reader
        if placed is not None:
            return placed
        reader = self.scorers.reader
        searched = self.cfg.retrieval
        embeds = searched.searches and retrieval.RETRIEVERS[searched.retriever].embeds
        if not isinstance(reader, HFReader) and not embeds:
            return {}
        if "torch" not in sys.modules:
            return {}
        try:
            device = reader.device if isinstance(reader, HFReader) else pick_device(self.cfg.device)
            return {"device_used": device}
        except (DeviceUnavailable, ImportError):
            return {}

    # -- retrieval ----------------------------------------------------------------------

    def _corpus(self, items: list[AmbigItem]) -> Corpus:
        if self.cfg.retrieval.corpus is None:
            return suite_corpus(items, self.cfg.suites)
        try:
            return load_corpus(self.cfg.retrieval.corpus)
        except DataError as exc:
            raise pytest.UsageError(f"--ambig-corpus: {exc}") from None

    @property
    def searchable(self) -> bool:
        """Whether a system that declares ``retriever`` gets one: a retriever over a non-empty corpus."""
        return self.cfg.retrieval.searches and len(self.corpus) > 0

    def searchable_for(self, loaded: LoadedSuite) -> bool:
        """Whether the retriever can find a suite's evidence: a corpus given, or the suite's own
        file has passages (the default corpus is the selected suites' passages: another
        suite's are no evidence for its items)."""
        if not self.searchable:
            return False
        return self.cfg.retrieval.corpus is not None or self._own_passages.get(loaded.suite.name, 0) > 0

    def check_retriever_for(self, system: System | None) -> None:
        """Fail early when a retriever is needed (by ``system``, or the report if None) but unusable."""
        if system is not None and "retriever" not in system.inputs:
            return
        who = f"the system '{system.label}'" if system else "--ambig-retrieval-report"
        required = system is None or system.requires_retriever
        if not self.cfg.retrieval.searches:
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
        problem = retrieval.unavailable(self.cfg.retrieval.retriever, self.cfg.retrieval.embedder)
        if problem:
            raise pytest.UsageError(f"{who}: {problem}")
        if retrieval.RETRIEVERS[self.cfg.retrieval.retriever].embeds and not self._embeds_remotely:
            self._check_device("dense embedder")

    @property
    def _embeds_remotely(self) -> bool:
        return "embedder" in self.executor.models

    def _placed_embedder(self, path: Path, device: str) -> Any:
        """The dense retriever's embedder where the executor runs it (``--ambig-ray-models``)."""
        return self.executor.place_embedder(path, device, self.cfg.concurrency)

    def retriever(self) -> Retriever | None:
        """The configured retriever, opened (or built once per machine) on first use.

        If it cannot be opened, every item that needs it errors with the same one-line reason.
        """
        with self._lock:
            if self._retriever is None and self.cfg.retrieval.searches:
                if self._retriever_error is None:
                    try:
                        self._retriever = retrieval.open_retriever(
                            self.cfg.retrieval.retriever,
                            self.corpus,
                            self.cache_dir,
                            self.cfg.retrieval.embedder,
                            self.cfg.device,
                            self._placed_embedder if self._embeds_remotely else None,
                        )
                    except Exception as exc:  # noqa: BLE001 - a model or index that will not load: say so, once per item
                        self._retriever_error = f"{type(exc).__name__}: {exc}"
                if self._retriever is None:
                    raise RetrieverUnavailable(
                        f"cannot open the {self.cfg.retrieval.retriever} retriever: {self._retriever_error}"
                    )
            return self._retriever

    def corpus_used(self) -> dict[str, Any]:
        """What a retriever searched, by fingerprint, so that a comparison can tell two
        corpora apart (card/compare.py); nothing when no retriever was offered."""
        if not self.searchable:
            return {}
        corpus = self.corpus
        return {
            "retrieval_corpus": {"source": corpus.source, "passages": len(corpus), "sha256": corpus.sha256}
        }

    def retrieval_info(self) -> dict[str, Any] | None:
        if not self.cfg.retrieval.report:
            return None
        return {
            "retriever": self.cfg.retrieval.retriever,
            "k": self.cfg.retrieval.top_k,
            "corpus": self.corpus.source,
            "passages": len(self.corpus),
            "embedder": self.cfg.retrieval.embedder,
        }

    # -- systems and protocols ----------------------------------------------------------

    def evidence_problem(self, system: System) -> str | None:
        """Why ``system`` cannot have, on a selected suite, the evidence its protocol promises
        (None: it can, or it reads neither ``retriever`` nor ``passages`` and runs closed-book).
        A system is never run on items for which it would silently get nothing (issue 38): the
        run stops before the first item, whatever the signature's defaults."""
        reads = [name for name in ("retriever", "passages") if name in system.inputs]
        if not reads or not self.protocol.needs_evidence or system.endpoint:
            return None
        for loaded in self.loaded:
            if not loaded.items:
                continue
            setup = self._protocol(loaded, system.inputs)
            if setup.evidence == "none" or self._gets_evidence(loaded, system.inputs):
                continue
            suite, protocol_name = loaded.suite, setup.label.partition(":")[0]
            declared = " and ".join(f"`{name}`" for name in reads)
            why = []
            if "passages" in reads and any(item.passages for item in loaded.items):
                why.append(f"the {protocol_name} protocol hands over none of {loaded.source}'s passages")
            elif "passages" in reads:
                why.append(f"{loaded.source} gives its items no passages")
            if "retriever" in reads:
                if not self.cfg.retrieval.searches:
                    why.append("--ambig-retriever=none")
                elif self.cfg.retrieval.corpus is not None:
                    why.append(f"the corpus {self.cfg.retrieval.corpus} has no passages")
                else:
                    none = "" if "passages" in reads else f"{loaded.source} has no passages to search and "
                    why.append(
                        f"{none}no corpus was given (--ambig-corpus=PATH: JSON Lines of id, title, text)"
                    )
            else:
                why.append("a corpus (--ambig-corpus) reaches a system only through a `retriever` parameter")
            hint = f"; {suite.evidence_hint}" if suite.evidence_hint else ""
            return (
                f"{suite.title}: the system '{system.label}' reads {declared}, but this run has no "
                f"evidence to give it under the {protocol_name} protocol: "
                f"{'; '.join(why)}{hint}. A system that declares neither runs closed-book"
            )
        return None

    def _protocol(self, loaded: LoadedSuite, inputs: Sequence[str]) -> Setup:
        """The suite's published protocol for a system of these inputs, before the run's notes."""
        has_passages = any(item.passages for item in loaded.items)
        return loaded.suite.protocol(self.scorers, inputs, has_passages)

    def promised(self, suite: str, inputs: Sequence[str]) -> str:
        """What the suite's protocol promises each item for a system of these inputs
        (``Setup.evidence``), known once per suite and inputs."""
        key = (suite, tuple(inputs))
        if key not in self._promised:
            loaded = next(s for s in self.loaded if s.suite.name == suite)
            self._promised[key] = self._protocol(loaded, inputs).evidence
        return self._promised[key]

    def _gets_evidence(self, loaded: LoadedSuite, inputs: Sequence[str]) -> bool:
        """Whether a system of these inputs gets any evidence for the suite's items."""
        suite = loaded.suite
        given = suite.inputs(loaded.items[0], self.scorers)
        if "retriever" in inputs and given.get("retriever", True) is not None and self.searchable_for(loaded):
            return True
        return "passages" in inputs and any(
            suite.inputs(item, self.scorers)["passages"] for item in loaded.items
        )

    def received(self, loaded: LoadedSuite, inputs: Sequence[str]) -> tuple[str, ...]:
        """What a system of these inputs is given for the suite's items on this run, one
        phrase an input (the scorecard's ``receives:`` line)."""
        suite, out = loaded.suite, ["question"]
        given = suite.inputs(loaded.items[0], self.scorers) if loaded.items else {}
        if "retriever" in inputs:
            if given.get("retriever", True) is None:
                out.append("retriever: none (the setting gives no evidence)")
            elif self.searchable_for(loaded):
                corpus = self.corpus
                where = corpus.source if self.cfg.retrieval.corpus is not None else "the suites' own files"
                out.append(
                    f"retriever: {self.cfg.retrieval.retriever} over {len(corpus):,} passages ({where})"
                )
            else:
                out.append("retriever: none")
        if "passages" in inputs:
            items = {self.protocol.base_key(item): item for item in loaded.items}.values()  # not episodes
            counts = [len(suite.inputs(item, self.scorers)["passages"]) for item in items]
            given_any = [n for n in counts if n]
            if not given_any:
                out.append("passages: none")
            else:
                low, high = min(given_any), max(given_any)
                each = f"{low}" if low == high else f"{low}–{high}"
                short = len(counts) - len(given_any)
                none = f" ({short} item has none)" if short == 1 else f" ({short} items have none)"
                out.append(f"passages: the data file's, {each} per item" + (none if short else ""))
        if "conditions" in inputs and any(item.conditions for item in loaded.items):
            gold = any(suite.inputs(item, self.scorers)["conditions"] for item in loaded.items)
            out.append("conditions: the gold conditions" if gold else "conditions: none")
        if "item" in inputs:
            out.append("item: the gold item")
        return tuple(out)

    def describe(self, system: System) -> dict[str, Any]:
        # what any suite's setting fills from the gold item (every registered suite's, as its setting is)
        gold = tuple(dict.fromkeys(i for suite in SUITES.values() for i in suite.gold_inputs(self.scorers)))
        if self.rescore is not None and system is self.default_system:  # what the saved run's system read
            system = dataclasses.replace(system, inputs=self.rescore.inputs)
        return system.describe(gold) | {"default": self.system_is_default and system is self.default_system}

    def setup(self, loaded: LoadedSuite, inputs: list[str]) -> Setup:
        """The suite's protocol for this run, with what the system received, and what makes it
        an upper bound or easier."""
        suite = loaded.suite
        protocol = self._protocol(loaded, inputs)
        notes, easier = list(protocol.notes), None
        if "retriever" in inputs and self.searchable_for(loaded) and self.cfg.retrieval.corpus is None:
            note = suite.own_corpus_note(protocol, len(self.corpus))
            if note:
                notes.append(note)
                easier = (
                    "the retriever searches the suites' own files, not the papers' corpus (--ambig-corpus)"
                )
        if self.cfg.metrics is not None:
            left = [m for m in self.protocol.metrics(suite) if m not in self.cfg.metrics]
            if left:
                notes.append(f"not computed (--ambig-metrics): {', '.join(left)}")
        upper = protocol.upper_bound
        if "item" in inputs:
            upper = "the system reads the gold item (it declares `item`)"
        received = self.received(loaded, inputs) if self.rescore is None else self._saved_received(suite.name)
        protocol = dataclasses.replace(
            protocol, upper_bound=upper, notes=tuple(notes), received=received, easier=easier
        )
        return self.protocol.setup(protocol)

    def _saved_received(self, suite: str) -> tuple[str, ...]:
        """Under ``--ambig-rescore``, what the saved run's system received (its scorecard's)."""
        saved = self.cfg.rescored or {}
        for card in saved.get("suites") or ():
            if isinstance(card, dict) and card.get("name") == suite:
                return tuple(str(r) for r in (card.get("protocol") or {}).get("received") or ())
        return ()

    # -- the cache ----------------------------------------------------------------------

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

    def close(self) -> None:
        """The executor's workers (Ray's actors, a cluster of its own) and a temporary cache
        made for this run go with it."""
        self.executor.close()
        if self._temporary_cache is not None:
            shutil.rmtree(self._temporary_cache, ignore_errors=True)


def _fixture_system(config: pytest.Config) -> bool:
    """Whether a conftest (or another plugin) defines an ``ambig_system`` fixture, which
    replaces the default system: its evidence is checked when a test first asks for it.
    This plugin's own is in the class its module registers (``plugin._session_fixtures``)."""
    ours = "pytest_ambigqa.plugin"
    return any(
        ours not in (getattr(plugin, "__name__", None), getattr(plugin, "__module__", None))
        and getattr(plugin, "ambig_system", None) is not None
        for plugin in config.pluginmanager.get_plugins()
    )


def _scoring_modules() -> list[Path]:
    """The files whose code can change a score: the package's, and those of the suites and
    metrics registered from other packages."""
    objects = [*SUITES.values(), *(spec.scorer for spec in METRICS.values() if spec.scorer is not None)]
    files = {Path(__file__).resolve().parent.parent}
    for obj in objects:
        module = sys.modules.get(getattr(obj, "__module__", None) or type(obj).__module__)
        if module is not None and getattr(module, "__file__", None):
            files.add(Path(module.__file__).resolve())  # type: ignore[arg-type]
    return sorted(files)


def _stamp(paths: list[Path]) -> list[tuple[str, int, int]]:
    """Each file under ``paths`` (files or directories) by path, size and modification time:
    a change of any is a new stamp (a copy with the same content is too, which only costs a
    rescore)."""
    stamps = []
    for path in paths:
        found = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for file in found:
            if file.suffix in (".pyc", ".pyo"):
                continue
            try:
                st = file.stat()
            except OSError:
                continue
            stamps.append((str(file), st.st_size, st.st_mtime_ns))
    return stamps


def _unwritable(directory: Path) -> str | None:
    """Why ``directory`` cannot hold the plugin's files, or None if it can (raises OSError too)."""
    directory.mkdir(parents=True, exist_ok=True)
    if not os.access(directory, os.W_OK | os.X_OK):
        return "permission denied"
    probe = directory / f".probe-{os.getpid()}-{threading.get_ident()}"
    probe.write_bytes(b"")
    probe.unlink()
    return None
