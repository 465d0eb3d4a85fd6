"""The call adapter: a callable (sync or async, or a class to instantiate once) as a
:class:`System`, given only the keyword arguments it declares (see DESIGN.md, "The
system-under-test contract"), cut off after its timeout; whatever goes wrong is the item's
:class:`SystemFailure`.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import queue
import threading
import traceback
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import SystemFailure
from ..output import excerpt
from ..rooms import room
from ..schema import AmbigItem, Answer, safe_str
from .answers import to_answer, to_turn

if TYPE_CHECKING:  # asyncio only for an async system: a run of a plain function never loads it
    import asyncio

INPUTS = (
    *("question", "passages", "retriever", "item", "conditions", "history", "alpha", "beta", "actions"),
    "trial",
)
TRIAL = "trial"  # which repeated trial of the item is asked (--ambig-repeats): 0, 1, ...
# What the interactive protocol adds (protocols/interactive/); a single-shot run gives a
# system that declares them no history, no costs, and "answer" as the only action.
TURN_INPUTS = {"history": [], "alpha": None, "beta": None, "actions": ["answer"]}
GOLD_INPUTS = ("item",)  # inputs that reveal gold answers: an upper bound, not a score

# The plugin's frames (the package, and the baselines room wherever it lies) are not the system's.
_OURS = (str(Path(__file__).resolve().parents[1]), str(room("baselines").resolve()))


def system_trace(exc: BaseException) -> str:
    """The traceback of an exception the system raised, without the plugin's own frames."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith(_OURS)]
    lines = traceback.format_list(frames[-30:]) + traceback.format_exception_only(type(exc), exc)
    return "Traceback of the system (most recent call last):\n" + "".join(lines)


@dataclass(frozen=True)
class System:
    """A loaded system: how to call it and how to describe it in the scorecard."""

    label: str
    inputs: tuple[str, ...]
    call: Callable[[AmbigItem, float | None, Mapping[str, Any]], Any]  # (item, timeout, extras) -> output
    requires_retriever: bool = False  # declares `retriever` without a default
    # an endpoint is sent what the protocol gives, and nothing where it gives nothing: it may
    # retrieve for itself, so a run without evidence is not refused it (Run.evidence_problem)
    endpoint: bool = False

    def answer(
        self, item: AmbigItem, timeout: float | None, extras: Mapping[str, Any] | None = None
    ) -> Answer:
        """``extras`` are the run's inputs: ``retriever`` (None: none) and ``conditions``."""
        return _read(lambda: to_answer(self._raw(item, timeout, extras)))

    def turn(
        self, item: AmbigItem, timeout: float | None, extras: Mapping[str, Any], allowed: tuple[str, ...]
    ) -> tuple[str, Answer]:
        """One turn of an interactive episode: (action, answer); ``extras`` carry the
        history, the costs and the allowed actions."""
        return _read(lambda: to_turn(self._raw(item, timeout, extras), allowed))

    def _raw(self, item: AmbigItem, timeout: float | None, extras: Mapping[str, Any] | None) -> Any:
        try:
            return self.call(item, timeout, extras or {})
        except (SystemFailure, KeyboardInterrupt):
            raise  # a real Ctrl-C stops the run
        except BaseException as exc:  # noqa: BLE001 - the user's code, sys.exit() included: this item's error
            message = f"system raised {type(exc).__name__}: {safe_str(exc)}"
            raise SystemFailure(message, trace=_safe_trace(exc)) from None

    def describe(self, gold_inputs: Sequence[str] = ()) -> dict[str, Any]:
        """What the system is and reads; ``gold_inputs``: what the suites' settings fill from
        the gold item besides ``item`` (``Suite.gold_inputs``)."""
        gold = (*GOLD_INPUTS, *gold_inputs)
        return {
            "label": self.label,
            # what the system reads of the item and the run; the trial index is no evidence
            "inputs": [i for i in self.inputs if i != TRIAL],
            "gold_inputs": [i for i in self.inputs if i in gold],
        }


def _read(normalise: Callable[[], Any]) -> Any:
    """What the system returned, normalised; an answer too odd to read is its failure."""
    try:
        return normalise()
    except SystemFailure:
        raise
    except Exception as exc:  # noqa: BLE001 - nested too deep, a huge int
        raise SystemFailure(
            f"system returned an answer that cannot be read: {type(exc).__name__}: {excerpt(exc, 200)}"
        ) from None


def _safe_trace(exc: BaseException) -> str | None:
    try:
        return system_trace(exc)
    except Exception:  # noqa: BLE001 - an exception that cannot even be formatted: its message will do
        return None


def input_for(item: AmbigItem, name: str, extras: Mapping[str, Any]) -> Any:
    """The input ``name`` a system gets for ``item``: the run's (``extras``), else the item's,
    else what a single-shot run gives (the HTTP adapter sends the same)."""
    if name in extras:
        return extras[name]
    if name == "question":
        return item.question
    if name == "passages":
        return list(item.passages)
    if name == "item":
        return item
    if name == "conditions":
        return []
    if name == TRIAL:
        return 0
    if name in TURN_INPUTS:
        value = TURN_INPUTS[name]
        return list(value) if isinstance(value, list) else value
    raise AssertionError(name)


# What systems written for other harnesses call the inputs this one gives.
_RENAMES = {"docs": "passages", "documents": "passages", "contexts": "passages", "ctxs": "passages",
            "context": "passages", "query": "question", "example": "item", "sample": "item"}  # fmt: skip


def from_object(obj: Any, label: str | None = None, construct: bool = True) -> System:
    """Wrap a callable (or a class, instantiated once) as a :class:`System`. ``construct``
    False: a class is only read (its ``__call__``'s inputs), not instantiated, for a run whose
    calls go to an executor that constructs it in its own workers (Ray's actors,
    ``executors/ray/system.py``): its model never loads here."""
    if isinstance(obj, System):
        return obj
    name = label or getattr(obj, "__qualname__", None) or type(obj).__qualname__
    if inspect.isclass(obj) and not construct:
        return _unconstructed(obj, name)
    if inspect.isclass(obj):
        try:
            obj = obj()
        except Exception as exc:  # noqa: BLE001 - the user's constructor: one line naming it
            raise TypeError(
                f"the system class '{name}' could not be created: {type(exc).__name__}: {safe_str(exc)}"
            ) from None
    if not callable(obj):
        raise TypeError(f"the system '{name}' is not callable")
    params: Mapping[str, inspect.Parameter]
    try:
        params = inspect.signature(obj).parameters
    except (TypeError, ValueError):  # no introspectable signature: assume f(question)
        params = {"question": inspect.Parameter("question", inspect.Parameter.POSITIONAL_OR_KEYWORD)}
    accepts_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
    retriever = params.get("retriever")
    declared = [n for n in INPUTS if n in params]
    # `question` always goes in: by name, or to the first positional parameter otherwise.
    free = [
        p.name
        for p in params.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name not in INPUTS
    ]
    question_positional = "question" not in params and not accepts_any
    if question_positional and not free:
        raise TypeError(f"the system '{name}' takes no 'question' argument")
    served = set(INPUTS) | ({free[0]} if question_positional else set())
    unserved = [
        p.name
        for p in params.values()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.default is p.empty and p.name not in served
    ]
    if unserved:  # every call would fail the same way: say it once, at load
        hints = sorted({_RENAMES[n] for n in unserved if n in _RENAMES})
        hint = f" ({', '.join(hints)}?)" if hints else ""
        raise TypeError(
            f"the system '{name}' needs {', '.join(map(repr, unserved))}, which the plugin cannot give: it "
            "passes the question (as `question`, or as the first positional argument) and, by name, "
            f"{', '.join(INPUTS[1:])}; rename it{hint} or give it a default"
        )
    if "question" not in declared:
        declared.insert(0, "question")

    def invoke(item: AmbigItem, timeout: float | None, extras: Mapping[str, Any]) -> Any:
        kwargs = {name: input_for(item, name, extras) for name in declared if name != "retriever"}
        if "retriever" in declared and extras.get("retriever") is not None:  # else its default applies
            kwargs["retriever"] = extras["retriever"]
        if question_positional:
            question = kwargs.pop("question")
            return _run(lambda: obj(question, **kwargs), timeout)
        return _run(lambda: obj(**kwargs), timeout)

    return System(
        label=name,
        inputs=tuple(declared),
        call=invoke,
        requires_retriever=retriever is not None and retriever.default is retriever.empty,
    )


def _unconstructed(cls: type, name: str) -> System:
    """The :class:`System` a class would be, read from its ``__call__`` without an instance;
    its calls are the actors' (calling it here is a bug)."""
    call = next((k.__dict__["__call__"] for k in cls.__mro__[:-1] if "__call__" in k.__dict__), None)
    if call is None:
        raise TypeError(f"the system '{name}' is not callable (its class defines no __call__)")

    def unbound(*args: Any, **kwargs: Any) -> Any:  # the signature without ``self``
        raise AssertionError(f"the system '{name}' is constructed in the executor's workers, not here")

    try:
        signature = inspect.signature(call)
    except (TypeError, ValueError):  # none to read: from_object takes it as f(question)
        return from_object(unbound, name)
    parameters = list(signature.parameters.values())[1:]
    setattr(unbound, "__signature__", signature.replace(parameters=parameters))  # noqa: B010
    return from_object(unbound, name)


def _run(thunk: Callable[[], Any], timeout: float | None) -> Any:
    """Call the system, await it if it is async, and cut it off after ``timeout`` seconds."""
    if timeout is None:
        result = thunk()
    else:  # in the calling thread's context: a traced item's calls nest under its span
        result = _Caller.mine().call(functools.partial(contextvars.copy_context().run, thunk), timeout)
    return _await(result, timeout) if inspect.isawaitable(result) else result


class _Caller:
    """A daemon thread that makes the system calls of one calling thread, one at a time.

    A call that outlives its timeout is abandoned with its thread (a daemon never blocks
    exit), and the caller gets a fresh one; otherwise the thread is reused, call after call.
    """

    _local = threading.local()

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        threading.Thread(target=self._loop, name="ambigqa-system", daemon=True).start()

    @classmethod
    def mine(cls) -> _Caller:
        caller = getattr(cls._local, "caller", None)
        if caller is None:
            caller = cls._local.caller = cls()
        return caller

    def _loop(self) -> None:
        while True:
            thunk, box, done = self._jobs.get()
            try:
                box["result"] = thunk()
            except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
                box["error"] = exc
            done.release()

    def call(self, thunk: Callable[[], Any], timeout: float) -> Any:
        box: dict[str, Any] = {}
        done = threading.Lock()  # released when the call is done: lighter than an Event (0.02 ms a call)
        done.acquire()
        self._jobs.put((thunk, box, done))
        if not done.acquire(timeout=max(timeout, 0)):
            self._local.caller = None  # this thread is stuck in the system: leave it behind
            raise SystemFailure(f"system timed out after {timeout:g} s (--ambig-timeout)")
        if "error" in box:
            raise box["error"]
        return box["result"]


class _Loop:
    """One event loop in a background thread, shared by every async system call."""

    _lock = threading.Lock()
    _loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def get(cls) -> asyncio.AbstractEventLoop:
        with cls._lock:
            if cls._loop is None:
                import asyncio

                cls._loop = asyncio.new_event_loop()
                threading.Thread(target=cls._loop.run_forever, name="ambigqa-loop", daemon=True).start()
            return cls._loop


def _await(awaitable: Any, timeout: float | None) -> Any:
    import asyncio

    async def wrap() -> Any:
        return await awaitable

    future = asyncio.run_coroutine_threadsafe(wrap(), _Loop.get())
    try:
        return future.result(timeout)
    except FutureTimeout:
        future.cancel()
        raise SystemFailure(f"system timed out after {timeout:g} s (--ambig-timeout)") from None
