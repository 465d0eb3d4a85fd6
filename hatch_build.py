"""Build hook: an editable install copies only the start-up ``.pth`` into site-packages.

The wheel's force-include also maps ``suites/``, ``baselines/`` and the gate module; an
editable install reads those from the checkout (``pytest_ambigqa.rooms``, and the checkout
on ``sys.path``), so copies of them in site-packages would only go stale, and the gate's
would shadow the checkout's.
"""

from __future__ import annotations

from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class EditableStartUpOnly(BuildHookInterface):
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if version == "editable":
            build_data["force_include_editable"] = {"pytest-ambigqa.pth": "pytest-ambigqa.pth"}
