"""Models from this machine only (a directory, or a name already in the Hugging Face cache),
on the device ``--ambig-device`` picks."""

from __future__ import annotations

import importlib
import os
import re
import threading
from pathlib import Path
from typing import Any

from ..errors import DeviceUnavailable
from ..options import refuse


def find_local_model(spec: str) -> Path | None:
    """The model directory ``spec`` names, or None; nothing is ever downloaded."""
    path = Path(spec).expanduser()
    if path.is_dir():
        return path.resolve()
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(spec, local_files_only=True))
    except Exception:  # noqa: BLE001 - not installed, not cached, not a valid name: all mean "not here"
        return None


_IMPORTING = threading.Lock()


def import_offline(module: str, *names: str) -> list[Any]:
    """``names`` from ``module`` (``transformers``, ``sentence_transformers``), imported for
    loading a model: no network, no progress bars, errors only. One thread at a time, a lazy
    module's names included: Python lets a thread import a submodule of a package another
    thread is still initializing, and the reader's ``from transformers import AutoTokenizer``
    beside the embedder's ``import sentence_transformers`` (which imports transformers) failed
    for as long as that import took ("cannot import name 'AutoModelForQuestionAnswering'")."""
    with _IMPORTING:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        imported = importlib.import_module(module)
        return [getattr(imported, name) for name in names]


DEVICE_SPEC = re.compile(r"auto|cpu|cuda(:\d+)?")


def pick_device(spec: str = "auto") -> str:
    """The torch device for ``spec``: ``auto`` is the first CUDA GPU when torch sees one, else
    the CPU; an explicit ``cuda[:N]`` that is not there raises rather than falling back, so a
    run never silently takes hours on the CPU."""
    import torch

    if spec == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if spec.startswith("cuda"):
        index = int(spec.partition(":")[2] or 0)
        if not torch.cuda.is_available():
            raise DeviceUnavailable(f"'{spec}': torch {torch.__version__} sees no CUDA device")
        if index >= torch.cuda.device_count():
            raise DeviceUnavailable(f"'{spec}': torch sees {torch.cuda.device_count()} CUDA device(s)")
    return spec


def parse_device(value: str | None) -> str:
    """``--ambig-device``: auto, cpu, cuda or cuda:N (whether it is there is checked on use)."""
    spec = (value or "auto").strip().lower()
    if not DEVICE_SPEC.fullmatch(spec):
        refuse(f"--ambig-device: '{value}' is not auto, cpu, cuda or cuda:N")
    return spec
