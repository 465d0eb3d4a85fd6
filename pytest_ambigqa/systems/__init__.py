"""The system under test: load it from a spec, call it for an item, normalise its output.

A system is any callable (sync or async, or a class to instantiate once) or an HTTP
endpoint. Only the keyword arguments a callable declares are passed (see DESIGN.md,
"The system-under-test contract").
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import inspect
import json
import queue
import sys
import threading
import traceback
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..errors import SystemFailure, UsageError
from ..output import basic_token, clean, clean_text, sent_url
from ..rooms import room
from ..schema import AmbigItem, Answer, GeneratedInterpretation, safe_str

BUILTIN = {
    "oracle": "pytest_ambigqa.baselines:oracle",
    "lexical": "pytest_ambigqa.baselines:lexical",
    "retrieval": "pytest_ambigqa.baselines:retrieval",
}
INPUTS = ("question", "passages", "retriever", "item", "conditions", "history", "alpha", "beta", "actions")
# What the interactive protocol adds (protocols/interactive.py); a single-shot run gives a
# system that declares them no history, no costs, and "answer" as the only action.
TURN_INPUTS = {"history": [], "alpha": None, "beta": None, "actions": ["answer"]}
GOLD_INPUTS = ("item",)  # inputs that reveal gold answers: an upper bound, not a score
ANSWER_FIELDS = (
    "text",
    "interpretations",
    "citations",
    "is_ambiguous",
    "ambiguity_type",
    "clarifying_question",
    "metadata",
)
EXPECTED_SHAPE = (
    "expected a str (the long answer), an Answer, or a dict with 'text' and optionally "
    + ", ".join(f"'{f}'" for f in ANSWER_FIELDS[1:])
)


# The plugin's frames (the package, and the baselines room wherever it lies) are not the system's.
_OURS = (str(Path(__file__).resolve().parents[1]), str(room("baselines").resolve()))


def system_trace(exc: BaseException) -> str:
    """The traceback of an exception the system raised, without the plugin's own frames."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith(_OURS)]
    lines = traceback.format_list(frames[-30:]) + traceback.format_exception_only(type(exc), exc)
    return "Traceback of the system (most recent call last):\n" + "".join(lines)


def redact(spec: str) -> str:
    """A system spec safe to print: no credentials or query string in URLs."""
    if "://" not in spec:
        return spec
    parts = urllib.parse.urlsplit(spec)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))


@dataclass(frozen=True)
class System:
    """A loaded system: how to call it and how to describe it in the scorecard."""

    label: str
    inputs: tuple[str, ...]
    call: Callable[[AmbigItem, float | None, Mapping[str, Any]], Any]  # (item, timeout, extras) -> output
    requires_retriever: bool = False  # declares `retriever` without a default

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
        except BaseException as exc:  # the user's code, sys.exit() included: this item's error
            message = f"system raised {type(exc).__name__}: {safe_str(exc)}"
            raise SystemFailure(message, trace=_safe_trace(exc)) from None

    def describe(self, gold_conditions: bool = False) -> dict[str, Any]:
        gold = GOLD_INPUTS + (("conditions",) if gold_conditions else ())
        return {
            "label": self.label,
            "inputs": list(self.inputs),
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
            f"system returned an answer that cannot be read: {type(exc).__name__}: {safe_str(exc)[:200]}"
        ) from None


def _safe_trace(exc: BaseException) -> str | None:
    try:
        return system_trace(exc)
    except Exception:  # noqa: BLE001 - an exception that cannot even be formatted: its message will do
        return None


def _input(item: AmbigItem, name: str, extras: Mapping[str, Any]) -> Any:
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
    if name in TURN_INPUTS:
        return list(TURN_INPUTS[name]) if isinstance(TURN_INPUTS[name], list) else TURN_INPUTS[name]
    raise AssertionError(name)


def load_system(spec: str, search_dir: Path, llm: Callable[[], Any] | None = None) -> System:
    """Resolve ``--ambig-system``: a built-in name, ``llm:<method>`` (a reference method over
    the client ``llm()`` makes), an http(s) URL, or ``module:attr``."""
    spec = spec.strip()
    if spec.lower().startswith("llm:"):
        return _llm_system(spec, llm)
    target = BUILTIN.get(spec.lower(), spec)
    if target.startswith(("http://", "https://")):
        return _http_system(target)
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise UsageError(
            f"--ambig-system: '{spec}' is not module:attr, an http(s) URL, or one of {', '.join(BUILTIN)}"
        )
    module = _import(module_name, search_dir)
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"--ambig-system: module '{module_name}' has no attribute '{attr}'")
        obj = getattr(obj, part)
    label = spec if spec.lower() not in BUILTIN else f"{spec.lower()} baseline ({target})"
    try:
        return from_object(obj, label)
    except TypeError as exc:
        raise UsageError(f"--ambig-system: {exc}") from None


def _llm_system(spec: str, llm: Callable[[], Any] | None) -> System:
    from ..baselines.llm import METHODS, llm_system

    method = spec.partition(":")[2].strip().lower()
    if method not in METHODS:
        valid = ", ".join(f"llm:{m}" for m in METHODS)
        raise UsageError(f"--ambig-system: unknown reference method '{spec}' (valid: {valid})")
    if importlib.util.find_spec("openai") is None:
        raise UsageError(f"--ambig-system={spec} needs openai: pip install 'pytest-ambigqa[judge]'")
    client = llm() if llm is not None else None
    if client is None:
        raise UsageError(f"--ambig-system={spec}: name the model with --ambig-llm-model")
    return llm_system(method, client)


def _import(module_name: str, search_dir: Path):
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name.split(".")[0] or str(search_dir) in sys.path:
            raise _import_error(module_name, exc) from None
    except Exception as exc:
        raise _import_error(module_name, exc) from None
    # Like `python -m pytest`, also look in the directory pytest was started from.
    sys.path.insert(0, str(search_dir))
    try:
        return importlib.import_module(module_name)
    except Exception as exc:
        raise _import_error(module_name, exc) from None


def _import_error(module_name: str, exc: Exception) -> UsageError:
    return UsageError(f"--ambig-system: cannot import '{module_name}': {type(exc).__name__}: {exc}")


def from_object(obj: Any, label: str | None = None) -> System:
    """Wrap a callable (or a class, instantiated once) as a :class:`System`."""
    if isinstance(obj, System):
        return obj
    name = label or getattr(obj, "__qualname__", None) or type(obj).__qualname__
    if inspect.isclass(obj):
        try:
            obj = obj()
        except Exception as exc:  # noqa: BLE001 - the user's constructor: one line naming it
            raise TypeError(
                f"the system class '{name}' could not be created: {type(exc).__name__}: {safe_str(exc)}"
            ) from None
    if not callable(obj):
        raise TypeError(f"the system '{name}' is not callable")
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
    if "question" not in declared:
        declared.insert(0, "question")

    def invoke(item: AmbigItem, timeout: float | None, extras: Mapping[str, Any]) -> Any:
        kwargs = {name: _input(item, name, extras) for name in declared if name != "retriever"}
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


def _run(thunk: Callable[[], Any], timeout: float | None) -> Any:
    """Call the system, await it if it is async, and cut it off after ``timeout`` seconds."""
    if timeout is None:
        result = thunk()
    else:
        result = _Caller.mine().call(thunk, timeout)
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
            except BaseException as exc:  # re-raised in the caller's thread
                box["error"] = exc
            done.set()

    def call(self, thunk: Callable[[], Any], timeout: float) -> Any:
        box: dict[str, Any] = {}
        done = threading.Event()
        self._jobs.put((thunk, box, done))
        if not done.wait(timeout):
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
                cls._loop = asyncio.new_event_loop()
                threading.Thread(target=cls._loop.run_forever, name="ambigqa-loop", daemon=True).start()
            return cls._loop


def _await(awaitable: Any, timeout: float | None) -> Any:
    async def wrap():
        return await awaitable

    future = asyncio.run_coroutine_threadsafe(wrap(), _Loop.get())
    try:
        return future.result(timeout)
    except FutureTimeout:
        future.cancel()
        raise SystemFailure(f"system timed out after {timeout:g} s (--ambig-timeout)") from None


def _http_system(url: str) -> System:
    label = redact(url)
    parts = urllib.parse.urlsplit(url)
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    sent_url(url)  # its password, the Basic token and its query values: scrubbed from every output
    if parts.username is not None:  # credentials in the URL become Basic auth, never a label
        user, password = urllib.parse.unquote(parts.username), urllib.parse.unquote(parts.password or "")
        headers["Authorization"] = f"Basic {basic_token(user, password)}"
        host = parts.hostname + (f":{parts.port}" if parts.port else "")
        url = urllib.parse.urlunsplit((parts.scheme, host, parts.path, parts.query, ""))

    def invoke(item: AmbigItem, timeout: float | None, extras: Mapping[str, Any]) -> Any:
        """POST what the run's protocol hands over: the passages and gold conditions it gives."""
        # An episode sends its item's id: the episode's own names the hidden reading.
        payload: dict[str, Any] = {"question": item.question, "id": extras.get("id", item.id)}
        passages = _input(item, "passages", extras)
        if passages:
            payload["passages"] = [{k: v for k, v in asdict(p).items() if v is not None} for p in passages]
        conditions = _input(item, "conditions", extras)
        if conditions:
            payload["conditions"] = list(conditions)
        if "actions" in extras:  # an interactive turn: what it is allowed, at what costs
            payload |= {name: extras[name] for name in TURN_INPUTS}
        request = urllib.request.Request(
            url,
            data=json.dumps(payload).encode("utf-8"),
            headers=headers,
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                body = response.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:200].decode("utf-8", "replace").strip()
            raise SystemFailure(f"HTTP {exc.code} from {label}: {detail or exc.reason}") from None
        except TimeoutError:
            raise SystemFailure(f"system timed out after {timeout:g} s (--ambig-timeout)") from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                raise SystemFailure(f"system timed out after {timeout:g} s (--ambig-timeout)") from None
            raise SystemFailure(f"cannot reach {label}: {exc.reason}") from None
        try:
            return json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            raise SystemFailure(f"{label} did not answer with JSON: {body[:120]!r}") from None

    return System(label=label, inputs=("question", "passages", "conditions", *TURN_INPUTS), call=invoke)


def to_answer(raw: Any) -> Answer:
    """Normalise what a system returned; anything off-contract is a :class:`SystemFailure`.

    An :class:`Answer` is checked like a dict. Strings are made encodable (a lone surrogate
    becomes "?") and non-finite numbers in ``metadata`` become strings, so that no answer
    can make a report invalid.
    """
    if isinstance(raw, Answer):
        raw = _fields(raw)
    if isinstance(raw, str):
        return Answer(text=clean_text(raw))
    if not isinstance(raw, dict):
        raise SystemFailure(f"system returned {type(raw).__name__}; {EXPECTED_SHAPE}")
    if "action" in raw:  # an interactive system's turn: in a single-shot run only an answer will do
        if raw["action"] != "answer":
            raise SystemFailure(
                f"system chose action {raw['action']!r}; a single-shot run allows only 'answer' "
                "(--ambig-protocol=interactive allows clarify and multi-answer)"
            )
        raw = {k: v for k, v in raw.items() if k != "action"}
    unknown = sorted(set(raw) - set(ANSWER_FIELDS))
    if unknown:
        raise SystemFailure(
            f"system returned unknown field(s) {', '.join(map(repr, unknown))}; {EXPECTED_SHAPE} "
            "(put anything else under 'metadata')"
        )
    if not isinstance(raw.get("text"), str):
        raise SystemFailure(f"system returned a dict without a string 'text'; {EXPECTED_SHAPE}")
    raw = clean(raw)
    return Answer(
        text=raw["text"],
        interpretations=tuple(_interpretation(i, n) for n, i in enumerate(_list(raw, "interpretations"))),
        citations=_strings(raw, "citations"),
        is_ambiguous=_typed(raw, "is_ambiguous", bool),
        ambiguity_type=_typed(raw, "ambiguity_type", str),
        clarifying_question=_typed(raw, "clarifying_question", str),
        metadata=_metadata(raw),
    )


def to_turn(raw: Any, allowed: tuple[str, ...]) -> tuple[str, Answer]:
    """One interactive turn: ``{"action": ..., "text": ...}`` (any answer field besides),
    an :class:`Answer`, or a str, the last two being an answer. The action must be one of
    ``allowed``; the text is the clarifying question or the answer."""
    action = "answer"
    if isinstance(raw, dict) and "action" in raw:
        raw = dict(raw)
        action = raw.pop("action")
        if not isinstance(action, str) or action not in ("clarify", "answer", "multi-answer"):
            raise SystemFailure(
                f"system returned action {action!r}; expected 'clarify', 'answer' or 'multi-answer' "
                f"(this turn allows {', '.join(allowed)})"
            )
    answer = to_answer(raw)
    if action not in allowed:
        raise SystemFailure(
            f"system chose '{action}', which this turn does not allow (allowed: {', '.join(allowed)})"
        )
    return action, answer


def _fields(answer: Answer) -> dict[str, Any]:
    """An :class:`Answer`'s fields as the dict a system could have returned, whatever they hold."""
    data = {f: getattr(answer, f) for f in ANSWER_FIELDS}
    interps = data["interpretations"]
    if isinstance(interps, (list, tuple)):
        data["interpretations"] = [
            asdict(i) if isinstance(i, GeneratedInterpretation) else i for i in interps
        ]
    return data


def _list(raw: dict, key: str) -> list:
    value = raw.get(key)
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        raise SystemFailure(f"system returned '{key}' as {type(value).__name__}, expected a list")
    return list(value)


def _strings(raw: dict, key: str, where: str = "") -> tuple[str, ...]:
    values = _list(raw, key)
    if not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in values):
        raise SystemFailure(f"system returned {where}'{key}' with non-string entries, expected a list of str")
    return tuple(str(v) for v in values)


def _typed(raw: dict, key: str, kind: type) -> Any:
    value = raw.get(key)
    if value is not None and not isinstance(value, kind):
        raise SystemFailure(f"system returned '{key}' as {type(value).__name__}, expected {kind.__name__}")
    return value


def _interpretation(raw: Any, n: int) -> GeneratedInterpretation:
    where = f"interpretations[{n}]."
    if not isinstance(raw, dict) or not isinstance(raw.get("answer"), str):
        raise SystemFailure(
            f"system returned {where[:-1]} without a string 'answer'; each interpretation is "
            "{'answer': str, 'question' or 'condition': str, 'citations': [str]}"
        )
    for key in ("question", "condition"):
        if raw.get(key) is not None and not isinstance(raw[key], str):
            raise SystemFailure(f"system returned {where}{key} as {type(raw[key]).__name__}, expected str")
    return GeneratedInterpretation(
        answer=raw["answer"],
        question=raw.get("question"),
        condition=raw.get("condition"),
        citations=_strings(raw, "citations", where),
    )


def _metadata(raw: dict) -> dict[str, Any]:
    value = raw.get("metadata")
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SystemFailure(f"system returned 'metadata' as {type(value).__name__}, expected a dict")
    try:
        json.dumps(value)
    except (TypeError, ValueError) as exc:
        raise SystemFailure(f"system returned 'metadata' that is not JSON-serialisable: {exc}") from None
    return value
