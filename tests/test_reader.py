"""Disambig-F1: SQuAD scoring, run_qa-style span decoding, and a tiny QA model built here."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pytest_ambigqa.errors import DeviceUnavailable
from pytest_ambigqa.metrics.profiles import PROFILES
from pytest_ambigqa.metrics.qa import disambig_scores, exact_match, token_f1
from pytest_ambigqa.models.local import pick_device
from pytest_ambigqa.models.reader import Batcher, HFReader, decode, decode_pipeline
from pytest_ambigqa.suites import SUITES, LoadOptions

ITEMS = [i for name in ("march", "asqa") for i in SUITES[name].load(None, LoadOptions()).items]
words = st.text(alphabet="abcdefgh", min_size=1, max_size=5)
phrases = st.lists(words, min_size=0, max_size=6).map(" ".join)


# -- SQuAD token F1 and EM -----------------------------------------------------------------


def test_squad_scores():
    assert token_f1("the Ford F-Series", "Ford F-Series") == 1.0
    assert token_f1("Ford trucks", "Ford F-Series") == pytest.approx(0.5)
    assert token_f1("", "") == 1.0 and token_f1("", "Ford") == 0.0 and token_f1("Ford", "") == 0.0
    assert exact_match("The  Ford!", "ford") == 1.0
    scores = disambig_scores(["Ford F-Series", "humbucker"], [["F-Series", "Ford F-Series"], ["single-coil"]])
    assert scores == {"disambig_f1": 0.5, "disambig_em": 0.5, "disambig_hit": 0.0}


@given(phrases, phrases)
def test_token_f1_properties(a, b):
    f1 = token_f1(a, b)
    assert 0 <= f1 <= 1
    assert f1 == pytest.approx(token_f1(b, a))
    assert token_f1(a, a) == 1.0
    assert exact_match(a, b) <= (f1 == 1.0 or not (a.split() and b.split()))


@given(phrases, st.lists(phrases, min_size=1, max_size=3), phrases)
def test_more_aliases_never_lower_the_score(prediction, aliases, extra):
    base = disambig_scores([prediction], [aliases])
    more = disambig_scores([prediction], [[*aliases, extra]])
    assert all(more[k] >= base[k] for k in base)


# -- span decoding, as run_qa.py post-processes --------------------------------------------

CONTEXT = "Ford makes the F-Series pickup."
# tokens: [CLS] q q [SEP] Ford makes the F - Series pickup . [SEP]
OFFSETS = [
    None,
    None,
    None,
    None,
    (0, 4),
    (5, 10),
    (11, 14),
    (15, 16),
    (16, 17),
    (17, 23),
    (24, 30),
    (30, 31),
    None,
]


def logits(n: int, **peaks: float) -> np.ndarray:
    values = np.full(n, -10.0)
    for index, value in peaks.items():
        values[int(index[1:])] = value
    return values


def test_decode_best_span_in_the_context():
    start, end = logits(13, t7=5.0, t1=9.0), logits(13, t9=5.0, t2=9.0)  # tokens 1-2 are the question
    assert decode(CONTEXT, [(start, end, OFFSETS)]) == "F-Series"


def test_decode_null_answer_when_the_null_score_wins():
    start, end = logits(13, t0=6.0, t7=5.0), logits(13, t0=6.0, t9=5.0)
    assert decode(CONTEXT, [(start, end, OFFSETS)]) == ""  # null 12 beats span 10
    start[0], end[0] = 5.0, 5.0  # a tie (null - best = 0) is not above the threshold: the span stays
    assert decode(CONTEXT, [(start, end, OFFSETS)]) == "F-Series"


def test_decode_rejects_long_and_inverted_spans():
    # null = 0; the long span scores 10, any other valid span at most 5 - 10 = -5.
    start, end = logits(13, t0=0.0, t4=5.0), logits(13, t0=0.0, t10=5.0)
    assert decode(CONTEXT, [(start, end, OFFSETS)]) == "Ford makes the F-Series pickup"
    assert decode(CONTEXT, [(start, end, OFFSETS)], max_answer_tokens=3) == ""  # too long: the null wins
    inverted = logits(13, t0=0.0, t9=5.0), logits(13, t0=0.0, t4=5.0)
    assert decode(CONTEXT, [(*inverted, OFFSETS)]) == ""


def test_decode_across_windows_takes_the_best_span_and_the_smallest_null():
    first = (logits(13, t0=1.0, t4=2.0), logits(13, t0=1.0, t4=2.0), OFFSETS)  # "Ford", 4
    second = (logits(13, t0=-3.0, t10=3.0), logits(13, t0=-3.0, t10=3.0), OFFSETS)  # "pickup", 6
    assert decode(CONTEXT, [first, second]) == "pickup"


# -- span decoding, as the transformers QA pipeline (ALCE's reader) does ------------------

# The characters of each token's *word* (the pipeline aligns answers to words): "F-Series"
# is one word of three tokens.
WORDS = OFFSETS[:7] + [(15, 23)] * 3 + OFFSETS[10:]


def test_pipeline_decode_takes_the_best_probability_span_widened_to_words():
    start, end = logits(13, t8=5.0, t1=9.0), logits(13, t9=5.0, t2=9.0)  # question tokens are masked
    assert decode_pipeline(CONTEXT, [(start, end, WORDS)]) == "F-Series"  # "-Series" widened


def test_pipeline_decode_null_answer_and_answer_length():
    start, end = logits(13, t0=6.0, t7=5.0), logits(13, t0=6.0, t9=5.0)
    assert decode_pipeline(CONTEXT, [(start, end, WORDS)]) == ""  # p(CLS) x p(CLS) beats the span
    start, end = logits(13, t0=0.0, t4=5.0), logits(13, t0=0.0, t10=5.0)  # a 7-token span
    assert decode_pipeline(CONTEXT, [(start, end, WORDS)]) == "Ford makes the F-Series pickup"
    assert decode_pipeline(CONTEXT, [(start, end, WORDS)], max_answer_tokens=3) != (
        "Ford makes the F-Series pickup"
    )


def _brute_force(windows, max_answer_tokens):
    """The pipeline's rule written out plainly: every allowed span of every window."""
    best, text, null = -1.0, "", np.inf
    for start_logits, end_logits, spans in windows:
        allowed = [i for i, sp in enumerate(spans) if sp is not None or i == 0]
        masked = np.full(len(spans), -10000.0, dtype=np.float32)  # as the pipeline masks, in float32
        p_start, p_end = masked.copy(), masked.copy()
        p_start[allowed], p_end[allowed] = start_logits[allowed], end_logits[allowed]
        p_start = np.exp(p_start - p_start.max())
        p_start /= p_start.sum()
        p_end = np.exp(p_end - p_end.max())
        p_end /= p_end.sum()
        null = min(null, float(p_start[0] * p_end[0]))
        for s in allowed:  # row by row, as the pipeline's argmax scans; ties keep the first
            for e in allowed:
                if s and e and 0 <= e - s < max_answer_tokens and float(p_start[s] * p_end[e]) > best:
                    best, text = float(p_start[s] * p_end[e]), CONTEXT[spans[s][0] : spans[e][1]]
    return "" if null > best else text


@example([[0.0] * 7 + [2.0, 6.65625] + [0.0] * 15 + [6.65625, 0.0]], 1)  # a tie in real arithmetic
@given(
    st.lists(st.lists(st.floats(-8, 8), min_size=26, max_size=26), min_size=1, max_size=3), st.integers(1, 15)
)
def test_pipeline_decode_matches_the_rule_written_out(rows, max_answer_tokens):
    windows = [(np.array(r[:13], dtype=np.float32), np.array(r[13:], dtype=np.float32), WORDS) for r in rows]
    assert decode_pipeline(CONTEXT, windows, max_answer_tokens) == _brute_force(windows, max_answer_tokens)


# -- a tiny extractive QA model, built in the test ----------------------------------------


@pytest.mark.parametrize("profile", ["alce", "asqa"])
def test_hf_reader_end_to_end(tiny_qa_model, profile):
    reader = HFReader(tiny_qa_model, PROFILES[profile].reader)
    item = ITEMS[0]
    context = " ".join(p.text for p in item.passages) * 3  # long enough for several 384-token windows
    questions = [i.question for i in item.interpretations]
    answers = reader.read(questions, context)
    assert len(answers) == len(questions)
    assert all(a == "" or a in context for a in answers)
    assert reader.read(questions, context) == answers  # deterministic
    assert reader.read([], context) == []
    assert reader.read(questions[:1], "") == [""]


def test_hf_reader_sits_on_the_device_auto_picks(tiny_qa_model):
    import torch

    auto = HFReader(tiny_qa_model, PROFILES["alce"].reader)
    assert auto.device == ("cuda" if torch.cuda.is_available() else "cpu")
    context = " ".join(p.text for p in ITEMS[0].passages)
    questions = [i.question for i in ITEMS[0].interpretations]
    answers = auto.read(questions, context)
    _, model = auto._parts
    assert next(model.parameters()).device.type == auto.device
    if auto.device == "cpu":  # on a GPU the logits may differ in the last bits
        assert HFReader(tiny_qa_model, PROFILES["alce"].reader, "cpu").read(questions, context) == answers


def test_an_accelerator_that_is_not_there_is_refused_not_replaced():
    with pytest.raises(DeviceUnavailable, match="'cuda:99': torch .*CUDA device"):
        pick_device("cuda:99")  # no machine this runs on has 100 GPUs
    assert pick_device("cpu") == "cpu"


# -- one forward pass for the items read at the same moment -----------------------------------


def _wait_until(condition, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.001)


def _held(batcher: Batcher, reads: list, queued: int) -> list:
    """Run ``reads`` on threads while the first pass is held until ``queued`` more wait."""
    release = threading.Event()
    forward = batcher.forward

    def held(inputs):
        if batcher.passes == 0:
            release.wait(30)
        return forward(inputs)

    batcher.forward = held
    results: list = [None] * len(reads)

    def run(n: int) -> None:
        try:
            results[n] = reads[n]()
        except Exception as exc:  # noqa: BLE001 - the test looks at it
            results[n] = exc

    threads = [threading.Thread(target=run, args=(0,))]
    threads[0].start()
    _wait_until(lambda: batcher._running)
    threads += [threading.Thread(target=run, args=(n,)) for n in range(1, len(reads))]
    for thread in threads[1:]:
        thread.start()
    _wait_until(lambda: len(batcher._pending) == queued)
    release.set()
    for thread in threads:
        thread.join(30)
    return results


def test_items_read_together_share_a_pass_and_read_as_they_do_alone(tiny_qa_model):
    reader = HFReader(tiny_qa_model, PROFILES["alce"].reader, "cpu")
    cases = [
        ([i.question for i in item.interpretations], " ".join(p.text for p in item.passages) * 2)
        for item in ITEMS[:6]
    ]
    alone = [reader.read(q, c) for q, c in cases]
    assert reader.batcher.passes == len(cases)
    together = HFReader(tiny_qa_model, PROFILES["alce"].reader, "cpu")
    together.load()
    assert together.batcher.max_rows == 1  # the CPU reads one item per pass (no faster batched)
    together.batcher.max_rows = 64  # as on a GPU
    results = _held(
        together.batcher, [lambda q=q, c=c: together.read(q, c) for q, c in cases], len(cases) - 1
    )
    assert results == alone  # the same spans, to the character
    assert together.batcher.passes == 2  # the first item alone, then the five that queued behind it


def test_a_failing_pass_fails_only_the_items_that_fail_alone():
    import torch

    def forward(inputs):
        rows = inputs["input_ids"]
        if (rows < 0).any():
            raise RuntimeError("a bad window")
        values = rows.sum(dim=1).numpy().astype(float)
        return values, -values

    batcher = Batcher(forward, max_rows=64)
    inputs = [{"input_ids": torch.tensor([[n, n]])} for n in (1, 2, -3, 4)]
    results = _held(batcher, [lambda i=i: batcher(i) for i in inputs], 3)
    assert [r[0].tolist() for r in (results[0], results[1], results[3])] == [[2.0], [4.0], [8.0]]
    assert isinstance(results[2], RuntimeError)
    assert not batcher._running and not batcher._pending
