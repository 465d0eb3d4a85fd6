"""What the plugin writes or prints goes through here: secrets out, always valid text and JSON.

Every writer (``scorecard.json``, ``scorecard.md``, the terminal summary, JUnit properties,
item failure messages, ``pytest-ambigqa merge``) uses these, so that an API key a server
echoes in an error, a lone surrogate in an answer or a NaN in a system's metadata can cost
nothing but the offending characters.
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Any

MASK = "***"
_SECRET_ENV = re.compile(r"(?i)(api_?key|token|secret|password)")
_PATTERNS = (
    # an HTTP credential: "Bearer"/"Basic" and a token with a digit, an inner capital or a symbol
    (
        re.compile(
            r"\b(Bearer|Basic|bearer)(\s+)(?=[A-Za-z0-9._~+/=:-]*(?:\d|[a-z][A-Z]|[._~+/=:-]))[A-Za-z0-9._~+/=:-]{8,}"
        ),
        rf"\1\2{MASK}",
    ),
    (
        re.compile(
            r"(?i)\b(authorization|x-api-key|api-key)(\"?\s*[:=]\s*\"?)(?!bearer\b|basic\b)[^\s\"',}]+"
        ),
        rf"\1\2{MASK}",
    ),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{12,}"), f"sk-{MASK}"),
    (re.compile(r"(?i)([a-z][a-z0-9+.-]*://)[^/\s:@]+(:[^/\s@]*)?@"), rf"\1{MASK}@"),
    (re.compile(r"(?i)([?&](?:api_?key|key|token|access_token|secret)=)[^&#\s\"']+"), rf"\1{MASK}"),
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


def scrub(text: str) -> str:
    """``text`` with every credential we can recognise replaced by ``***``.

    The environment's key values, whatever surrounds them; ``Authorization``/``Bearer``/
    ``Basic`` values; OpenAI-style ``sk-`` keys; credentials in URLs and key-like query
    parameters.
    """
    for value in _secret_values():
        text = text.replace(value, MASK)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def clean_text(text: str) -> str:
    """Encodable text: lone surrogates and the like become "?"."""
    return text.encode("utf-8", "replace").decode("utf-8")


def clean(value: Any) -> Any:
    """A JSON-able value with non-finite floats as strings and every string encodable."""
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)  # "nan", "inf", "-inf"
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_text(str(k)): clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    return value


def json_text(value: Any, **kwargs: Any) -> str:
    """Standard JSON (no NaN), valid UTF-8, with secrets scrubbed."""
    return scrub(json.dumps(clean(value), allow_nan=False, **kwargs))


def write_text(path: Path, text: str) -> None:
    """Write ``text`` atomically (a temporary file, then a rename), scrubbed and encodable."""
    tmp = path.parent / f".{path.name}.{os.getpid()}.tmp"
    tmp.write_bytes(scrub(text).encode("utf-8", "replace"))
    tmp.replace(path)
