"""Where a system's calls run, chosen with ``--ambig-executor``: a strategy behind one small
interface, as pytest-xdist's schedulers are behind ``pytest_xdist_make_scheduler``.

An :class:`Executor` is given each item's :class:`Call` (``submit``) and answers with a
future that holds the system's raw output, or the item's failure: :class:`SystemFailure`
(the system's own), or :class:`ActorUnavailable` (a *loss*: the worker that held the call
went away; the item fails with that reason). ``close`` ends its workers with the run. The
rest of the run (asking ahead, storing, scoring, reporting) is the same whatever runs the
calls.

Built in: ``local`` (``executors/local.py``: the run's own threads) and ``ray``
(``executors/ray/``: Ray actors, the only package that imports Ray). A plugin adds its own
by returning its class from the ``pytest_ambigqa_executors`` hook; ``--ambig-executor=NAME``
(or ``NAME://ADDRESS``) chooses it by its ``name``.

Capabilities beyond calling the system are optional: an executor that ``constructs`` the
system in its own workers (from ``--ambig-system``) is told the spec at :meth:`Executor.setup`;
one that runs local models (``models``: ``reader``, ``embedder``) places them with
:meth:`Executor.place_reader` and :meth:`Executor.place_embedder`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from .. import options
from ..errors import ActorUnavailable, SystemFailure
from ..options import refuse
from ..output import scrub
from ..registry import Registry
from ..schema import AmbigItem

if TYPE_CHECKING:
    import pytest

    from ..models.reader import HFReader
    from ..systems import System

OPTION = "--ambig-executor"


@dataclass(frozen=True)
class Call:
    """One call of the system for one item: what ``System.call`` takes, and the run's
    :class:`System` (an executor that constructs its own in its workers calls that instead)."""

    system: System
    item: AmbigItem
    timeout: float | None
    extras: Mapping[str, Any]

    def run(self) -> Any:
        """The call, made here (in whatever thread or process the executor runs it)."""
        return self.system.call(self.item, self.timeout, self.extras)


class Executor:
    """Where the system's calls run. A subclass sets ``name``, reads its own options in
    :meth:`read`, and implements :meth:`submit` (and :meth:`close` if it holds workers)."""

    name: ClassVar[str]
    # how --ambig-executor names it, in the message that lists the known executors
    forms: ClassVar[tuple[str, ...]] = ()
    own_options: ClassVar[tuple[str, ...]] = ()  # its own options: refused with another executor
    # where it constructs the system from --ambig-system itself ("each Ray actor"); None: it
    # calls the run's system (a fixture's too)
    constructs: ClassVar[str | None] = None
    models: tuple[str, ...] = ()  # the local models it runs itself: "reader", "embedder"

    @classmethod
    def read(cls, config: pytest.Config, value: str) -> Executor:
        """The executor ``--ambig-executor=value`` names, its options read and checked (bad
        input: :func:`pytest_ambigqa.options.refuse`, one line naming the option)."""
        return cls()

    @property
    def label(self) -> str:
        """How a message names it: ``--ambig-executor=LABEL`` (no password in it)."""
        return self.name

    def setup(self, spec: str, search_dir: Path, concurrency: int) -> None:
        """Once, before the first call: the run's ``--ambig-system`` (for an executor that
        constructs it), where it is looked for, and the calls the run keeps in flight."""

    def submit(self, call: Call) -> Future[Any]:
        raise NotImplementedError

    def close(self) -> None:
        """The run ended: its workers go (a call still waiting fails as a loss)."""

    def concurrency(self) -> int | None:
        """``--ambig-concurrency`` when it is not given (None: the option's default)."""
        return None

    def shown(self) -> str | None:
        """The terminal header's words for it (None: unsaid, as the local executor is)."""
        return self.label

    def to_dict(self) -> dict[str, Any]:
        """What the scorecard's config records of it."""
        return {"executor": self.label}

    def place_reader(self, reader: HFReader, concurrency: int) -> Any:
        """``reader`` where this executor runs it, ``concurrency`` reads in flight (only when
        ``"reader" in models``)."""
        raise NotImplementedError

    def place_embedder(self, path: Path, device: str, concurrency: int) -> Any:
        """The dense retriever's embedder where this executor runs it (``"embedder" in models``)."""
        raise NotImplementedError

    def device_used(self) -> dict[str, str] | None:
        """Where the models it placed ran; None: the run's process ran them (it says where)."""
        return None

    def through(self, system: System) -> System:
        """``system`` (the same label, inputs and scorecard), its calls submitted here."""

        def call(item: AmbigItem, timeout: float | None, extras: Mapping[str, Any]) -> Any:
            done = self.submit(Call(system, item, timeout, extras))
            error = done.exception()  # waits; read, not raised, so that the future adds no frames
            if error is None:
                return done.result()
            if isinstance(error, ActorUnavailable):  # lost with its worker: the item's failure, saying why
                raise SystemFailure(str(error)) from None
            raise error  # the system's own: its trace is the system's frames (this one is ours)

        return dataclasses.replace(system, call=call)


EXECUTORS: Registry[type[Executor]] = Registry("executor")


def _builtin() -> None:
    from .local import LocalExecutor
    from .ray import RayExecutor

    EXECUTORS.register(LocalExecutor.name, LocalExecutor)
    EXECUTORS.register(RayExecutor.name, RayExecutor)


_builtin()


def read_executor(config: pytest.Config) -> Executor:
    """``--ambig-executor``: the registered executor it names (``NAME`` or ``NAME://...``),
    with the options of the others refused, and what no executor but the local one can do."""
    raw = options.text(config, OPTION)
    name = raw.partition("://")[0].lower()
    chosen = EXECUTORS.get(name)
    if chosen is not None and "://" in raw and not any("://" in form for form in chosen.forms):
        chosen = None  # an address for an executor that takes none
    if chosen is None:
        forms = [form for cls in EXECUTORS.values() for form in (cls.forms or (cls.name,))]
        known = f"{', '.join(forms[:-1])} or {forms[-1]}" if len(forms) > 1 else forms[0]
        refuse(f"{OPTION}: '{scrub(raw)}' is not {known}")  # a password in it is never shown
    for cls in EXECUTORS.values():
        own = [o for o in cls.own_options if cls is not chosen and _given(config, o)]
        if own:
            refuse(f"{', '.join(own)}: only with {OPTION}={' or '.join(cls.forms or (cls.name,))}")
    executor = chosen.read(config, raw)
    if chosen.name != "local" and options.value(config, "--ambig-rescore") is not None:
        refuse(f"{OPTION}={executor.label}: --ambig-rescore asks no system")
    system = options.value(config, "--ambig-system")
    if chosen.constructs and system and system.lower().startswith("llm:"):
        refuse(f"{OPTION}={executor.label}: not with --ambig-system={system} (its client is in this process)")
    return executor


def _given(config: pytest.Config, flag: str) -> bool:
    """Whether ``flag`` was set on the command line (as :func:`options.given`, for a plugin's
    executor's options too, which the plugin adds and the table does not hold)."""
    try:
        return config.getoption(flag.lstrip("-").replace("-", "_")) is not None
    except ValueError:  # declared, but the plugin added no such option: never given
        return False
