"""Systems behind an HTTP endpoint: the item as a JSON POST, credentials in the URL sent as
Basic auth and scrubbed from every output, never printed."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from ..errors import SystemFailure
from ..output import basic_token, excerpt, redact, sent_url, split_url
from ..schema import AmbigItem
from .call import TURN_INPUTS, System, input_for


def http_system(url: str) -> System:
    """A system behind an http(s) URL: each item a JSON POST, its JSON reply the answer."""
    label = redact(url)
    parts = split_url(url)
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    sent_url(url)  # its password, the Basic token and its query values: scrubbed from every output
    if parts is not None and parts.userinfo is not None:
        # credentials in the URL become Basic auth, never a label; found however they are
        # written (a "/", "?", "#" or "@" in the password, unencoded: output.split_url)
        headers["Authorization"] = f"Basic {basic_token(parts.user, parts.password or '')}"
        url = parts.without_userinfo()

    def invoke(item: AmbigItem, timeout: float | None, extras: Mapping[str, Any]) -> Any:
        """POST what the run's protocol hands over: the passages and gold conditions it gives."""
        # An episode sends its item's id: the episode's own names the hidden reading.
        payload: dict[str, Any] = {"question": item.question, "id": extras.get("id", item.id)}
        passages = input_for(item, "passages", extras)
        if passages:
            payload["passages"] = [{k: v for k, v in asdict(p).items() if v is not None} for p in passages]
        conditions = input_for(item, "conditions", extras)
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
            detail = excerpt(exc.read().decode("utf-8", "replace").strip(), 200)
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
            raise SystemFailure(f"{label} did not answer with JSON: {excerpt(repr(body), 120)}") from None

    inputs = ("question", "passages", "conditions", *TURN_INPUTS)
    return System(label=label, inputs=inputs, call=invoke, endpoint=True)
