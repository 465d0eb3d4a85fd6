"""Every ambigqa option, defined once (flag, metavar, help, default, choices, ini), and
read once into a frozen :class:`RunConfig`.

Every option ``--ambig-x-y`` has an ini counterpart ``ambig_x_y``; the command line
wins. Anything malformed is a :class:`pytest.UsageError` naming the option. This is the
only module an idle plugin (no ``--ambig-suite``) imports: what reading a run's options
needs (suites, metrics) is imported once a suite is selected.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .report.compare import Margin
    from .report.gates import Threshold

MAX_SECONDS = 7 * 24 * 3600.0  # a week: longer waits are a typo, and overflow timers
MAX_THREADS = 1024


@dataclass(frozen=True)
class Option:
    flag: str
    metavar: str | None  # None: a flag (store_true)
    help: str
    default: str | None = None
    choices: tuple[str, ...] | None = None  # the first is the default
    list_choices: bool = False  # the help lists the choices (where the text does not name them)

    @property
    def name(self) -> str:
        """The dest and the ini name: the flag without dashes, "_" for "-"."""
        return self.flag.lstrip("-").replace("-", "_")


_OPTIONS = (
    Option(
        "--ambig-suite",
        "NAMES",
        "benchmark suites to run, comma-separated: march, condambigqa, asqa",
    ),
    Option("--ambig-data", "PATH|SUITE=PATH,...", "data file per suite (default: the bundled sample)"),
    Option("--ambig-split", "NAME", "split of the official ASQA.json to use", "dev"),
    Option("--ambig-limit", "N", "stratified sample of N items per suite (by ambiguity type)"),
    Option("--ambig-seed", "INT", "seed for --ambig-limit and the bootstrap intervals", "0"),
    Option(
        "--ambig-system",
        "SPEC",
        "system under test: module:attr, an http(s) URL, oracle|lexical|retrieval, or llm:<method>",
    ),
    Option(
        "--ambig-llm-model",
        "MODEL",
        "model of the llm:<method> reference systems, on an OpenAI-compatible server",
    ),
    Option(
        "--ambig-llm-base-url",
        "URL",
        "the server of --ambig-llm-model (default: $OPENAI_BASE_URL, else OpenAI; key: $OPENAI_API_KEY)",
    ),
    Option("--ambig-llm-price", "IN,OUT", "$ per million prompt and completion tokens of --ambig-llm-model"),
    Option("--ambig-timeout", "SECONDS", "per-item limit on a system call (0: none)", "300.0"),
    Option("--ambig-report", "DIR", "write scorecard.json, scorecard.md and report.html into DIR"),
    Option(
        "--ambig-metrics",
        "NAMES",
        "compute only these metrics, comma-separated (the others are not asked for: no reader, judge "
        "or ROUGE runs for them)",
    ),
    Option(
        "--ambig-fail-under",
        "[SUITE:]METRIC=VALUE,...",
        "fail the run if a suite score is below VALUE (printed scale)",
    ),
    Option(
        "--ambig-gate",
        "MODE",
        "what --ambig-fail-under compares: mean or lower-ci (95% bootstrap)",
        choices=("mean", "lower-ci"),
    ),
    Option(
        "--ambig-item-min",
        "[SUITE:]METRIC=VALUE,...",
        "fail an item test whose score is below VALUE (item scale)",
    ),
    Option(
        "--ambig-max-error-rate", "R", "fail the run if more than this fraction of a suite's items errored"
    ),
    Option(
        "--ambig-march-fields", "OURS=THEIRS,...", "field names of a MARCH file that spells them differently"
    ),
    Option(
        "--ambig-corpus", "PATH", "retrieval corpus: JSON Lines {id, title, text}, or a directory of them"
    ),
    Option(
        "--ambig-retriever",
        "KIND",
        "retriever over the corpus",
        choices=("bm25", "dense", "hybrid", "none"),
        list_choices=True,
    ),
    Option("--ambig-top-k", "K", "passages per query for the retriever and the evidence report", "10"),
    Option("--ambig-embedder", "NAME|PATH", "sentence-transformers model for dense retrieval"),
    Option("--ambig-cache-dir", "DIR", "where indexes are kept (default: inside pytest's cache directory)"),
    Option(
        "--ambig-reader",
        "PATH|NAME|llm|none",
        "reader for Disambig-F1: a QA model directory or cache name, or llm",
    ),
    Option(
        "--ambig-device",
        "auto|cpu|cuda[:N]",
        "where the reader and the dense embedder run: auto is CUDA when torch sees a GPU, else the CPU",
        "auto",
    ),
    Option("--ambig-judge", "MODEL", "LLM judge model, on an OpenAI-compatible server"),
    Option("--ambig-judge-base-url", "URL", "the judge server (default: $OPENAI_BASE_URL, else OpenAI)"),
    Option("--ambig-judge-timeout", "SECONDS", "per judge request", "60"),
    Option("--ambig-judge-retries", "N", "retries on 429, 5xx and timeouts (exponential backoff)", "4"),
    Option("--ambig-judge-reasks", "N", "times an invalid JSON reply is asked again", "2"),
    Option("--ambig-judge-concurrency", "N", "judge requests in flight at once, per process", "4"),
    Option("--ambig-judge-price", "IN,OUT", "$ per million prompt and completion tokens, for the cost line"),
    Option(
        "--ambig-judge-samples", "K", "judge each output K times with distinct seeds (judge variance)", "1"
    ),
    Option(
        "--ambig-max-unscored-rate",
        "R",
        "fail the run if more than this fraction of a metric's items is unscored",
    ),
    Option(
        "--ambig-condambigqa-setting",
        "SETTING",
        "CondAmbigQA protocol (the paper's settings)",
        choices=("main", "gold-conditions", "no-conditions", "closed-book"),
        list_choices=True,
    ),
    Option(
        "--ambig-march-setting",
        "SETTING",
        "MARCH protocol: open-retrieval (the papers': a retriever, no passages) or oracle-evidence "
        "(the gold passages: an upper bound)",
        choices=("open-retrieval", "oracle-evidence"),
    ),
    Option(
        "--ambig-scorer-profile",
        "PROFILE",
        "official scorer the long-answer metrics follow (ASQA, MARCH): alce (ALCE eval.py) or "
        "asqa (ASQA scoring.py)",
        choices=("alce", "asqa"),
    ),
    Option(
        "--ambig-concurrency", "N", "system (and judge) calls in flight ahead of the tests, per process", "1"
    ),
    Option(
        "--ambig-rate", "REQ_PER_S", "cap on system calls per second, across all xdist workers of the machine"
    ),
    Option(
        "--ambig-max-text",
        "CHARS",
        "the most characters one text of an item's record keeps in the reports (answer, error, "
        "transcript turn, metadata string; its lists keep 1,000 entries): the rest is cut and marked "
        "(scores read the whole answer)",
        "65536",
    ),
    Option(
        "--ambig-resume",
        None,
        "reuse stored answers; ask the system only for items without one (or with an error)",
    ),
    Option(
        "--ambig-rescore",
        "SCORECARD",
        "score the answers saved in a scorecard.json again, without a system",
    ),
    Option(
        "--ambig-shard",
        "I/N",
        "run shard I of N (balanced per ambiguity type); merge with `pytest-ambigqa merge`",
    ),
    Option(
        "--ambig-shard-gates",
        None,
        "apply the suite gates (--ambig-fail-under, error and unscored rates) in each shard too, "
        "not only in `pytest-ambigqa merge`",
    ),
    Option(
        "--ambig-protocol",
        "NAME",
        "how items meet the system: single-shot (one answer per item, as the benchmarks publish) or "
        "interactive (clarify / answer / multi-answer episodes under costs, Berant et al. 2025)",
        choices=("single-shot", "interactive"),
    ),
    Option(
        "--ambig-costs",
        "ALPHA:BETA,...",
        "interactive: the cost pairs, alpha per clarification and beta per answer word (default: the "
        "paper's grid, alpha 0, 2, 20 by beta 0.1, 0.7, 5)",
    ),
    Option("--ambig-clarifications", "N", "interactive: clarifying questions allowed per episode", "1"),
    Option(
        "--ambig-user",
        "KIND",
        "interactive: the simulated user, offline (deterministic) or llm (the --ambig-judge model)",
        choices=("offline", "llm"),
    ),
    Option(
        "--ambig-steerability",
        None,
        "interactive: also play the forced-action policies (ANSWER, CLARIFY, MULTI-ANSWER, "
        "CLARIFY-AND-MA) with the system, for the hindsight-best oracle and prompt-level steerability",
    ),
    Option(
        "--ambig-baseline",
        "SCORECARD",
        "compare this run item by item with an earlier run's scorecard.json (paired intervals and "
        "tests, regressions); shown in the summary, scorecard.md and report.html",
    ),
    Option(
        "--ambig-fail-if-worse",
        "[SUITE:]METRIC:MARGIN,...",
        "with --ambig-baseline: fail the run if the 95% interval of the change in METRIC lies wholly "
        "below -MARGIN (printed scale), i.e. the run is shown worse than the baseline by more than MARGIN",
    ),
    Option(
        "--ambig-retrieval-report",
        None,
        "report recall@k of each interpretation's gold passages, from the original question and "
        "from its clarified question",
    ),
)
OPTIONS: dict[str, Option] = {o.flag: o for o in _OPTIONS}


def choices(flag: str) -> tuple[str, ...]:
    """The values an option accepts (the first is its default)."""
    found = OPTIONS[flag].choices
    assert found is not None, flag
    return found


def default(flag: str) -> str | None:
    option = OPTIONS[flag]
    return option.choices[0] if option.choices else option.default


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("ambigqa", "ambiguous-question benchmarks (pytest-ambigqa)")
    for option in _OPTIONS:
        help_text = option.help
        if option.list_choices and option.choices:
            help_text += f": {', '.join(option.choices)}"
        escaped = help_text.replace("%", "%%")  # argparse formats help with %
        if option.metavar is None:  # a flag
            group.addoption(option.flag, dest=option.name, action="store_true", default=None, help=escaped)
            parser.addini(option.name, help_text, type="bool", default=False)
            continue
        shown = default(option.flag)
        suffix = f" (default: {shown})" if shown is not None else ""
        group.addoption(
            option.flag, dest=option.name, metavar=option.metavar, default=None, help=escaped + suffix
        )
        parser.addini(option.name, help_text, default=shown)


def selected(config: pytest.Config) -> bool:
    """Whether this run selects a suite (``--ambig-suite``, its ini, or a scorecard to rescore)."""
    return bool(_value(config, "--ambig-suite") or _value(config, "--ambig-rescore"))


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
        from .systems import redact

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


def _value(config: pytest.Config, option: str) -> str | None:
    name = OPTIONS[option].name
    value = config.getoption(name)
    if value is None:
        value = config.getini(name)
    if isinstance(value, bool):  # a flag
        return "yes" if value else None
    if isinstance(value, list):  # ini values can arrive as lines
        value = ",".join(value)
    value = value.strip() if isinstance(value, str) else value
    return value or None


def _text(config: pytest.Config, option: str) -> str:
    """An option's value, or its default when it is empty."""
    return _value(config, option) or default(option) or ""


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
    from .suites import SUITES

    names = tuple(dict.fromkeys(n.strip().lower() for n in text.split(",") if n.strip()))
    unknown = [n for n in names if n not in SUITES]
    if unknown:
        raise pytest.UsageError(f"--ambig-suite: unknown suite '{unknown[0]}' (valid: {', '.join(SUITES)})")
    return names


def _data(text: str | None, suites: tuple[str, ...], base: Path) -> dict[str, Path]:
    from .suites import SUITES

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
    protocol: str = "single-shot",
) -> tuple[Threshold, ...]:
    from .metrics import METRICS
    from .report.gates import Threshold

    if not text:
        return ()
    out = []
    for key, raw in _pairs(option, text):
        scope, _, metric = key.rpartition(":")
        suite = scope.lower() or None
        if suite is not None and suite not in suites:
            raise pytest.UsageError(f"{option}: suite '{suite}' is not selected ({', '.join(suites)})")
        candidates = [suite] if suite else list(suites)
        valid = sorted({m for s in candidates for m in suite_metrics(s, protocol)})
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


def parse_margins(
    option: str, text: str | None, suites: tuple[str, ...], protocol: str = "single-shot"
) -> tuple[Margin, ...]:
    """``[SUITE:]METRIC:MARGIN,...``: the margins of a non-inferiority gate, printed scale."""
    from .metrics import METRICS
    from .report.compare import Margin

    out = []
    for part in filter(None, (p.strip() for p in (text or "").split(","))):
        scope, sep, raw = part.rpartition(":")
        suite, _, metric = scope.rpartition(":")
        suite, metric = suite.strip().lower() or None, metric.strip()
        if not sep or not metric or not raw.strip():
            raise pytest.UsageError(f"{option}: expected [SUITE:]METRIC:MARGIN, got '{part}'")
        if suite is not None and suite not in suites:
            raise pytest.UsageError(f"{option}: suite '{suite}' is not in this run ({', '.join(suites)})")
        candidates = [suite] if suite else list(suites)
        valid = sorted({m for s in candidates for m in suite_metrics(s, protocol)})
        if metric not in valid:
            raise pytest.UsageError(
                f"{option}: unknown metric '{metric}' for {', '.join(candidates)} (valid: {', '.join(valid)})"
            )
        spec = METRICS[metric]
        if spec.higher_is_better is None or spec.aggregation == "sum":
            raise pytest.UsageError(
                f"{option}: {metric} ({spec.label}) has no better direction to be worse in"
            )
        out.append(Margin(suite, metric, _number(option, raw.strip(), low=0)))
    return tuple(out)


def suite_metrics(suite: str, protocol: str) -> tuple[str, ...]:
    """The metrics a suite reports under a protocol: its own, or the interactive episode's."""
    if protocol == "interactive":
        from .metrics.interactive import METRIC_NAMES

        return METRIC_NAMES
    from .suites import SUITES

    return SUITES[suite].reported()


def _metrics(text: str | None, suites: tuple[str, ...], protocol: str) -> tuple[str, ...] | None:
    """``--ambig-metrics``: names of the selected suites' metrics; each suite keeps at least one."""
    if not text:
        return None
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    valid = sorted({m for s in suites for m in suite_metrics(s, protocol)})
    for name in names:
        if name not in valid:
            raise pytest.UsageError(
                f"--ambig-metrics: unknown metric '{name}' for {', '.join(suites)} "
                f"(valid: {', '.join(valid)})"
            )
    for suite in suites:
        own = suite_metrics(suite, protocol)
        if not set(names) & set(own):
            raise pytest.UsageError(
                f"--ambig-metrics: none of {', '.join(names)} is a metric of {suite} "
                f"(its metrics: {', '.join(own)})"
            )
    return names


def _costs(text: str | None) -> tuple[tuple[float, float], ...]:
    """``--ambig-costs``: ALPHA:BETA pairs, each cost at least 0, no pair twice."""
    from .protocols.interactive import COST_GRID, cost_text

    if not text:
        return COST_GRID
    pairs = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        alpha, sep, beta = part.partition(":")
        if not sep:
            raise pytest.UsageError(f"--ambig-costs: expected ALPHA:BETA, got '{part}'")
        pair = (
            float(_number("--ambig-costs", alpha.strip(), low=0, high=1e6)),
            float(_number("--ambig-costs", beta.strip(), low=0, high=1e6)),
        )
        spelled = [(cost_text(a), cost_text(b)) for a, b in pairs]
        if (cost_text(pair[0]), cost_text(pair[1])) in spelled:
            raise pytest.UsageError(f"--ambig-costs: {part} is given twice (costs count to 6 decimal places)")
        pairs.append(pair)
    if not pairs:
        raise pytest.UsageError("--ambig-costs: no cost pair given")
    return tuple(pairs)


_INTERACTIVE_ONLY = ("--ambig-costs", "--ambig-clarifications", "--ambig-user", "--ambig-steerability")
_SINGLE_SHOT_ONLY = ("--ambig-reader", "--ambig-retrieval-report", "--ambig-judge-samples")


def _interactive(config: pytest.Config, rescore: Path | None, saved: dict[str, Any]) -> str:
    """``--ambig-protocol`` and what only the interactive protocol reads, checked together."""
    protocol = _choice(config, "--ambig-protocol")
    if rescore is not None and "interactive" in (protocol, saved.get("protocol")):
        raise pytest.UsageError(
            "--ambig-rescore replays single-shot answers; an interactive episode's turns depend on "
            "the user's replies: run it again with --ambig-resume, which reuses every stored turn"
        )
    if protocol != "interactive":
        given = [o for o in _INTERACTIVE_ONLY if config.getoption(OPTIONS[o].name) is not None]
        if given:
            raise pytest.UsageError(f"{', '.join(given)}: only with --ambig-protocol=interactive")
        return protocol
    given = [o for o in _SINGLE_SHOT_ONLY if config.getoption(OPTIONS[o].name) is not None]
    if given:
        raise pytest.UsageError(
            f"{', '.join(given)}: an interactive run scores episodes with the protocol's own metrics; "
            "it has no reader, evidence report or judge metrics"
        )
    llm_user = _choice(config, "--ambig-user") == "llm"
    if llm_user and not _value(config, "--ambig-judge"):
        raise pytest.UsageError("--ambig-user=llm: the simulated user is the judge model; set --ambig-judge")
    if not llm_user and config.getoption(OPTIONS["--ambig-judge"].name) is not None:
        raise pytest.UsageError(
            "--ambig-judge: an interactive run judges nothing; the model plays the user with --ambig-user=llm"
        )
    return protocol


def _price(option: str, text: str | None) -> tuple[float, float] | None:
    if not text:
        return None
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2:
        raise pytest.UsageError(f"{option}: expected IN,OUT ($ per million tokens), got '{text}'")
    price_in, price_out = (_number(option, p, low=0, high=1e6) for p in parts)
    return price_in, price_out


def _march_fields(text: str | None) -> dict[str, str]:
    from .suites.march import FIELDS as MARCH_FIELDS

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


def _choice(config: pytest.Config, option: str, choices: Sequence[str] | None = None) -> str:
    choices = choices or OPTIONS[option].choices or ()
    value = (_value(config, option) or choices[0]).lower()
    if value not in choices:
        raise pytest.UsageError(f"{option}: '{value}' is not one of {', '.join(choices)}")
    return value


def _device(value: str | None) -> str:
    from .models.local import DEVICE_SPEC

    spec = (value or "auto").strip().lower()
    if not DEVICE_SPEC.fullmatch(spec):
        raise pytest.UsageError(f"--ambig-device: '{value}' is not auto, cpu, cuda or cuda:N")
    return spec


def _protocol(config: pytest.Config, option: str, saved: dict[str, Any]) -> str:
    """A suite's setting; a rescore replays answers made under the saved run's setting."""
    choices = OPTIONS[option].choices or ()
    name = OPTIONS[option].name[len("ambig_") :]
    if saved.get(name) not in choices:
        return _choice(config, option, choices)
    given = config.getoption(OPTIONS[option].name)
    if given is not None and given.strip().lower() != saved[name]:
        raise pytest.UsageError(
            f"{option}: the answers in --ambig-rescore were made under '{saved[name]}'; "
            f"they cannot be scored as '{given.strip()}'"
        )
    return saved[name]


def _saved_card(path: Path) -> dict[str, Any]:
    """The scorecard ``--ambig-rescore`` replays: its config is this run's default (the same data)."""
    from .errors import ScorecardError
    from .report.saved import read_scorecard

    try:
        return read_scorecard(path)
    except ScorecardError as exc:
        raise pytest.UsageError(f"--ambig-rescore: {exc}") from None


def refuse_without_suite(config: pytest.Config) -> None:
    """Options typed on the command line without ``--ambig-suite`` would do nothing: say so.

    Only the command line itself counts: ``addopts`` that a project sets for its ambigqa runs
    must not break its other pytest runs.
    """
    typed = config.invocation_params.args
    given = [
        option
        for option in OPTIONS
        if option != "--ambig-suite" and any(a == option or a.startswith(f"{option}=") for a in typed)
    ]
    if given:
        from .suites import SUITES

        raise pytest.UsageError(
            f"{', '.join(given)}: choose the benchmark with --ambig-suite ({', '.join(SUITES)}); "
            "without it the plugin runs nothing"
        )


def read_run_config(config: pytest.Config) -> RunConfig | None:
    """Read and check every ambigqa option; None when no suite is selected (nothing else
    is imported then)."""
    base = Path(config.invocation_params.dir)
    rescore_arg = _value(config, "--ambig-rescore")
    rescore = base / Path(rescore_arg).expanduser() if rescore_arg else None
    card = _saved_card(rescore) if rescore else None
    saved = card["config"] if card else {}
    suites = _suites(_value(config, "--ambig-suite") or ",".join(saved.get("suites", ())))
    if not suites:
        refuse_without_suite(config)
        return None
    from .metrics import METRICS

    gate = _choice(config, "--ambig-gate")
    limit = _value(config, "--ambig-limit")
    # An empty --ambig-timeout is 0, no limit (the default, 300 s, is the ini's).
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
    setting = _protocol(config, "--ambig-condambigqa-setting", saved)
    march_setting = _protocol(config, "--ambig-march-setting", saved)
    profile = _choice(config, "--ambig-scorer-profile")
    retriever = _choice(config, "--ambig-retriever")
    protocol = _interactive(config, rescore, saved)
    user = _choice(config, "--ambig-user")
    metrics = _metrics(_value(config, "--ambig-metrics"), suites, protocol)
    system = _value(config, "--ambig-system")
    if system and system.lower().startswith("llm:") and not _value(config, "--ambig-llm-model"):
        raise pytest.UsageError(
            f"--ambig-system={system}: name the model with --ambig-llm-model (and its server with "
            "--ambig-llm-base-url)"
        )
    fail_under = parse_thresholds(
        "--ambig-fail-under",
        _value(config, "--ambig-fail-under"),
        suites,
        item_scale=False,
        metrics=metrics,
        protocol=protocol,
    )
    for t in fail_under:
        if METRICS[t.metric].factor == 100 and 0 < t.value <= 1:
            raise pytest.UsageError(
                f"--ambig-fail-under: {t} is on the printed 0-100 scale (a percentage); "
                f"did you mean {t.metric}={t.value * 100:g}?"
            )
    baseline = _value(config, "--ambig-baseline")
    margins = parse_margins(
        "--ambig-fail-if-worse", _value(config, "--ambig-fail-if-worse"), suites, protocol
    )
    if margins and not baseline:
        raise pytest.UsageError(
            "--ambig-fail-if-worse: name the run to compare with, --ambig-baseline=SCORECARD"
        )
    return RunConfig(
        suites=suites,
        data=_data(_value(config, "--ambig-data"), suites, base)
        or {k: Path(v) for k, v in saved.get("data", {}).items() if k in suites},
        split=_value(config, "--ambig-split") or saved.get("split") or _text(config, "--ambig-split"),
        limit=_number("--ambig-limit", limit, kind=int, low=1, high=10**9) if limit else None,
        seed=_number("--ambig-seed", _text(config, "--ambig-seed"), kind=int, low=0, high=2**32 - 1),
        system=system,
        llm_model=_value(config, "--ambig-llm-model"),
        llm_base_url=_value(config, "--ambig-llm-base-url"),
        llm_price=_price("--ambig-llm-price", _value(config, "--ambig-llm-price")),
        timeout=timeout or None,
        report_dir=base / Path(report).expanduser() if report else None,
        metrics=metrics,
        fail_under=fail_under,
        gate=gate,
        item_min=parse_thresholds(
            "--ambig-item-min",
            _value(config, "--ambig-item-min"),
            suites,
            item_scale=True,
            metrics=metrics,
            protocol=protocol,
        ),
        max_error_rate=(
            _number("--ambig-max-error-rate", max_error_rate, low=0, high=1) if max_error_rate else None
        ),
        march_fields=_march_fields(_value(config, "--ambig-march-fields")) or saved.get("march_fields", {}),
        corpus=base / Path(corpus).expanduser() if corpus else None,
        retriever=retriever,
        top_k=_number("--ambig-top-k", _text(config, "--ambig-top-k"), kind=int, low=1, high=10_000),
        embedder=_value(config, "--ambig-embedder"),
        cache_dir=base / Path(cache_dir).expanduser() if cache_dir else None,
        retrieval_report=_value(config, "--ambig-retrieval-report") is not None,
        reader=None if protocol == "interactive" else reader,  # an ini's reader reads no episode
        device=_device(_value(config, "--ambig-device")),
        judge=_value(config, "--ambig-judge") if protocol != "interactive" or user == "llm" else None,
        judge_base_url=_value(config, "--ambig-judge-base-url"),
        judge_timeout=_number(
            "--ambig-judge-timeout",
            _text(config, "--ambig-judge-timeout"),
            low=0.001,
            high=MAX_SECONDS,
        ),
        judge_retries=_number(
            "--ambig-judge-retries", _text(config, "--ambig-judge-retries"), kind=int, low=0, high=100
        ),
        judge_reasks=_number(
            "--ambig-judge-reasks", _text(config, "--ambig-judge-reasks"), kind=int, low=0, high=20
        ),
        judge_concurrency=_number(
            "--ambig-judge-concurrency",
            _text(config, "--ambig-judge-concurrency"),
            kind=int,
            low=1,
            high=MAX_THREADS,
        ),
        judge_price=_price("--ambig-judge-price", _value(config, "--ambig-judge-price")),
        judge_samples=_number(
            "--ambig-judge-samples", _text(config, "--ambig-judge-samples"), kind=int, low=1, high=100
        ),
        max_unscored_rate=(
            _number("--ambig-max-unscored-rate", max_unscored, low=0, high=1) if max_unscored else None
        ),
        condambigqa_setting=setting,
        march_setting=march_setting,
        profile=profile,
        concurrency=_number(
            "--ambig-concurrency",
            _text(config, "--ambig-concurrency"),
            kind=int,
            low=1,
            high=MAX_THREADS,
        ),
        rate=_number("--ambig-rate", rate, low=0.001, high=1e6) if rate else None,
        max_text=_number(
            "--ambig-max-text", _text(config, "--ambig-max-text"), kind=int, low=200, high=2**31
        ),
        resume=_value(config, "--ambig-resume") is not None,
        rescore=rescore,
        rescored=card,
        shard=_shard(_value(config, "--ambig-shard")),
        shard_gates=_value(config, "--ambig-shard-gates") is not None,
        protocol=protocol,
        costs=_costs(_value(config, "--ambig-costs")),
        clarifications=_number(
            "--ambig-clarifications", _text(config, "--ambig-clarifications"), kind=int, low=0, high=10
        ),
        user=user,
        steerability=_value(config, "--ambig-steerability") is not None,
        baseline=base / Path(baseline).expanduser() if baseline else None,
        fail_if_worse=margins,
    )
