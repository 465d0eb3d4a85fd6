"""The papers' reference methods over any OpenAI-compatible model: ``--ambig-system=llm:<method>``.

Each method is described from its paper's method section, with prompts in our own words
(``prompts.py``), decodes as its paper states (``DECODING``, overridable with
``--ambig-llm-temperature`` and ``--ambig-llm-max-tokens``), and runs through the judge's
HTTP client (cache, retries, concurrency, tokens, cost, fingerprint, structured output).
Every answer records in ``metadata`` its model calls, tokens, latency, decoding and the
method's intermediate outputs; a reply the model cannot get right makes the item an error
naming the method and the step.
"""

from __future__ import annotations

import inspect
from functools import partial
from typing import Any

from pytest_ambigqa.output import redact
from pytest_ambigqa.systems import System, from_object

from . import conditional, methods, planned, policy
from .model import Decoding, Model, describe

METHODS = {
    "closed-book": methods.closed_book,
    "cot": methods.cot,
    "naive-rag": methods.naive_rag,
    "cot-rag": methods.cot_rag,
    "react": methods.react,
    "diva": planned.diva,
    "clarion": planned.clarion,
    "clarion-no-clarification": planned.clarion_no_clarification,
    "clarion-no-detection": planned.clarion_no_detection,
    "treerare": planned.treerare,
    "condambigqa": conditional.condambigqa,
    "condambigqa-no-conditions": conditional.condambigqa_no_conditions,
    "policy": policy.prompted,  # the interactive protocol's (--ambig-protocol=interactive)
    "policy-cot": policy.prompted_cot,
    "policy-answer": policy.forced["ANSWER"],
    "policy-clarify": policy.forced["CLARIFY"],
    "policy-multi-answer": policy.forced["MULTI-ANSWER"],
    "policy-clarify-and-ma": policy.forced["CLARIFY-AND-MA"],
}

# The interactive protocol's policies: they answer a single-shot run too, with a bare answer.
POLICIES = tuple(m for m in METHODS if m.startswith("policy"))

# How each method decodes, as its paper states it.
POLICY_DECODING = Decoding(0.0, None, "Berant et al. state none")
DECODING: dict[str, Decoding] = {
    **dict.fromkeys(METHODS, methods.DECODING),
    "treerare": planned.TREERARE_DECODING,
    "condambigqa": conditional.DECODING,
    "condambigqa-no-conditions": conditional.DECODING,
    **dict.fromkeys(POLICIES, POLICY_DECODING),
}

# What a method cannot follow offline, named in its label.
DEVIATIONS = {"treerare": "the model's parse, not Stanza's"}

__all__ = ["DECODING", "METHODS", "POLICIES", "Model", "llm_system"]


def llm_system(method: str, client: Any) -> System:
    """The :class:`System` of ``llm:<method>`` over ``client`` (a judge client, role "model")."""
    if method not in METHODS:
        raise KeyError(method)
    run = METHODS[method]
    model = Model(client, method, DECODING[method])
    settings = client.settings
    deviation = f"; {DEVIATIONS[method]}" if method in DEVIATIONS else ""
    label = (
        f"llm:{method} ({settings.model} at {redact(client.base_url)}, seed {settings.seed}; "
        f"{describe(model.sent, model.decoding)}{deviation})"
    )
    bound = partial(run, model=model)

    def call(*args: Any, trial: int = 0, **kwargs: Any) -> Any:
        return run(*args, model=model.for_trial(trial), **kwargs)

    # The method's own inputs, and the trial (--ambig-repeats): each trial its own seed.
    params = [p for p in inspect.signature(bound).parameters.values() if p.name != "model"]
    trial = inspect.Parameter("trial", inspect.Parameter.KEYWORD_ONLY, default=0)
    call.__signature__ = inspect.Signature([*params, trial])  # type: ignore[attr-defined]
    return from_object(call, label)
