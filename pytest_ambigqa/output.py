"""What the plugin writes or prints goes through here: secrets out, always valid text and JSON.

Every writer (``scorecard.json``, ``scorecard.md``, the terminal summary, JUnit properties,
item failure messages, ``pytest-ambigqa merge``, the caches on disk) uses these, so that an
API key a server echoes in an error, a lone surrogate in an answer or a NaN in a system's
metadata can cost nothing but the offending characters. Strings are scrubbed before they are
encoded, never after: scrubbing JSON text could cut an escape in half.
"""

from __future__ import annotations

import base64
import json
import math
import os
import re
import sys
import urllib.parse
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
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
    # A URL's user info, up to the last "@" of the word: a password may hold "/", "?", "#",
    # "@" or ":" unencoded (:func:`split_url`); what is masked past the host costs nothing.
    # Bounded, and without backtracking inside a part: a text of many "x://" stays linear.
    (
        re.compile(
            r"(?i)\b([a-z][a-z0-9+.-]*://)"
            r"(?:[^/?#\s:@'\"]{1,256}:(?:[^\s'\"@]{0,256}+@){1,8}|[^/?#\s:@'\"]{1,256}@)"
        ),
        rf"\1{MASK}@",
    ),
    (re.compile(r"(?i)([?&](?:api_?key|key|token|access_token|secret)=)[^&#\s'\"]+"), rf"\1{MASK}"),
)


def _secret_values() -> list[str]:
    """The credentials to scrub wherever they stand, longest first: the values of the
    environment's variables named like a key, token, secret or password whose value looks
    like one, and the credentials this process sends (:func:`sent`) of 12 characters or more.

    Read again whenever the environment has changed (a comparison of its raw mapping, in C),
    since every string written is checked against them: reading it item by item cost more
    than the rest of the plugin's work per item. ``PYTEST_CURRENT_TEST`` is left out of the
    comparison: pytest sets it at each phase of each test, which made every item read it again.
    """
    raw = getattr(os.environ, "_data", None)
    cached = _SECRETS_SEEN.get("environ")
    if raw is not None and cached is not None and cached[2] == len(_SENT):
        seen = cached[0]
        if _CURRENT_TEST in raw:  # pytest changes it at every test's every phase; it holds no secret
            seen[_CURRENT_TEST] = raw[_CURRENT_TEST]
        else:
            seen.pop(_CURRENT_TEST, None)
        if seen == raw:
            return cached[1]
    values = {
        v
        for k, v in os.environ.items()
        if _SECRET_ENV.search(k)
        and (len(v) >= 12 or (k == "OPENAI_API_KEY" and len(v) >= 8))
        and not any(c.isspace() for c in v)
    } | {v for v in _SENT if len(v) >= _ANYWHERE}
    found = sorted(values, key=len, reverse=True)
    if raw is not None:
        _SECRETS_SEEN["environ"] = (dict(raw), found, len(_SENT))
    return found


_SECRETS_SEEN: dict[str, tuple[Any, list[str], int]] = {}
_CURRENT_TEST = os.environ.encodekey("PYTEST_CURRENT_TEST") if hasattr(os.environ, "encodekey") else None
# What this process sends as a credential, in each form it may come back in. A process-wide
# fact, as the environment is: every writer of the process scrubs it, however it was reached.
_SENT: set[str] = set()
_SECRET_QUERY = re.compile(r"(?i)(key|token|secret|sig|auth|pass|cred|code)")
_ANYWHERE = 12  # a sent credential this long is scrubbed wherever it stands; a shorter one as a word
_SHORTEST = 4  # shorter ones are no credential to scrub (and would eat ordinary words)


def sent(*credentials: str) -> None:
    """Credentials the plugin sends (a URL's password, the Basic token it builds from it, a
    query value, an API key): from now on every report, cache and store of this process
    scrubs each of them, as sent and percent-encoded (as a server may echo it)."""
    for value in credentials:
        if len(value) < _SHORTEST or any(c.isspace() for c in value):
            continue
        _SENT.update({value, urllib.parse.quote(value, safe=""), urllib.parse.quote_plus(value)})


def sent_url(url: str | None) -> None:
    """The credentials a URL carries when the plugin sends a request to it: the password of
    its user info (and the ``Authorization: Basic`` token made of it) and its query values
    that are named like a credential or long enough to be one."""
    parts = split_url(url or "")
    if parts is None:
        return
    if parts.userinfo is not None:
        user, password = parts.user, parts.password
        raw = parts.userinfo.partition(":")[2]
        if password is None:  # a token as the user name (not a short name: it would eat words)
            sent(f"{user}:", basic_token(user, ""), *([user, parts.userinfo] if len(user) >= 8 else []))
        else:
            sent(password, raw, f"{user}:{password}", basic_token(user, password))
    query = parts.rest.partition("?")[2].partition("#")[0]
    for name, value in urllib.parse.parse_qsl(query, keep_blank_values=True):
        if _SECRET_QUERY.search(name) or len(value) >= 8:  # not ?mode=fast: "fast" stays a word
            sent(value)


def basic_token(user: str, password: str) -> str:
    """The credential of ``Authorization: Basic`` for a user and password (RFC 7617)."""
    return base64.b64encode(f"{user}:{password}".encode()).decode("ascii")


def _sent_words() -> tuple[list[str], re.Pattern[str] | None]:
    """The shorter sent credentials, and the pattern that matches them as whole words
    ("secret1" is scrubbed, "passages" is not for a password "passage"); built again only
    when a credential was added."""
    cached = _SECRETS_SEEN.get("words")
    if cached is not None and cached[2] == len(_SENT):
        return cached[1], cached[0]
    short = sorted((v for v in _SENT if len(v) < _ANYWHERE), key=len, reverse=True)
    pattern = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, short)) + r")(?!\w)") if short else None
    _SECRETS_SEEN["words"] = (pattern, short, len(_SENT))
    return short, pattern


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

    def __init__(self, values: list[str], short: list[str], words: re.Pattern[str] | None) -> None:
        self.values, self.short, self.words = values, short, words
        looked_for = [*values, *short]
        self.quick = tuple(looked_for)
        # In JSON text a value's quotes and backslashes stand escaped.
        self.in_json = tuple({*looked_for, *(json.dumps(v, ensure_ascii=False)[1:-1] for v in looked_for)})

    def might_hold(self, text: str, values: tuple[str, ...] | list[str]) -> bool:
        if any(needle in text for needle in self._PLAIN) or any(v in text for v in values):
            return True
        if not text.isascii() and self._FOLDS.search(text):
            return self._FOLDED.search(text) is not None  # the patterns fold case as re does
        lower = text.lower()
        return any(needle in lower for needle in self._LOWER)

    def __call__(self, text: str) -> str:
        if not self.might_hold(text, self.quick):
            return text
        for value in self.values:
            text = text.replace(value, MASK)
        if self.words is not None:
            text = self.words.sub(MASK, text)
        text = _HEADER.sub(_header, text)
        for pattern, replacement in _PATTERNS:
            text = pattern.sub(replacement, text)
        return text


def _scrubber() -> _Scrubber:
    """The :class:`_Scrubber` of the credentials known now, made again only when the
    environment's or the sent ones changed: every string the plugin writes is scrubbed, and
    making one per record (its JSON forms of each credential) was a cost of every item."""
    values = _secret_values()
    short, words = _sent_words()
    known = _SCRUBBER[0] if _SCRUBBER else None
    if known is None or known.values is not values or known.short is not short or known.words is not words:
        known = _Scrubber(values, short, words)
        _SCRUBBER[:] = [known]
    return known


_SCRUBBER: list[_Scrubber] = []  # the last one made (:func:`_scrubber`)


_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
_AUTHORITY_END = re.compile(r"[/?#]")
# Characters a password must percent-encode that standard parsers (urllib.parse.urlsplit, httpx,
# fsspec) take for the end of the authority or of the user info
RESERVED_IN_USERINFO = "/?#@"


@dataclass(frozen=True)
class UrlParts:
    """A URL as :func:`split_url` reads it, each part as written (nothing decoded)."""

    scheme: str
    userinfo: str | None  # "user:password", "user" or "token"; None: none
    host: str  # HOST[:PORT], as written
    rest: str  # the path, query and fragment

    @property
    def user(self) -> str:
        return urllib.parse.unquote((self.userinfo or "").partition(":")[0])

    @property
    def password(self) -> str | None:
        if self.userinfo is None or ":" not in self.userinfo:
            return None
        return urllib.parse.unquote(self.userinfo.partition(":")[2])

    @property
    def unencoded(self) -> bool:
        """Whether the user info holds a character that other parsers misread (``/?#@``)."""
        return self.userinfo is not None and any(c in self.userinfo for c in RESERVED_IN_USERINFO)

    @property
    def path(self) -> str:
        return re.split("[?#]", self.rest, maxsplit=1)[0]

    def without_userinfo(self, *, query: bool = True) -> str:
        """The URL with no user info (and, without ``query``, no query or fragment)."""
        rest = self.rest if query else self.rest.split("?", 1)[0].split("#", 1)[0]
        return f"{self.scheme}://{self.host}{rest}"

    def encoded(self) -> str:
        """The URL with its user info percent-encoded, as every parser reads it alike."""
        if self.userinfo is None:
            return self.without_userinfo()
        user, colon, password = self.userinfo.partition(":")
        quote = lambda text: urllib.parse.quote(urllib.parse.unquote(text), safe="!$&'()*+,;=-._~")  # noqa: E731
        return f"{self.scheme}://{quote(user)}{colon}{quote(password)}@{self.host}{self.rest}"


def split_url(url: str) -> UrlParts | None:
    """``url``'s parts, its user info found however it is written; None if it is no URL.

    ``urllib.parse.urlsplit`` ends the authority at the first "/", "?" or "#", so a password
    holding one (unencoded) is read as the host and a path, and "@" in it splits it: a
    credential then shows in every message that prints the "host". Here the user info is
    everything up to the last "@" that follows a user name (the text before the first ":" holds
    no "/", "?" or "#", as no user name can): a password may hold any character but a space.
    An "@" in the path of a URL written ``HOST:PORT/PATH@X`` cannot be told from one in a
    password, and is read as the password's end: a credential is never taken for a host.
    """
    match = _SCHEME.match(url)
    if match is None:
        return None
    after = url[match.end() :]
    userinfo = None
    at = after.rfind("@")
    while at >= 0:
        candidate = after[:at]
        if not _AUTHORITY_END.search(candidate.partition(":")[0]) and not any(c.isspace() for c in candidate):
            userinfo, after = candidate, after[at + 1 :]
            break
        at = after.rfind("@", 0, at)
    end = _AUTHORITY_END.search(after)
    host, rest = (after[: end.start()], after[end.start() :]) if end else (after, "")
    return UrlParts(match.group(1), userinfo, host, rest)


def redact(spec: str) -> str:
    """A system spec or URL safe to print: no user info, credentials or query string."""
    parts = split_url(spec)
    if parts is None:
        return spec
    return parts.without_userinfo(query=False)


def scrub(text: str) -> str:
    """``text`` with every credential we can recognise replaced by ``[redacted]``.

    The environment's key values, wherever they stand; header credentials (``Authorization:
    Bearer ...``); OpenAI-style ``sk-`` keys; credentials in URLs and key-like query
    parameters. Ordinary words ("prior authorization: required") are left alone.
    """
    return _scrubber()(text)


def clean_text(text: str) -> str:
    """Encodable text: lone surrogates and the like become "?"."""
    return text if text.isascii() else text.encode("utf-8", "replace").decode("utf-8")


def safe_output(text: str) -> str:
    """A string fit to print or write anywhere: encodable and scrubbed."""
    return scrub(clean_text(text))


def recurring(text: str, limit: int) -> str:
    """``safe_output(cut(text, limit))`` of a text that recurs item after item (why a metric
    is n/a), made once while the credentials are unchanged and shared (``sys.intern``): it
    was made again for every unscored metric of every item (issue 44)."""
    scrubber = _scrubber()
    if not _RECURRING_FOR or _RECURRING_FOR[0] is not scrubber or len(_RECURRING) >= 4096:  # bounded
        _RECURRING.clear()
        _RECURRING_FOR[:] = [scrubber]
    shown = _RECURRING.get((text, limit))
    if shown is None:
        shown = _RECURRING[(text, limit)] = sys.intern(safe_output(cut(text, limit)))
    return shown


_RECURRING: dict[tuple[str, int], str] = {}  # :func:`recurring`'s texts,
_RECURRING_FOR: list[_Scrubber] = []  # made with this scrubber


def excerpt(text: Any, limit: int, *, tail: bool = False) -> str:
    """At most ``limit`` characters of ``text`` (its last ones with ``tail``), scrubbed first
    and then cut, never the other way round: a cut could leave the part of a credential that
    no pattern knows any more (an ``sk-`` key's first characters, a password without its
    ``@``). Every cut of a text that came from outside (a server's error, a body, a
    traceback, a batch's error file) is made here."""
    shown = safe_output(text if isinstance(text, str) else _str(text))
    return shown[-limit:] if tail else shown[:limit]


def _str(value: Any) -> str:
    try:
        return value.decode("utf-8", "replace") if isinstance(value, (bytes, bytearray)) else str(value)
    except Exception:  # noqa: BLE001 - an exception whose __str__ fails: its type's name
        return f"<{type(value).__name__}: unprintable>"


# Control characters: C0 (but a newline or tab where the layout needs one), DEL, C1 (a
# terminal takes 0x9b for ESC "[", 0x9d for ESC "]") and the line and paragraph separators
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")
_CONTROL_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def for_terminal(text: Any, *, one_line: bool = False) -> str:
    """``text`` fit for a terminal: scrubbed (:func:`safe_output`), and every control character
    shown escaped (ESC as ``\\x1b``), so that nothing from data, an answer, a server's error, a
    batch's status or id can change the window's title (OSC 0/2), write the clipboard (OSC
    52), make a link (OSC 8), clear the screen or move the cursor, or ring the bell. Newlines
    and tabs stay, but not with ``one_line`` (a progress line, a table's cell). Every line
    the plugin writes to a terminal, and every failure message pytest prints, passes here."""
    return escape_controls(safe_output(text if isinstance(text, str) else _str(text)), one_line=one_line)


def escape_controls(text: str, *, one_line: bool = True) -> str:
    """:func:`for_terminal` without the scrubbing: for a name that must stay what it names
    (a test's name, made of an item's id)."""
    pattern = _CONTROL_LINE if one_line else _CONTROL
    return pattern.sub(_escaped, text) if pattern.search(text) else text


def clean(value: Any, *, secrets: bool = False) -> Any:
    """A JSON-able value with non-finite floats as strings and every string encodable (and,
    with ``secrets``, scrubbed)."""
    return _clean(value, _scrubber() if secrets else None)


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
    return _encoded(value, _scrubber(), **kwargs)


def _encoded(value: Any, scrubber: _Scrubber, **kwargs: Any) -> str:
    """:func:`json_text` without walking ``value`` when it needs nothing of :func:`clean`.

    Nearly every value is plain: finite numbers, valid text, no credential. One encoding in
    C shows it (a lone surrogate fails to encode, a NaN fails ``allow_nan``, a key ``json``
    cannot spell fails, and the scrubber's look sees the whole text); only the others are
    walked. Either way the result is the same.
    """
    try:
        plain = json.dumps(value, allow_nan=False, ensure_ascii=False)
        ascii_ = plain.isascii()  # then it is the ASCII encoding too, and valid UTF-8
        if not ascii_:
            plain.encode("utf-8")
        if not scrubber.might_hold(plain, scrubber.in_json):
            same = kwargs == {"ensure_ascii": False} or (ascii_ and not kwargs)
            return plain if same else json.dumps(value, allow_nan=False, **kwargs)
    except (TypeError, ValueError):
        pass
    return json.dumps(_clean(value, scrubber), allow_nan=False, **kwargs)


def json_document(value: dict[str, Any], rows: str = "items") -> str:
    """:func:`json_text` of a report, for people and for diffs: indented, except that each
    element of the ``rows`` list stands compact on a line of its own (:func:`json_chunks`)."""
    return "".join(json_chunks(value, rows))


def json_chunks(value: dict[str, Any], rows: str = "items") -> Iterator[str]:
    """:func:`json_document`'s text in pieces, a row at a time, so that a file can be written
    as its rows are made: ``rows`` may be a list or an iterator (the scorecard's items, read
    back from the run's spool one by one).

    Fast, because the rows are nearly all of a scorecard and ``json`` encodes indented output
    in pure Python: each row is encoded compactly, by :func:`_encoded`.
    """
    scrubber = _scrubber()
    if not value:
        yield "{}"
        return
    for n, (key, item) in enumerate(value.items()):
        yield f"{',' if n else '{'}\n  {json.dumps(_clean(_key(key), scrubber), ensure_ascii=False)}: "
        if key == rows and isinstance(item, (list, Iterator)):
            opened = False
            for row in item:
                yield f"{',' if opened else '['}\n    {_encoded(row, scrubber, ensure_ascii=False)}"
                opened = True
            yield "\n  ]" if opened else "[]"
        else:
            cleaned = _clean(item, scrubber)
            yield json.dumps(cleaned, allow_nan=False, ensure_ascii=False, indent=2).replace("\n", "\n  ")
    yield "\n}"


MAX_ENTRIES = 1000  # of one list or mapping in a bounded record
_BOUNDED = ("error", "trace", "answer", "details", "unscored")  # free text; ids and scores are never cut


def bounded(record: dict[str, Any], limit: int) -> dict[str, Any]:
    """An item's record (``ItemResult.to_dict``) fit to write into every report: each text of
    its free-text fields (answer, error, trace, transcript, metadata, reasons) cut to ``limit``
    characters, each list or mapping there to :data:`MAX_ENTRIES` entries. A text that was cut
    ends saying so; ``details["cut"]`` maps each field cut to its size. The scores were
    computed before, on the whole answer (``--ambig-max-text``)."""
    cuts: dict[str, int] = {}
    out = {k: cut(v, limit, k, cuts) if k in _BOUNDED else v for k, v in record.items()}
    if "trials" in out:  # each repeated trial's record, alike (--ambig-repeats)
        out["trials"] = [bounded(t, limit) for t in out["trials"]]
    if cuts:
        out["details"] = {**(out.get("details") or {}), "cut": cuts}
    return out


def cut(value: Any, limit: int, path: str = "", cuts: dict[str, int] | None = None) -> Any:
    """``value`` with each text at most ``limit`` characters (and a note of the rest) and each
    list or mapping at most :data:`MAX_ENTRIES` entries; ``cuts`` collects what was cut."""
    if isinstance(value, str):
        if len(value) <= limit:
            return value
        value = safe_output(value)  # scrubbed before it is cut: no part of a credential survives the cut
        if len(value) <= limit:
            return value
        if cuts is not None:
            cuts[path] = len(value)
        kept = f"the first {limit:,} kept (--ambig-max-text)"
        return f"{value[:limit]}\n[... cut: {len(value):,} characters, {kept}]"
    if isinstance(value, dict):
        if len(value) > MAX_ENTRIES and cuts is not None:
            cuts[path] = len(value)
        return {k: cut(v, limit, f"{path}.{k}", cuts) for k, v in list(value.items())[:MAX_ENTRIES]}
    if isinstance(value, list):
        if len(value) > MAX_ENTRIES and cuts is not None:
            cuts[path] = len(value)
        return [cut(v, limit, f"{path}[{i}]", cuts) for i, v in enumerate(value[:MAX_ENTRIES])]
    return value


def write_text(path: Path, text: str | Iterable[str]) -> None:
    """Write ``text`` (or its pieces, as they are made) atomically (a temporary file, then a
    rename), encodable whatever it holds; a piece that cannot be made leaves no file."""
    tmp = path.parent / f".{path.name}.{os.getpid()}.tmp"
    try:
        with tmp.open("wb") as out:
            for piece in [text] if isinstance(text, str) else text:
                out.write(piece.encode("utf-8", "replace"))
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    tmp.replace(path)
