"""Every error pytest-ambigqa raises on purpose, and the one warning, in one place.

Each is raised where the fault is found, with the one line the user will read, and turned
into what the user sees by whoever can tell what it costs; only ``session/`` (and
``plugin.py``'s fixtures) make pytest errors of them.

========================  =========================================  ======================================
error                     means                                      turned into
========================  =========================================  ======================================
UsageError                an option, system spec or command input    ``session/``: pytest's usage error
                          the user gave cannot work                  (exit 4); ``cli``: one line, exit 2
UnreadableFile            a file the user named cannot be read or    a usage error naming the option;
                          is not what it should be:                  ``cli``: exit 2; gold data read again
- DataError               a data file or corpus                      for the drill-down: absent
- ScorecardError          a ``scorecard.json``
SpoolError                the run's own spool of results is          ``session/``: one line, the run fails
                          damaged or cannot be read back
Invalid (a ValueError)    one record read back fails its schema      a ``ScorecardError``; a stored answer:
                                                                     absent, asked again
SystemFailure             the system raised, timed out or answered   the item's error (and its trace)
                          off-contract
- PolicyError             an interactive system chose an action      the episode's error
                          the turn does not allow
Unavailable               a model, device or index the run needs
                          is missing or does not answer:
- ScorerUnavailable       a model-backed scorer (judge, reader)      its metrics unscored, this the reason
- - ModelUnavailable      the chat model (``models/chat.py``) gave   unscored; an ``llm:`` system's
                          no usable reply                            SystemFailure; a UserFailure
- - - ModelGivenUp       given up earlier in the run: no call made  the same; an ``llm:`` item says it
                                                                     made no call
- - - Deferred           a judge call recorded for a batch, not     caught by the batch rounds
                          sent (``models/batch.py``)                 (``judge/batch.py``); never reported
- RetrieverUnavailable    the retriever cannot be opened             the error of each item needing it
- DeviceUnavailable       ``--ambig-device`` names an absent GPU     ``session/``: a usage error
- ModelNotFound           the embedder is not on this machine        ``--ambig-embedder``'s usage error
- ActorUnavailable        an executor's worker (a Ray actor) was     the item's error (the system's);
                          lost with the call, or none could be       unscored (the reader's)
                          placed (``executors/``)
- EndpointUnavailable     a model server refused the API key, or     ``session/``: a usage error, before
                          nothing answered, in the preflight         any item
                          (``models/preflight.py``)
UserFailure               the simulated user could not take a turn   the episode unscored
========================  =========================================  ======================================

``options.py`` raises pytest's usage error itself: it reads pytest's config, and an idle
plugin loads it, which must import nothing else of the package.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: errors.py is imported by nearly everything
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any


class AmbigQAWarning(UserWarning):
    """Something pytest-ambigqa recovered from, that the user should still know about; its
    message is shown as a terminal may show it (``output.for_terminal``: a path, a server's
    error or a line of data in it cannot change the terminal)."""

    def __init__(self, message: object = "", *args: object) -> None:
        from .output import for_terminal

        super().__init__(for_terminal(message) if isinstance(message, str) else message, *args)


class AmbigQAError(Exception):
    """Anything pytest-ambigqa raises on purpose; the message is the one line the user sees."""


class UsageError(AmbigQAError):
    """What the user asked for cannot work (an option, a system spec, a command's inputs)."""


class UnreadableFile(AmbigQAError):
    """A file the user named cannot be read, or is not what it should be."""


class DataError(UnreadableFile):
    """A data file that cannot be used, with where and why in the message."""


class ScorecardError(UnreadableFile):
    """The file is not a scorecard.json this version can read; the message names it."""

    def __init__(self, path: Path | str, reason: str) -> None:
        super().__init__(f"{path} is not a readable scorecard.json ({reason})")
        self.reason = reason


class SpoolError(AmbigQAError):
    """The run's spool of results (``session/spool.py``) cannot be read back as it was
    written; the message names the file and the line."""


class Invalid(AmbigQAError, ValueError):
    """A record that fails its schema: where (item and field) and what is wrong, one line.

    A ValueError, as every other way a file's content can fail its reader."""

    def __init__(self, field: str, problem: str, item: str | None = None) -> None:
        self.field, self.problem, self.item = field, problem, item
        where = f"item {item}, field {field}" if item else f"field {field}"
        super().__init__(f"{where}: {problem}")


class SystemFailure(AmbigQAError):
    """The system raised, timed out or answered in the wrong shape for one item.

    ``trace`` is the system's own traceback (its frames, not ours), when it raised;
    ``calls`` what the model calls it made before it failed cost (an ``llm:`` method's
    steps, tokens, cost, latency and the last reply), so an errored item still records them.
    """

    def __init__(self, message: str, trace: str | None = None, calls: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.trace = trace
        self.calls = calls


class PolicyError(SystemFailure):
    """The policy chose an action it was not allowed: the system's error on this episode."""


class Unavailable(AmbigQAError):
    """A model, device or index the run needs is not there, or does not answer."""


class ScorerUnavailable(Unavailable):
    """A model-backed scorer (the judge, a reader) could not answer; the message is the reason
    its metrics are unscored, as the item's report shows it."""


class ModelUnavailable(ScorerUnavailable):
    """The chat model (judge, ``llm:`` system or simulated user) gave no usable reply; why."""


class ModelGivenUp(ModelUnavailable):
    """The chat model was given up earlier in the run (a dead server, a refused key): no call
    was made for this one."""


class Deferred(ModelUnavailable):
    """A judge call recorded for the server's batch API instead of sent (batch judging's
    recording rounds): the scorer stops as if unavailable, and is run again once the batch
    has filled the cache."""


class RetrieverUnavailable(Unavailable):
    """The configured retriever could not be opened (model, index or corpus trouble)."""


class DeviceUnavailable(Unavailable):
    """``--ambig-device`` names an accelerator torch cannot see."""


class ModelNotFound(Unavailable):
    """The embedder named by ``--ambig-embedder`` cannot be found on this machine."""


class ActorUnavailable(Unavailable):
    """An executor's worker (a Ray actor) died with the call in flight, or none could be
    placed in time: the call is *lost*; the message says which and why."""


class EndpointUnavailable(Unavailable):
    """The preflight found a model server (judge, ``llm:`` system, simulated user) that refused
    the API key or did not answer; the message names the variable or the URL and what to check."""


class UserFailure(AmbigQAError):
    """The simulated user could not take its turn: the episode is unscored, not the system's fault."""
