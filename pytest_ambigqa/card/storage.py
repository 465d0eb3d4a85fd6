"""Where scorecards are written and read: a local directory, as always, or an object store
named by an fsspec URL (``s3://``, ``gs://``, ``az://``; a ``file://`` URL is the local path
it names), for ``--ambig-report`` and ``pytest-ambigqa merge``'s inputs (a glob too) and output.

fsspec is imported only when a URL is given (the plugin's start-up imports none of it); it
comes with the ``[cloud]`` extra (fsspec and s3fs; gcsfs or adlfs for ``gs://``, ``az://``).
Credentials are the store's usual ones, found by its fsspec package where the store's own
tools find them (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_PROFILE``,
``AWS_ENDPOINT_URL``; ``GOOGLE_APPLICATION_CREDENTIALS``; ``AZURE_STORAGE_CONNECTION_STRING``,
``AZURE_STORAGE_ACCOUNT_NAME`` and ``AZURE_STORAGE_KEY``...): the plugin takes none as an
option and writes none anywhere, and every message about a store is scrubbed of them.

A file is written whole, once: locally to a temporary file renamed into place
(``output.write_text``); to an object store as one object in one request (fsspec's
``pipe_file``: a single PUT, or past 100 MB on S3 a multipart upload, which the store
publishes only when it completes), so no reader ever sees half a scorecard.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..options import refuse
from ..output import redact, safe_output, sent, sent_url, split_url, write_text

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+)://")
_GLOB = re.compile(r"[*?[]")
EXTRA = "pip install 'pytest-ambigqa[cloud]'"
# The stores' credentials that can stand in the environment (the ones fsspec's packages read):
# scrubbed from every message, whatever their names look like.
CREDENTIALS = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AZURE_STORAGE_KEY",
    "AZURE_STORAGE_ACCOUNT_KEY",
    "AZURE_STORAGE_SAS_TOKEN",
    "AZURE_STORAGE_CONNECTION_STRING",
    "AZURE_CLIENT_SECRET",
)

Location = Path | str  # a str is an object store's URL
# The schemes of the object stores a scorecard can be written to and read from. Any other
# scheme fsspec knows (ftp, sftp, http, zip, tar, reference, github, memory...) is refused
# at start-up with one line: none is a store a run's shards can share, and some would make
# a network call when opened.
STORES = ("s3", "s3a", "gs", "gcs", "az", "abfs")


def location(text: str) -> Location:
    """A path as given, a ``file://`` URL's path, or an object store's URL (a str)."""
    match = _URL.match(text)
    if match is None and "::" in text and "://" in text:
        refuse(f"{shown(text)}: a chained URL (fsspec's 'a::b://') is not a store this plugin writes to")
    if match is None:
        return Path(text)
    if match.group(1).lower() != "file":
        return text
    from urllib.request import url2pathname  # an HTTP client's module: only for a file:// URL

    parts = split_url(text)
    assert parts is not None
    if parts.userinfo is not None or parts.host.lower() not in ("", "localhost"):
        host = parts.host.rpartition(":")[0] or parts.host
        refuse(f"{redact(text)}: a file:// URL names a path on this machine, not on {host}")
    return Path(url2pathname(parts.path))


def shown(where: Location) -> str:
    """A location as messages show it: a URL's user info and credentials scrubbed."""
    return safe_output(str(where))


def _filesystem(url: str) -> tuple[Any, str]:
    """(the store's fsspec filesystem, the path in it); a usage error where fsspec or the
    store's package is missing or the scheme is none fsspec knows."""
    _refuse_unencoded(url)
    try:
        import fsspec
    except ImportError:
        refuse(f"{shown(url)}: object storage needs fsspec: {EXTRA}")
    try:
        # A filesystem of its own: fsspec's shared instances keep the credentials they were made with.
        return fsspec.core.url_to_fs(url, skip_instance_cache=True)
    except ImportError as exc:  # the store's package: fsspec's message names it
        extra = f" ({EXTRA})" if url.lower().startswith(("s3://", "s3a://")) else ""
        refuse(f"{shown(url)}: {safe_output(str(exc))}{extra}")
    except ValueError as exc:
        refuse(f"{shown(url)}: {safe_output(str(exc))}")


def check(url: str) -> None:
    """Before a run: the URL's scheme is an object store's (:data:`STORES`) whose fsspec
    package is installed here. Nothing is opened, so nothing is contacted: only the store's
    filesystem class is imported."""
    _refuse_unencoded(url)
    match = _URL.match(url)
    scheme = match.group(1).lower() if match else ""
    try:
        import fsspec
    except ImportError:
        refuse(f"{shown(url)}: object storage needs fsspec: {EXTRA}")
    from fsspec.registry import known_implementations, registry

    if scheme not in STORES:
        if scheme not in known_implementations and scheme not in registry:
            refuse(f"{shown(url)}: Protocol not known: {scheme}")
        refuse(
            f"{shown(url)}: {scheme}:// is no object store this plugin can keep scorecards in "
            f"(use a directory, a file:// URL, or {', '.join(f'{s}://' for s in ('s3', 'gs', 'az'))})"
        )
    try:
        fsspec.get_filesystem_class(scheme)
    except ImportError as exc:  # the store's package: fsspec's message names it
        extra = f" ({EXTRA})" if scheme in ("s3", "s3a") else ""
        refuse(f"{shown(url)}: {safe_output(str(exc))}{extra}")


def _refuse_unencoded(url: str) -> None:
    """Registers the URL's credentials for scrubbing, and refuses user info holding '/', '?',
    '#' or '@' unencoded, which fsspec would take for the host (and print)."""
    _scrubbed_from_now_on(url)
    parts = split_url(url)
    if parts is not None and parts.unencoded:
        refuse(
            f"{redact(url)}: the user info of the URL holds '/', '?', '#' or '@' unencoded; "
            "percent-encode them (%2F, %3F, %23, %40), or give the store's credentials in its "
            "environment variables"
        )


def _scrubbed_from_now_on(url: str) -> None:
    """The credentials a store may be reached with: from now on no output of this process
    shows them (``output.sent``), whatever the library that fails puts in its message."""
    sent_url(url)
    for name in CREDENTIALS:
        value = os.environ.get(name, "")
        sent(value, *re.findall(r"(?i)(?:AccountKey|SharedAccessSignature)=([^;]+)", value))


def _failed(exc: BaseException) -> OSError:
    """A store's failure (the library's own exception, whatever it is) as one scrubbed line."""
    text = " ".join(str(exc).split()) or "no reason given"
    return OSError(safe_output(f"{type(exc).__name__}: {text}"))


def write(directory: Location, name: str, text: str | Iterable[str]) -> None:
    """``name`` in ``directory``, written whole (see the module); an ``OSError`` when the
    store refuses it, every other exception from making ``text``."""
    if isinstance(directory, Path):
        write_text(directory / name, text)
        return
    data = b"".join(piece.encode("utf-8", "replace") for piece in ([text] if isinstance(text, str) else text))
    fs, root = _filesystem(directory)
    try:
        fs.pipe_file(f"{root.rstrip('/')}/{name}", data)
    except Exception as exc:  # noqa: BLE001 - the store's library: botocore, aiohttp, azure...
        raise _failed(exc) from None


def joined(directory: Location, name: str) -> Location:
    """``name`` inside ``directory``: a path, or the URL one level down."""
    return directory / name if isinstance(directory, Path) else f"{directory.rstrip('/')}/{name}"


def prepare(directory: Location) -> None:
    """Make the local directory (an object store has none to make); an ``OSError`` if it cannot."""
    if isinstance(directory, Path):
        directory.mkdir(parents=True, exist_ok=True)


def read_text(where: Location) -> str:
    """A file's text; an ``OSError`` (scrubbed) when it cannot be read."""
    if isinstance(where, Path):
        return where.read_text(encoding="utf-8")
    fs, path = _filesystem(where)
    try:
        data = fs.cat_file(path)
    except Exception as exc:  # noqa: BLE001 - as in write
        raise _failed(exc) from None
    return data.decode("utf-8")


def expand(given: Iterable[str]) -> list[Location]:
    """``merge``'s inputs: each path or URL as given, a glob (a quoted local one, a ``file://``
    one, a store's) as the files it matches, in order; a glob that matches none is refused."""
    found: list[Location] = []
    for text in given:
        where = location(text)
        if isinstance(where, Path):
            if where.exists() or not _GLOB.search(str(where)):
                found.append(where)
                continue
            import glob

            local = sorted(glob.glob(str(where), recursive=True))
            if not local:
                refuse(f"{shown(text)}: matches no file")
            found += [Path(path) for path in local]
            continue
        check(where)
        if not _GLOB.search(where):
            found.append(where)
            continue
        fs, pattern = _filesystem(where)
        try:
            matched = sorted(fs.glob(pattern))
        except Exception as exc:  # noqa: BLE001 - as in write
            refuse(f"{shown(where)}: could not list the store: {_failed(exc)}")
        if not matched:
            refuse(f"{shown(where)}: matches no file")
        found += [fs.unstrip_protocol(path) for path in matched]
    return found
