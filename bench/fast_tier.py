"""The fast tier (``pytest -m "not slow"``, tests/README.md): its wall time, and the package's
modules none of its tests calls into (issue 41: the fast tier covers every module).

Two runs of the tier, each with ``-n 2``: one timed as a contributor runs it, then one with this
module loaded as a plugin, which records in each test (its setup, call and teardown, on every
thread) the package's functions that ran. A module counts as touched when one of its functions
ran; one that defines none (``errors``-like tables, ``__init__`` files) when a test imported it.

    python bench/fast_tier.py [--workers 2] [--touched-only]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "pytest_ambigqa"
OUT = "AMBIGQA_TOUCHED_DIR"  # where each process of the recording run writes what ran


def _tier(workers: int, *extra: str, env: dict[str, str] | None = None) -> tuple[float, str]:
    """One run of the fast tier: its wall time and its last line."""
    environ = {**os.environ, **(env or {})}
    environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), environ.get("PYTHONPATH")]))
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-m", "not slow", "-n", str(workers), "-q",
         *extra],
        cwd=ROOT, env=environ, capture_output=True, text=True,
    )  # fmt: skip
    lines = done.stdout.strip().splitlines()
    return time.perf_counter() - start, lines[-1] if lines else done.stderr[-2000:]


def _modules() -> dict[str, Path]:
    return {
        ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): path
        for path in sorted(PACKAGE.rglob("*.py"))
    }


def untouched(directory: Path) -> list[str]:
    """The package's modules no fast test called into, from the records in ``directory``."""
    ran: set[str] = set()
    imported: set[str] = set()
    for record in directory.glob("*.json"):
        data = json.loads(record.read_text())
        ran.update(data["ran"])
        imported.update(data["imported"])
    out = []
    for name, path in _modules().items():
        source = path.read_text(encoding="utf-8")
        defines = "def " in source
        if (str(path) not in ran) if defines else (name not in imported):
            out.append(name)
    return out


class _Recorder:
    """The files of the package's functions that run inside tests (a profile hook: calls only)."""

    def __init__(self) -> None:
        self.ran: set[str] = set()
        self.prefix = str(PACKAGE)

    def _profile(self, frame, event, arg) -> None:
        if event == "call":
            name = frame.f_code.co_filename
            if name.startswith(self.prefix) and frame.f_code.co_name != "<module>":
                self.ran.add(name)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        threading.setprofile(self._profile)
        sys.setprofile(self._profile)
        try:
            return (yield)
        finally:
            sys.setprofile(None)
            threading.setprofile(None)  # type: ignore[arg-type]

    def pytest_sessionfinish(self, session) -> None:
        directory = Path(os.environ[OUT])
        imported = sorted(m for m in sys.modules if m.startswith("pytest_ambigqa"))
        record = {"ran": sorted(self.ran), "imported": imported}
        (directory / f"{os.getpid()}.json").write_text(json.dumps(record))


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get(OUT):
        config.pluginmanager.register(_Recorder(), "ambigqa-touched")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--touched-only", action="store_true", help="skip the timed run")
    args = parser.parse_args()
    if not args.touched_only:
        seconds, summary = _tier(args.workers)
        print(f"fast tier, -n {args.workers}: {seconds:.0f} s wall ({summary})")
    with tempfile.TemporaryDirectory() as directory:
        seconds, summary = _tier(args.workers, "-p", "bench.fast_tier", env={OUT: directory})
        print(f"recorded run: {seconds:.0f} s ({summary})")
        missing = untouched(Path(directory))
    print(f"modules no fast test calls into: {', '.join(missing) or 'none'}")


if __name__ == "__main__":
    main()
