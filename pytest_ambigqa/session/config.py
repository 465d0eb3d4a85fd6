"""One run's configuration: every room's options, read and checked by the room that owns
them (gates in ``report/gates.py``, margins in ``report/compare.py``, costs in
``protocols/interactive.py``, MARCH's fields in ``suites/march.py``, the device in
``models/local.py``), put together here into a frozen :class:`RunConfig`.

Only ``session/`` turns what is refused into pytest's usage error (``session/__init__.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from .. import options
from ..errors import ScorecardError
from ..metrics import METRICS
from ..models.local import parse_device
from ..options import refuse
from ..protocols import PROTOCOLS, suite_metrics
from ..protocols.interactive import parse_costs
from ..report.compare import Margin, parse_margins
from ..report.gates import Threshold, parse_thresholds
from ..report.saved import read_scorecard
from ..suites import SUITES
from ..suites.march import parse_fields
from ..systems import redact


@dataclass(frozen=True)
class RunConfig:
    """One run's options, checked; every field is given by :func:`read_run_config`."""

    suites: tuple[str, ...]
    data: dict[str, Path]
    split: str
    limit: int | None
    seed: int
    system: str | None
    llm_model: str | None
    llm_base_url: str | None
    llm_price: tuple[float, float] | None
    llm_temperature: float | None  # None: as each method's paper states
    llm_max_tokens: int | None  # None: as each method's paper states; 0: no limit
    timeout: float | None
    report_dir: Path | None
    metrics: tuple[str, ...] | None  # --ambig-metrics: None is every metric
    fail_under: tuple[Threshold, ...]
    gate: str
    item_min: tuple[Threshold, ...]
    max_error_rate: float | None
    march_fields: dict[str, str]
    corpus: Path | None
    retriever: str
    top_k: int
    embedder: str | None
    cache_dir: Path | None
    retrieval_report: bool
    reader: str | None
    device: str
    judge: str | None
    judge_base_url: str | None
    judge_timeout: float
    judge_retries: int
    judge_reasks: int
    judge_concurrency: int
    judge_price: tuple[float, float] | None
    judge_samples: int
    max_unscored_rate: float | None
    condambigqa_setting: str
    march_setting: str
    profile: str
    concurrency: int
    rate: float | None
    max_text: int  # the characters one text of an item's record keeps (output.bounded)
    resume: bool
    rescore: Path | None
    rescored: dict[str, Any] | None  # the scorecard.json --ambig-rescore replays, read once
    shard: tuple[int, int] | None
    shard_gates: bool
    protocol: str  # single-shot or interactive
    costs: tuple[tuple[float, float], ...]  # interactive: (alpha, beta) pairs
    clarifications: int
    user: str
    steerability: bool
    baseline: Path | None  # --ambig-baseline: read by the controller only
    fail_if_worse: tuple[Margin, ...]

    @property
    def interactive(self) -> bool:
        return self.protocol == "interactive"

    def to_dict(self) -> dict[str, Any]:
        """The configuration as reports record it (URLs redacted; keys are never in it)."""
        return {
            "suites": list(self.suites),
            "data": {k: str(v) for k, v in self.data.items()},
            "split": self.split,
            "limit": self.limit,
            "seed": self.seed,
            "system": redact(self.system) if self.system else None,
            "llm_model": self.llm_model,
            "llm_base_url": redact(self.llm_base_url) if self.llm_base_url else None,
            "llm_price": list(self.llm_price) if self.llm_price else None,
            "llm_temperature": self.llm_temperature,
            "llm_max_tokens": self.llm_max_tokens,
            "timeout": self.timeout,
            "metrics": list(self.metrics) if self.metrics is not None else None,
            "fail_under": [str(t) for t in self.fail_under],
            "gate": self.gate,
            "item_min": [str(t) for t in self.item_min],
            "max_error_rate": self.max_error_rate,
            "march_fields": dict(self.march_fields),
            "corpus": str(self.corpus) if self.corpus else None,
            "retriever": self.retriever,
            "top_k": self.top_k,
            "embedder": self.embedder,
            "retrieval_report": self.retrieval_report,
            "reader": self.reader,
            "device": self.device,
            "judge": self.judge,
            "judge_base_url": redact(self.judge_base_url) if self.judge_base_url else None,
            "judge_samples": self.judge_samples,
            "judge_price": list(self.judge_price) if self.judge_price else None,
            "max_unscored_rate": self.max_unscored_rate,
            "condambigqa_setting": self.condambigqa_setting,
            "march_setting": self.march_setting,
            "profile": self.profile,
            "concurrency": self.concurrency,
            "rate": self.rate,
            "max_text": self.max_text,
            "resume": self.resume,
            "rescore": str(self.rescore) if self.rescore else None,
            "shard": list(self.shard) if self.shard else None,
            "protocol": self.protocol,
            "costs": [list(pair) for pair in self.costs] if self.interactive else None,
            "clarifications": self.clarifications if self.interactive else None,
            "user": self.user if self.interactive else None,
            "steerability": self.steerability if self.interactive else None,
            "baseline": str(self.baseline) if self.baseline else None,
            "fail_if_worse": [str(m) for m in self.fail_if_worse],
        }


def _suites(text: str | None) -> tuple[str, ...]:
    if not text:
        return ()
    names = tuple(dict.fromkeys(n.strip().lower() for n in text.split(",") if n.strip()))
    unknown = [n for n in names if n not in SUITES]
    if unknown:
        refuse(f"--ambig-suite: unknown suite '{unknown[0]}' (valid: {', '.join(SUITES)})")
    return names


def _data(text: str | None, suites: tuple[str, ...], base: Path) -> dict[str, Path]:
    if not text:
        return {}
    head = text.partition("=")[0].strip().lower()
    if head not in SUITES:  # a bare path
        if len(suites) != 1:
            refuse(
                "--ambig-data: with several suites, name each file as SUITE=PATH "
                f"(suites: {', '.join(suites)})"
            )
        return {suites[0]: base / Path(text).expanduser()}
    data = {}
    for suite, path in options.pairs("--ambig-data", text):
        suite = suite.lower()
        if suite not in suites:
            refuse(f"--ambig-data: suite '{suite}' is not selected by --ambig-suite ({', '.join(suites)})")
        data[suite] = base / Path(path).expanduser()
    return data


def _metrics(text: str | None, suites: tuple[str, ...], protocol: str) -> tuple[str, ...] | None:
    """``--ambig-metrics``: names of the selected suites' metrics; each suite keeps at least one."""
    if not text:
        return None
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    valid = sorted({m for s in suites for m in suite_metrics(s, protocol)})
    for name in names:
        if name not in valid:
            refuse(
                f"--ambig-metrics: unknown metric '{name}' for {', '.join(suites)} "
                f"(valid: {', '.join(valid)})"
            )
    for suite in suites:
        own = suite_metrics(suite, protocol)
        if not set(names) & set(own):
            refuse(
                f"--ambig-metrics: none of {', '.join(names)} is a metric of {suite} "
                f"(its metrics: {', '.join(own)})"
            )
    return names


def _protocol(config: pytest.Config, rescore: Path | None, saved: dict[str, Any]) -> str:
    """``--ambig-protocol``, with the options only other protocols read refused, and what the
    chosen one checks of its own."""
    name = options.choice(config, "--ambig-protocol")
    if rescore is not None:
        for protocol in {PROTOCOLS[name], PROTOCOLS.get(saved.get("protocol") or "", PROTOCOLS[name])}:
            protocol.check_rescore()
    for other in PROTOCOLS.values():
        given = [o for o in other.own_options if other.name != name and options.given(config, o)]
        if given:
            refuse(f"{', '.join(given)}: only with --ambig-protocol={other.name}")
    PROTOCOLS[name].check_options(config)
    return name


def _optional(config: pytest.Config, option: str, kind: type, high: float) -> Any:
    """A number option with no default of its own (None when not given), from 0 to ``high``."""
    given = options.value(config, option)
    return options.number(option, given, kind=kind, low=0, high=high) if given else None


def _setting(config: pytest.Config, option: str, saved: dict[str, Any]) -> str:
    """A suite's setting; a rescore replays answers made under the saved run's setting."""
    choices = options.OPTIONS[option].choices or ()
    name = options.OPTIONS[option].name[len("ambig_") :]
    if saved.get(name) not in choices:
        return options.choice(config, option, choices)
    given = config.getoption(options.OPTIONS[option].name)
    if given is not None and given.strip().lower() != saved[name]:
        refuse(
            f"{option}: the answers in --ambig-rescore were made under '{saved[name]}'; "
            f"they cannot be scored as '{given.strip()}'"
        )
    return saved[name]


def _saved_card(path: Path) -> dict[str, Any]:
    """The scorecard ``--ambig-rescore`` replays: its config is this run's default (the same data)."""
    try:
        return read_scorecard(path)
    except ScorecardError as exc:
        refuse(f"--ambig-rescore: {exc}")


def refuse_without_suite(config: pytest.Config) -> None:
    """Options typed on the command line without ``--ambig-suite`` would do nothing: say so.

    Only the command line itself counts: ``addopts`` that a project sets for its ambigqa runs
    must not break its other pytest runs.
    """
    given = options.typed(config)
    if given:
        refuse(
            f"{', '.join(given)}: choose the benchmark with --ambig-suite ({', '.join(SUITES)}); "
            "without it the plugin runs nothing"
        )


def read_run_config(config: pytest.Config) -> RunConfig | None:
    """Read and check every ambigqa option; None when no suite is selected (nothing else
    is imported then)."""
    base = Path(config.invocation_params.dir)
    rescore_arg = options.value(config, "--ambig-rescore")
    rescore = base / Path(rescore_arg).expanduser() if rescore_arg else None
    card = _saved_card(rescore) if rescore else None
    saved = card["config"] if card else {}
    suites = _suites(options.value(config, "--ambig-suite") or ",".join(saved.get("suites", ())))
    if not suites:
        refuse_without_suite(config)
        return None
    gate = options.choice(config, "--ambig-gate")
    limit = options.value(config, "--ambig-limit")
    # An empty --ambig-timeout is 0, no limit (the default, 300 s, is the ini's).
    timeout = options.number(
        "--ambig-timeout", options.value(config, "--ambig-timeout") or "0", low=0, high=options.MAX_SECONDS
    )
    max_error_rate = options.value(config, "--ambig-max-error-rate")
    report = options.value(config, "--ambig-report")
    corpus = options.value(config, "--ambig-corpus")
    cache_dir = options.value(config, "--ambig-cache-dir")
    max_unscored = options.value(config, "--ambig-max-unscored-rate")
    rate = options.value(config, "--ambig-rate")
    reader = options.value(config, "--ambig-reader")
    if reader is not None and reader.lower() == "none":
        reader = None
    if reader is not None and reader.lower() == "llm" and not options.value(config, "--ambig-judge"):
        refuse("--ambig-reader=llm: the LLM reader is the judge model; set --ambig-judge")
    setting = _setting(config, "--ambig-condambigqa-setting", saved)
    march_setting = _setting(config, "--ambig-march-setting", saved)
    profile = options.choice(config, "--ambig-scorer-profile")
    retriever = options.choice(config, "--ambig-retriever")
    protocol = _protocol(config, rescore, saved)
    user = options.choice(config, "--ambig-user")
    metrics = _metrics(options.value(config, "--ambig-metrics"), suites, protocol)
    system = options.value(config, "--ambig-system")
    if system and system.lower().startswith("llm:") and not options.value(config, "--ambig-llm-model"):
        refuse(
            f"--ambig-system={system}: name the model with --ambig-llm-model (and its server with "
            "--ambig-llm-base-url)"
        )
    metrics_of = partial(suite_metrics, protocol=protocol)
    thresholds = partial(parse_thresholds, suites=suites, metrics_of=metrics_of, metrics=metrics)
    fail_under = thresholds(
        "--ambig-fail-under", options.value(config, "--ambig-fail-under"), item_scale=False
    )
    for t in fail_under:
        if METRICS[t.metric].factor == 100 and 0 < t.value <= 1:
            refuse(
                f"--ambig-fail-under: {t} is on the printed 0-100 scale (a percentage); "
                f"did you mean {t.metric}={t.value * 100:g}?"
            )
    baseline = options.value(config, "--ambig-baseline")
    margins = parse_margins(
        "--ambig-fail-if-worse", options.value(config, "--ambig-fail-if-worse"), suites, metrics_of
    )
    if margins and not baseline:
        refuse("--ambig-fail-if-worse: name the run to compare with, --ambig-baseline=SCORECARD")
    return RunConfig(
        suites=suites,
        data=_data(options.value(config, "--ambig-data"), suites, base)
        or {k: Path(v) for k, v in saved.get("data", {}).items() if k in suites},
        split=options.value(config, "--ambig-split")
        or saved.get("split")
        or options.text(config, "--ambig-split"),
        limit=options.number("--ambig-limit", limit, kind=int, low=1, high=10**9) if limit else None,
        seed=options.number(
            "--ambig-seed", options.text(config, "--ambig-seed"), kind=int, low=0, high=2**32 - 1
        ),
        system=system,
        llm_model=options.value(config, "--ambig-llm-model"),
        llm_base_url=options.value(config, "--ambig-llm-base-url"),
        llm_price=options.price("--ambig-llm-price", options.value(config, "--ambig-llm-price")),
        llm_temperature=_optional(config, "--ambig-llm-temperature", float, 2),
        llm_max_tokens=_optional(config, "--ambig-llm-max-tokens", int, 1_000_000),
        timeout=timeout or None,
        report_dir=base / Path(report).expanduser() if report else None,
        metrics=metrics,
        fail_under=fail_under,
        gate=gate,
        item_min=thresholds("--ambig-item-min", options.value(config, "--ambig-item-min"), item_scale=True),
        max_error_rate=(
            options.number("--ambig-max-error-rate", max_error_rate, low=0, high=1)
            if max_error_rate
            else None
        ),
        march_fields=parse_fields(options.value(config, "--ambig-march-fields"))
        or saved.get("march_fields", {}),
        corpus=base / Path(corpus).expanduser() if corpus else None,
        retriever=retriever,
        top_k=options.number(
            "--ambig-top-k", options.text(config, "--ambig-top-k"), kind=int, low=1, high=10_000
        ),
        embedder=options.value(config, "--ambig-embedder"),
        cache_dir=base / Path(cache_dir).expanduser() if cache_dir else None,
        retrieval_report=options.value(config, "--ambig-retrieval-report") is not None,
        reader=None if protocol == "interactive" else reader,  # an ini's reader reads no episode
        device=parse_device(options.value(config, "--ambig-device")),
        judge=options.value(config, "--ambig-judge") if protocol != "interactive" or user == "llm" else None,
        judge_base_url=options.value(config, "--ambig-judge-base-url"),
        judge_timeout=options.number(
            "--ambig-judge-timeout",
            options.text(config, "--ambig-judge-timeout"),
            low=0.001,
            high=options.MAX_SECONDS,
        ),
        judge_retries=options.number(
            "--ambig-judge-retries", options.text(config, "--ambig-judge-retries"), kind=int, low=0, high=100
        ),
        judge_reasks=options.number(
            "--ambig-judge-reasks", options.text(config, "--ambig-judge-reasks"), kind=int, low=0, high=20
        ),
        judge_concurrency=options.number(
            "--ambig-judge-concurrency",
            options.text(config, "--ambig-judge-concurrency"),
            kind=int,
            low=1,
            high=options.MAX_THREADS,
        ),
        judge_price=options.price("--ambig-judge-price", options.value(config, "--ambig-judge-price")),
        judge_samples=options.number(
            "--ambig-judge-samples", options.text(config, "--ambig-judge-samples"), kind=int, low=1, high=100
        ),
        max_unscored_rate=(
            options.number("--ambig-max-unscored-rate", max_unscored, low=0, high=1) if max_unscored else None
        ),
        condambigqa_setting=setting,
        march_setting=march_setting,
        profile=profile,
        concurrency=options.number(
            "--ambig-concurrency",
            options.text(config, "--ambig-concurrency"),
            kind=int,
            low=1,
            high=options.MAX_THREADS,
        ),
        rate=options.number("--ambig-rate", rate, low=0.001, high=1e6) if rate else None,
        max_text=options.number(
            "--ambig-max-text", options.text(config, "--ambig-max-text"), kind=int, low=200, high=2**31
        ),
        resume=options.value(config, "--ambig-resume") is not None,
        rescore=rescore,
        rescored=card,
        shard=options.shard(options.value(config, "--ambig-shard")),
        shard_gates=options.value(config, "--ambig-shard-gates") is not None,
        protocol=protocol,
        costs=parse_costs(options.value(config, "--ambig-costs")),
        clarifications=options.number(
            "--ambig-clarifications", options.text(config, "--ambig-clarifications"), kind=int, low=0, high=10
        ),
        user=user,
        steerability=options.value(config, "--ambig-steerability") is not None,
        baseline=base / Path(baseline).expanduser() if baseline else None,
        fail_if_worse=margins,
    )
