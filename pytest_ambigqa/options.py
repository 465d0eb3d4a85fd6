"""Every ambigqa option, defined once (flag, metavar, help, default, choices, ini), and the
primitive parsers the rooms read their options with.

Every option ``--ambig-x-y`` has an ini counterpart ``ambig_x_y``; the command line
wins. Anything malformed is a :class:`~pytest_ambigqa.errors.UsageError` naming the
option. This is the only module an idle plugin (no ``--ambig-suite``) imports, so it imports
nothing of the package: each room checks its own options (``session/config.py`` puts them
together), and the error class is imported only when an option is refused.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NoReturn, overload

import pytest

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
    const: str | None = None  # its value may be left out (``--ambig-mlflow``): then it holds this

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
    Option(
        "--ambig-data",
        "PATH|SUITE=PATH,...",
        "data file per suite (default: the bundled sample), or hf://OWNER/NAME[@REVISION][/FILE] "
        "on the Hugging Face Hub",
    ),
    Option(
        "--ambig-split",
        "NAME",
        "the split to load: of the official ASQA.json, or of a Hub dataset (hf://)",
        "dev",
    ),
    Option("--ambig-limit", "N", "stratified sample of N items per suite (by ambiguity type)"),
    Option(
        "--ambig-sample",
        "N|FRACTION",
        "seeded sample of N items (or a fraction such as 0.1) over all selected suites, stratified by "
        "suite and ambiguity type; the scores are estimates of the full set's, weighted by stratum",
    ),
    Option("--ambig-seed", "INT", "seed for --ambig-limit, --ambig-sample and the bootstrap intervals", "0"),
    Option(
        "--ambig-repeats",
        "K",
        "ask the system K times per item (trials); an item's scores are its trials' mean, and the "
        "scorecard adds pass@k, pass^k, per-item variance and the flaky items",
        "1",
    ),
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
    Option(
        "--ambig-llm-temperature",
        "T",
        "sampling temperature of every llm:<method> call (default: as the method's paper states)",
    ),
    Option(
        "--ambig-llm-max-tokens",
        "N",
        "new-token limit of every llm:<method> call, 0 for none (default: as the method's paper states)",
    ),
    Option("--ambig-timeout", "SECONDS", "per-item limit on a system call (0: none)", "300.0"),
    Option("--ambig-report", "DIR", "write scorecard.json, scorecard.md and report.html into DIR"),
    Option(
        "--ambig-export",
        "NAMES",
        "also write the run in other tools' formats into --ambig-report's DIR, comma-separated: "
        "inspect (Inspect AI eval logs, one per suite, in DIR/inspect; the [inspect] extra)",
    ),
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
        "--ambig-sequential",
        None,
        "items in a seeded random order; stop as soon as every gate is decided (anytime-valid)",
    ),
    Option(
        "--ambig-sequential-alpha",
        "ALPHA",
        "--ambig-sequential: each gate's chance of deciding wrongly about the mean over all the items",
        "0.05",
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
    Option(
        "--ambig-judge",
        "MODEL[,MODEL...]",
        "LLM judge model on an OpenAI-compatible server; several: a panel, each scoring every criterion",
    ),
    Option(
        "--ambig-judge-base-url",
        "URL[,URL...]",
        "the judge server, or one per panel judge (default: $OPENAI_BASE_URL, else OpenAI)",
    ),
    Option(
        "--ambig-judge-panel",
        "mean|median",
        "how a panel's scores make an item's: the mean, or the median (majority for binary criteria)",
        choices=("mean", "median"),
    ),
    Option(
        "--ambig-judge-disagreement",
        "SHARE",
        "flag items whose panel judges differ by at least this share of the metric's range",
        "0.4",
    ),
    Option("--ambig-judge-timeout", "SECONDS", "per judge request", "60"),
    Option("--ambig-judge-retries", "N", "retries on 429, 5xx and timeouts (exponential backoff)", "4"),
    Option("--ambig-judge-reasks", "N", "times an invalid JSON reply is asked again", "2"),
    Option("--ambig-judge-concurrency", "N", "judge requests in flight at once, per process", "4"),
    Option(
        "--ambig-judge-price",
        "IN,OUT[;IN,OUT...]",
        "$ per million prompt and completion tokens, for the cost line; one pair per panel judge",
    ),
    Option(
        "--ambig-judge-samples", "K", "judge each output K times with distinct seeds (judge variance)", "1"
    ),
    Option(
        "--ambig-human-labels",
        "FILE",
        "human scores of some items, JSON Lines or a JSON list of {id, suite?, system?, score or "
        "scores: {judge metric: score}}, or ALCE's released human_eval files: the scorecard reports "
        "the judge's agreement with them "
        "(Spearman, Krippendorff's alpha, Cohen's kappa) and the prediction-powered human-scale mean",
    ),
    Option(
        "--ambig-human-labels-system",
        "NAME",
        "the run's system as the labels file names it (default: --ambig-system): rows of other "
        "systems are ignored; for ALCE's human evaluation files, the model file a run replays",
    ),
    Option(
        "--ambig-judge-batch",
        "SECONDS",
        "judge through the server's batch API (OpenAI's: half price), waiting up to SECONDS for it; what "
        "is not done by then is unscored, and collected by a later run",
    ),
    Option(
        "--ambig-judge-batch-price",
        "IN,OUT",
        "$ per million tokens of batch requests (default: half of --ambig-judge-price, OpenAI's discount)",
    ),
    Option("--ambig-judge-batch-poll", "SECONDS", "how often a batch's progress is asked for", "10"),
    Option(
        "--ambig-no-preflight",
        None,
        "do not check, before any item, that each model server (judge, llm: system, simulated user) "
        "answers and takes $OPENAI_API_KEY (one GET /models each); for a run that only reads its cache",
    ),
    Option(
        "--ambig-max-unscored-rate",
        "R",
        "fail the run if more than this fraction of a metric's items is unscored",
    ),
    Option(
        "--ambig-setting",
        "SUITE=SETTING,...",
        "the published setting each suite runs, among those it declares (its README says what "
        "each gives); the first is its default; a plugin's suite has its own",
    ),
    Option(
        "--ambig-condambigqa-setting",
        "SETTING",
        "CondAmbigQA protocol (the paper's settings; --ambig-setting=condambigqa=SETTING)",
        choices=("main", "gold-conditions", "no-conditions", "closed-book"),
        list_choices=True,
    ),
    Option(
        "--ambig-march-setting",
        "SETTING",
        "MARCH protocol: open-retrieval (the papers': a retriever, no passages) or oracle-evidence "
        "(the gold passages: an upper bound; --ambig-setting=march=SETTING)",
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
        "--ambig-executor",
        "local|ray|ray://ADDRESS|NAME",
        "where the system's calls run: local (this process), ray (Ray actors on the cluster "
        "$RAY_ADDRESS names, else a local one), ray://HOST:PORT (a Ray client address), or an "
        "executor a plugin adds (pytest_ambigqa_executors); with ray, each actor constructs the "
        "system from --ambig-system once, and scoring stays here",
        "local",
    ),
    Option("--ambig-ray-actors", "N", "--ambig-executor=ray: the Ray actors that call the system", "2"),
    Option("--ambig-ray-cpus", "C", "--ambig-executor=ray: CPUs Ray reserves per actor", "1"),
    Option(
        "--ambig-ray-gpus", "G", "--ambig-executor=ray: GPUs Ray reserves per actor (0.5: two share one)", "0"
    ),
    Option(
        "--ambig-ray-models",
        "reader,embedder",
        "--ambig-executor=ray: local models that run in Ray actors of their own (the --ambig-reader "
        "model, the dense retriever's --ambig-embedder), one actor each; scoring stays here",
    ),
    Option("--ambig-ray-model-gpus", "G", "--ambig-ray-models: GPUs Ray reserves per model actor", "0"),
    Option(
        "--ambig-score-workers",
        "N|auto",
        "processes that score the items evaluated ahead (--ambig-concurrency above 1): auto is the "
        "cores this process may use, shared among xdist workers; 0 or 1 scores in the run's process",
        "auto",
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
        "--ambig-otel",
        None,
        "export a trace of the run over OTLP/HTTP (OTEL_EXPORTER_OTLP_* say where): the session, "
        "suites, items and every call, with one evaluation event per metric",
    ),
    Option(
        "--ambig-otel-content",
        None,
        "with --ambig-otel, put the prompts and answers in the spans too (off: they may be large or private)",
    ),
    Option(
        "--ambig-mlflow",
        "TRACKING_URI",
        "log the run to MLflow: its config as parameters, each suite's and slice's metrics with their "
        "intervals, the per-item table, and the reports as artifacts; alone (or auto), it logs to "
        "$MLFLOW_TRACKING_URI, else to mlflow.db in the rootdir (the [mlflow] extra)",
        const="auto",
    ),
    Option(
        "--ambig-mlflow-experiment",
        "NAME",
        "with --ambig-mlflow: the experiment the run is logged in (default: $MLFLOW_EXPERIMENT_NAME, "
        "else pytest-ambigqa)",
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
        "I/N|auto",
        "run shard I of N (balanced per ambiguity type); merge with `pytest-ambigqa merge`; auto "
        "reads I and N from the scheduler (Kubernetes Indexed Job, Slurm array, GitLab, CircleCI, Buildkite)",
    ),
    Option(
        "--ambig-shard-count",
        "N",
        "with --ambig-shard=auto: the number of shards where the scheduler does not say it (a "
        "Kubernetes Indexed Job's completions; default: $AMBIG_SHARD_COUNT); checked where it does",
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
        "--ambig-pr-comment",
        "FILE",
        "write a short Markdown for a pull-request comment into FILE: the gates, each suite's scores "
        "and, with --ambig-baseline, the significant changes and worst regressions; no links; its "
        "first line is a hidden marker a bot finds the comment by to update it",
    ),
    Option(
        "--ambig-retrieval-report",
        None,
        "report recall@k of each interpretation's gold passages, from the original question and "
        "from its clarified question",
    ),
    Option(
        "--ambig-progress",
        "MODE",
        "one live status line under pytest's output (items, errors, elapsed, ETA, calls in flight, "
        "each suite's headline metric with its interval, tokens and cost, the change against "
        "--ambig-baseline): auto draws it on a terminal, not under -q or -s; on or off",
        choices=("auto", "on", "off"),
    ),
)
OPTIONS: dict[str, Option] = {o.flag: o for o in _OPTIONS}


def default(flag: str) -> str | None:
    """What the option's help shows as its default (its first choice, if it has choices)."""
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
        optional = {"nargs": "?", "const": option.const} if option.const is not None else {}
        group.addoption(
            option.flag,
            dest=option.name,
            metavar=option.metavar,
            default=None,
            help=escaped + suffix,
            **optional,
        )
        parser.addini(option.name, help_text, default=shown)


def selected(config: pytest.Config) -> bool:
    """Whether this run selects a suite (``--ambig-suite``, its ini, or a scorecard to rescore)."""
    return bool(value(config, "--ambig-suite") or value(config, "--ambig-rescore"))


def runs_no_tests(config: pytest.Config) -> bool:
    """Whether pytest runs no test here, only collects them: ``--collect-only``, ``--fixtures``,
    ``--fixtures-per-test``, ``--setup-plan`` (fixtures planned, not run). No system is asked,
    so there is no scorecard to print or write and no gate to apply."""
    option = config.option
    return bool(
        option.collectonly
        or getattr(option, "showfixtures", False)
        or getattr(option, "show_fixtures_per_test", False)
        or getattr(option, "setupplan", False)
    )


def typed(config: pytest.Config) -> list[str]:
    """The ambigqa options besides ``--ambig-suite`` typed on the command line itself (not
    ``addopts``, which a project sets for its ambigqa runs and must not break its others)."""
    args = config.invocation_params.args
    return [
        option
        for option in OPTIONS
        if option != "--ambig-suite" and any(a == option or a.startswith(f"{option}=") for a in args)
    ]


def refuse(message: str) -> NoReturn:
    """Stop reading the options: ``message`` names the option and what is wrong with it."""
    from .errors import UsageError

    raise UsageError(message)


def given(config: pytest.Config, option: str) -> bool:
    """Whether the option was set at all, on the command line (an ini's value is a default)."""
    return config.getoption(OPTIONS[option].name) is not None


def chosen(config: pytest.Config, option: str) -> bool:
    """Whether the user set the option: on the command line, or in an ini file to other than
    its default (pytest tells an ini's value from its default no other way)."""
    return given(config, option) or value(config, option) != default(option)


def value(config: pytest.Config, option: str) -> str | None:
    """An option's value from the command line, else its ini; None when empty."""
    name = OPTIONS[option].name
    found = config.getoption(name)
    if found is None:
        found = config.getini(name)
    if isinstance(found, bool):  # a flag
        return "yes" if found else None
    if isinstance(found, list):  # ini values can arrive as lines
        found = ",".join(found)
    found = found.strip() if isinstance(found, str) else found
    return found or None


def text(config: pytest.Config, option: str) -> str:
    """An option's value, or its default when it is empty."""
    return value(config, option) or default(option) or ""


def pairs(option: str, raw: str) -> list[tuple[str, str]]:
    """``KEY=VALUE,...``."""
    out = []
    for part in filter(None, (p.strip() for p in raw.split(","))):
        key, sep, val = part.partition("=")
        if not sep or not key.strip() or not val.strip():
            refuse(f"{option}: expected KEY=VALUE, got '{part}'")
        out.append((key.strip(), val.strip()))
    return out


@overload
def number(
    option: str, text: str, *, kind: type[int], low: float | None = None, high: float | None = None
) -> int: ...
@overload
def number(
    option: str, text: str, *, kind: type[float] = float, low: float | None = None, high: float | None = None
) -> float: ...
def number(
    option: str,
    text: str,
    *,
    kind: type[float] | type[int] = float,
    low: float | None = None,
    high: float | None = None,
) -> float:
    try:
        value = kind(text)
    except ValueError:
        refuse(f"{option}: '{text}' is not a{'n integer' if kind is int else ' number'}")
    if isinstance(value, float) and not math.isfinite(value):
        refuse(f"{option}: '{text}' is not a finite number")
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f"between {low:g} and {high:g}" if high is not None else f"at least {low:g}"
        refuse(f"{option}: {text} must be {bounds}")
    return value


def workers(option: str, text: str) -> int | None:
    """``N|auto``: a count of processes, or None for ``auto`` (the caller sizes it)."""
    if text.strip().lower() == "auto":
        return None
    return number(option, text, kind=int, low=0, high=MAX_THREADS)


def price(option: str, text: str | None) -> tuple[float, float] | None:
    if not text:
        return None
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2:
        refuse(f"{option}: expected IN,OUT ($ per million tokens), got '{text}'")
    price_in, price_out = (number(option, p, low=0, high=1e6) for p in parts)
    return price_in, price_out


def prices(option: str, text: str | None, models: int) -> tuple[tuple[float, float] | None, ...]:
    """``IN,OUT`` for every model, or ``IN,OUT;IN,OUT;...``, one pair per model in order."""
    if not text or ";" not in text:
        return (price(option, text),) * max(models, 1)
    pairs = tuple(price(option, part) for part in text.split(";"))
    if len(pairs) != models or None in pairs:
        refuse(
            f"{option}: {text.count(';') + 1} prices for {models} judges; "
            "give one IN,OUT for all, or one per judge"
        )
    return pairs


def sample(text: str | None) -> int | float | None:
    """``N`` (a count of items, at least 1) or a fraction in (0, 1) such as ``0.1``."""
    if not text:
        return None
    if "." in text or "e" in text.lower():
        fraction = number("--ambig-sample", text, low=0)
        if not 0 < fraction < 1:
            refuse(f"--ambig-sample: {text} is neither a count of items nor a fraction between 0 and 1")
        return fraction
    return number("--ambig-sample", text, kind=int, low=1, high=10**9)


def shard(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    number, sep, count = text.partition("/")
    try:
        shard = int(number), int(count)
    except ValueError:
        shard = (0, 0)
    if not sep or not 1 <= shard[0] <= shard[1]:
        refuse(f"--ambig-shard: expected I/N with 1 <= I <= N, got '{text}'")
    return shard


def choice(config: pytest.Config, option: str, choices: Sequence[str] | None = None) -> str:
    choices = choices or OPTIONS[option].choices or ()
    chosen = (value(config, option) or choices[0]).lower()
    if chosen not in choices:
        refuse(f"{option}: '{chosen}' is not one of {', '.join(choices)}")
    return chosen
