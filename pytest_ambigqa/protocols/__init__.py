"""How an item is put to a system, one strategy per protocol (``base.py``): single-shot, the
published protocol, and interactive clarification (``interactive.py``; ``users.py``, the
LLM user). ``--ambig-protocol`` names one of :data:`PROTOCOLS`."""

from __future__ import annotations

from ..suites import SUITES
from .base import Protocol, SingleShot
from .interactive import Interactive

PROTOCOLS: dict[str, type[Protocol]] = {p.name: p for p in (SingleShot, Interactive)}


def suite_metrics(suite: str, protocol: str) -> tuple[str, ...]:
    """The metrics a suite reports under a protocol."""
    return PROTOCOLS[protocol]().metrics(SUITES[suite])
