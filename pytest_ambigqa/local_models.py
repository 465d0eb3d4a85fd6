"""Models from this machine only: a directory, or a name already in the Hugging Face cache."""

from __future__ import annotations

import os
from pathlib import Path


def find_local_model(spec: str) -> Path | None:
    """The model directory ``spec`` names, or None; nothing is ever downloaded."""
    path = Path(spec).expanduser()
    if path.is_dir():
        return path.resolve()
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(spec, local_files_only=True))
    except Exception:  # not installed, not cached, not a valid name: all mean "not here"
        return None


def offline_transformers() -> None:
    """Before loading any Hugging Face model: no network, no progress bars, errors only."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
