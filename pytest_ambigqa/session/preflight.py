"""Which model servers a run will ask, probed once before any item (``models/preflight.py``):
in the controller only (an xdist worker's run was checked by its controller), not for
``--collect-only`` or ``--help``, and not with ``--ambig-no-preflight``.

The judge's servers (one per panel judge; the same model is the interactive protocol's
simulated user and the LLM reader) are probed whenever a judge is set; the ``llm:`` system's
unless its answers are read from a scorecard (``--ambig-rescore`` asks no system).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from ..errors import EndpointUnavailable
from ..models.chat import server_url
from ..models.preflight import Endpoint, check
from ..options import runs_no_tests
from ..protocols import PROTOCOLS

if TYPE_CHECKING:
    from .run import Run


def preflight(run: Run) -> None:
    """Raise pytest's usage error when a model server of ``run`` refuses its key or is not there."""
    asked = not runs_no_tests(run.config) and not getattr(run.config.option, "help", False)
    if run.in_worker or not run.cfg.models.preflight or not asked:
        return
    try:
        check(endpoints(run))
    except EndpointUnavailable as exc:
        raise pytest.UsageError(str(exc)) from None


def endpoints(run: Run) -> list[Endpoint]:
    """The servers ``run`` will ask, each with who asks it and where its URL came from."""
    cfg, models = run.cfg, run.cfg.models
    timeout = min(models.timeout, Endpoint.timeout)
    found = []
    if run.judge is not None:
        user = not PROTOCOLS[cfg.protocol].judges_suites  # the judge model plays the user
        for client in run.judge.clients:
            who = f"--ambig-judge={client.settings.model}"
            found.append(
                Endpoint(
                    server_url(client.settings.base_url),
                    f"the simulated user ({who})" if user else who,
                    _url_from(client.settings.base_url, "--ambig-judge-base-url"),
                    timeout,
                )
            )
    spec = (cfg.system or "").strip()
    settings = models.llm_settings(cfg.seed, cfg.concurrency)
    if spec.lower().startswith("llm:") and run.rescore is None and settings is not None:
        found.append(
            Endpoint(
                server_url(settings.base_url),
                f"--ambig-system={spec} (--ambig-llm-model={settings.model})",
                _url_from(settings.base_url, "--ambig-llm-base-url"),
                timeout,
            )
        )
    return found


def _url_from(given: str | None, option: str) -> str:
    if given:
        return option
    if os.environ.get("OPENAI_BASE_URL"):
        return "$OPENAI_BASE_URL"
    return f"OpenAI's: neither {option} nor $OPENAI_BASE_URL is set"
