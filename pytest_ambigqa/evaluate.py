"""One item, end to end, with no pytest inside: the inputs its suite's protocol gives, the
system's answer (stored, claimed across xdist workers, rate-limited), and its scores; what
it needs of the run is a small :class:`Context`, not the run.

:meth:`Evaluator.prepare` is the pool's first stage (ask the system) and returns its second
(score the answer), so a run with ``--ambig-concurrency`` scores while it asks; with a
scoring pool (``store/scoring.py``, :attr:`Evaluator.offload`) the pure scorers of each
answer start on a worker process as soon as it arrives.
"""

from __future__ import annotations

import dataclasses
import json
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from .errors import RetrieverUnavailable, SystemFailure
from .metrics import METRICS
from .metrics.spec import Scored
from .models.usage import Usage
from .output import clean, excerpt, json_text
from .readback import finite
from .retrieval.evidence import evidence_recall
from .schema import EVIDENCE_SHORT, AmbigItem, Answer, ItemResult
from .store import SharedStore, answer_key, score_key
from .store.pool import Scoring
from .suites import SUITES
from .systems import System
from .systems.call import TRIAL
from .telemetry import NO_TRACER, Tracer, gen_ai_messages

if TYPE_CHECKING:
    from .protocols.base import Protocol
    from .retrieval import Retriever
    from .retrieval.config import RetrievalConfig
    from .retrieval.corpus import Corpus
    from .store.scoring import ScoringPool
    from .suites import Scorers

ACTION_KEY = "ambigqa.action"  # a turn's action, stored in its answer's metadata
# What a stored score keeps of its result: the answer, timing and evidence are this run's.
_SCORED = (
    *("suite", "item_id", "status", "ambiguity_type", "index"),
    *("scores", "unscored", "samples", "units", "details", "usage", "panel"),
)


class Asked(NamedTuple):
    """What asking the system for one answer gave: the answer, or the error and the system's
    traceback; whether it came from the store; and, when it failed, what its model calls
    cost (``SystemFailure.calls``), kept with the error (issue 25: an errored item keeps its calls)."""

    answer: Answer | None
    error: str
    trace: str | None
    cached: bool
    calls: dict[str, Any] | None = None


@dataclass(frozen=True)
class Context:
    """What evaluating an item needs of its run (``Run.context`` makes it): how it scores,
    which protocol, the evidence, and how answers are asked and stored."""

    scorers: Scorers
    protocol: Protocol
    corpus: Corpus
    retriever: Callable[[], Retriever | None]  # opened on first use; raises RetrieverUnavailable
    searchable: bool  # a system that declares ``retriever`` gets one
    promised: Callable[[str, Sequence[str]], str]  # (suite, a system's inputs) -> Setup.evidence
    retrieval: RetrievalConfig
    settings: Mapping[str, str]  # each suite's setting: part of what shapes an answer
    scoring: str  # the scorers' fingerprint (``Run._scoring_fingerprint``): part of a stored score's key
    run_id: str
    replaying: bool  # --ambig-rescore: the saved answers, no system asked
    claims: bool  # several processes of one run may ask for an item: claim it first
    resume: bool
    timeout: float | None
    rate: float | None
    repeats: int = 1  # --ambig-repeats: trials per item, each asked and stored under its own index
    tracer: Tracer = NO_TRACER  # --ambig-otel: an item's span, its calls' and its evaluation events


class Evaluator:
    def __init__(self, context: Context, store: SharedStore) -> None:
        self.context = context
        self.scorers = context.scorers
        self.store = store
        self._lock = threading.Lock()
        self.unreadable = 0  # stored rows this process could not read back, and asked again
        self._fingerprints: dict[bool, str] = {}  # _config_fingerprint, by whether the system searches
        self.offload: ScoringPool | None = None  # the scoring pool of the items evaluated ahead
        self.asking: Callable[[], None] | None = None  # told when a system is asked (not the store)
        self.ready: Callable[[], None] | None = None  # waits for the heavy imports begun in the background

    def evaluate(self, item: AmbigItem, system: System) -> ItemResult:
        scoring = self.prepare(item, system)
        return scoring if isinstance(scoring, ItemResult) else scoring()

    def prepare(self, item: AmbigItem, system: System) -> Scoring:
        """Ask the system (the pool's first stage); what is returned scores the answer (its second).
        With a tracer, both stages run within the item's span, which ends with its result."""
        tracer = self.context.tracer
        if not tracer.enabled:
            return self._prepare(item, system)
        span = tracer.item(item)
        try:
            with tracer.within(span):
                scoring = self._prepare(item, system)
        except BaseException:
            span.end()
            raise
        if isinstance(scoring, ItemResult):
            return tracer.finished(span, scoring)

        def scored() -> ItemResult:
            try:
                with tracer.within(span):
                    result = scoring()
            except BaseException:
                span.end()
                raise
            return tracer.finished(span, result)

        return scored

    def _prepare(self, item: AmbigItem, system: System) -> Scoring:
        run, suite = self.context, SUITES[item.suite]
        extras = suite.inputs(item, run.scorers)

        def failed(reason: str) -> ItemResult:
            return run.protocol.failed(suite, item, run.scorers, "error", reason)

        try:
            if "retriever" in system.inputs and "retriever" not in extras and run.searchable:
                extras["retriever"] = run.retriever()
            evidence = None
            searched = run.retriever() if run.retrieval.report else None
            if searched is not None:
                evidence = evidence_recall(item, run.corpus, searched, run.retrieval.top_k)
        except RetrieverUnavailable as exc:
            return failed(str(exc))
        if system.requires_retriever and extras.get("retriever", True) is None:
            return failed(f"the system requires a retriever, and the {suite.title} setting gives none")
        short = _evidence_short(run.promised(item.suite, system.inputs), system.inputs, extras)
        if run.repeats == 1:
            return _noting_short(run.protocol.ask(self, item, system, extras, evidence), short)
        asked = [
            run.protocol.ask(self, item, system, extras | {TRIAL: t}, evidence) for t in range(run.repeats)
        ]
        if all(isinstance(a, ItemResult) for a in asked):
            return _noting_short(combine_trials(asked), short)  # type: ignore[arg-type]
        return _noting_short(
            lambda: combine_trials([a if isinstance(a, ItemResult) else a() for a in asked]), short
        )

    def single(self, item: AmbigItem, system: System, extras: dict[str, Any], evidence: Any) -> Scoring:
        """Ask for one answer and score it (the single-shot protocol's test)."""
        suite = SUITES[item.suite]
        started = time.perf_counter()
        asked = self.answer(item, system, extras)
        duration = time.perf_counter() - started
        answer = asked.answer
        if answer is None:
            unanswered = suite.failed_result(item, self.scorers, "error", asked.error, duration)
            details = unanswered.details | ({"calls": asked.calls} if asked.calls else {})
            return dataclasses.replace(
                unanswered, evidence=evidence, cached=asked.cached, trace=asked.trace, details=details
            )
        key = score_key(item, json.dumps(answer.to_dict(), sort_keys=True), self.context.scoring)
        if asked.cached and self.context.resume:
            reused = self._reused(key, item, answer, duration, evidence)
            if reused is not None:
                return reused  # nothing to score: never sent to a scoring worker
        if self.offload is not None:
            self.offload.submit(suite, item, answer)
        return lambda: self._kept(key, self._score(item, answer, duration, evidence, asked.cached))

    def _reused(
        self, key: str, item: AmbigItem, answer: Answer, duration: float, evidence: Any
    ) -> ItemResult | None:
        """The scores stored for this answer under the same scorers, or None: a resumed run
        whose answers and scoring are unchanged computes nothing again (issue 27). Model calls
        are not made again either, so their usage counts as the cache's."""
        stored = self.store.run(lambda store: store.scored(key))
        if stored is None or stored[0] != "ok":
            return None
        data = stored[1]
        usage = data.get("usage")
        if usage:
            calls = usage.get("cached", 0) + usage.get("requests", 0) - usage.get("reasks", 0)
            usage = Usage(cached=calls, fingerprints=usage.get("fingerprints", [])).to_dict()
        result = ItemResult.from_dict(data | {"usage": usage})
        return dataclasses.replace(
            result, answer=answer, duration=duration, evidence=evidence, cached=True, reused=True
        )

    def _kept(self, key: str, result: ItemResult) -> ItemResult:
        """``result``, its scores stored for a later resume when they can stand for this answer
        again: an item scored in full, or whose only missing scores need a model the run does
        not have (a judge or reader that failed now may answer then)."""
        if result.status == "ok" and not any(
            (need := getattr(METRICS.get(m), "needs", None)) and getattr(self.scorers, need) is not None
            for m in result.unscored
        ):
            record = result.to_dict()
            kept = {k: record[k] for k in _SCORED if k in record}
            text = json_text(kept)  # scrubbed: no echoed key reaches the disk
            self.store.run(lambda store: store.put_scores(key, text))
        return result

    def _score(
        self, item: AmbigItem, answer: Answer, duration: float, evidence: Any, cached: bool
    ) -> ItemResult:
        suite, scorers = SUITES[item.suite], self.scorers
        if self.ready is not None:
            self.ready()
        try:
            done = self.offload.done(item, answer) if self.offload is not None else None
            scored = suite.score(item, answer, scorers, done) if done else suite.score(item, answer, scorers)
        except Exception as exc:  # noqa: BLE001 - a scorer bug: this item says so, the run goes on
            error = f"scoring failed: {type(exc).__name__}: {excerpt(exc, 300)}"
            failed = suite.failed_result(item, scorers, "error", error, duration)
            return dataclasses.replace(failed, answer=answer, evidence=evidence, cached=cached)
        scored = _finite(scored)
        keep = scorers.keep
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
            panel=keep(scored.panel),
            details=scored.details,
            usage=scored.usage,
            index=item.index,
            cached=cached,
        )

    def answer(
        self,
        item: AmbigItem,
        system: System,
        extras: dict[str, Any],
        allowed: tuple[str, ...] | None = None,
        keyed: Sequence[str] = (),
    ) -> Asked:
        """Each item is asked once per run across processes. ``allowed``: one turn of a
        protocol's episode (``System.turn``), whose action the answer's metadata carries under
        ``ACTION_KEY`` (stored with it); ``keyed``: the ``extras`` that shape the answer beyond
        the run's inputs (a turn's history, costs and actions), part of its key."""
        cfg, run_id = self.context, self.context.run_id
        if cfg.replaying:  # saved answers, no system at all
            return self._asked(item, system, lambda: system.answer(item, cfg.timeout, extras))._replace(
                cached=True
            )
        fingerprint = self._config_fingerprint(system)
        if keyed:
            fingerprint += json.dumps({k: extras[k] for k in keyed}, sort_keys=True)
        if extras.get(TRIAL):  # trial 0 is the item's answer of a run without repeats
            fingerprint += f"\x1ftrial {extras[TRIAL]}"
        key = answer_key(system.label, fingerprint, item)
        # Only the pools of xdist workers (several processes, one run) can race for an item: claim it.
        pools = cfg.claims
        unreadable = False  # a stored row that cannot be read back counts as absent
        while pools or cfg.resume:
            stored = self.store.run(lambda store: store.done(key, run_id, cfg.resume))
            if stored is not None and stored[0] == "unreadable":
                unreadable = True
                if not stored[2]:  # this run's own row: no claim can replace it, ask now
                    break
                stored = None
            if stored is not None:  # "from the store" means from an earlier run, not another worker
                state, payload, earlier = stored
                if state == "ok":
                    return Asked(Answer.from_dict(payload), "", None, earlier)
                return Asked(None, payload["error"], None, earlier, payload["calls"])
            if not pools or self.store.run(lambda store: store.claim(key, run_id), default=True):
                break
            time.sleep(0.02)  # another process is asking; its answer will be stored
        if unreadable:  # counted by the process that asks again, once
            with self._lock:
                self.unreadable += 1
        if self.asking is not None:
            self.asking()
        if cfg.rate:
            rate = cfg.rate
            time.sleep(self.store.run(lambda store: store.reserve_slot(rate), default=0.0))
        if allowed is None:
            asked = self._asked(item, system, lambda: system.answer(item, cfg.timeout, extras))
        else:
            asked = self._asked(
                item, system, lambda: _with_action(*system.turn(item, cfg.timeout, extras, allowed))
            )
        answer = asked.answer
        payload = answer.to_dict() if answer else {"error": asked.error, "calls": asked.calls}
        self.store.run(lambda store: store.put(key, run_id, "ok" if answer else "error", payload))
        return asked

    def _asked(self, item: AmbigItem, system: System, call: Callable[[], Answer]) -> Asked:
        """The system's call, within its span when traced: ``invoke_agent`` with the system as
        the agent (the GenAI conventions' gen-ai-agent-spans.md); the question and the answer
        only with ``--ambig-otel-content``."""
        tracer = self.context.tracer
        if not tracer.enabled:
            return _outcome(call)
        attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": system.label}
        if tracer.content:
            attributes["gen_ai.input.messages"] = gen_ai_messages("user", item.question)
        with tracer.span(f"invoke_agent {system.label}", attributes) as span:
            asked = _outcome(call)
            if asked.answer is None:
                span.fail(asked.error)
            elif tracer.content:
                span.set({"gen_ai.output.messages": gen_ai_messages("assistant", asked.answer.text)})
        return asked

    def _config_fingerprint(self, system: System) -> str:
        """What, besides the item and the system, shapes an answer: the inputs this run gives
        (the same for every item: computed once for a system that searches, once for one that
        does not)."""
        searches = "retriever" in system.inputs
        known = self._fingerprints.get(searches)
        if known is None:
            known = self._fingerprints[searches] = self._inputs_fingerprint(searches)
        return known

    def _inputs_fingerprint(self, searches: bool) -> str:
        cfg = self.context
        # each suite's setting under the key its stored answers have (Suite.stored_setting_key)
        parts: dict[str, Any] = {
            SUITES[suite].stored_setting_key: name for suite, name in cfg.settings.items()
        }
        if searches:
            retrieval = cfg.retrieval
            parts |= {
                "retriever": retrieval.retriever,
                "corpus": cfg.corpus.sha256,
                "embedder": retrieval.embedder,
            }
        return json.dumps(parts, sort_keys=True)


def _evidence_short(promised: str, inputs: Sequence[str], given: Mapping[str, Any]) -> str | None:
    """What an item lacked of the evidence its protocol promises (``Setup.evidence``): a
    system that reads passages, under a protocol that gives the data file's, and got none
    (nor a retriever to fall back on)."""
    if promised != "passages" or "passages" not in inputs:
        return None
    if given.get("retriever") is not None or given.get("passages"):
        return None
    return "no passages in the data file"


def _noting_short(scoring: Scoring, short: str | None) -> Scoring:
    """The item's result, saying what it lacked of the evidence its protocol promises
    (``details["evidence_short"]``, which the scorecard counts)."""
    if short is None:
        return scoring

    def noted(result: ItemResult) -> ItemResult:
        return dataclasses.replace(result, details=result.details | {EVIDENCE_SHORT: short})

    if isinstance(scoring, ItemResult):
        return noted(scoring)
    return lambda: noted(scoring())


def combine_trials(trials: Sequence[ItemResult]) -> ItemResult:
    """One item's result from its repeated trials (``--ambig-repeats``), each kept in ``trials``.

    A metric's score is the mean over the trials (an errored trial counts as its failed
    result does: 0 for correctness metrics), so the suite mean is the mean over items of the
    trial means, and its bootstrap resamples items, the clusters of trials; a metric some
    trial could not score (a judge that failed) is unscored for the item, with that trial's
    reason, never the mean of the others. A pooled metric pools the units of every trial. An
    item with an errored trial is an error (its test fails, the error rate counts it), its
    scores still the trials' mean."""
    trials = tuple(dataclasses.replace(r, trial=t) for t, r in enumerate(trials))
    first = trials[0]
    failed = next((t for t in trials if t.status != "ok"), None)
    names = dict.fromkeys(m for t in trials for m in (*t.scores, *t.unscored))
    scores, unscored, units = {}, {}, {}
    for m in names:
        scored = [t for t in trials if m in t.scores]
        if not scored:
            unscored[m] = next(t.unscored[m] for t in trials if m in t.unscored)
            continue
        if len(scored) < len(trials):
            t = next(t for t in trials if m not in t.scores)
            unscored[m] = f"trial {t.trial + 1} of {len(trials)}: {t.unscored.get(m, 'not scored')}"
            continue
        scores[m] = math.fsum(t.scores[m] for t in scored) / len(scored)
        if any(m in t.units for t in trials):
            units[m] = [u for t in scored for u in t.units.get(m, [t.scores[m]])]
    usage = None
    if any(t.usage for t in trials):
        total = Usage()
        for t in trials:
            if t.usage:
                total.add(Usage.from_dict(t.usage))
        usage = total.to_dict()
    return ItemResult(
        suite=first.suite,
        item_id=first.item_id,
        status="ok" if failed is None else failed.status,
        ambiguity_type=first.ambiguity_type,
        scores=scores,
        unscored=unscored,
        error=None if failed is None else f"trial {failed.trial + 1} of {len(trials)}: {failed.error}",
        trace=None if failed is None else failed.trace,
        answer=first.answer if failed is None else None,
        duration=math.fsum(t.duration for t in trials),
        evidence=first.evidence,
        units=units,
        details=(failed or first).details,
        usage=usage,
        index=first.index,
        cached=all(t.cached for t in trials),
        reused=all(t.reused for t in trials),
        trials=trials,
    )


def _finite(scored: Scored) -> Scored:
    """A value a scorer returned that is not a finite number (a plugin metric's NaN) is no
    score: the metric is unscored, saying so, and can neither drag a mean to NaN nor pass a gate."""
    bad = {
        m: v
        for m, v in scored.scores.items()
        if not (isinstance(v, (int, float)) and finite(v))
        or not all(
            finite(x)
            for x in (*scored.samples.get(m, ()), *scored.units.get(m, ()), *scored.panel.get(m, ()))
        )
    }
    if not bad:
        return scored
    return dataclasses.replace(
        scored,
        scores={m: v for m, v in scored.scores.items() if m not in bad},
        unscored=scored.unscored
        | {m: f"the scorer returned {v!r}, not a finite number" for m, v in bad.items()},
        samples={m: v for m, v in scored.samples.items() if m not in bad},
        units={m: v for m, v in scored.units.items() if m not in bad},
        panel={m: v for m, v in scored.panel.items() if m not in bad},
    )


def _with_action(action: str, answer: Answer) -> Answer:
    return dataclasses.replace(answer, metadata={**answer.metadata, ACTION_KEY: action})


def _outcome(call: Callable[[], Answer]) -> Asked:
    try:
        return Asked(call(), "", None, False)
    except SystemFailure as exc:
        return Asked(None, str(exc), exc.trace, False, clean(exc.calls, secrets=True) if exc.calls else None)
