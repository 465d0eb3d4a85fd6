"""What every suite provides: a loader for its real file formats and its scoring protocol."""

from __future__ import annotations

import dataclasses
import hashlib
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..errors import DataError
from ..metrics import METRICS
from ..metrics.scoring import Failure, Scorers, offloadable, score
from ..metrics.spec import Scored
from ..options import default
from ..rooms import room
from ..schema import AmbigItem, Answer, ItemResult, Status
from .records import file_sha256, member_text, parquet_text, read_text, repair_text
from .sources import HubRef, Read, Sources, member_of, read_sources, release


@dataclass(frozen=True)
class Setup:
    """The published setup a run's numbers stand beside: what the system was given, and so
    which published rows it compares with (how items are put to a system is a protocol,
    ``protocols/``).

    ``name`` matches the protocol of published rows (``suites/<name>/published.toml``), or
    ``reads_as`` does for an oracle variant of a published protocol; ``upper_bound`` says
    why no published row is comparable (the system got gold inputs); ``notes`` are caveats
    that leave the protocol as it is (an easier corpus, a sample).

    ``evidence`` is what the protocol promises each item; ``chosen`` why the run put the items
    this way, where the system's inputs decided it; ``received`` what the system was given on
    this run, one phrase an input (empty: a scorecard from before it was recorded). The papers'
    rows are context, not a comparison, where ``unlike`` says why the data is not the
    published benchmark's, or ``easier`` why the run's search is easier than the papers'.
    """

    name: str
    label: str
    upper_bound: str | None = None
    notes: tuple[str, ...] = ()
    reads_as: str | None = None
    evidence: Evidence = "retriever"
    chosen: str | None = None
    received: tuple[str, ...] = ()
    unlike: str | None = None
    easier: str | None = None

    @property
    def published_as(self) -> str:
        """The published protocol whose rows are put beside this run."""
        return self.reads_as or self.name

    def with_subset(self, chosen: int, total: int) -> Setup:
        """Noting that ``chosen`` of the data file's ``total`` items ran: a merge's note
        replaces its shards' (each ran a part; together they may run them all)."""
        notes = [n for n in self.notes if not n.startswith(_SUBSET)]
        if chosen < total:
            notes.append(f"{_SUBSET}{chosen} of the file's {total} items")
        return dataclasses.replace(self, notes=tuple(notes))


_SUBSET = "a subset: "

# What a protocol promises each item: a retriever over the benchmark's corpus, the data
# file's own passages, or nothing (closed book).
Evidence = Literal["retriever", "passages", "none"]

OPEN_RETRIEVAL = Setup("open-retrieval", "open retrieval: systems get a retriever, no passages")


@dataclass(frozen=True)
class LoaderOption:
    """An option a suite's loader reads (``Suite.loader_options``), declared by the suite as
    its settings are: the flag (a built-in suite's defined in ``options.py`` with every other
    option, a plugin's added by its own ``pytest_addoption``), the key its value has in
    :class:`LoadOptions` and in the scorecard's config, and how the option's text becomes
    that value: ``read(None)`` is its value when the option is not given. ``session/config.py``
    reads every registered suite's, ``card/gold.py`` reads them back from a saved run and
    ``card/compare.py`` names a difference in one as ``moves`` says."""

    flag: str
    key: str
    read: Callable[[str | None], Any]
    moves: str  # what a difference in it is called where two runs are compared (card/compare.py)


# What every suite's loader reads: the split of a Hub release it fetches (``hub.py``), and of a
# file that holds several (ASQA.json); a known release is identified by it (``sources.py``).
SPLIT = LoaderOption(
    "--ambig-split",
    "split",
    lambda text: text or default("--ambig-split") or "dev",
    "the ASQA split (--ambig-split)",
)


@dataclass(frozen=True)
class LoadOptions:
    """What a loader reads besides the data: its suite's loader options' values by their key
    (an absent one is its default, ``LoaderOption.read(None)``) and whether to stay offline."""

    values: Mapping[str, Any] = field(default_factory=dict)
    offline: bool = False  # an hf:// source from the Hub cache alone (xdist workers, reports read back)

    def get(self, option: LoaderOption) -> Any:
        """A loader option's value: as given, else its default."""
        return self.values[option.key] if option.key in self.values else option.read(None)

    @property
    def split(self) -> str:
        """The split to read (:data:`SPLIT`, every suite's)."""
        return str(self.get(SPLIT))


@dataclass(frozen=True)
class LoadedSuite:
    """A suite's selected items and where they came from (for the scorecard header)."""

    suite: Suite
    items: tuple[AmbigItem, ...]
    source: str
    sha256: str
    is_sample: bool
    total: int  # items in the file, before --ambig-limit
    repairs: tuple[str, ...] = ()  # what was made encodable (records.repair_text), to warn about
    revision: str | None = None  # the commit an hf:// source was read at
    files: tuple[tuple[str, str], ...] = ()  # (name, sha256) of every file read
    # The known release the data is, when it is a whole known split of one (suites/sources.py):
    # "ASQA dev split, din0s/asqa@0123456789ab"; None for a sample or a file we cannot identify.
    release: str | None = None


class Suite:
    """Subclasses set the class attributes and implement ``parse``; each metric they list
    is computed by the scorer its spec names (``metrics/``)."""

    name: str
    title: str
    metrics: tuple[str, ...]
    sample_file: str
    sliced_by_type = False  # report per ambiguity type (MARCH Table 4)
    uses_profile = False  # its long-answer metrics follow the scorer profile (ALCE or ASQA)
    headline_setting = "all"  # the slice of published rows the scorecard's "papers" column shows
    judge_packages: tuple[str, ...] = ()  # what its judge metrics import beyond openai
    gold_evidence_in_corpus = False  # its passages are the gold evidence (a search of them is easy)
    evidence_hint = ""  # where the benchmark's evidence is published, for a run that has none
    published_split: str | None = None  # the split its published rows report (--ambig-split)
    # The published settings it can run (--ambig-setting=NAME=SETTING), the first its default;
    # what each gives a system, scores and compares with is the suite's own (inputs, protocol).
    settings: tuple[str, ...] = ()
    # The options its loader reads (:class:`LoaderOption`), the way it declares its settings;
    # every suite's loader reads the split (a Hub release's, or a file's that holds several).
    loader_options: tuple[LoaderOption, ...] = (SPLIT,)

    @property
    def stored_setting_key(self) -> str:
        """The key its setting has in the fingerprint of the stored answers' inputs
        (``evaluate.py``): ``<name>_setting``; a suite whose answers were stored under
        another key keeps it, so that they are found again."""
        return f"{self.name}_setting"

    def setting(self, scorers: Scorers) -> str | None:
        """The setting this run gives the suite (None: it has none)."""
        return scorers.settings.get(self.name, self.settings[0]) if self.settings else None

    def reported(self) -> tuple[str, ...]:
        """Its metrics, then those registered for it from outside (``MetricSpec.suites``): a
        plugin's metric runs on a built-in suite without subclassing it."""
        added = tuple(n for n, spec in METRICS.items() if self.name in spec.suites and n not in self.metrics)
        return self.metrics + added

    def warm(self, scorers: Scorers) -> None:
        """Heavy imports its scorers need, once, before the first item is scored."""

    def heavy(self, scorers: Scorers) -> bool:
        """Whether :meth:`warm` has heavy imports to make for ``scorers`` (the runner then
        starts them in the background as the run is configured)."""
        return False

    def own_corpus_note(self, protocol: Setup, passages: int) -> str | None:
        """The caveat for a retriever that searches the suites' own files, not the papers' corpus."""
        if protocol.name != "open-retrieval":
            return None
        gold = f", {self.title}'s being its gold evidence" if self.gold_evidence_in_corpus else ""
        return (
            f"the retriever searches the {passages} passages of the selected suites' own "
            f"files{gold}, not Wikipedia as the papers do: an easier search (give a corpus with "
            "--ambig-corpus)"
        )

    def sample_path(self) -> Path:
        """The bundled sample (a plugin's suite keeps its own elsewhere: override this)."""
        return room("suites") / self.name / self.sample_file

    def published_path(self) -> Path:
        """The papers' rows for this suite (``suites/<name>/published.toml``); may be absent."""
        return room("suites") / self.name / "published.toml"

    def sources_path(self) -> Path:
        """Where the benchmark is published (``suites/<name>/sources.toml``); may be absent."""
        return room("suites") / self.name / "sources.toml"

    def sources(self) -> Sources:
        return read_sources(self.name, self.sources_path())

    def load(self, path: Path | HubRef | None, options: LoadOptions) -> LoadedSuite:
        """The items of a data file (the bundled sample when None), or of an ``hf://`` source."""
        if isinstance(path, HubRef):
            return self._load_hub(path, options)
        is_sample = path is None
        path = self.sample_path() if path is None else path
        text = read_text(path)
        files = ((path.name, file_sha256(path)),)
        known = None if is_sample else release(self.sources(), Read(files), options.split)
        return self._loaded([(path, text)], options, str(path), is_sample, files=files, release=known)

    def _load_hub(self, ref: HubRef, options: LoadOptions) -> LoadedSuite:
        """The items of the files an ``hf://`` URL names, or of its split, at one commit."""
        from .hub import fetch

        sources = self.sources()
        source = sources.find(ref.repo)
        fetched = fetch(ref, options.split, source, offline=options.offline)
        texts: list[tuple[Path, str]] = []
        files = []
        for name, local, digest in fetched.files:
            files.append((name, digest))
            member = member_of(ref, source) if name.endswith(".tar") else None
            if member is not None:
                inner, text = member_text(local, member)
                files.append((f"{name}/{inner}", hashlib.sha256(text.encode("utf-8")).hexdigest()))
                texts.append((local / inner, text))
            elif name.endswith(".parquet"):
                texts.append((local, parquet_text(local)))
            else:
                texts.append((local, read_text(local)))
        read = Read(tuple(files), ref.repo, fetched.commit, fetched.chosen_by_split, fetched.only_of_split)
        return self._loaded(
            texts,
            options,
            str(fetched.pinned),
            False,
            files=tuple(files),
            revision=fetched.commit,
            release=release(sources, read, options.split),
        )

    def _loaded(
        self,
        texts: list[tuple[Path, str]],
        options: LoadOptions,
        source: str,
        is_sample: bool,
        **where_from: Any,
    ) -> LoadedSuite:
        """Parsed, made encodable and checked for duplicate ids: the suite's items from ``texts``
        (each file's path and text), in file order."""
        parsed: list[tuple[str, AmbigItem]] = []
        repairs: list[str] = []
        for path, text in texts:
            found = self.parse(path, text, options)
            if not found:
                raise DataError(f"{path}: no {self.title} items found")
            found, repaired = repair_text(path, text, found)
            parsed += found
            repairs += repaired
        seen: dict[str, str] = {}
        for where, item in parsed:
            if item.id in seen:
                raise DataError(f"{where}: duplicate item id '{item.id}' (first at {seen[item.id]})")
            seen[item.id] = where
        digest = hashlib.sha256("".join(text for _, text in texts).encode("utf-8")).hexdigest()
        items = tuple(dataclasses.replace(item, index=n) for n, (_, item) in enumerate(parsed))
        return LoadedSuite(self, items, source, digest, is_sample, len(items), tuple(repairs), **where_from)

    def parse(self, path: Path, text: str, options: LoadOptions) -> list[tuple[str, AmbigItem]]:
        raise NotImplementedError

    def inputs(self, item: AmbigItem, scorers: Scorers) -> dict[str, Any]:
        """The item's inputs a system may declare, under this run's protocol."""
        return {"passages": list(item.passages), "conditions": []}

    def gold_inputs(self, scorers: Scorers) -> tuple[str, ...]:
        """The inputs this run's setting fills from the gold item (CondAmbigQA's gold
        conditions): a system that reads one is an upper bound, as its description says."""
        return ()

    def outside_setting(self, scorers: Scorers) -> dict[str, str]:
        """Metrics this run's setting does not report, with the reason (never scored, not even 0)."""
        return {}

    def protocol(self, scorers: Scorers, inputs: Sequence[str], has_passages: bool) -> Setup:
        """This run's protocol, given the inputs the system declares and whether the data
        file hands the items passages."""
        return OPEN_RETRIEVAL

    def score(
        self,
        item: AmbigItem,
        answer: Answer,
        scorers: Scorers,
        done: Mapping[str, Scored | Failure] = {},
    ) -> Scored:
        """The suite's metrics of one answer; the long-answer ones read the text its scorer
        profile reads (ALCE: the first line, ``[n]`` marks removed; else the whole answer).
        ``done``: what a scoring worker process computed of it (:meth:`offload`)."""
        return score(
            self.reported(), item, answer, self._context(scorers), self.outside_setting(scorers), done
        )

    def offload(self, scorers: Scorers) -> tuple[tuple[str, ...], Scorers]:
        """What of scoring an answer a scoring worker process can do (``store/scoring.py``):
        the names of the pure scorers it runs, and the context they read, without the models
        (which stay with the run). A suite with a scoring of its own offloads nothing."""
        context = self._context(scorers)
        names = offloadable(self.reported(), context) if type(self).score is Suite.score else ()
        return names, dataclasses.replace(context, reader=None, judge=None)

    def _context(self, scorers: Scorers) -> Scorers:
        return scorers if self.uses_profile else dataclasses.replace(scorers, profile=None)

    def failed_result(
        self, item: AmbigItem, scorers: Scorers, status: Status, error: str, duration: float = 0.0
    ) -> ItemResult:
        """An item with no answer: 0 for correctness metrics, the others unscored."""
        unscored = scorers.unavailable(self.reported()) | scorers.keep(self.outside_setting(scorers))
        reason = "system error" if status == "error" else error
        scores = {}
        for name in (m for m in self.reported() if scorers.wants(m)):  # the parts of DR too
            if name in unscored or METRICS[name].suite_level:
                continue
            if METRICS[name].correctness:
                scores[name] = 0.0
            else:
                unscored[name] = reason
        return ItemResult(
            suite=item.suite,
            item_id=item.id,
            status=status,
            ambiguity_type=item.ambiguity_type,
            scores=scores,
            unscored=unscored,
            error=error,
            duration=duration,
            index=item.index,
        )


def _strata(items: Sequence[AmbigItem]) -> dict[str | None, list[int]]:
    strata: dict[str | None, list[int]] = {}
    for index, item in enumerate(items):
        strata.setdefault(item.ambiguity_type, []).append(index)
    return strata


def shard(items: Sequence[AmbigItem], number: int, count: int) -> tuple[AmbigItem, ...]:
    """Shard ``number`` (1-based) of ``count``: every count-th item of each ambiguity type.

    Items are dealt round the shards type after type (carrying on where the last type
    stopped), so shards differ by at most one item; they partition the items, in file order.
    """
    chosen, dealt = [], 0
    for members in _strata(items).values():
        chosen += [i for j, i in enumerate(members) if (dealt + j) % count == number - 1]
        dealt += len(members)
    return tuple(items[i] for i in sorted(chosen))


def stratified_sample(items: Sequence[AmbigItem], limit: int, seed: int) -> tuple[AmbigItem, ...]:
    """``limit`` items drawn per ambiguity type in proportion to its share (largest remainder).

    Suites without types form one stratum. The draw is seeded and the chosen items keep
    their file order, so a limited run is reproducible and reads like the full one.
    """
    if limit >= len(items):
        return tuple(items)
    strata = _strata(items)
    quotas = {k: limit * len(v) / len(items) for k, v in strata.items()}
    counts = {k: int(q) for k, q in quotas.items()}
    by_remainder = sorted(strata, key=lambda k: -(quotas[k] - counts[k]))  # stable: file order breaks ties
    for k in by_remainder[: limit - sum(counts.values())]:
        counts[k] += 1
    rng = random.Random(seed)
    chosen = sorted(i for k, members in strata.items() for i in rng.sample(members, counts[k]))
    return tuple(items[i] for i in chosen)
