"""What each extra of pyproject.toml weighs: the installed size of the distributions it adds beyond
the base install (README, "Install").

It walks the dependency closure of the base install and of each extra among the distributions
installed in the running interpreter (a venv with every extra installed, ``pip install ".[all,test,bench]"``
and the others), and sums each distribution's files as its RECORD lists them (the size column, or the file
on disk where RECORD gives none). A requirement that is not installed is named, not guessed at.

    python bench/extras_weight.py [--top 3] [--extra docs=mkdocs-material>=9.5 ...]
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
PROJECT = "pytest-ambigqa"


def _size(dist: metadata.Distribution) -> int:
    """The installed bytes of one distribution, from its RECORD."""
    total = 0
    for file in dist.files or ():
        if file.size is not None:
            total += file.size
            continue
        path = Path(dist.locate_file(file))
        if path.is_file():
            total += path.stat().st_size
    return total


def _closure(requirements: list[str], extras_of_project: dict[str, list[str]], missing: set[str]) -> set[str]:
    """The canonical names of every installed distribution the requirements reach."""
    seen: set[str] = set()
    todo: list[tuple[str, frozenset[str]]] = []

    def add(text: str, extra: str = "") -> None:
        req = Requirement(text)
        if req.marker is not None and not req.marker.evaluate({"extra": extra}):
            return
        todo.append((req.name, frozenset(req.extras)))

    for text in requirements:
        add(text)
    done: set[tuple[str, frozenset[str]]] = set()
    while todo:
        name, extras = todo.pop()
        key = canonicalize_name(name)
        if (key, extras) in done:
            continue
        done.add((key, extras))
        if key == PROJECT:  # a self-reference (pytest-ambigqa[cloud]): read pyproject's own lists
            for extra in extras:
                for text in extras_of_project[extra]:
                    add(text)
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            missing.add(name)
            continue
        seen.add(key)
        for text in dist.requires or ():
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                add(text)
            else:
                for extra in extras:
                    if req.marker.evaluate({"extra": extra}):
                        add(text, extra)
                        break
    return seen


def _mb(size: int) -> str:
    return f"{size / 1e6:,.0f} MB" if size >= 1e6 else f"{size / 1e3:,.0f} kB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=3, help="name the N largest distributions an extra adds")
    parser.add_argument("--extra", action="append", default=[], metavar="NAME=REQ[;REQ]",
                        help="weigh an extra pyproject.toml does not list (yet)")  # fmt: skip
    args = parser.parse_args()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras: dict[str, list[str]] = dict(project["optional-dependencies"])
    for given in args.extra:
        name, _, reqs = given.partition("=")
        extras[name] = reqs.split(";")
    sizes = {canonicalize_name(d.metadata["Name"]): _size(d) for d in metadata.distributions()}
    missing: set[str] = set()
    base = _closure(project["dependencies"], extras, missing)
    print(f"python {sys.version.split()[0]} at {sys.prefix}")
    weight = _mb(sum(sizes[n] for n in base))
    print(f"base install: {len(base)} distributions, {weight} (without the plugin itself)")
    print()
    print("| extra | adds | distributions | largest |")
    print("|---|---:|---:|---|")
    for extra in extras:
        added = _closure([f"{PROJECT}[{extra}]"], extras, missing) - base
        largest = sorted(added, key=lambda n: -sizes[n])[: args.top]
        named = ", ".join(f"{n} {_mb(sizes[n])}" for n in largest)
        print(f"| `[{extra}]` | {_mb(sum(sizes[n] for n in added))} | {len(added)} | {named} |")
    if missing:
        print(f"\nnot installed here (not counted): {', '.join(sorted(missing))}")


if __name__ == "__main__":
    main()
