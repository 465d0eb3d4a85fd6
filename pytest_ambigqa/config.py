"""Command-line and ini options, read once into a frozen :class:`RunConfig`.

Every option ``--ambig-x-y`` has an ini counterpart ``ambig_x_y``; the command line
wins. Anything malformed is a :class:`pytest.UsageError` naming the option.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .local_models import DEVICE_SPEC
from .metrics import METRICS
from .metrics.conditional import SETTINGS as CONDAMBIGQA
from .metrics.profiles import DEFAULT_PROFILE, PROFILES
from .schema import AmbigItem
from .suites import SUITES
from .suites.march import FIELDS as MARCH_FIELDS
from .suites.march import SETTINGS as MARCH_SETTINGS

RETRIEVERS = ("bm25", "dense", "hybrid", "none")

if TYPE_CHECKING:
    from .run import AmbigRun

RUN_KEY: pytest.StashKey[AmbigRun] = pytest.StashKey()  # the session's run, when a suite is selected
ITEM_KEY: pytest.StashKey[AmbigItem] = pytest.StashKey()  # the benchmark item of a builtin test

GATE_MODES = ("mean", "lower-ci")
DEFAULT_TIMEOUT = 300.0
MAX_SECONDS = 7 * 24 * 3600.0  # a week: longer waits are a typo, and overflow timers
MAX_THREADS = 1024
# (option, metavar, help, default); the ini name is the option without dashes, "_" for "-".
OPTIONS: tuple[tuple[str, str, str, str | None], ...] = (
    ("--ambig-suite", "NAMES", f"benchmark suites to run, comma-separated: {', '.join(SUITES)}", None),
    ("--ambig-data", "PATH|SUITE=PATH,...", "data file per suite (default: the bundled sample)", None),
    ("--ambig-split", "NAME", "split of the official ASQA.json to use", "dev"),
    ("--ambig-limit", "N", "stratified sample of N items per suite (by ambiguity type)", None),
    ("--ambig-seed", "INT", "seed for --ambig-limit and the bootstrap intervals", "0"),
    ("--ambig-system", "SPEC", "system under test: module:attr, an http(s) URL, or oracle|lexical", None),
    ("--ambig-timeout", "SECONDS", "per-item limit on a system call (0: none)", str(DEFAULT_TIMEOUT)),
    ("--ambig-report", "DIR", "write scorecard.json and scorecard.md into DIR", None),
    (
        "--ambig-metrics",
        "NAMES",
        "compute only these metrics, comma-separated (the others are not asked for: no reader, judge "
        "or ROUGE runs for them)",
        None,
    ),
    (
        "--ambig-fail-under",
        "[SUITE:]METRIC=VALUE,...",
        "fail the run if a suite score is below VALUE (printed scale)",
        None,
    ),
    ("--ambig-gate", "MODE", "what --ambig-fail-under compares: mean or lower-ci (95% bootstrap)", "mean"),
    (
        "--ambig-item-min",
        "[SUITE:]METRIC=VALUE,...",
        "fail an item test whose score is below VALUE (item scale)",
        None,
    ),
    (
        "--ambig-max-error-rate",
        "R",
        "fail the run if more than this fraction of a suite's items errored",
        None,
    ),
    (
        "--ambig-march-fields",
        "OURS=THEIRS,...",
        "field names of a MARCH file that spells them differently",
        None,
    ),
    (
        "--ambig-corpus",
        "PATH",
        "retrieval corpus: JSON Lines {id, title, text}, or a directory of them",
        None,
    ),
    ("--ambig-retriever", "KIND", f"retriever over the corpus: {', '.join(RETRIEVERS)}", "bm25"),
    ("--ambig-top-k", "K", "passages per query for the retriever and the evidence report", "10"),
    ("--ambig-embedder", "NAME|PATH", "sentence-transformers model for dense retrieval", None),
    ("--ambig-cache-dir", "DIR", "where indexes are kept (default: inside pytest's cache directory)", None),
    (
        "--ambig-reader",
        "PATH|NAME|llm|none",
        "reader for Disambig-F1: a QA model directory or cache name, or llm",
        None,
    ),
    (
        "--ambig-device",
        "auto|cpu|cuda[:N]",
        "where the reader and the dense embedder run: auto is CUDA when torch sees a GPU, else the CPU",
        "auto",
    ),
    ("--ambig-judge", "MODEL", "LLM judge model, on an OpenAI-compatible server", None),
    ("--ambig-judge-base-url", "URL", "the judge server (default: $OPENAI_BASE_URL, else OpenAI)", None),
    ("--ambig-judge-timeout", "SECONDS", "per judge request", "60"),
    ("--ambig-judge-retries", "N", "retries on 429, 5xx and timeouts (exponential backoff)", "4"),
    ("--ambig-judge-reasks", "N", "times an invalid JSON reply is asked again", "2"),
    ("--ambig-judge-concurrency", "N", "judge requests in flight at once, per process", "4"),
    ("--ambig-judge-price", "IN,OUT", "$ per million prompt and completion tokens, for the cost line", None),
    ("--ambig-judge-samples", "K", "judge each output K times with distinct seeds (judge variance)", "1"),
    (
        "--ambig-max-unscored-rate",
        "R",
        "fail the run if more than this fraction of a metric's items is unscored",
        None,
    ),
    (
        "--ambig-condambigqa-setting",
        "SETTING",
        f"CondAmbigQA protocol (the paper's settings): {', '.join(CONDAMBIGQA)}",
        "main",
    ),
    (
        "--ambig-march-setting",
        "SETTING",
        "MARCH protocol: open-retrieval (the papers': a retriever, no passages) or oracle-evidence "
        "(the gold passages: an upper bound)",
        MARCH_SETTINGS[0],
    ),
    (
        "--ambig-scorer-profile",
        "PROFILE",
        "official scorer the long-answer metrics follow (ASQA, MARCH): alce (ALCE eval.py) or "
        "asqa (ASQA scoring.py)",
        DEFAULT_PROFILE,
    ),
    ("--ambig-concurrency", "N", "system (and judge) calls in flight ahead of the tests, per process", "1"),
    (
        "--ambig-rate",
        "REQ_PER_S",
        "cap on system calls per second, across all xdist workers of the machine",
        None,
    ),
    (
        "--ambig-resume",
        None,
        "reuse stored answers; ask the system only for items without one (or with an error)",
        None,
    ),
    (
        "--ambig-rescore",
        "SCORECARD",
        "score the answers saved in a scorecard.json again, without a system",
        None,
    ),
    (
        "--ambig-shard",
        "I/N",
        "run shard I of N (balanced per ambiguity type); merge with `pytest-ambigqa merge`",
        None,
    ),
    (
        "--ambig-shard-gates",
        None,
        "apply the suite gates (--ambig-fail-under, error and unscored rates) in each shard too, "
        "not only in `pytest-ambigqa merge`",
        None,
    ),
    (
        "--ambig-retrieval-report",
        None,
        "report recall@k of each interpretation's gold passages, from the original question and "
        "from its clarified question",
        None,
    ),
)


def _ini_name(option: str) -> str:
    return option.lstrip("-").replace("-", "_")


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("ambigqa", "ambiguous-question benchmarks (pytest-ambigqa)")
    for option, metavar, help_text, default in OPTIONS:
        name = _ini_name(option)
        if metavar is None:  # a flag
            group.addoption(option, dest=name, action="store_true", default=None, help=help_text)
            parser.addini(name, help_text, type="bool", default=False)
            continue
        shown = f" (default: {default})" if default is not None else ""
        group.addoption(option, dest=name, metavar=metavar, default=None, help=help_text + shown)
        parser.addini(name, help_text, default=default)


@dataclass(frozen=True)
class Threshold:
    suite: str | None  # None: every selected suite that has the metric
    metric: str
    value: float

    def __str__(self) -> str:
        scope = f"{self.suite}:" if self.suite else ""
        return f"{scope}{self.metric}={self.value:g}"


@dataclass(frozen=True)
class RunConfig:
    suites: tuple[str, ...]
    data: dict[str, Path] = field(default_factory=dict)
    split: str = "dev"
    limit: int | None = None
    seed: int = 0
    system: str | None = None
    timeout: float | None = DEFAULT_TIMEOUT
    report_dir: Path | None = None
    metrics: tuple[str, ...] | None = None  # --ambig-metrics: None is every metric
    fail_under: tuple[Threshold, ...] = ()
    gate: str = "mean"
    item_min: tuple[Threshold, ...] = ()
    max_error_rate: float | None = None
    march_fields: dict[str, str] = field(default_factory=dict)
    corpus: Path | None = None
    retriever: str = "bm25"
    top_k: int = 10
    embedder: str | None = None
    cache_dir: Path | None = None
    retrieval_report: bool = False
    reader: str | None = None
    device: str = "auto"
    judge: str | None = None
    judge_base_url: str | None = None
    judge_timeout: float = 60.0
    judge_retries: int = 4
    judge_reasks: int = 2
    judge_concurrency: int = 4
    judge_price: tuple[float, float] | None = None
    judge_samples: int = 1
    max_unscored_rate: float | None = None
    condambigqa_setting: str = "main"
    march_setting: str = MARCH_SETTINGS[0]
    profile: str = DEFAULT_PROFILE
    concurrency: int = 1
    rate: float | None = None
    resume: bool = False
    rescore: Path | None = None
    shard: tuple[int, int] | None = None
    shard_gates: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The configuration as reports record it (URLs redacted; keys are never in it)."""
        from .systems import redact

        return {
            "suites": list(self.suites),
            "data": {k: str(v) for k, v in self.data.items()},
            "split": self.split,
            "limit": self.limit,
            "seed": self.seed,
            "system": redact(self.system) if self.system else None,
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
            "resume": self.resume,
            "rescore": str(self.rescore) if self.rescore else None,
            "shard": list(self.shard) if self.shard else None,
        }


def _value(config: pytest.Config, option: str) -> str | None:
    name = _ini_name(option)
    value = config.getoption(name)
    if value is None:
        value = config.getini(name)
    if isinstance(value, bool):  # a flag
        return "yes" if value else None
    if isinstance(value, list):  # ini values can arrive as lines
        value = ",".join(value)
    value = value.strip() if isinstance(value, str) else value
    return value or None


def _pairs(option: str, text: str) -> list[tuple[str, str]]:
    pairs = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise pytest.UsageError(f"{option}: expected KEY=VALUE, got '{part}'")
        pairs.append((key.strip(), value.strip()))
    return pairs


def _number(option: str, text: str, *, kind=float, low: float | None = None, high: float | None = None):
    try:
        value = kind(text)
    except ValueError:
        raise pytest.UsageError(
            f"{option}: '{text}' is not a{'n integer' if kind is int else ' number'}"
        ) from None
    if isinstance(value, float) and not math.isfinite(value):
        raise pytest.UsageError(f"{option}: '{text}' is not a finite number")
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f"between {low:g} and {high:g}" if high is not None else f"at least {low:g}"
        raise pytest.UsageError(f"{option}: {text} must be {bounds}")
    return value


def _suites(text: str | None) -> tuple[str, ...]:
    if not text:
        return ()
    names = tuple(dict.fromkeys(n.strip().lower() for n in text.split(",") if n.strip()))
    unknown = [n for n in names if n not in SUITES]
    if unknown:
        raise pytest.UsageError(f"--ambig-suite: unknown suite '{unknown[0]}' (valid: {', '.join(SUITES)})")
    return names


def _data(text: str | None, suites: tuple[str, ...], base: Path) -> dict[str, Path]:
    if not text:
        return {}
    head = text.partition("=")[0].strip().lower()
    if head not in SUITES:  # a bare path
        if len(suites) != 1:
            raise pytest.UsageError(
                "--ambig-data: with several suites, name each file as SUITE=PATH "
                f"(suites: {', '.join(suites)})"
            )
        return {suites[0]: base / Path(text).expanduser()}
    data = {}
    for suite, path in _pairs("--ambig-data", text):
        suite = suite.lower()
        if suite not in suites:
            raise pytest.UsageError(
                f"--ambig-data: suite '{suite}' is not selected by --ambig-suite ({', '.join(suites)})"
            )
        data[suite] = base / Path(path).expanduser()
    return data


def parse_thresholds(
    option: str,
    text: str | None,
    suites: tuple[str, ...],
    *,
    item_scale: bool,
    metrics: tuple[str, ...] | None = None,
) -> tuple[Threshold, ...]:
    if not text:
        return ()
    out = []
    for key, raw in _pairs(option, text):
        scope, _, metric = key.rpartition(":")
        suite = scope.lower() or None
        if suite is not None and suite not in suites:
            raise pytest.UsageError(f"{option}: suite '{suite}' is not selected ({', '.join(suites)})")
        candidates = [suite] if suite else list(suites)
        valid = sorted({m for s in candidates for m in SUITES[s].metrics})
        if metrics is not None and metric in valid and metric not in metrics:
            raise pytest.UsageError(f"{option}: {metric} is not computed in this run (--ambig-metrics)")
        if metric not in valid:
            raise pytest.UsageError(
                f"{option}: unknown metric '{metric}' for {', '.join(candidates)} (valid: {', '.join(valid)})"
            )
        value = _number(option, raw)
        spec = METRICS[metric]
        if item_scale and spec.suite_level:
            raise pytest.UsageError(f"{option}: {metric} is computed for a whole suite, not per item")
        if item_scale and spec.item_range:
            low, high = spec.item_range
            if not low <= value <= high:
                raise pytest.UsageError(
                    f"{option}: {metric}={raw} is outside the item scale [{low:g}, {high:g}]"
                    + (
                        " (item scores are fractions; the suite prints them x100)"
                        if spec.factor == 100
                        else ""
                    )
                )
        out.append(Threshold(suite, metric, value))
    return tuple(out)


def _metrics(text: str | None, suites: tuple[str, ...]) -> tuple[str, ...] | None:
    """``--ambig-metrics``: names of the selected suites' metrics; each suite keeps at least one."""
    if not text:
        return None
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    valid = sorted({m for s in suites for m in SUITES[s].metrics})
    for name in names:
        if name not in valid:
            raise pytest.UsageError(
                f"--ambig-metrics: unknown metric '{name}' for {', '.join(suites)} "
                f"(valid: {', '.join(valid)})"
            )
    for suite in suites:
        if not set(names) & set(SUITES[suite].metrics):
            raise pytest.UsageError(
                f"--ambig-metrics: none of {', '.join(names)} is a metric of {suite} "
                f"(its metrics: {', '.join(SUITES[suite].metrics)})"
            )
    return names


def _price(text: str | None) -> tuple[float, float] | None:
    if not text:
        return None
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2:
        raise pytest.UsageError(f"--ambig-judge-price: expected IN,OUT ($ per million tokens), got '{text}'")
    price_in, price_out = (_number("--ambig-judge-price", p, low=0, high=1e6) for p in parts)
    return price_in, price_out


def _march_fields(text: str | None) -> dict[str, str]:
    if not text:
        return {}
    fields = {}
    for ours, theirs in _pairs("--ambig-march-fields", text):
        if ours not in MARCH_FIELDS:
            raise pytest.UsageError(
                f"--ambig-march-fields: unknown field '{ours}' (valid: {', '.join(MARCH_FIELDS)})"
            )
        fields[ours] = theirs
    return fields


def _shard(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    number, sep, count = text.partition("/")
    try:
        shard = int(number), int(count)
    except ValueError:
        shard = (0, 0)
    if not sep or not 1 <= shard[0] <= shard[1]:
        raise pytest.UsageError(f"--ambig-shard: expected I/N with 1 <= I <= N, got '{text}'")
    return shard


def _choice(config: pytest.Config, option: str, choices: Sequence[str]) -> str:
    value = (_value(config, option) or choices[0]).lower()
    if value not in choices:
        raise pytest.UsageError(f"{option}: '{value}' is not one of {', '.join(choices)}")
    return value


def _device(value: str | None) -> str:
    spec = (value or "auto").strip().lower()
    if not DEVICE_SPEC.fullmatch(spec):
        raise pytest.UsageError(f"--ambig-device: '{value}' is not auto, cpu, cuda or cuda:N")
    return spec


def _protocol(config: pytest.Config, option: str, choices: Sequence[str], saved: dict[str, Any]) -> str:
    """A suite's setting; a rescore replays answers made under the saved run's setting."""
    name = _ini_name(option)[len("ambig_") :]
    if saved.get(name) not in choices:
        return _choice(config, option, choices)
    given = config.getoption(_ini_name(option))
    if given is not None and given.strip().lower() != saved[name]:
        raise pytest.UsageError(
            f"{option}: the answers in --ambig-rescore were made under '{saved[name]}'; "
            f"they cannot be scored as '{given.strip()}'"
        )
    return saved[name]


def _saved_config(path: Path) -> dict[str, Any]:
    """The run config a scorecard saved: ``--ambig-rescore`` reads the same data by default."""
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))["config"]
        if not isinstance(saved["suites"], list) or not isinstance(saved["data"], dict):
            raise TypeError("config.suites or config.data has the wrong type")
        return saved
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
        raise pytest.UsageError(f"--ambig-rescore: {path} is not a readable scorecard.json ({exc})") from None


def _needs_a_suite(config: pytest.Config) -> None:
    """Options typed on the command line without ``--ambig-suite`` would do nothing: say so.

    Only the command line itself counts: ``addopts`` that a project sets for its ambigqa runs
    must not break its other pytest runs.
    """
    typed = config.invocation_params.args
    given = [
        option
        for option, *_ in OPTIONS
        if option != "--ambig-suite" and any(a == option or a.startswith(f"{option}=") for a in typed)
    ]
    if given:
        raise pytest.UsageError(
            f"{', '.join(given)}: choose the benchmark with --ambig-suite ({', '.join(SUITES)}); "
            "without it the plugin runs nothing"
        )


def read_run_config(config: pytest.Config) -> RunConfig:
    """Read and check every ambigqa option; no suite selected gives ``suites == ()``."""
    base = Path(config.invocation_params.dir)
    rescore_arg = _value(config, "--ambig-rescore")
    rescore = base / Path(rescore_arg).expanduser() if rescore_arg else None
    saved = _saved_config(rescore) if rescore else {}
    suites = _suites(_value(config, "--ambig-suite") or ",".join(saved.get("suites", ())))
    if not suites:
        _needs_a_suite(config)
        return RunConfig(suites=())
    gate = _choice(config, "--ambig-gate", GATE_MODES)
    limit = _value(config, "--ambig-limit")
    timeout = _number("--ambig-timeout", _value(config, "--ambig-timeout") or "0", low=0, high=MAX_SECONDS)
    max_error_rate = _value(config, "--ambig-max-error-rate")
    report = _value(config, "--ambig-report")
    corpus = _value(config, "--ambig-corpus")
    cache_dir = _value(config, "--ambig-cache-dir")
    max_unscored = _value(config, "--ambig-max-unscored-rate")
    rate = _value(config, "--ambig-rate")
    reader = _value(config, "--ambig-reader")
    if reader is not None and reader.lower() == "none":
        reader = None
    if reader is not None and reader.lower() == "llm" and not _value(config, "--ambig-judge"):
        raise pytest.UsageError("--ambig-reader=llm: the LLM reader is the judge model; set --ambig-judge")
    setting = _protocol(config, "--ambig-condambigqa-setting", tuple(CONDAMBIGQA), saved)
    march_setting = _protocol(config, "--ambig-march-setting", MARCH_SETTINGS, saved)
    profile = _choice(config, "--ambig-scorer-profile", tuple(PROFILES))
    retriever = _choice(config, "--ambig-retriever", RETRIEVERS)
    metrics = _metrics(_value(config, "--ambig-metrics"), suites)
    fail_under = parse_thresholds(
        "--ambig-fail-under", _value(config, "--ambig-fail-under"), suites, item_scale=False, metrics=metrics
    )
    for t in fail_under:
        if METRICS[t.metric].factor == 100 and 0 < t.value <= 1:
            raise pytest.UsageError(
                f"--ambig-fail-under: {t} is on the printed 0-100 scale (a percentage); "
                f"did you mean {t.metric}={t.value * 100:g}?"
            )
    return RunConfig(
        suites=suites,
        data=_data(_value(config, "--ambig-data"), suites, base)
        or {k: Path(v) for k, v in saved.get("data", {}).items() if k in suites},
        split=_value(config, "--ambig-split") or saved.get("split") or "dev",
        limit=_number("--ambig-limit", limit, kind=int, low=1, high=10**9) if limit else None,
        seed=_number("--ambig-seed", _value(config, "--ambig-seed") or "0", kind=int, low=0, high=2**32 - 1),
        system=_value(config, "--ambig-system"),
        timeout=timeout or None,
        report_dir=base / Path(report).expanduser() if report else None,
        metrics=metrics,
        fail_under=fail_under,
        gate=gate,
        item_min=parse_thresholds(
            "--ambig-item-min", _value(config, "--ambig-item-min"), suites, item_scale=True, metrics=metrics
        ),
        max_error_rate=(
            _number("--ambig-max-error-rate", max_error_rate, low=0, high=1) if max_error_rate else None
        ),
        march_fields=_march_fields(_value(config, "--ambig-march-fields")) or saved.get("march_fields", {}),
        corpus=base / Path(corpus).expanduser() if corpus else None,
        retriever=retriever,
        top_k=_number("--ambig-top-k", _value(config, "--ambig-top-k") or "10", kind=int, low=1, high=10_000),
        embedder=_value(config, "--ambig-embedder"),
        cache_dir=base / Path(cache_dir).expanduser() if cache_dir else None,
        retrieval_report=_value(config, "--ambig-retrieval-report") is not None,
        reader=reader,
        device=_device(_value(config, "--ambig-device")),
        judge=_value(config, "--ambig-judge"),
        judge_base_url=_value(config, "--ambig-judge-base-url"),
        judge_timeout=_number(
            "--ambig-judge-timeout",
            _value(config, "--ambig-judge-timeout") or "60",
            low=0.001,
            high=MAX_SECONDS,
        ),
        judge_retries=_number(
            "--ambig-judge-retries", _value(config, "--ambig-judge-retries") or "4", kind=int, low=0, high=100
        ),
        judge_reasks=_number(
            "--ambig-judge-reasks", _value(config, "--ambig-judge-reasks") or "2", kind=int, low=0, high=20
        ),
        judge_concurrency=_number(
            "--ambig-judge-concurrency",
            _value(config, "--ambig-judge-concurrency") or "4",
            kind=int,
            low=1,
            high=MAX_THREADS,
        ),
        judge_price=_price(_value(config, "--ambig-judge-price")),
        judge_samples=_number(
            "--ambig-judge-samples", _value(config, "--ambig-judge-samples") or "1", kind=int, low=1, high=100
        ),
        max_unscored_rate=(
            _number("--ambig-max-unscored-rate", max_unscored, low=0, high=1) if max_unscored else None
        ),
        condambigqa_setting=setting,
        march_setting=march_setting,
        profile=profile,
        concurrency=_number(
            "--ambig-concurrency",
            _value(config, "--ambig-concurrency") or "1",
            kind=int,
            low=1,
            high=MAX_THREADS,
        ),
        rate=_number("--ambig-rate", rate, low=0.001, high=1e6) if rate else None,
        resume=_value(config, "--ambig-resume") is not None,
        rescore=rescore,
        shard=_shard(_value(config, "--ambig-shard")),
        shard_gates=_value(config, "--ambig-shard-gates") is not None,
    )
