"""Benchmark files from the Hugging Face Hub, through ``huggingface_hub``, pinned and checked.

A revision not given is resolved once to its commit, and every file is downloaded at that
commit into the Hub's own cache (``HF_HOME`` / ``HF_HUB_CACHE``); ``HF_HUB_OFFLINE=1`` reads
the cache alone. Each file's sha256 is checked against the one the Hub publishes for it (an
LFS oid, also the blob's ETag). The Hub's endpoint, cache, offline flag and token are read
from the environment at each call, not when ``huggingface_hub`` was imported, so that every
run of one process sees its own. Whatever fails is one :class:`DataError` line, scrubbed:
the token (``HF_TOKEN`` or the ``hf auth login`` one) is a secret like every other.

``huggingface_hub`` is imported only here, and only for an ``hf://`` URL.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DataError
from ..output import scrub, sent
from .records import file_sha256
from .sources import COMMIT, HubRef, Source, choose, data_files, names_split

INSTALL = "pip install 'pytest-ambigqa[hub]'"
_TRUE = ("1", "true", "yes", "on")


@dataclass(frozen=True)
class Settings:
    """Where the Hub is and what this process may do with it, read from the environment."""

    endpoint: str
    cache: Path
    offline: bool
    token: str | None

    @classmethod
    def read(cls) -> Settings:
        env = os.environ
        home = env.get("HF_HOME") or os.path.join(
            env.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "huggingface"
        )
        cache = env.get("HF_HUB_CACHE") or env.get("HUGGINGFACE_HUB_CACHE") or os.path.join(home, "hub")
        offline = any((env.get(k) or "").lower() in _TRUE for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))
        return cls(
            endpoint=(env.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/"),
            cache=Path(cache).expanduser(),
            offline=offline,
            token=_token(Path(home)),
        )


def _token(home: Path) -> str | None:
    """``HF_TOKEN``, else the token ``hf auth login`` stored; from now on scrubbed from every
    output of this process (``output.sent``)."""
    token = os.environ.get("HF_TOKEN") or os.environ.get("HUGGING_FACE_HUB_TOKEN")
    if not token:
        stored = Path(os.environ.get("HF_TOKEN_PATH") or home / "token")
        try:
            token = stored.read_text(encoding="utf-8").strip() or None
        except OSError:
            token = None
    if token:
        sent(token)
    return token


def _hub() -> Any:
    try:
        import huggingface_hub
    except ImportError:
        raise DataError(f"an hf:// URL needs huggingface_hub: {INSTALL}") from None
    return huggingface_hub


@dataclass(frozen=True)
class Fetched:
    """The files of one load, downloaded and checked: (repo path, local path, sha256)."""

    ref: HubRef
    commit: str
    files: tuple[tuple[str, Path, str], ...]
    chosen_by_split: bool
    only_of_split: bool

    @property
    def pinned(self) -> HubRef:
        return self.ref.pinned(self.commit)


def fetch(ref: HubRef, split: str, source: Source | None, *, offline: bool = False) -> Fetched:
    """The files ``ref`` names (or those of ``split``) at one commit, in the cache."""
    settings = Settings.read()
    offline = offline or settings.offline
    hub = _hub()
    with _explained(ref, settings, offline):
        if not offline:
            try:
                commit, paths, published = _remote(hub, ref, settings)
            except _transport():  # no network: the cache may hold it
                commit, paths, published = _cached(ref, settings, _unreachable(ref, settings))
                offline = True
        else:
            commit, paths, published = _cached(ref, settings, _not_cached(ref, settings))
        if not offline and ref.revision != commit:  # as huggingface_hub records it: offline runs read it
            _remember(_storage(ref, settings), ref.revision or "main", commit)
        chosen = choose(ref, paths, split, source)
        files = tuple(
            (path, *_download(hub, ref, path, commit, settings, offline, published.get(path)))
            for path in chosen
        )
    of_split = [p for p in data_files(paths) if names_split(p, split)]
    return Fetched(
        ref=ref,
        commit=commit,
        files=files,
        chosen_by_split=ref.file is None,
        only_of_split=ref.file is not None and of_split == [chosen[0]],
    )


def _remote(hub: Any, ref: HubRef, settings: Settings) -> tuple[str, list[str], dict[str, str]]:
    """(commit, the repo's files, their published sha256s) from the Hub's dataset_info."""
    api = hub.HfApi(endpoint=settings.endpoint, token=settings.token or False)
    info = api.dataset_info(ref.repo, revision=ref.revision, files_metadata=True)
    if not info.sha:
        raise DataError(f"{ref}: the Hub named no commit for this revision")
    published = {s.rfilename: s.lfs.sha256.lower() for s in info.siblings or () if s.lfs}
    return info.sha, [s.rfilename for s in info.siblings or ()], published


def _transport() -> tuple[type[BaseException], ...]:
    """What a request raises when the Hub cannot be reached at all."""
    import httpx

    return (httpx.ConnectError, httpx.ConnectTimeout, ConnectionError)


def _remember(storage: Path, revision: str, commit: str) -> None:
    """The commit a branch or tag resolved to, in the cache's ``refs/`` (huggingface_hub's own
    layout), so that ``HF_HUB_OFFLINE=1`` reads what this run read."""
    ref = storage / "refs" / revision
    try:
        ref.parent.mkdir(parents=True, exist_ok=True)
        ref.write_text(commit, encoding="utf-8")
    except OSError:
        pass  # a read-only cache: offline runs name the commit


def _storage(ref: HubRef, settings: Settings) -> Path:
    return settings.cache / f"datasets--{ref.repo.replace('/', '--')}"


def _cached(ref: HubRef, settings: Settings, absent: DataError) -> tuple[str, list[str], dict[str, str]]:
    """(commit, the files the cache holds of it, no published sha256s): offline, the commit
    is the revision's as the cache last saw it; ``absent`` when the cache does not hold it."""
    storage = _storage(ref, settings)
    revision = ref.revision or "main"
    commit = revision if COMMIT.fullmatch(revision) else None
    if commit is None:
        try:
            commit = (storage / "refs" / revision).read_text(encoding="utf-8").strip()
        except OSError:
            raise absent from None
    snapshot = storage / "snapshots" / commit
    if not snapshot.is_dir():
        raise absent
    paths = sorted(p.relative_to(snapshot).as_posix() for p in snapshot.rglob("*") if p.is_file())
    return commit, paths, {}


def _not_cached(ref: HubRef, settings: Settings) -> DataError:
    why = "HF_HUB_OFFLINE is set" if settings.offline else "offline"
    return DataError(
        f"{ref}: {why} and the Hub cache ({settings.cache}) does not hold it; fetch it where the "
        "Hub can be reached (pytest-ambigqa data fetch) and point HF_HUB_CACHE at that cache"
    )


def _download(
    hub: Any, ref: HubRef, path: str, commit: str, settings: Settings, offline: bool, published: str | None
) -> tuple[Path, str]:
    """One file at ``commit``, in the cache, and its sha256, checked against the Hub's."""
    local = Path(
        hub.hf_hub_download(
            ref.repo,
            path,
            repo_type="dataset",
            revision=commit,
            cache_dir=str(settings.cache),
            endpoint=settings.endpoint,
            token=settings.token or False,
            local_files_only=offline,
        )
    )
    digest = file_sha256(local)
    blob = local.resolve()
    expected = published or (blob.name if len(blob.name) == 64 else None)  # an LFS blob: its sha256
    if expected is not None and digest != expected:
        for stale in (local, blob):
            stale.unlink(missing_ok=True)  # so that the next run downloads it again
        raise DataError(
            f"{ref.pinned(commit)}: {path} does not match its checksum (sha256 {digest[:12]}, the Hub's "
            f"{expected[:12]}): the download is damaged; it was removed from the cache, run again"
        )
    return local, digest


@contextmanager
def _explained(ref: HubRef, settings: Settings, offline: bool) -> Iterator[None]:
    """``huggingface_hub``'s and httpx's errors as one line each; their own texts (which can
    hold URLs and headers) are never shown whole, and what is shown is scrubbed."""
    from huggingface_hub import errors

    page = f"{settings.endpoint}/datasets/{ref.repo}"
    try:
        yield
    except DataError as exc:
        raise DataError(scrub(str(exc))) from None
    except errors.HFValidationError as exc:  # a name the Hub's rules refuse: "a/b..c", "a/--b"
        said = scrub(str(exc))[:160]  # scrubbed, then cut
        raise DataError(f"{ref}: not a valid Hub repository name or revision ({said})") from None
    except errors.GatedRepoError:
        if settings.token is None:
            why = (
                f"a gated dataset: it needs your Hugging Face token (set HF_TOKEN, or run `hf auth "
                f"login`) and its terms accepted at {page}"
            )
        else:
            why = f"a gated dataset, and your token has no access to it: accept its terms at {page}"
        raise DataError(f"{ref}: {why}") from None
    except errors.RevisionNotFoundError:
        raise DataError(f"{ref}: the repository has no revision '{ref.revision}'") from None
    except errors.RemoteEntryNotFoundError:
        raise DataError(f"{ref}: the repository has no file '{ref.file}' at this revision") from None
    except errors.RepositoryNotFoundError:
        raise DataError(
            f"{ref}: no dataset repository '{ref.repo}' on {settings.endpoint} (or it is private, "
            "and your token cannot see it)"
        ) from None
    except errors.LocalEntryNotFoundError:
        raise _not_cached(ref, settings) if offline else _unreachable(ref, settings) from None
    except errors.HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else None
        if status == 401:
            raise DataError(
                f"{ref}: the Hub refused your token (401); check HF_TOKEN or `hf auth login`"
            ) from None
        raise DataError(f"{ref}: the Hub answered HTTP {status}") from None
    except OSError as exc:
        raise _os_error(ref, exc) from None
    except Exception as exc:  # httpx's: a connection refused, a body cut short, a timeout
        problem = _transport_error(ref, settings, exc)
        if problem is None:
            raise
        raise problem from None


def _os_error(ref: HubRef, exc: OSError) -> DataError:
    if "Consistency check failed" in str(exc):
        return DataError(f"{ref}: the download was cut short (fewer bytes than the Hub announced); run again")
    return DataError(scrub(f"{ref}: {exc.strerror or type(exc).__name__}"))


def _transport_error(ref: HubRef, settings: Settings, exc: Exception) -> DataError | None:
    """httpx's errors as one line; None for any other exception (raised as it is)."""
    import httpx

    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
        return DataError(f"{ref}: the download was cut short ({type(exc).__name__}); run again")
    if isinstance(exc, httpx.TransportError):
        return _unreachable(ref, settings)
    return None


def _unreachable(ref: HubRef, settings: Settings) -> DataError:
    return DataError(
        f"{ref}: the Hub ({settings.endpoint}) cannot be reached and the cache ({settings.cache}) does "
        "not hold it; fetch it where the Hub can be reached (pytest-ambigqa data fetch)"
    )
