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
    variables named like a key, token, secret or password whose value looks like one.

    Read again whenever the environment has changed (a comparison of its raw mapping, in C),
    since every string written is checked against them: reading it item by item cost more
    than the rest of the plugin's work per item.
    """
    raw = getattr(os.environ, "_data", None)
    cached = _SECRETS_SEEN.get("environ")
    if raw is not None and cached is not None and cached[0] == raw:
        return cached[1]
    values = {
        v
        for k, v in os.environ.items()
        if _SECRET_ENV.search(k)
        and (len(v) >= 12 or (k == "OPENAI_API_KEY" and len(v) >= 8))
        and not any(c.isspace() for c in v)
    }
    found = sorted(values, key=len, reverse=True)
    if raw is not None:
        _SECRETS_SEEN["environ"] = (dict(raw), found)
    return found


_SECRETS_SEEN: dict[str, tuple[dict, list[str]]] = {}


def _header(match: re.Match[str]) -> str:
    name, sep, scheme, token = match.groups()
    credential = bool(scheme) or any(c.isdigit() for c in token) or len(token) >= 24
    return f"{name}{sep}{scheme or ''}{MASK}" if credential else match.group(0)


class _Scrubber:
    """:func:`scrub` for one output: the environment's credentials read once, and a quick look
    that passes over the strings no pattern could match (nearly all) untouched."""

    # Each pattern needs one of these in the text: "sk-" and "://" as written; a header's
    # name; a query parameter's "key=", "token=" or "secret=" (lower-cased).
    _PLAIN = ("sk-", "://")
    _LOWER = ("authorization", "api-key", "key=", "token=", "secret=")
    _FOLDED = re.compile("|".join(_LOWER), re.IGNORECASE)
    # The characters re's case folding maps onto a letter of those needles where str.lower()
    # does not ("ı", "ſ", "İ" and the Kelvin sign): without them, lower() finds what re would.
    _FOLDS = re.compile("[\u0130\u0131\u017f\u212a]")

    def __init__(self) -> None:
        self.values = _secret_values()
        # In JSON text a value's quotes and backslashes stand escaped.
        self.in_json = tuple({*self.values, *(json.dumps(v, ensure_ascii=False)[1:-1] for v in self.values)})

    def might_hold(self, text: str, values: tuple[str, ...] | list[str]) -> bool:
        if any(needle in text for needle in self._PLAIN) or any(v in text for v in values):
            return True
        if not text.isascii() and self._FOLDS.search(text):
            return self._FOLDED.search(text) is not None  # the patterns fold case as re does
        lower = text.lower()
        return any(needle in lower for needle in self._LOWER)

    def __call__(self, text: str) -> str:
        if not self.might_hold(text, self.values):
            return text
        for value in self.values:
            text = text.replace(value, MASK)
        text = _HEADER.sub(_header, text)
        for pattern, replacement in _PATTERNS:
            text = pattern.sub(replacement, text)
        return text


def scrub(text: str) -> str:
    """``text`` with every credential we can recognise replaced by ``[redacted]``.

    The environment's key values, wherever they stand; header credentials (``Authorization:
    Bearer ...``); OpenAI-style ``sk-`` keys; credentials in URLs and key-like query
    parameters. Ordinary words ("prior authorization: required") are left alone.
    """
    return _Scrubber()(text)


def clean_text(text: str) -> str:
    """Encodable text: lone surrogates and the like become "?"."""
    return text if text.isascii() else text.encode("utf-8", "replace").decode("utf-8")


def safe_output(text: str) -> str:
    """A string fit to print or write anywhere: encodable and scrubbed."""
    return scrub(clean_text(text))


def clean(value: Any, *, secrets: bool = False) -> Any:
    """A JSON-able value with non-finite floats as strings and every string encodable (and,
    with ``secrets``, scrubbed)."""
    return _clean(value, _Scrubber() if secrets else None)


def _clean(value: Any, scrubber: _Scrubber | None) -> Any:
    if isinstance(value, str):
        value = clean_text(value)
        return scrubber(value) if scrubber is not None else value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)  # "nan", "inf", "-inf"
    if isinstance(value, dict):
        return {_clean(_key(k), scrubber): _clean(v, scrubber) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v, scrubber) for v in value]
    return value


def _key(key: Any) -> str:
    """A key as ``json`` spells it (``true``, ``null``, ``1.5``), any other as ``str`` does."""
    if isinstance(key, str):
        return key
    return json.dumps(key) if key is None or isinstance(key, (bool, int, float)) else str(key)


def json_text(value: Any, **kwargs: Any) -> str:
    """Standard JSON (no NaN), valid UTF-8, every string scrubbed before it is encoded."""
    return _encoded(value, _Scrubber(), **kwargs)


def _encoded(value: Any, scrubber: _Scrubber, **kwargs: Any) -> str:
    """:func:`json_text` without walking ``value`` when it needs nothing of :func:`clean`.

    Nearly every value is plain: finite numbers, valid text, no credential. One encoding in
    C shows it (a lone surrogate fails to encode, a NaN fails ``allow_nan``, a key ``json``
    cannot spell fails, and the scrubber's look sees the whole text); only the others are
    walked. Either way the result is the same.
    """
    try:
        plain = json.dumps(value, allow_nan=False, ensure_ascii=False)
        plain.encode("utf-8")
        if not scrubber.might_hold(plain, scrubber.in_json):
            same = kwargs == {"ensure_ascii": False}
            return plain if same else json.dumps(value, allow_nan=False, **kwargs)
    except (TypeError, ValueError):
        pass
    return json.dumps(_clean(value, scrubber), allow_nan=False, **kwargs)


def json_document(value: dict[str, Any], rows: str = "items") -> str:
    """:func:`json_text` of a report, for people and for diffs: indented, except that each
    element of the ``rows`` list stands compact on a line of its own.

    Fast, because the rows are nearly all of a scorecard and ``json`` encodes indented output
    in pure Python: each row is encoded compactly, by :func:`_encoded`.
    """
    scrubber = _Scrubber()
    parts = []
    for key, item in value.items():
        if key == rows and isinstance(item, list) and item:
            lines = ",\n".join("    " + _encoded(row, scrubber, ensure_ascii=False) for row in item)
            text = "[\n" + lines + "\n  ]"
        else:
            cleaned = _clean(item, scrubber)
            text = json.dumps(cleaned, allow_nan=False, ensure_ascii=False, indent=2).replace("\n", "\n  ")
        parts.append(f"  {json.dumps(_clean(_key(key), scrubber), ensure_ascii=False)}: {text}")
    return "{\n" + ",\n".join(parts) + "\n}" if parts else "{}"


def write_text(path: Path, text: str) -> None:
    """Write ``text`` atomically (a temporary file, then a rename), encodable whatever it holds."""
    tmp = path.parent / f".{path.name}.{os.getpid()}.tmp"
    tmp.write_bytes(text.encode("utf-8", "replace"))
    tmp.replace(path)
