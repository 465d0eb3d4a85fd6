"""``--ambig-mlflow``'s hook, on the controller only: once the scorecard is final (gates
checked, reports written), the run is logged to MLflow (``report/mlflow_log.py``, imported
only then). A failure is a warning, said once; it changes no number, report or exit status."""

from __future__ import annotations

import contextlib
import warnings
from typing import TYPE_CHECKING

import pytest

from ..errors import AmbigQAWarning

if TYPE_CHECKING:
    from ..report.mlflow_target import Target
    from .run import Run


class Tracking:
    def __init__(self, run: Run, target: Target) -> None:
        self.run = run
        self.target = target

    @pytest.hookimpl(trylast=True)  # after the scorecard's, which may change the exit status
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        scorecard = getattr(session.config.pluginmanager.get_plugin("ambigqa-scorecard"), "scorecard", None)
        if scorecard is None:  # stopped before any scorecard (a usage error, an interrupt)
            return
        from ..report import mlflow_log

        failed = mlflow_log.log(scorecard, self.target, self.run.cfg.report_dir, int(session.exitstatus))
        if failed:  # a warning, which never becomes the run's error (not even under -W error)
            with contextlib.suppress(Warning):
                warnings.warn(AmbigQAWarning(failed), stacklevel=1)
