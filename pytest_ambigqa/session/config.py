"""One run's configuration: every room's options, read and checked by the room that owns
them (the models in ``models/config.py``, retrieval in ``retrieval/config.py``, gates and
margins in ``card/gates.py``, a protocol's own options by the protocol, suites' settings
and loader options as each suite declares them (``Suite.loader_options``), the device in
``models/local.py``), put together here into a frozen :class:`RunConfig`.

Only ``session/`` turns what is refused into pytest's usage error (``session/__init__.py``).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from .. import options
from ..card import storage
from ..card.gates import GateConfig
from ..card.saved import read_scorecard
from ..errors import ScorecardError, UnreadableFile, UsageError
from ..executors import Executor, read_executor
from ..executors.local import LocalExecutor
from ..models.config import ModelConfig
from ..models.local import parse_device
from ..options import refuse
from ..output import redact
from ..protocols import PROTOCOLS, suite_metrics
from ..retrieval.config import RetrievalConfig
from ..schedulers import SchedulerShard, detect
from ..suites import SUITES, loader_options, saved_settings
from ..suites.sources import HubRef, is_hub, parse_hub


@dataclass(frozen=True)
class RunConfig:
    """One run's options, checked: the session's own, and each room's config, read by the
    room (models, retrieval, gates, the protocol's own options); given by :func:`read_run_config`."""

    suites: tuple[str, ...]
    data: dict[str, Path | HubRef]  # a file, or a benchmark on the Hub (hf://OWNER/NAME[@REVISION][/FILE])
    loader: dict[str, Any]  # every registered suite's loader options' values by key (LoadOptions)
    limit: int | None
    seed: int
    sample: int | float | None  # --ambig-sample: a count of items or a fraction (suites/sample.py)
    repeats: int  # --ambig-repeats: trials per item
    system: str | None
    timeout: float | None
    report_dir: storage.Location | None  # a path, or an object store's URL (card/storage.py)
    pr_comment: Path | None  # --ambig-pr-comment (report/ci.py)
    metrics: tuple[str, ...] | None  # --ambig-metrics: None is every metric
    cache_dir: Path | None
    reader: str | None
    device: str
    settings: dict[str, str]  # the setting each suite with settings runs (Suite.settings)
    profile: str
    concurrency: int
    score_workers: int | None  # --ambig-score-workers: None is auto (store/scoring.py sizes it)
    rate: float | None
    max_text: int  # the characters one text of an item's record keeps (output.bounded)
    resume: bool
    rescore: Path | None
    rescored: dict[str, Any] | None  # the scorecard.json --ambig-rescore replays, read once
    shard: tuple[int, int] | None
    shard_scheduler: SchedulerShard | None  # --ambig-shard=auto: the scheduler that named the shard
    protocol: str  # a PROTOCOLS name
    protocol_options: Any  # the protocol's own (Protocol.read_options), None if it has none
    models: ModelConfig
    retrieval: RetrievalConfig
    gates: GateConfig
    human_labels: Path | None = None  # --ambig-human-labels (card/calibration.py), read by the controller
    human_labels_system: str | None = (
        None  # --ambig-human-labels-system: the labels' name of the run's system
    )
    # --ambig-executor: where the system's calls run (executors/); the local one by default
    executor: Executor = dataclasses.field(default_factory=LocalExecutor)
    exports: tuple[str, ...] = ()  # --ambig-export: other tools' formats (report/writers.py's EXPORTS)

    def to_dict(self) -> dict[str, Any]:
        """The configuration as reports record it, one flat mapping (URLs redacted; keys are
        never in it); a protocol's own options are None under the others."""
        own = dict.fromkeys(k for p in PROTOCOLS.values() for k in p.config_keys)
        return {
            "suites": list(self.suites),
            "data": {k: str(v) for k, v in self.data.items()},
            **self.loader,  # the suites' loader options (Suite.loader_options)
            "limit": self.limit,
            "seed": self.seed,
            **({"sample": self.sample} if self.sample is not None else {}),  # only when set: as before
            **({"repeats": self.repeats} if self.repeats > 1 else {}),
            "system": redact(self.system) if self.system else None,
            "timeout": self.timeout,
            "metrics": list(self.metrics) if self.metrics is not None else None,
            "reader": self.reader,
            "device": self.device,
            "settings": dict(self.settings),
            "profile": self.profile,
            "concurrency": self.concurrency,
            "rate": self.rate,
            "max_text": self.max_text,
            "resume": self.resume,
            "rescore": str(self.rescore) if self.rescore else None,
            "shard": list(self.shard) if self.shard else None,
            **({"shard_scheduler": self.shard_scheduler.to_dict()} if self.shard_scheduler else {}),
            **self.executor.to_dict(),  # a local run's records none, as before the option
            "protocol": self.protocol,
            **self.models.to_dict(),
            **self.retrieval.to_dict(),
            **self.gates.to_dict(),
            **own,
            **(self.protocol_options.to_dict() if self.protocol_options is not None else {}),
        }


def _suites(text: str | None) -> tuple[str, ...]:
    if not text:
        return ()
    names = tuple(dict.fromkeys(n.strip().lower() for n in text.split(",") if n.strip()))
    unknown = [n for n in names if n not in SUITES]
    if unknown:
        refuse(f"--ambig-suite: unknown suite '{unknown[0]}' (valid: {', '.join(SUITES)})")
    return names


def _data(text: str | None, suites: tuple[str, ...], base: Path) -> dict[str, Path | HubRef]:
    if not text:
        return {}
    head = text.partition("=")[0].strip().lower()
    if head not in SUITES:  # a bare path or URL
        if len(suites) != 1:
            refuse(
                "--ambig-data: with several suites, name each file as SUITE=PATH "
                f"(suites: {', '.join(suites)})"
            )
        return {suites[0]: _location("--ambig-data", text, base)}
    data = {}
    for suite, path in options.pairs("--ambig-data", text):
        suite = suite.lower()
        if suite not in suites:
            refuse(f"--ambig-data: suite '{suite}' is not selected by --ambig-suite ({', '.join(suites)})")
        data[suite] = _location(f"--ambig-data ({suite})", path, base)
    return data


def _location(option: str, text: str, base: Path) -> Path | HubRef:
    """A data file's path, or an ``hf://`` URL (``suites/sources.py``), which needs huggingface_hub."""
    if not is_hub(text):
        return base / Path(text).expanduser()
    try:
        ref = parse_hub(text)
    except UnreadableFile as exc:
        refuse(f"{option}: {exc}")
    if importlib.util.find_spec("huggingface_hub") is None:
        refuse(f"{option}: {ref} needs huggingface_hub: pip install 'pytest-ambigqa[hub]'")
    return ref


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


def _loader(config: pytest.Config, saved: dict[str, Any]) -> dict[str, Any]:
    """The value of every registered suite's loader options (``Suite.loader_options``): as
    given, else the saved run's (``--ambig-rescore``), else its default."""
    values = {}
    for key, option in loader_options().items():
        if option.flag in options.OPTIONS:
            text = options.value(config, option.flag)
        else:  # a plugin suite's own option, added by the plugin's pytest_addoption
            found = config.getoption(option.flag.lstrip("-").replace("-", "_"), None)
            text = (found.strip() or None) if isinstance(found, str) else None
        value = option.read(text) if text is not None else None
        values[key] = value or saved.get(key) or option.read(None)
    return values


def _settings(config: pytest.Config, saved: dict[str, Any]) -> dict[str, str]:
    """The setting of every suite that declares settings (``Suite.settings``, the first its
    default): ``--ambig-setting=SUITE=SETTING``, or a built-in suite's own shorter
    ``--ambig-<suite>-setting``; a rescore replays answers made under the saved run's."""
    chosen: dict[str, tuple[str, str]] = {}  # suite: (setting, the option that chose it)
    for named, setting in options.pairs("--ambig-setting", options.value(config, "--ambig-setting") or ""):
        named = named.lower()
        if named not in SUITES or not SUITES[named].settings:
            having = ", ".join(n for n, s in SUITES.items() if s.settings)
            refuse(f"--ambig-setting: suite '{named}' has no settings (suites with settings: {having})")
        chosen[named] = (setting.lower(), "--ambig-setting")
    for suite in SUITES.values():
        flag = f"--ambig-{suite.name}-setting"
        # chosen, not merely valued: the ini's default (the first setting) is no choice to disagree with
        own = (
            options.value(config, flag) if flag in options.OPTIONS and options.chosen(config, flag) else None
        )
        if own is None:
            continue
        if suite.name in chosen and chosen[suite.name][0] != own.lower():
            refuse(f"{flag}={own} and --ambig-setting={suite.name}={chosen[suite.name][0]} disagree")
        chosen[suite.name] = (own.lower(), flag)
    replayed = saved_settings(saved)
    settings = {}
    for suite in SUITES.values():
        if not suite.settings:
            continue
        name, flag = chosen.get(suite.name, (None, "--ambig-setting"))
        if name is not None and name not in suite.settings:
            refuse(f"{flag}: '{name}' is not a {suite.title} setting (valid: {', '.join(suite.settings)})")
        if replayed.get(suite.name) in suite.settings:
            if name is not None and name != replayed[suite.name]:
                refuse(
                    f"{flag}: the answers in --ambig-rescore were made under '{replayed[suite.name]}'; "
                    f"they cannot be scored as '{name}'"
                )
            name = replayed[suite.name]
        settings[suite.name] = name or suite.settings[0]
    return settings


def _scheduled(config: pytest.Config, shard: str | None) -> SchedulerShard | None:
    """``--ambig-shard=auto``: the shard the scheduler's variables name (``schedulers.py``)."""
    count = options.value(config, "--ambig-shard-count")
    if (shard or "").lower() != "auto":
        if options.given(config, "--ambig-shard-count"):
            refuse("--ambig-shard-count: only with --ambig-shard=auto")
        return None
    return detect(os.environ, count)


def _exports(text: str | None, report: str | None) -> tuple[str, ...]:
    """``--ambig-export``: known names, written into ``--ambig-report``'s directory, each
    export's package installed (checked now, imported only at the end of the run)."""
    if not text:
        return ()
    from ..report.writers import EXPORTS

    names = tuple(dict.fromkeys(n.strip().lower() for n in text.split(",") if n.strip()))
    for name in names:
        if name not in EXPORTS:
            refuse(f"--ambig-export: unknown export '{name}' (valid: {', '.join(EXPORTS)})")
        missing = EXPORTS[name].absent()
        if missing:
            refuse(f"--ambig-export={name}: {missing}")
    if names and not report:
        refuse("--ambig-export: the exports are written into --ambig-report's directory; set --ambig-report")
    return names


def _report(text: str | None, base: Path) -> storage.Location | None:
    """``--ambig-report``: a directory, or an object store's URL whose store can be opened here."""
    if not text:
        return None
    try:
        where = storage.location(text)
        if isinstance(where, str):
            storage.check(where)
            return where
    except UsageError as exc:
        refuse(f"--ambig-report: {exc}")
    return base / where.expanduser()


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
    limit = options.value(config, "--ambig-limit")
    # An empty --ambig-timeout is 0, no limit (the default, 300 s, is the ini's).
    timeout = options.number(
        "--ambig-timeout", options.value(config, "--ambig-timeout") or "0", low=0, high=options.MAX_SECONDS
    )
    report = options.value(config, "--ambig-report")
    comment = options.value(config, "--ambig-pr-comment")
    pr_comment = base / Path(comment).expanduser() if comment else None
    if pr_comment is not None and pr_comment.is_dir():
        refuse(f"--ambig-pr-comment={comment}: a directory; name the file to write")
    cache_dir = options.value(config, "--ambig-cache-dir")
    rate = options.value(config, "--ambig-rate")
    models = ModelConfig.read(config)
    shard = options.value(config, "--ambig-shard")
    scheduled = _scheduled(config, shard)
    reader = options.value(config, "--ambig-reader")
    if reader is not None and reader.lower() == "none":
        reader = None
    if reader is not None and reader.lower() == "llm" and not models.judge:
        refuse("--ambig-reader=llm: the LLM reader is the judge model; set --ambig-judge")
    name = _protocol(config, rescore, saved)
    protocol = PROTOCOLS[name]
    own = protocol.read_options(config)
    labels = options.value(config, "--ambig-human-labels")
    if labels is not None and not protocol.judges_suites:
        refuse(f"--ambig-human-labels: the {name} protocol's episodes have no judge metric to compare")
    if labels is not None and not models.judge:
        refuse("--ambig-human-labels: the labels are compared with the judge's scores; set --ambig-judge")
    if labels is not None and options.value(config, "--ambig-shard"):
        refuse("--ambig-human-labels: a shard holds part of the labelled items, and merge does not calibrate")
    labels_system = options.value(config, "--ambig-human-labels-system")
    if labels_system is not None and labels is None:
        refuse("--ambig-human-labels-system: only with --ambig-human-labels")
    metrics = _metrics(options.value(config, "--ambig-metrics"), suites, name)
    system = options.value(config, "--ambig-system")
    if system and system.lower().startswith("llm:") and not models.llm_model:
        refuse(
            f"--ambig-system={system}: name the model with --ambig-llm-model (and its server with "
            "--ambig-llm-base-url)"
        )
    sample = options.sample(options.value(config, "--ambig-sample"))
    repeats = options.number(
        "--ambig-repeats", options.text(config, "--ambig-repeats"), kind=int, low=1, high=1000
    )
    _check_repeated(config, name, rescore, sample, repeats)
    saved_data = saved.get("data", {})
    executor = read_executor(config)
    gates = GateConfig.read(config, base, suites, partial(suite_metrics, protocol=name), metrics)
    if repeats == 1 and any(t.of_trials for t in gates.fail_under):
        refuse("--ambig-fail-under: pass^k (METRIC^k) needs repeated trials, --ambig-repeats=K with K > 1")
    return RunConfig(
        suites=suites,
        data=_data(options.value(config, "--ambig-data"), suites, base)
        or {k: _location("--ambig-rescore", v, base) for k, v in saved_data.items() if k in suites},
        loader=_loader(config, saved),
        limit=options.number("--ambig-limit", limit, kind=int, low=1, high=10**9) if limit else None,
        seed=options.number(
            "--ambig-seed", options.text(config, "--ambig-seed"), kind=int, low=0, high=2**32 - 1
        ),
        sample=sample,
        repeats=repeats,
        system=system,
        timeout=timeout or None,
        report_dir=_report(report, base),
        pr_comment=pr_comment,
        metrics=metrics,
        cache_dir=base / Path(cache_dir).expanduser() if cache_dir else None,
        reader=reader if protocol.judges_suites else None,  # an ini's reader reads no episode
        device=parse_device(options.value(config, "--ambig-device")),
        settings=_settings(config, saved),
        profile=options.choice(config, "--ambig-scorer-profile"),
        concurrency=_concurrency(config, executor),
        score_workers=options.workers("--ambig-score-workers", options.text(config, "--ambig-score-workers")),
        rate=options.number("--ambig-rate", rate, low=0.001, high=1e6) if rate else None,
        max_text=options.number(
            "--ambig-max-text", options.text(config, "--ambig-max-text"), kind=int, low=200, high=2**31
        ),
        resume=options.value(config, "--ambig-resume") is not None,
        rescore=rescore,
        rescored=card,
        shard=scheduled.shard if scheduled else options.shard(shard),
        shard_scheduler=scheduled,
        protocol=name,
        protocol_options=own,
        models=models if protocol.uses_judge(own) else dataclasses.replace(models, judge=None),
        retrieval=RetrievalConfig.read(config, base),
        gates=gates,
        human_labels=base / Path(labels).expanduser() if labels else None,
        human_labels_system=labels_system,
        executor=executor,
        exports=_exports(options.value(config, "--ambig-export"), report),
    )


def _concurrency(config: pytest.Config, executor: Executor) -> int:
    """``--ambig-concurrency``; left at its default, the executor's own default where it has
    one (Ray's: two items in flight per actor)."""
    own = executor.concurrency()
    if own is not None and not options.chosen(config, "--ambig-concurrency"):
        return own
    return options.number(
        "--ambig-concurrency",
        options.text(config, "--ambig-concurrency"),
        kind=int,
        low=1,
        high=options.MAX_THREADS,
    )


def _check_repeated(
    config: pytest.Config, protocol: str, rescore: Path | None, sample: float | None, repeats: int
) -> None:
    """What ``--ambig-sample`` and ``--ambig-repeats`` cannot go with: a protocol that does
    not repeat trials (``Protocol.repeats_trials``) or, for a sample, whose suite values are
    not means over items (``suite_values_are_item_means``), replayed answers (one per item), and,
    for a sample, the other ways of choosing items (its weights are of the whole data)."""
    if repeats > 1 and not PROTOCOLS[protocol].repeats_trials:
        refuse(f"--ambig-repeats: only with the single-shot protocol, not --ambig-protocol={protocol}")
    if repeats > 1 and rescore is not None:
        refuse("--ambig-repeats: --ambig-rescore replays one saved answer per item; run the system again")
    if sample is None:
        return
    if not PROTOCOLS[protocol].suite_values_are_item_means:
        refuse(f"--ambig-sample: only with the single-shot protocol, not --ambig-protocol={protocol}")
    for other in ("--ambig-limit", "--ambig-shard", "--ambig-rescore", "--ambig-sequential"):
        if options.value(config, other):
            refuse(f"--ambig-sample: not with {other} (the sample's weights are of every item of the data)")
