"""One method's view of the model: its decoding, and steps that are each recorded (step,
tokens, latency), so an answer can say what it cost and a test can check what the method did."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pytest_ambigqa.errors import ModelGivenUp, ScorerUnavailable, SystemFailure
from pytest_ambigqa.models.usage import Usage
from pytest_ambigqa.output import clean, cut
from pytest_ambigqa.schema import safe_str

Check = Callable[[Any], "str | None"]
LAST_REPLY = 2000  # characters of the last reply an errored item keeps
GIVEN_UP = "no call made: the model was given up earlier in this run (the scorecard's model calls say why)"


@dataclass(frozen=True)
class Decoding:
    """How a method's calls decode, and where its paper says so."""

    temperature: float
    max_tokens: int | None  # None: no limit is sent
    source: str

    def params(self) -> dict[str, Any]:
        limit = {"max_tokens": self.max_tokens} if self.max_tokens else {}
        return {"temperature": self.temperature, **limit}


def describe(sent: dict[str, Any], paper: Decoding) -> str:
    """What a method's calls are sent with (``sent``, the client's ``decoding``) and where
    that comes from: the paper, or ``--ambig-llm-temperature`` / ``--ambig-llm-max-tokens``."""
    limit = f"at most {sent['max_tokens']} new tokens" if sent.get("max_tokens") else "no token limit"
    source = paper.source if sent == paper.params() else f"--ambig-llm-* over {paper.source}"
    return f"temperature {sent['temperature']:g}, {limit} ({source})"


class Model:
    def __init__(self, client: Any, method: str, decoding: Decoding, seed: int | None = None) -> None:
        self.client = client
        self.method = method
        self.decoding = decoding  # the paper's; the client may override it
        self.sent = client.decoding(decoding.params())  # what every call is sent with
        self.seed = seed  # None: the client's (--ambig-seed)

    def for_trial(self, trial: int) -> Model:
        """The model as repeated trial ``trial`` of an item calls it (``--ambig-repeats``): a
        seed of its own, the run's plus the trial, so that a sampled model answers anew (and
        the call cache keeps each trial's reply apart); trial 0 is the run's seed."""
        if not trial:
            return self
        return Model(self.client, self.method, self.decoding, self.client.settings.seed + trial)

    def episode(self) -> Episode:
        """The calls of one item."""
        return Episode(self)


class Episode:
    def __init__(self, model: Model) -> None:
        self.model = model
        self.usage = Usage()
        self.steps: list[dict[str, Any]] = []
        self.started = time.perf_counter()

    def ask(
        self,
        step: str,
        system: str,
        user: str,
        check: Check,
        *,
        schema: dict[str, Any] | None = None,
        prose: Callable[[str], Any] | None = None,
    ) -> dict[str, Any]:
        """The model's JSON reply to one step, checked (re-asked when it does not pass);
        ``schema`` asks for it with the server's structured output, ``prose`` takes a reply
        without JSON as the step's output (see ``ChatClient.chat_json``)."""
        before, started = self.usage.to_dict(), time.perf_counter()
        try:
            data, _ = self.model.client.chat_json(
                [{"role": "system", "content": system}, {"role": "user", "content": user}],
                check,
                self.usage,
                seed=self.model.seed,
                schema=schema,
                prose=prose,
                **self.model.decoding.params(),
            )
        except ModelGivenUp as exc:  # no call made: said in short, the scorecard says why once
            raise self._failure(step, GIVEN_UP, before, started, given_up=str(exc)) from None
        except ScorerUnavailable as exc:
            raise self._failure(step, str(exc), before, started) from None
        except Exception as exc:  # noqa: BLE001 - the client or openai failed in a way of its own: this item
            reason = f"{type(exc).__name__}: {safe_str(exc)[:200]}"
            raise self._failure(step, reason, before, started) from None
        self._record(step, before, started)
        return clean(data)  # encodable text only (a lone surrogate echoed into the next prompt breaks it)

    def note(self, text: str) -> None:
        """What the method mended in the last step's reply, where its schema could not say
        what the check needs (TreeRare's children: earlier phrases): kept with the step."""
        self.steps[-1].setdefault("notes", []).append(text)

    def _record(self, step: str, before: dict[str, Any], started: float) -> None:
        after = self.usage.to_dict()
        self.steps.append(
            {
                "step": step,
                "seconds": round(time.perf_counter() - started, 4),
                "prompt_tokens": after["prompt_tokens"] - before["prompt_tokens"],
                "completion_tokens": after["completion_tokens"] - before["completion_tokens"],
                "cost": after["cost"] - before["cost"],  # report.html's trace shows each step's
                "cached": after["cached"] > before["cached"],
            }
        )

    def _failure(
        self, step: str, reason: str, before: dict[str, Any], started: float, given_up: str | None = None
    ) -> SystemFailure:
        """The item's error, keeping what its calls cost (the failed step's too) and the last
        reply, cut to ``LAST_REPLY`` characters (issue 25: an errored item keeps its calls).
        A step the model was ``given_up`` for made no call and is none; why is kept, once per
        item, for the scorecard's one line about it (issue 26)."""
        if given_up is None:
            self._record(step, before, started)
        reply = self.usage.last_reply
        calls = self.metadata()["llm"] | {
            "method": self.model.method,
            "last_reply": cut(reply, LAST_REPLY) if reply else None,
        }
        if given_up is not None:
            calls["given_up"] = given_up
        return SystemFailure(f"llm:{self.model.method}, step {step}: {reason}", calls=calls)

    def metadata(self, **intermediate: Any) -> dict[str, Any]:
        """What the answer records: the model calls and the method's intermediate outputs."""
        usage = self.usage
        return {
            "method": self.model.method,
            "llm": {
                "model": self.model.client.settings.model,
                "calls": len(self.steps),
                "requests": usage.requests,
                "cached": usage.cached,
                "prompt_tokens": usage.prompt_tokens,
                "completion_tokens": usage.completion_tokens,
                "cost": usage.cost,
                "latency": round(time.perf_counter() - self.started, 4),
                "fingerprints": list(usage.fingerprints),  # the server's system_fingerprint values
                "decoding": self.model.sent,
                # how the server took the steps that need structure (None: none was sent)
                "structured_output": self.model.client.structured.mode,
                "steps": self.steps,
            },
            **intermediate,
        }
