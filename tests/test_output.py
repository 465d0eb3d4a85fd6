"""The writers' fast paths change no output: the scrubber's quick look and the report's rows."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_ambigqa import output

SECRET = 'k3y"with\\quote-0123456789'
# Pieces of every pattern, of the secret, and the characters JSON escapes.
pieces = st.sampled_from(
    ["sk-", "abcdefghijklmnop", "://", "user:pw@", "Authorization", "API-KEY", ": ", "Bearer ", "?key=",
     "&token=", "secret=", SECRET, SECRET[:5], '"', "\\", "\n", "é", "\ud800", " ", "x",
     "Authorızation", "apı-key", "?ſecret=", "\u212aey=", "authorİzation", "İ"]
)  # fmt: skip
texts = st.lists(pieces, max_size=12).map("".join)


@pytest.fixture(scope="module", autouse=True)
def _secret_in_the_environment():
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MY_SERVICE_API_KEY", SECRET)
        yield


def _every_pattern(text: str) -> str:
    """scrub without the quick look: every substitution, on every string."""
    for value in output._secret_values():
        text = text.replace(value, output.MASK)
    text = output._HEADER.sub(output._header, text)
    for pattern, replacement in output._PATTERNS:
        text = pattern.sub(replacement, text)
    return text


@given(texts)
def test_the_quick_look_never_skips_a_credential(text):
    assert output.scrub(text) == _every_pattern(text)


def _walked(value, **kwargs) -> str:
    """json_text the long way: every string of ``value`` cleaned and scrubbed, then encoded."""
    return json.dumps(output._clean(value, output._scrubber()), allow_nan=False, **kwargs)


values = st.one_of(texts, st.floats(), st.booleans(), st.none(), st.integers())
rows = st.lists(st.dictionaries(st.one_of(texts, st.booleans(), st.integers()), values, max_size=3))


@given(rows)
def test_plain_values_skip_the_walk_and_write_the_same(rows):
    assert output.json_text(rows) == _walked(rows)
    assert output.json_text(rows, ensure_ascii=False) == _walked(rows, ensure_ascii=False)


@given(rows)
def test_a_report_reads_back_as_the_walk_writes_it(rows):
    document = {"suites": [{"name": "x"}], "items": rows, "timing": {"duration": float("nan")}}
    text = output.json_document(document)
    text.encode("utf-8")  # valid UTF-8 whatever the rows hold
    assert json.loads(text) == json.loads(_walked(document))
    assert SECRET not in text and json.dumps(SECRET)[1:-1] not in text


@given(rows)
def test_rows_made_one_by_one_write_the_same(rows):
    """scorecard.json is written as its items are read back from the run's spool."""
    document = {"suites": [{"name": "x"}], "items": rows, "timing": {"duration": 1.5}}
    pieces = output.json_chunks(document | {"items": iter(rows)})
    assert "".join(pieces) == output.json_document(document)


def test_each_row_stands_on_its_own_line():
    text = output.json_document({"a": {"b": 1}, "items": [{"x": 1}, {"y": "sk-abcdefghijklmnopq"}]})
    assert text.splitlines()[5:7] == ['    {"x": 1},', '    {"y": "sk-[redacted]"}']


@given(texts, st.integers(min_value=1, max_value=40))
def test_a_recurring_text_is_what_safe_output_of_its_cut_gives(text, limit):
    """JUnit's n/a reasons, made once per text: the same as made every time."""
    assert output.recurring(text, limit) == output.safe_output(output.cut(text, limit))


def test_a_recurring_text_is_made_again_when_the_credentials_change(monkeypatch):
    reason = "the server said: bad key n3w-s3cr3t-value"
    assert output.recurring(reason, 2000) == reason
    monkeypatch.setenv("OTHER_SERVICE_TOKEN", "n3w-s3cr3t-value")
    assert output.recurring(reason, 2000) == f"the server said: bad key {output.MASK}"
