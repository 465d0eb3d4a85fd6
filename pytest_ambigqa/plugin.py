"""pytest hooks and fixtures of pytest-ambigqa; each delegates to the session's objects.

Only the options (and the hook declarations) are loaded for every pytest run; the rest is
imported when a suite is selected, so an idle plugin costs a project's test runs next to
nothing.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import pytest

import pytest_ambigqa_gate

from . import hookspecs, options

if TYPE_CHECKING:
    from .retrieval import Retriever
    from .retrieval.corpus import Corpus
    from .schema import AmbigItem, ItemResult
    from .session.run import Run


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)
    pluginmanager.register(_QuietAsyncio(), "ambigqa-asyncio")
    # Registered with this module, so a plugin loaded after it still overrides them
    # (among plugins, the fixture registered last wins); pytest's config is its first plugin.
    config = pluginmanager.get_plugin("pytestconfig")
    assert isinstance(config, pytest.Config)
    pluginmanager.register(_session_fixtures(config), "ambigqa-session-fixtures")


class _QuietAsyncio:
    """pytest-asyncio, which deepeval brings with the ``judge`` and ``all`` extras, warns at
    the start of every run of a project that has not set ``asyncio_default_fixture_loop_scope``
    (under ``-n 2`` in every process: three times). Our runs ask nothing of it, so while
    ``pytest_configure`` runs (pytest resets the warning filters after it) this one warning is
    ignored in a run that selects a suite. The project's files and ini are left alone, and so
    is any other run: there the warning is about the project's own use of pytest-asyncio."""

    @pytest.hookimpl(tryfirst=True)  # before pytest-asyncio's pytest_configure warns
    def pytest_configure(self, config: pytest.Config) -> None:
        if options.selected(config):
            warnings.filterwarnings(
                "ignore",
                message='The configuration option "asyncio_default_fixture_loop_scope" is unset',
                category=pytest.PytestDeprecationWarning,
            )


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_options(parser)


def pytest_report_header(config: pytest.Config) -> str | None:
    if config.option.verbose > 0 and pytest_ambigqa_gate.blocked_by_us(config.pluginmanager):
        return "ambigqa: deepeval's pytest plugin is not loaded in this run (-p deepeval loads it)"
    return None


def pytest_configure(config: pytest.Config) -> None:
    if not options.selected(config):
        if options.typed(config):  # options that would do nothing: say so
            from .session import refuse_idle_options

            refuse_idle_options(config)
        return
    pytest_ambigqa_gate.quiet()  # before any test imports deepeval (our judge); workers inherit it
    _load_unrewritten(config)
    # Imported by name, not as ``from . import session``: pytester's inline runs drop the
    # package's submodules from sys.modules between runs, and the package attribute would
    # keep the previous run's module (and its stash keys).
    from .session import start

    start(config)


def _load_unrewritten(config: pytest.Config) -> None:
    """Import the rest of the package as plain Python, not through pytest's assertion rewriter.

    pytest marks every module of a ``pytest11`` distribution for rewriting; ours hold no test
    assertions (a user's ``assert_ambig`` raises its own message), and the rewriter's slower
    load of the ~100 modules a run imports cost a 1-item run about 20 ms (``bench/startup.py``).
    """
    must = getattr(getattr(config.pluginmanager, "rewrite_hook", None), "_must_rewrite", None)
    if isinstance(must, set):
        must.discard(__name__.partition(".")[0])


def pytest_unconfigure(config: pytest.Config) -> None:
    if options.selected(config):
        from .session import stop

        stop(config)


def _run(config: pytest.Config) -> Run:
    from .session.run import RUN_KEY

    run = config.stash.get(RUN_KEY, None)
    if run is None:
        pytest.skip("no ambigqa suite selected (use --ambig-suite)")
    return run


@pytest.fixture
def ambig_item(request: pytest.FixtureRequest) -> AmbigItem:
    """The benchmark item of this test (tests taking it run once per selected item)."""
    _run(request.config)
    from .session.collection import ITEM_KEY

    item = request.node.stash.get(ITEM_KEY, None)
    if item is None:  # pragma: no cover - parametrization provides it for user tests
        pytest.skip("no ambigqa item for this test")
    return item


def _session_fixtures(config: pytest.Config) -> type:
    """The session's fixtures, closed over the run's config instead of asking for ``request``:
    pytest resolves a fixture's arguments again for every test that uses it, and makes
    ``request`` anew each time (pytest 9: a fixture definition, from the function's
    signature), so every builtin test paid it through ``ambig_system`` (about 0.06 ms, issue
    44). A class of their own for each config (pytester runs several in one process)."""

    @pytest.fixture(scope="session")
    def ambig_system() -> Any:
        """The system under test; override it in conftest.py to return your own callable."""
        return _run(config).default_system

    @pytest.fixture(scope="session")
    def ambig_corpus() -> Corpus:
        """The retrieval corpus: the selected suites' passages, or ``--ambig-corpus``."""
        return _run(config).corpus

    @pytest.fixture(scope="session")
    def ambig_retriever() -> Retriever:
        """The ``--ambig-retriever`` over the corpus: ``retriever(query, k)``, ``retriever.batch(...)``."""
        run = _run(config)
        if not run.cfg.retrieval.searches:
            pytest.skip("no retriever configured (--ambig-retriever=none)")
        from .errors import RetrieverUnavailable
        from .output import for_terminal

        try:
            run.check_retriever_for(None)
            retriever = run.retriever()
            assert retriever is not None  # the run searches: checked above
            return retriever
        except (pytest.UsageError, RetrieverUnavailable) as exc:
            pytest.fail(for_terminal(f"ambigqa: {exc}"), pytrace=False)

    fixtures = (ambig_system, ambig_corpus, ambig_retriever)
    return type("AmbigSessionFixtures", (), {f.name: f for f in fixtures})


@pytest.fixture
def ambig_result(request: pytest.FixtureRequest, ambig_item: AmbigItem, ambig_system: Any) -> ItemResult:
    """Ask the system about the item and score it; a failing system makes this test an error."""
    from .session.runner import RUNNER_KEY

    _run(request.config)
    return request.config.stash[RUNNER_KEY].test(request.node, ambig_item, ambig_system)
