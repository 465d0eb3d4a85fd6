"""How an item is put to a system, one strategy per protocol (``base.py``): single-shot, the
published protocol, and interactive clarification (``interactive/``). ``--ambig-protocol``
names one of :data:`PROTOCOLS` (its choices, listed in ``options.py``, are held equal to them by
``tests/test_layout.py``); a new protocol is its package and one line here. Callers ask a
protocol what it can do (its capabilities, ``base.py``), never which one it is."""

from __future__ import annotations

from ..suites import SUITES
from .base import Protocol, SingleShot
from .interactive import Interactive

PROTOCOLS: dict[str, type[Protocol]] = {p.name: p for p in (SingleShot, Interactive)}
DEFAULT_PROTOCOL = SingleShot.name  # the first choice of --ambig-protocol; a saved run that names none


def protocol_of(setup: str | None) -> Protocol:
    """The protocol a setup's name (or a published row's ``protocol``) says: a protocol's own
    name (``Protocol.setup`` gives it), else single-shot, whose setups are the suites' settings."""
    return PROTOCOLS.get(setup or "", SingleShot)()


def suite_metrics(suite: str, protocol: str) -> tuple[str, ...]:
    """The metrics a suite reports under a protocol."""
    return PROTOCOLS[protocol]().metrics(SUITES[suite])
