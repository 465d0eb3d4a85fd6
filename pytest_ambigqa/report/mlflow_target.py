"""Where ``--ambig-mlflow`` (and ``pytest-ambigqa merge --mlflow``) logs a run: the tracking
URI and the experiment, read and checked without importing MLflow (``mlflow_log.py`` is the
module that does, at the end of a run that asks for it).

The URI, in order: the option's value; alone (or ``auto``), ``$MLFLOW_TRACKING_URI``; else a
SQLite store, ``mlflow.db`` in pytest's rootdir (``mlflow ui`` started there opens it), its
artifacts in ``mlruns/`` beside it, as MLflow's own default lays them out. The experiment:
``--ambig-mlflow-experiment``, else ``$MLFLOW_EXPERIMENT_NAME``, else ``pytest-ambigqa``.
"""

from __future__ import annotations

import importlib.util
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .. import options
from ..output import redact, sent_url

if TYPE_CHECKING:
    import pytest

AUTO = "auto"  # the option's value when it is given alone
DEFAULT_EXPERIMENT = "pytest-ambigqa"
STORE = "mlflow.db"  # the default store's file, in the rootdir
ARTIFACTS = "mlruns"  # beside a SQLite store: the artifacts of the experiments we create there
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+:")  # two letters at least: C:\ is a path
_BARE = ("databricks", "databricks-uc")  # MLflow's URIs without a colon


@dataclass(frozen=True)
class Target:
    uri: str
    experiment: str
    artifacts: str | None  # where a new experiment's artifacts go; None: the store decides

    def shown(self) -> str:
        """The URI fit for a message: no user info, credentials or query string."""
        return redact(self.uri)


def target(given: str, experiment: str | None, rootdir: Path, option: str = "--ambig-mlflow") -> Target:
    """The target of ``option=given``; a value that is no URI (a path the flag took from the
    command line: ``--ambig-mlflow tests/``) or MLflow absent is refused in one line."""
    if importlib.util.find_spec("mlflow") is None:
        options.refuse(f"{option}: MLflow is not installed; pip install 'pytest-ambigqa[mlflow]'")
    uri = given.strip()
    if uri.lower() == AUTO:
        uri = os.environ.get("MLFLOW_TRACKING_URI", "").strip() or f"sqlite:///{(rootdir / STORE).resolve()}"
    elif not _SCHEME.match(uri) and uri not in _BARE:
        options.refuse(
            f"{option}: '{uri}' is not a tracking URI (sqlite:///PATH, http://HOST:PORT, file:///PATH); "
            f"give it as {option}=URI"
        )
    sent_url(uri)  # a password in it is scrubbed from everything we write or say
    name = (experiment or os.environ.get("MLFLOW_EXPERIMENT_NAME", "")).strip() or DEFAULT_EXPERIMENT
    return Target(uri, name, _artifacts(uri))


def _artifacts(uri: str) -> str | None:
    """Beside a SQLite store's file, ``mlruns/``, not the current directory MLflow would pick."""
    if not uri.startswith("sqlite:///"):
        return None
    path = Path(uri.removeprefix("sqlite:///"))
    return (path.resolve().parent / ARTIFACTS).as_uri() if path.name else None


def wanted(config: pytest.Config) -> Target | None:
    """The run's target (``--ambig-mlflow``), None without it; a refused value is a usage error."""
    given = options.value(config, "--ambig-mlflow")
    experiment = options.value(config, "--ambig-mlflow-experiment")
    if given is None:
        if experiment is not None:
            options.refuse("--ambig-mlflow-experiment: the experiment of an MLflow run; set --ambig-mlflow")
        return None
    return target(given, experiment, Path(config.rootpath))
