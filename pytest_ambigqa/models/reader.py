"""Readers for Disambig-F1: an extractive QA model, or the judge LLM, answers from the long answer.

Two official decodings (:class:`Decoding`), one per scorer profile (``metrics/profiles.py``),
both over windows of 384 tokens with a stride of 128 and answers inside the context only:

- ``run_qa`` (ASQA ``eval.sh``: ``run_qa.py --version_2_with_negative
  --null_score_diff_threshold 0``): the 20 best start and end logits, spans of at most 30
  tokens scored by start + end logit, and the SQuAD 2.0 null answer when the smallest null
  score (CLS start + end) beats the best span; the span text is cut at token offsets.
- ``pipeline`` (ALCE ``eval.py``: ``pipeline("question-answering",
  handle_impossible_answer=True)``): per window, softmax over the allowed tokens (context
  and CLS), span score = p(start) x p(end) with at most 15 tokens, the null answer when the
  smallest CLS product beats the best span; the span text is widened to whole words.

transformers >= 5.3 has neither the pipeline nor ``run_qa``'s post-processing, so both are
re-done here from the model's logits. The decoders are pure; the model is I/O and loads
only when first used.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from .batch import Deferrals
from .local import import_offline, pick_device
from .usage import Usage

if TYPE_CHECKING:  # numpy is imported where a reader decodes: a run without one never loads it
    import numpy as np

    # start logits, end logits, and per token its character span in the context (None outside it).
    # stacked window inputs -> (start logits, end logits), one row per window
    Forward = Callable[[dict[str, Any]], tuple[np.ndarray, np.ndarray]]
    Window = tuple[np.ndarray, np.ndarray, Sequence[tuple[int, int] | None]]

MAX_LENGTH, STRIDE, N_BEST, NULL_THRESHOLD = 384, 128, 20, 0.0
GPU_BATCH_ROWS = 64  # windows per forward pass on a GPU, across the items read at once
_MASKED = -10000.0  # the pipeline's logit for tokens outside the context


class Reader(Protocol):
    def read(self, questions: Sequence[str], context: str, usage: Any = None) -> list[str]:
        """One answer span (or "" for no answer) per question, from ``context``."""
        ...


LLM_READER_SYSTEM = (
    "You extract answers from a text. Copy the shortest span of the context that answers the "
    "question, exactly as written. If the context does not answer it, use an empty string. "
    'Reply with only a JSON object: {"answer": "<span>"}.'
)

# The reply's JSON schema, asked with the server's structured output as the methods ask theirs.
LLM_READER_SCHEMA = {
    "title": "span",
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
}


class LLMReader:
    """``--ambig-reader=llm``: the judge model extracts a verbatim span (or none), through
    the judge's client (its cache, retries and cost)."""

    def __init__(self, judge: Any) -> None:
        self.judge = judge

    def read(self, questions: Sequence[str], context: str, usage: Usage | None = None) -> list[str]:
        usage = usage if usage is not None else Usage()
        answers = []
        deferrals = Deferrals()  # batch judging records every question's call in one round
        for question in questions:
            messages = [
                {"role": "system", "content": LLM_READER_SYSTEM},
                {"role": "user", "content": f"Context: {context}\n\nQuestion: {question}"},
            ]
            reply = deferrals.call(
                self.judge.client.chat_json, messages, _check_answer, usage, schema=LLM_READER_SCHEMA
            )
            span = reply[0]["answer"].strip() if reply is not None else ""
            answers.append(span if span and span in context else "")  # not in the context: no answer
        deferrals.close()
        return answers


def _check_answer(data: Any) -> str | None:
    if not isinstance(data, dict) or not isinstance(data.get("answer"), str):
        return "it must be an object with a string 'answer'"
    return None


def decode(context: str, windows: Sequence[Window], max_answer_tokens: int = 30) -> str:
    """The answer text ``run_qa.py`` would return for one example (SQuAD 2.0 rules).

    ``spans[i]`` is the character span of token i (its offsets), or None for tokens
    outside the context (question, special tokens, padding); token 0 is the CLS token whose
    start + end logit is the window's null score.
    """
    import numpy as np

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
                if e < s or e - s + 1 > max_answer_tokens:
                    continue
                score = float(start_logits[s] + end_logits[e])
                if score > best_score:
                    best_score, best_text = score, context[offsets[s][0] : offsets[e][1]]
    if null_score is None or best_score == -np.inf:
        return ""
    return "" if null_score - best_score > NULL_THRESHOLD else best_text


def _softmax(logits: np.ndarray) -> np.ndarray:
    import numpy as np

    exp = np.exp(logits - logits.max())
    return exp / exp.sum()


def decode_pipeline(context: str, windows: Sequence[Window], max_answer_tokens: int = 15) -> str:
    """The answer the transformers QA pipeline returns with ``handle_impossible_answer=True``.

    ``spans[i]`` is the character span of the *word* containing token i (the pipeline aligns
    answers to words), or None outside the context; token 0 is CLS. Ties go to the span,
    as the pipeline's stable sort puts the null answer after the spans.
    """
    import numpy as np

    min_null = np.inf
    best_score, best_text = -np.inf, ""
    for start_logits, end_logits, spans in windows:
        allowed = np.array([s is not None for s in spans], dtype=bool)
        allowed[0] = True  # CLS stays: it carries the null answer
        start = _softmax(np.where(allowed, start_logits, _MASKED))
        end = _softmax(np.where(allowed, end_logits, _MASKED))
        min_null = min(min_null, float(start[0] * end[0]))
        start[0] = end[0] = 0.0
        candidates = np.tril(np.triu(np.outer(start, end)), max_answer_tokens - 1)
        s, e = (int(i) for i in np.unravel_index(int(np.argmax(candidates)), candidates.shape))
        if not (allowed[s] and allowed[e]):
            continue
        score = float(candidates[s, e])
        if score > best_score:
            first, last = spans[s], spans[e]  # allowed: a span, but for CLS
            text = "" if s == 0 or e == 0 or first is None or last is None else context[first[0] : last[1]]
            best_score, best_text = score, text
    return "" if min_null > best_score else best_text


class _Request:
    def __init__(self, inputs: dict[str, Any]) -> None:
        self.inputs = inputs
        self.rows = len(next(iter(inputs.values())))
        self.done = threading.Event()
        self.result: tuple[np.ndarray, np.ndarray] | None = None
        self.error: BaseException | None = None


class Batcher:
    """One forward pass for the windows of every item being read at the same moment.

    Items are scored on several threads at once (``--ambig-concurrency``); a thread that finds
    a pass running queues its windows and waits, and the thread running passes takes all that
    queued (up to ``max_rows``) into the next one. Nothing waits for company: a lone item goes
    through at once, so a serial run is as before. Every window is padded to ``MAX_LENGTH``,
    so windows of different items stack; a row's logits do not depend on the rows beside it
    on the CPU (``tests/test_reader.py`` checks that batched and lone reads agree), while on
    a GPU the kernels chosen for a batch size may move them in the last bits. A pass that
    fails is tried again item by item, so that only the items that fail alone fail.

    ``max_rows`` 1 keeps every item in a pass of its own: on this project's 2-core CPU,
    passes of several items read no faster (2.57-2.67 items/s against 2.65 alone; 2.21 with
    64-row passes, ``bench/reader.py``), so :class:`HFReader` batches on CUDA devices only.
    """

    def __init__(self, forward: Forward, max_rows: int = 1) -> None:
        self.forward = forward  # stacked inputs -> (start logits, end logits), numpy, one row per window
        self.max_rows = max_rows
        self.passes = 0
        self._lock = threading.Lock()
        self._pending: list[_Request] = []
        self._running = False

    def __call__(self, inputs: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
        request = _Request(inputs)
        with self._lock:
            self._pending.append(request)
            lead = not self._running
            self._running = True
        if lead:
            self._serve()
        request.done.wait()
        if request.error is not None:
            raise request.error
        assert request.result is not None
        return request.result

    def _serve(self) -> None:
        """Run passes until nothing is queued; whoever queued meanwhile is served too."""
        while True:
            with self._lock:
                batch: list[_Request] = []
                rows = 0
                while self._pending and (not batch or rows + self._pending[0].rows <= self.max_rows):
                    batch.append(self._pending.pop(0))
                    rows += batch[-1].rows
                if not batch:
                    self._running = False
                    return
            try:
                try:
                    self._run(batch)
                except Exception as exc:  # noqa: BLE001 - whose windows failed? each is tried alone
                    self._alone(batch, exc)
            except BaseException as exc:  # Ctrl-C: nobody may wait for a pass that will not come
                with self._lock:
                    waiting, self._pending, self._running = batch + self._pending, [], False
                for request in waiting:
                    if not request.done.is_set():
                        request.error = exc
                        request.done.set()
                raise

    def _alone(self, batch: list[_Request], exc: Exception) -> None:
        """A failed pass fails only the items whose own windows fail (out of memory with
        company, say, but not alone)."""
        if len(batch) == 1:
            batch[0].error = exc
            batch[0].done.set()
            return
        for request in batch:
            try:
                self._run([request])
            except Exception as own:  # noqa: BLE001 - this item's reader metrics go unscored
                request.error = own
                request.done.set()

    def _run(self, batch: list[_Request]) -> None:
        import torch

        stacked = (
            batch[0].inputs
            if len(batch) == 1
            else {k: torch.cat([r.inputs[k] for r in batch]) for k in batch[0].inputs}
        )
        starts, ends = self.forward(stacked)
        self.passes += 1
        at = 0
        for request in batch:
            request.result = (starts[at : at + request.rows], ends[at : at + request.rows])
            at += request.rows
            request.done.set()


@dataclass(frozen=True)
class Decoding:
    """How a reader's logits become an answer, as one official scorer decodes them (the
    module's docstring): ``pipeline`` or ``run_qa``, spans of at most ``max_answer_tokens``.
    Each scorer profile (``metrics/profiles.py``) names its decoding: the profiles depend on
    the reader, not the other way."""

    kind: Literal["pipeline", "run_qa"]
    max_answer_tokens: int


PIPELINE = Decoding("pipeline", 15)  # ALCE eval.py
RUN_QA = Decoding("run_qa", 30)  # ASQA scoring.py


class HFReader:
    """An extractive QA model from a local directory (or the local Hugging Face cache), on
    ``device`` (an ``--ambig-device`` value, resolved when the model loads)."""

    def __init__(self, path: Path, decoding: Decoding = PIPELINE, device: str = "auto") -> None:
        self.path = path
        self.decoding = decoding
        self.device_spec = device
        self._loading = threading.Lock()  # one load, however many scoring threads ask at once
        self._model: tuple[Any, Any] | None = None
        self.batcher = Batcher(self._forward)

    def load(self) -> None:
        """Load the model now (else on first use)."""
        self._parts  # noqa: B018

    @cached_property
    def device(self) -> str:
        return pick_device(self.device_spec)

    @property
    def _parts(self) -> tuple[Any, Any]:
        with self._loading:  # a failed load is tried again by the next item, never twice at once
            if self._model is None:
                self._model = self._load()
            return self._model

    def _load(self) -> tuple[Any, Any]:
        tokenizers, models = import_offline("transformers", "AutoTokenizer", "AutoModelForQuestionAnswering")
        tokenizer = tokenizers.from_pretrained(str(self.path), local_files_only=True)
        model = models.from_pretrained(str(self.path), local_files_only=True)
        model.to(self.device).eval()
        self.batcher.max_rows = GPU_BATCH_ROWS if self.device.startswith("cuda") else 1
        return tokenizer, model

    def read(self, questions: Sequence[str], context: str, usage: Any = None) -> list[str]:
        tokenizer, _ = self._parts
        if not questions:
            return []
        pipeline = self.decoding.kind == "pipeline"
        if pipeline:
            context = context or " "  # ALCE eval.py: an empty answer is read as " "
        else:
            questions = [q.lstrip() for q in questions]  # run_qa.py strips leading spaces
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
        starts, ends = self.batcher(
            {k: v for k, v in encoded.items() if k in ("input_ids", "attention_mask", "token_type_ids")}
        )
        windows: list[list[Window]] = [[] for _ in questions]
        for i, owner in enumerate(owners):
            in_context = [sid == 1 for sid in encoded.sequence_ids(i)]
            if pipeline:
                spans = [
                    _word_span(encoded, i, t, offsets[i][t]) if c else None for t, c in enumerate(in_context)
                ]
            else:
                spans = [tuple(o) if c else None for o, c in zip(offsets[i], in_context, strict=True)]
            windows[owner].append((starts[i], ends[i], spans))
        if pipeline:
            return [decode_pipeline(context, w, self.decoding.max_answer_tokens) for w in windows]
        return [decode(context, w, self.decoding.max_answer_tokens) for w in windows]

    def _forward(self, inputs: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
        import torch

        _, model = self._parts
        with torch.no_grad():
            output = model(**{k: v.to(self.device) for k, v in inputs.items()})
        return tuple(logits.float().cpu().numpy() for logits in (output.start_logits, output.end_logits))


def _word_span(encoded: Any, window: int, token: int, offset: Sequence[int]) -> tuple[int, int]:
    """The characters of the word holding ``token``, as the pipeline's ``align_to_words`` does
    (its token offsets where the tokenizer knows no words)."""
    try:
        word = encoded.token_to_word(window, token)
        span = encoded.word_to_chars(window, word, sequence_index=1)
        return (span.start, span.end)
    except Exception:  # noqa: BLE001 - the pipeline falls back to offsets on any failure here
        return (offset[0], offset[1])
