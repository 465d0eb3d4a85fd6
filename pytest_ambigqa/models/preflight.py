"""The preflight of the model servers a run will ask (the judge, an ``llm:`` system's model,
the simulated user): before any item, one light request to each distinct server, so that a
missing or refused API key, or a server that does not answer, is one line naming the variable
or the URL instead of one error per item.

The request is ``GET {base_url}/models`` through the client the calls will use (``openai``,
over httpx: the same proxies, the same key), with a short timeout and no retry. Any answer
proves the server is there: a listing, a 404 or 405 of a server without the route, even a
5xx (the calls' own retries deal with those). Only a refusal of the key (HTTP 401 or 403) and
no answer at all (connection refused, an unknown host, the timeout) stop the run.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from ..errors import EndpointUnavailable
from ..output import excerpt, redact, safe_output, sent, sent_url

KEY_VARIABLE = "OPENAI_API_KEY"  # the only place a model's key is read from (``chat.py``)
TIMEOUT = 5.0  # seconds: the most one probe waits (less when the calls' own timeout is shorter)
SKIP = "--ambig-no-preflight"


@dataclass(frozen=True)
class Endpoint:
    """One server a run will ask: its URL as sent, who asks it (``--ambig-judge=m``), and
    where the URL came from (an option, ``$OPENAI_BASE_URL``, or OpenAI's default)."""

    url: str
    who: str
    url_from: str
    timeout: float = TIMEOUT


def check(endpoints: list[Endpoint]) -> None:
    """Probe each distinct server once (the key is the environment's, one for all); raise
    :class:`EndpointUnavailable` with one line saying what is wrong with every one that failed."""
    merged: dict[str, list[Endpoint]] = {}
    for endpoint in endpoints:
        merged.setdefault(endpoint.url, []).append(endpoint)
    problems = []
    for url, asking in merged.items():
        sources = ", ".join(dict.fromkeys(e.url_from for e in asking))
        problem = probe(url, min(e.timeout for e in asking), f"{redact(url)} ({sources})")
        if problem is not None:
            who = " and ".join(dict.fromkeys(e.who for e in asking))
            problems.append(f"{who}: {problem}")
    if problems:
        raise EndpointUnavailable(
            f"model server check: {'; '.join(problems)} (checked before any item; {SKIP} skips it)"
        )


def probe(url: str, timeout: float, shown: str | None = None) -> str | None:
    """What is wrong with the server at ``url`` (named ``shown``, by default its URL without
    credentials), or None when it answers and takes the key."""
    import openai

    shown = shown or redact(url)
    key = os.environ.get(KEY_VARIABLE) or ""
    sent_url(url)
    sent(key)
    client = openai.OpenAI(base_url=url, api_key=key or "not-needed", max_retries=0, timeout=timeout)
    try:
        client.models.with_raw_response.list()
    except openai.APITimeoutError:
        return f"no answer from {shown} within {timeout:g} s: check the URL and that the server is up"
    except openai.APIConnectionError as exc:
        cause = _one_line(str(exc.__cause__ or exc))
        return f"nothing answers at {shown} ({cause}): check the URL and that the server is running"
    except openai.APIStatusError as exc:
        status = exc.status_code
        if status not in (401, 403):
            return None  # it answers: no /models route, or a passing fault the calls retry
        said = _brief(exc)
        if not key:
            return (
                f"{shown} asks for an API key (HTTP {status}: {said}) and ${KEY_VARIABLE} is not set: "
                f"set it, or check the URL"
            )
        what = "refused the key" if status == 401 else "denied the key access"
        return (
            f"{shown} {what} in ${KEY_VARIABLE} (HTTP {status}: {said}): check that the key is "
            "valid for this server (and its project or organisation), or the URL"
        )
    finally:
        client.close()
    return None


def _brief(exc: Exception) -> str:
    """The server's own message, short and scrubbed (a server may echo the key)."""
    body = getattr(exc, "body", None)
    message = body.get("message") if isinstance(body, dict) else None
    if not isinstance(message, str):
        message = getattr(exc, "message", None) or str(exc)
    return excerpt(_one_line(message), 160)


def _one_line(text: str) -> str:
    return safe_output(re.sub(r"\s+", " ", text).strip())
