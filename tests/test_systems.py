"""Loading and calling systems, and normalising what they return (no pytest session needed)."""

from __future__ import annotations

import asyncio

import pytest

from pytest_ambigqa.baselines import lexical, oracle
from pytest_ambigqa.errors import SystemFailure, UsageError
from pytest_ambigqa.output import redact
from pytest_ambigqa.schema import Answer, GeneratedInterpretation, Passage
from pytest_ambigqa.stats.bootstrap import bootstrap_interval, stable_seed
from pytest_ambigqa.suites import SUITES, LoadOptions
from pytest_ambigqa.systems import from_object, load_system, to_answer

ITEM = SUITES["march"].load(None, LoadOptions()).items[0]


def test_to_answer_accepts_the_contract():
    assert to_answer("plain") == Answer(text="plain")
    answer = to_answer(
        {
            "text": "t",
            "interpretations": [{"answer": "a", "condition": "c", "citations": ["F1", 2]}],
            "citations": ["F3"],
            "is_ambiguous": True,
            "ambiguity_type": "semantic",
            "clarifying_question": "Which one?",
            "metadata": {"tokens": 12},
        }
    )
    assert answer.interpretations == (GeneratedInterpretation("a", None, "c", ("F1", "2")),)
    assert answer.is_ambiguous and answer.metadata == {"tokens": 12}
    assert to_answer(answer) == answer
    for bad in (Answer(text=123), Answer(text=None), Answer(text="t", interpretations=({"answer": 1},))):
        with pytest.raises(SystemFailure, match="system returned"):
            to_answer(bad)  # an Answer object is checked like a dict
    odd = to_answer({"text": "x\ud800y", "metadata": {"score": float("nan"), "n": [float("inf")]}})
    assert odd.text == "x?y" and odd.metadata == {"score": "nan", "n": ["inf"]}
    assert Answer.from_dict(answer.to_dict()) == answer


@pytest.mark.parametrize(
    "raw, message",
    [
        (None, "system returned NoneType; expected a str"),
        ({"text": 1}, "without a string 'text'"),
        ({"text": "t", "citations": "F1"}, "'citations' as str, expected a list"),
        ({"text": "t", "is_ambiguous": "yes"}, "'is_ambiguous' as str, expected bool"),
        (
            {"text": "t", "interpretations": [{"answer": "a", "question": 3}]},
            r"interpretations\[0\].question as int",
        ),
        ({"text": "t", "metadata": []}, "'metadata' as list, expected a dict"),
    ],
)
def test_to_answer_rejects_off_contract_output(raw, message):
    with pytest.raises(SystemFailure, match=message):
        to_answer(raw)


def test_from_object_passes_only_declared_inputs():
    calls = []

    def full(question, passages, item, conditions):
        calls.append((question, len(passages), item.id, conditions))
        return "ok"

    system = from_object(full)
    assert system.inputs == ("question", "passages", "item", "conditions")
    assert system.answer(ITEM, timeout=None) == Answer("ok")
    assert calls == [(ITEM.question, len(ITEM.passages), ITEM.id, [])]
    assert from_object(lambda q: q.upper()).answer(ITEM, None).text == ITEM.question.upper()
    assert from_object(lambda **kw: str(sorted(kw))).answer(ITEM, None).text == "['question']"


def test_retriever_is_passed_when_there_is_one():
    seen = []

    def answer(question, retriever=None):
        seen.append(retriever)
        return "x"

    system = from_object(answer)
    system.answer(ITEM, None, {"retriever": None})  # none configured: the default applies
    system.answer(ITEM, None, {"retriever": "R"})
    assert seen == [None, "R"]


def test_from_object_instantiates_classes_and_awaits_coroutines():
    class System:
        def __call__(self, question):
            return "instance"

    async def answer(question):
        await asyncio.sleep(0)
        return {"text": "async"}

    assert from_object(System).answer(ITEM, None).text == "instance"
    assert from_object(answer).answer(ITEM, 5).text == "async"


def test_async_timeout_and_exceptions():
    async def hang(question):
        await asyncio.sleep(10)

    with pytest.raises(SystemFailure, match=r"timed out after 0.05 s"):
        from_object(hang).answer(ITEM, 0.05)

    def boom(question):
        raise KeyError("x")

    with pytest.raises(SystemFailure, match="system raised KeyError: 'x'"):
        from_object(boom).answer(ITEM, 1)


def test_from_object_rejects_unusable_callables():
    with pytest.raises(TypeError, match="not callable"):
        from_object(42)
    with pytest.raises(TypeError, match="takes no 'question' argument"):
        from_object(lambda *, item: "x")
    assert from_object(lambda question, retriever: "x").requires_retriever
    optional = from_object(lambda question, retriever=None: "x")
    assert optional.inputs == ("question", "retriever") and not optional.requires_retriever


def test_a_signature_that_cannot_be_served_fails_once_at_load(tmp_path):
    """``def f(query, docs)``: the question goes to ``query``, but nothing can fill ``docs``;
    one clear error at load, not one per item (issue 26, item 8). The forms of
    --ambig-system, ``llm:`` included, are named when a spec is none of them."""
    (tmp_path / "docs_mod.py").write_text("def f(query, docs):\n    return query\n")
    with pytest.raises(UsageError) as refused:
        load_system("docs_mod:f", tmp_path)
    assert str(refused.value) == (
        "--ambig-system: the system 'docs_mod:f' needs 'docs', which the plugin cannot give: it passes "
        "the question (as `question`, or as the first positional argument) and, by name, passages, "
        "retriever, item, conditions, history, alpha, beta, actions, trial; rename it (passages?) or give it "
        "a default"
    )
    with pytest.raises(TypeError, match="needs 'extra', which the plugin cannot give"):
        from_object(lambda question, *, extra: "x")
    assert from_object(lambda query, docs=None, *args: "x").inputs == ("question",)
    with pytest.raises(UsageError) as unknown:
        load_system("not-a-spec", tmp_path)
    assert "llm:<method>" in str(unknown.value)


def test_load_system_builtins_and_modules(tmp_path):
    assert load_system("oracle", tmp_path).label == "oracle baseline (pytest_ambigqa.baselines:oracle)"
    (tmp_path / "my_qa_mod.py").write_text(
        "class Bot:\n    def answer(self, question):\n        return 'hi'\nbot = Bot()\n"
    )
    assert load_system("my_qa_mod:bot.answer", tmp_path).answer(ITEM, None).text == "hi"
    with pytest.raises(UsageError, match="module 'my_qa_mod' has no attribute 'nope'"):
        load_system("my_qa_mod:nope", tmp_path)
    (tmp_path / "broken_mod.py").write_text("def f(:\n")
    with pytest.raises(UsageError, match="cannot import 'broken_mod': SyntaxError"):
        load_system("broken_mod:f", tmp_path)


def test_a_misspelt_spec_suggests_the_closest_names(tmp_path):
    """Issue 38, part 4: an attribute, a module in the directory pytest was started from, a
    package's submodule, a built-in or a method, misspelt: the closest names, as difflib finds them."""
    (tmp_path / "didyoumean_sys.py").write_text(
        "def answer(question):\n    return 'a'\n"
        "def answer_all(question):\n    return 'b'\n"
        "_answer = answer\n"
        "ANSWERS = 3\n"
    )
    package = tmp_path / "didyoumean_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "systems.py").write_text("def answer(question):\n    return 'c'\n")

    def refusal(spec: str) -> str:
        with pytest.raises(UsageError) as refused:
            load_system(spec, tmp_path, lambda: object())
        return str(refused.value)

    assert refusal("didyoumean_sys:answr") == (
        "--ambig-system: module 'didyoumean_sys' has no attribute 'answr' "
        "(did you mean 'answer' or 'answer_all'?)"
    )  # public callables only: not _answer, not ANSWERS
    assert refusal("didyoumean_sys:zzz") == "--ambig-system: module 'didyoumean_sys' has no attribute 'zzz'"
    assert "No module named 'didyoumean_sy' (did you mean 'didyoumean_sys'" in refusal("didyoumean_sy:answer")
    assert refusal("didyoumean_pkg.sytems:answer").endswith(
        "No module named 'didyoumean_pkg.sytems' (did you mean 'didyoumean_pkg.systems'?)"
    )
    assert refusal("lexcial").endswith("(did you mean 'lexical'?)")
    assert "(did you mean 'llm:naive-rag'?) (valid: llm:closed-book" in refusal("llm:naive-rga")
    (tmp_path / "didyoumean_dep.py").write_text("import didyoumean_sys_missing_dependency\n")
    assert "did you mean" not in refusal("didyoumean_dep:answer")  # its import failed, not its name


def test_redact_removes_credentials_and_query():
    assert redact("https://u:p@host:8443/v1/qa?key=abc") == "https://host:8443/v1/qa"
    assert redact("mypkg.qa:answer") == "mypkg.qa:answer"


def test_baselines():
    gold = oracle(ITEM.question, ITEM)
    assert gold.text == ITEM.long_answers[0] and len(gold.interpretations) == len(ITEM.interpretations)
    answer = lexical(ITEM.question, list(ITEM.passages))
    assert answer.text and 1 <= len(answer.interpretations) <= 3
    assert set(answer.citations) <= {p.id for p in ITEM.passages}
    assert lexical("What?", [Passage("p", "t", "Some text.")]).text == ""  # no content words
    assert lexical(ITEM.question, []).text == ""
    asked = []

    def retriever(query, k=10):
        asked.append((query, k))
        return list(ITEM.passages)

    searched = lexical(ITEM.question, [], retriever)  # open retrieval: no passages handed over
    assert searched.text == answer.text and asked == [(ITEM.question, 10)]
    assert lexical(ITEM.question, list(ITEM.passages), retriever).text == answer.text and len(asked) == 1


def test_bootstrap_interval_is_seeded_and_brackets_the_mean():
    values = [0.0, 1.0, 0.5, 1.0, 0.0, 1.0, 0.25]
    low, high = bootstrap_interval(values, seed=7)
    assert low <= sum(values) / len(values) <= high
    assert (low, high) == bootstrap_interval(values, seed=7)
    assert bootstrap_interval([0.3] * 5, seed=1) == (0.3, 0.3)
    assert (
        stable_seed(0, "march", "str_em")
        == stable_seed(0, "march", "str_em")
        != stable_seed(1, "march", "str_em")
    )
