"""The test tiers (fixtures/tiers.py, tests/README.md): the markers put on at collection are the
registered ones, and a process started in a helper of the test's module still makes it slow."""

from __future__ import annotations

import textwrap
import tomllib
from pathlib import Path

from fixtures import tiers

ROOT = Path(__file__).parent.parent

# A module of tests, compiled as if it were one here (tiers follows only the tests' own code): its
# test reaches run_pytest through two helpers. Kept as text, so this module's own tests name none.
MODULE = textwrap.dedent(
    """
    from fixtures.process import run_pytest

    def _run(path):
        return run_pytest(path, "-q")

    def _twice(path):
        return [_run(path) for _ in range(2)]

    def test_through_helpers(tmp_path):
        assert _twice(tmp_path)

    def test_alone():
        assert sum([1, 2]) == 3
    """
)


def registered() -> dict[str, str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    lines = config["tool"]["pytest"]["ini_options"]["markers"]
    return dict(line.split(": ", 1) for line in lines)


def test_every_marker_put_on_is_registered_and_described():
    put_on = {"slow"} | {m for ms in tiers.BY_FIXTURE.values() for m in ms}
    assert put_on <= set(registered())
    assert all(description.strip() for description in registered().values())


def test_a_process_started_in_a_helper_makes_the_test_slow():
    namespace: dict = {}
    exec(compile(MODULE, str(ROOT / "tests" / "test_example.py"), "exec"), namespace)
    through = set(tiers._names(namespace["test_through_helpers"].__code__, namespace, set()))
    alone = set(tiers._names(namespace["test_alone"].__code__, namespace, set()))
    assert {"run_pytest", "subprocess"} <= through  # fixtures/process.py followed too
    assert not tiers.STARTS_PROCESS & alone


def test_this_test_is_in_the_fast_tier(request):
    assert tiers.markers(request.node) == set()
