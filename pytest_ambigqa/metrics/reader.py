"""Readers for Disambig-F1: an extractive QA model, or the judge LLM, answers from the long answer.

ASQA's official scorer runs a RoBERTa SQuAD 2.0 model through Hugging Face's ``run_qa.py``
(``--version_2_with_negative``, ``null_score_diff_threshold 0``). transformers >= 5.3
has no question-answering pipeline, so :func:`decode` re-does ``run_qa``'s post-processing
from the model's logits: windows of 384 tokens with a stride of 128, answers inside the
context only, at most 30 tokens, the 20 best starts and ends, and the SQuAD 2.0 null answer
when the smallest null score beats the best span. ``decode`` is pure; the model is I/O and
loads only when first used.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..local_models import offline_transformers

MAX_LENGTH, STRIDE, MAX_ANSWER_TOKENS, N_BEST, NULL_THRESHOLD = 384, 128, 30, 20, 0.0


class Reader(Protocol):
    def read(self, questions: Sequence[str], context: str, usage: Any = None) -> list[str]:
        """One answer span (or "" for no answer) per question, from ``context``."""
        ...


Window = tuple[np.ndarray, np.ndarray, Sequence[tuple[int, int] | None]]  # start, end, offsets


def decode(context: str, windows: Sequence[Window]) -> str:
    """The answer text ``run_qa.py`` would return for one example (SQuAD 2.0 rules).

    ``offsets[i]`` is the character span of token i in ``context``, or None for tokens
    outside the context (question, special tokens, padding); token 0 is the CLS token whose
    start + end logit is the window's null score.
    """
    null_score: float | None = None
    best_score, best_text = -np.inf, ""
    for start_logits, end_logits, offsets in windows:
        window_null = float(start_logits[0] + end_logits[0])
        if null_score is None or window_null < null_score:
            null_score = window_null
        starts = np.argsort(start_logits)[-1 : -N_BEST - 1 : -1]
        ends = np.argsort(end_logits)[-1 : -N_BEST - 1 : -1]
        for s in starts:
            for e in ends:
                if s >= len(offsets) or e >= len(offsets) or offsets[s] is None or offsets[e] is None:
                    continue
                if e < s or e - s + 1 > MAX_ANSWER_TOKENS:
                    continue
                score = float(start_logits[s] + end_logits[e])
                if score > best_score:
                    best_score, best_text = score, context[offsets[s][0] : offsets[e][1]]
    if null_score is None or best_score == -np.inf:
        return ""
    return "" if null_score - best_score > NULL_THRESHOLD else best_text


class HFReader:
    """An extractive QA model from a local directory (or the local Hugging Face cache)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @cached_property
    def _parts(self) -> tuple[Any, Any]:
        offline_transformers()
        from transformers import AutoModelForQuestionAnswering, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(str(self.path), local_files_only=True)
        model = AutoModelForQuestionAnswering.from_pretrained(str(self.path), local_files_only=True)
        model.eval()
        return tokenizer, model

    def read(self, questions: Sequence[str], context: str, usage: Any = None) -> list[str]:
        import torch

        tokenizer, model = self._parts
        if not questions:
            return []
        encoded = tokenizer(
            list(questions),
            [context] * len(questions),
            truncation="only_second",
            max_length=MAX_LENGTH,
            stride=STRIDE,
            return_overflowing_tokens=True,
            return_offsets_mapping=True,
            padding="max_length",
            return_tensors="pt",
        )
        owners = encoded.pop("overflow_to_sample_mapping").tolist()
        offsets = encoded.pop("offset_mapping").tolist()
        sequence_ids = [encoded.sequence_ids(i) for i in range(len(owners))]
        with torch.no_grad():
            output = model(
                **{k: v for k, v in encoded.items() if k in ("input_ids", "attention_mask", "token_type_ids")}
            )
        starts, ends = output.start_logits.numpy(), output.end_logits.numpy()
        windows: list[list[Window]] = [[] for _ in questions]
        for i, owner in enumerate(owners):
            spans = [
                tuple(o) if sid == 1 else None for o, sid in zip(offsets[i], sequence_ids[i], strict=True)
            ]
            windows[owner].append((starts[i], ends[i], spans))
        return [decode(context, w) for w in windows]
