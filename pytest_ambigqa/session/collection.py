"""The benchmark items as tests: ``test_ambig[<suite>-<id>]`` under the first directory
pytest collects, and ``ambig_item`` parametrizing a user's own tests."""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from ..assertions import explain
from ..card import gates
from ..options import runs_no_tests
from ..output import escape_controls, for_terminal
from ..schema import AmbigItem, ItemResult
from ..suites.sources import HubRef
from .builtin import test_function
from .run import RUN_KEY, Run

ITEM_KEY: pytest.StashKey[AmbigItem] = pytest.StashKey()  # the benchmark item of a builtin test
VERDICT_KEY: pytest.StashKey[str] = pytest.StashKey()  # why it falls short of --ambig-item-min
# What asks and scores a builtin test's item (the runner's ``Runner.verdict``, set when the
# session starts): the test, its item and its ``ambig_system`` value in, the item's verdict out.
ASK_KEY: pytest.StashKey[Callable[[pytest.Function, AmbigItem, Any], str | None]] = pytest.StashKey()
COLLECTOR_NAME = "ambigqa"
TEST_NAME = "test_ambig"


def node_key(key: str) -> str:
    """An item's key as its test's name holds it: control characters escaped (``\\x1b``), since
    pytest prints the name as it is (an id from the data could change the terminal's title
    or clear its screen)."""
    return escape_controls(key)


def key_of(nodeid: str) -> str:
    """The item key of a builtin test's node id, as :func:`node_key` writes it ("" for any
    other test): all that follows the collector's ``ambigqa::test_ambig[``, which an id may
    itself contain."""
    head, mark, params = nodeid.partition(f"{COLLECTOR_NAME}::{TEST_NAME}[")
    builtin = mark and (not head or head.endswith("/")) and params.endswith("]")
    return params[:-1] if builtin else ""


class AmbigItems(pytest.Collector):
    """The benchmark items of the selected suites, as ``test_ambig[<suite>-<id>]`` tests."""

    def collect(self) -> Iterator[AmbigFunction]:
        run = self.config.stash[RUN_KEY]
        fixtureinfo = None  # the same for every item: resolve fixtures once, not 10,000 times
        for item in run.items:
            function = AmbigFunction.from_parent(
                self,
                name=f"{TEST_NAME}[{node_key(item.key)}]",
                callobj=test_function,
                fixtureinfo=fixtureinfo,
            )
            fixtureinfo = function._fixtureinfo
            function.stash[ITEM_KEY] = item
            yield function


class AmbigFunction(pytest.Function):
    """A builtin item's test. Its item is asked and scored in its setup, once its fixtures
    are (:meth:`setup`), so the test asks pytest for no fixture of its own but ``ambig_system``:
    pytest builds a fixture definition (``inspect.signature`` included) for each ``request`` a
    function-scoped fixture asks, a cost of every item (issue 44)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # pytest >= 9.2 keeps node ids structured and splits "name[params]" when it reads
        # stored ids (--lf, --deselect); build ours the same way so they compare equal.
        node_id = getattr(self, "_id", None)
        if node_id is not None and hasattr(type(node_id), "parse"):
            self._id = type(node_id).parse(self.nodeid)

    def setup(self) -> None:
        """The system is asked here, inside pytest's setup of the test as a fixture would be:
        a system that fails makes the test an error, and what it prints, logs or leaves
        unraisable is the setup's."""
        __tracebackhide__ = True  # a fixture's error shows the fixture's frames, not these
        if VERDICT_KEY in self.stash:  # left by a run with no call phase (--setup-only)
            del self.stash[VERDICT_KEY]
        super().setup()
        if runs_no_tests(self.config):  # --setup-plan: fixtures planned, not run; nor the item
            return
        verdict = self.config.stash[ASK_KEY](self, self.stash[ITEM_KEY], self.funcargs["ambig_system"])
        if verdict is not None:
            self.stash[VERDICT_KEY] = verdict

    def runtest(self) -> None:
        """The test function through pytest's own call (``pytest_pyfunc_call``, ``--trace``),
        then a failure where the item falls short of ``--ambig-item-min``, with the gold
        answers it missed."""
        super().runtest()
        verdict = self.stash.get(VERDICT_KEY, None)
        if verdict is not None:
            del self.stash[VERDICT_KEY]  # the item outlives its run
            pytest.fail(verdict, pytrace=False)

    def reportinfo(self) -> tuple[Path, int, str]:
        """Line 0 (shown as 1) of the directory the items live in: pytest locates a skip
        from a fixture at the test's line, and asserts it has one."""
        return self.path, 0, self.name


def shortfall(config: pytest.Config, item: AmbigItem, result: ItemResult) -> str | None:
    """Why ``result`` falls short of ``--ambig-item-min``, for the terminal; None: it does not."""
    failures = gates.item_shortfalls(result.scores, result.suite, config.stash[RUN_KEY].cfg.gates.item_min)
    if not failures:
        return None
    assert result.answer is not None  # a system that failed made setup fail (Runner.test)
    return for_terminal(explain(item, result.answer, failures))


class Collection:
    """Puts the items into pytest's collection, and says in the header what was collected."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.anchor = _anchor_directory(run.config)

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector) -> Generator[None, Any, Any]:
        report = yield
        if isinstance(collector, pytest.Directory) and collector.path == self.anchor and self.run.items:
            nodeid = (
                COLLECTOR_NAME if collector.nodeid in ("", ".") else f"{collector.nodeid}/{COLLECTOR_NAME}"
            )
            report.result.append(AmbigItems.from_parent(collector, name=COLLECTOR_NAME, nodeid=nodeid))
        return report

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """A user's test taking ``ambig_item`` runs once per selected item."""
        if "ambig_item" in metafunc.fixturenames:
            items = self.run.items
            metafunc.parametrize("ambig_item", items, ids=[i.key for i in items])

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        run = self.run
        suites = ", ".join(
            f"{s.suite.name} ({len(s.items)} items{', bundled sample' if s.is_sample else ''})"
            for s in run.loaded
        )
        system = (
            "ambig_system fixture, default lexical baseline"
            if run.system_is_default
            else run.default_system.label
        )
        shown = run.executor.shown()
        executor = f"; executor: {for_terminal(shown)}" if shown else ""
        lines = [f"ambigqa: {suites}; system: {system}{executor}"]  # the local executor goes unsaid
        for loaded in run.loaded:
            asked = run.cfg.data.get(loaded.suite.name)
            if loaded.revision and isinstance(asked, HubRef):  # an hf:// source: the commit it resolved to
                resolved = asked.revision == loaded.revision
                at = "" if resolved else f" ({asked.revision or 'main'} is commit {loaded.revision})"
                read = ", ".join(f"{name} sha256 {sha[:12]}" for name, sha in loaded.files)
                lines.append(
                    f"ambigqa data: {loaded.suite.name} from {asked}{at}; read {read}; "
                    f"repeat exactly with --ambig-data={loaded.suite.name}={loaded.source}"
                )
        searched = run.cfg.retrieval
        if searched.searches and len(run.corpus):
            lines.append(
                f"ambigqa retrieval: {searched.retriever} top-{searched.top_k} over {len(run.corpus)} "
                f"passages ({run.corpus.source}); indexes in {run.cache_dir}"
            )
        elif searched.searches:  # the real ASQA dev file has none: "bm25 over 0 passages" said nothing
            lines.append(
                f"ambigqa retrieval: no passages to search ({run.corpus.source}); --ambig-corpus gives some"
            )
        return [for_terminal(line, one_line=True) for line in lines]


def _anchor_directory(config: pytest.Config) -> Path | None:
    """The first directory pytest was asked to collect: the builtin items live there.

    Naming only files (``pytest tests/test_x.py``) runs just those files' tests.
    """
    for arg in config.args:
        path = Path(config.invocation_params.dir, arg.split("::")[0]).resolve()
        if path.is_dir():
            return path
    return None
