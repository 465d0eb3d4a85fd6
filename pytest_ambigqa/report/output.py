"""What the plugin writes or prints goes through here: secrets out, always valid text and JSON.

Every writer (``scorecard.json``, ``scorecard.md``, the terminal summary, JUnit properties,
item failure messages, ``pytest-ambigqa merge``, the caches on disk) uses these, so that an
API key a server echoes in an error, a lone surrogate in an answer or a NaN in a system's
metadata can cost nothing but the offending characters. Strings are scrubbed before they are
encoded, never after: scrubbing JSON text could cut an escape in half.
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Any

MASK = "[redacted]"  # plain text in Markdown too
_SECRET_ENV = re.compile(r"(?i)(api_?key|token|secret|password)")
# "Authorization: Bearer <token>", "api-key = <token>": a header's credential, when it looks like one
_HEADER = re.compile(
    r"(?i)\b(authorization|x-api-key|api-key)(['\"]?\s*[:=]\s*['\"]?)((?:bearer|basic)\s+)?([A-Za-z0-9._~+/=-]{8,})"
)
_PATTERNS = (
    (re.compile(r"\bsk-[A-Za-z0-9_-]{12,}"), f"sk-{MASK}"),  # OpenAI-style keys
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s:@'\"]+(:[^/\s@'\"]*)?@"), rf"\1{MASK}@"),
    (re.compile(r"(?i)([?&](?:api_?key|key|token|access_token|secret)=)[^&#\s'\"]+"), rf"\1{MASK}"),
)


def _secret_values() -> list[str]:
    """The values of the environment's credentials (OPENAI_API_KEY and the like), longest first:
    variables named like a key, token, secret or password whose value looks like one."""
    values = {
        v
        for k, v in os.environ.items()
        if _SECRET_ENV.search(k)
        and (len(v) >= 12 or (k == "OPENAI_API_KEY" and len(v) >= 8))
        and not any(c.isspace() for c in v)
    }
    return sorted(values, key=len, reverse=True)


def _header(match: re.Match[str]) -> str:
    name, sep, scheme, token = match.groups()
    credential = bool(scheme) or any(c.isdigit() for c in token) or len(token) >= 24
    return f"{name}{sep}{scheme or ''}{MASK}" if credential else match.group(0)


def scrub(text: str) -> str:
    """``text`` with every credential we can recognise replaced by ``[redacted]``.

    The environment's key values, wherever they stand; header credentials (``Authorization:
    Bearer ...``); OpenAI-style ``sk-`` keys; credentials in URLs and key-like query
    parameters. Ordinary words ("prior authorization: required") are left alone.
    """
    for value in _secret_values():
        text = text.replace(value, MASK)
    text = _HEADER.sub(_header, text)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def clean_text(text: str) -> str:
    """Encodable text: lone surrogates and the like become "?"."""
    return text.encode("utf-8", "replace").decode("utf-8")


def safe_output(text: str) -> str:
    """A string fit to print or write anywhere: encodable and scrubbed."""
    return scrub(clean_text(text))


def clean(value: Any, *, secrets: bool = False) -> Any:
    """A JSON-able value with non-finite floats as strings and every string encodable (and,
    with ``secrets``, scrubbed)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)  # "nan", "inf", "-inf"
    if isinstance(value, str):
        return safe_output(value) if secrets else clean_text(value)
    if isinstance(value, dict):
        return {clean(str(k), secrets=secrets): clean(v, secrets=secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v, secrets=secrets) for v in value]
    return value


def json_text(value: Any, **kwargs: Any) -> str:
    """Standard JSON (no NaN), valid UTF-8, every string scrubbed before it is encoded."""
    return json.dumps(clean(value, secrets=True), allow_nan=False, **kwargs)


def write_text(path: Path, text: str) -> None:
    """Write ``text`` atomically (a temporary file, then a rename), encodable whatever it holds."""
    tmp = path.parent / f".{path.name}.{os.getpid()}.tmp"
    tmp.write_bytes(text.encode("utf-8", "replace"))
    tmp.replace(path)
