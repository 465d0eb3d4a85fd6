"""Where the repository's top-level rooms are: ``suites/`` (each suite's sample, README and
published numbers) and ``baselines/`` (the reference systems).

The wheel maps them into the package as ``_rooms/``; a source checkout (an editable
install) has them beside the package. Everything that reads them asks here, so both
installs find the same files.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).parent


def room(name: str) -> Path:
    """The directory of the room ``name`` ("suites" or "baselines")."""
    packaged = _PACKAGE / "_rooms" / name
    return packaged if packaged.is_dir() else _PACKAGE.parent / name
