"""The simulated users: what one has in mind (the interpretation), the offline user that
replies and finalises without a model, the checks on what a user said (a reply that gives
the answer away leaves the episode unscored; a final answer that ignores the assistant is
counted), and the LLM user through the judge's client.

Berant, Chen, Fisch et al. 2025 (section 3.1) give the user the query and the intended
interpretation: it answers a clarifying question with only what the question asks, says it
does not know when its reading cannot answer (Appendix E.2), and writes the final answer
from the assistant's text alone. The LLM user's instructions are ours; ``play.py`` applies
the checks; ``audit.py`` measures the users.
"""

from __future__ import annotations

import json
import re
import string
import typing
from collections.abc import Callable, Sequence
from typing import Any

from ...errors import ScorerUnavailable, UserFailure
from ...metrics.qa import token_f1
from ...metrics.text import STOPWORDS, normalize_answer
from ...models.usage import Usage
from ...output import excerpt
from ...schema import AmbigItem
from .episodes import Episode


class User(typing.Protocol):
    name: str
    how: str  # how it answers, in words, for the scorecard

    def bind(self, usage: Usage) -> User:
        """This user for one episode, counting its model calls into ``usage``."""
        ...

    def reply(self, item: AmbigItem, episode: Episode, clarification: str) -> str: ...

    def finalize(self, item: AmbigItem, episode: Episode, assistant_text: str, action: str) -> str: ...


def meaning(item: AmbigItem, episode: Episode) -> str:
    """What the interpretation means, in words: its clarified question, else its condition."""
    reading = item.interpretations[episode.interpretation]
    return reading.question or reading.condition or item.question


DO_NOT_KNOW = "I do not know."  # the paper's user, when its reading says nothing more (Appendix E.2)
REPLY_WORDS = 8  # the most words the offline user says: "a few words", as the paper's user does


_EDGES = string.punctuation + "“”‘’«»"  # stripped from the ends of a word the user says


def _key(word: str) -> str:
    return "".join(c for c in word.casefold() if c.isalnum())


# A clarifying question's words that ask which reading, not about one: a choice between
# readings ("which one do you mean?", "what kind?"), never a fact the readings tell apart.
ASKING = frozenset(
    """one ones mean meant meaning sense interpretation reading version kind type sort specific
    specifically specify clarify refer refers referring ask asking talk talking exactly particular
    question intend intended option please like want concern concerns""".split()
)
# The aspect a choice question may name that the readings' words show without spelling it:
# a time, when a reading adds a number or a month.
_MONTHS = frozenset(
    "january february march april may june july august september october november december".split()
)
TIME = frozenset("year years date dates time period era decade century day month".split())
_CHOICE = re.compile(
    r"\b(which|what\s+(kind|type|sort|version|sense)|(do|did)\s+you\s+mean|are\s+you\s+"
    r"(asking|referring|talking)|more\s+specific|clarify|specify)\b|\bor\b",
    re.IGNORECASE,
)


def _stem(key: str) -> str:
    """A word's key without a plural or possessive s ("films", "men's"), so a question and a
    reading that inflect a word differently still share it."""
    return key[:-1] if len(key) > 3 and key.endswith("s") and not key.endswith("ss") else key


def content(text: str) -> set[str]:
    """The words of ``text`` that carry content: stemmed keys, stopwords left out."""
    keys = (_key(w) for w in text.split())
    return {_stem(k) for k in keys if k and k not in STOPWORDS}


def _readings(item: AmbigItem) -> list[str]:
    return [r.question or r.condition or "" for r in item.interpretations]


def asks_about_readings(item: AmbigItem, clarification: str) -> bool:
    """Whether a clarifying question asks about what tells ``item``'s readings apart, the
    only thing the paper's user can answer from its reading (Berant, Chen, Fisch et al. 2025,
    "Learning Steerable Clarification Policies with Collaborative Self-play", section 3.1 and
    Appendix E.2: "hard cover or soft cover?" gets "I do not know").

    It does when (a) it shares a content word with what any reading adds to the item's
    question (it names or offers a reading, or names the aspect they differ in: "the 2005
    film?", "men's or women's?", "which film?"), or (b) it is a choice ("which", "what kind",
    "do you mean", "... or ...", "be more specific") whose content words, past the item's
    question's own, only ask which reading (:data:`ASKING`: "which one do you mean?") or name
    a time (:data:`TIME`) where some reading adds a number or a month ("which year?"). Anything
    else ("What is your favourite colour?", "Which colour?", "In which country?" where no
    reading names its country) is not about the readings.
    """
    asked = content(clarification) - content(item.question)
    added = set().union(*(content(r) for r in _readings(item))) - content(item.question) - ASKING
    if asked & added:
        return True
    if not _CHOICE.search(clarification):
        return False
    fits = set(ASKING)
    if any(w.isdigit() or w in _MONTHS for w in added):
        fits |= TIME
    return asked <= fits


def disambiguation(meaning: str, question: str, others: Sequence[str] = ()) -> str:
    """The offline user's reply to a clarifying question about the readings: the words of
    its reading (the clarified question, or the condition) that the question it sent does not
    contain, in order, at most :data:`REPLY_WORDS`, and never the whole reading.

    The paper's user answers only what it is asked and never repeats the unambiguous
    question (section 3.1; Appendix E.2's user prompt). Without a model, what the reading
    adds to the question is what a clarifying question can be after. A condition (``others``:
    the item's other conditions) is a sentence, not a question: of it the user says only the
    content words that not every other condition adds too and that do not only say what is
    asked ("refers", "asks"): "Europe surrender Nazi Germany", not "The question refers to the
    of the". Where it adds nothing (the reading is the question, or only reorders or drops its
    words) or only stopwords ("the", "of"), the user says :data:`DO_NOT_KNOW`, as the paper's
    user does when its reading cannot answer the clarifying question. Where the added words
    would still contain the whole reading (a condition sharing no word with the question),
    words are dropped from the end until they do not (:func:`gives_away`).
    """
    asked = {_key(w) for w in question.split()}
    added = [w.strip(_EDGES) for w in meaning.split() if _key(w) and _key(w) not in asked]
    if others:
        shared = set.intersection(*(content(o) for o in others))
        added = [w for w in added if _key(w) not in STOPWORDS and _stem(_key(w)) not in shared | ASKING]
    added = added[:REPLY_WORDS]
    while added and gives_away(" ".join(added), meaning):
        added.pop()
    if all(_key(w) in STOPWORDS for w in added):  # nothing added, or nothing that reads
        return DO_NOT_KNOW if not gives_away(DO_NOT_KNOW, meaning) else "?"  # a reading "know": "?"
    return " ".join(added)


def distinguishing(item: AmbigItem, episode: Episode) -> str:
    """What tells the episode's reading apart, as the offline user says it
    (:func:`disambiguation`; a condition against the item's other conditions)."""
    reading = item.interpretations[episode.interpretation]
    if reading.question or not reading.condition:
        return disambiguation(meaning(item, episode), episode.question)
    others = [o.condition or "" for n, o in enumerate(item.interpretations) if n != episode.interpretation]
    return disambiguation(reading.condition, episode.question, others)


def says_do_not_know(reply: str) -> bool:
    """A reply that declines: the offline user's :data:`DO_NOT_KNOW`, or a model's own words
    for it ("I don't know", "not sure", "unknown")."""
    said = " ".join(_key(w) for w in reply.split())
    return not said.strip() or any(p in f" {said} " for p in _DECLINING)


_DECLINING = (
    " do not know ",
    " dont know ",
    " not sure ",
    " unknown ",
    " cannot tell ",
    " cant tell ",
    " no idea ",
)


def gives_away(reply: str, reading: str) -> bool:
    """A reply that contains its whole reading (SQuAD-normalised): the clarified question
    or condition repeated, which the paper's user must never say (Appendix E.2)."""
    whole = normalize_answer(reading)
    return bool(whole) and f" {whole} " in f" {normalize_answer(reply)} "


class OfflineUser:
    """The deterministic user, for tests and runs without a model: to a clarifying question
    about the readings (:func:`asks_about_readings`) it replies with the words that tell its
    reading apart (:func:`distinguishing`), to any other with :data:`DO_NOT_KNOW`; from a
    multi-answer, keeps the part (line, else sentence, else clause) that best matches its
    reading, and of a "reading: answer" part, the answer."""

    name = "offline"
    how = (
        "to a clarifying question about what tells the readings apart, replies with the words its "
        f"reading adds to the question, at most {REPLY_WORDS} and never the whole reading; to any "
        f"other, or when its reading adds none, '{DO_NOT_KNOW}'; keeps the part of a multi-answer "
        "that best matches its reading"
    )

    def bind(self, usage: Usage) -> OfflineUser:
        return self

    def reply(self, item: AmbigItem, episode: Episode, clarification: str) -> str:
        return distinguishing(item, episode) if asks_about_readings(item, clarification) else DO_NOT_KNOW

    def finalize(self, item: AmbigItem, episode: Episode, assistant_text: str, action: str) -> str:
        if action != "multi-answer":
            return assistant_text
        parts = _parts(assistant_text)
        if not parts:
            return assistant_text
        wanted = meaning(item, episode)
        part = max(parts, key=lambda part: (token_f1(part, wanted), -parts.index(part)))
        label, sep, answer = part.partition(": ")  # "reading: answer" keeps the answer
        return answer.strip() if sep and label.strip() and answer.strip() else part


def _parts(text: str) -> list[str]:
    for separator in ("\n", ". ", "; "):
        parts = [p.strip() for p in text.split(separator) if p.strip()]
        if len(parts) > 1:
            return parts
    return [text.strip()] if text.strip() else []


def leaks(reply: str, golds: Sequence[str]) -> bool:
    """A user reply that gives away the interpretation's gold answer (the episode is then
    unscored: the user did the assistant's work)."""
    said = f" {normalize_answer(reply)} "
    return any(g.strip() and normalize_answer(g) and f" {normalize_answer(g)} " in said for g in golds)


def ignores(final: str, assistant_text: str) -> bool:
    """A final answer with more than half its tokens absent from the assistant's answer:
    the user answered from its own knowledge. The paper drops such rollouts from its
    training data (sections 3.2 and 4.2) but evaluates every rollout (section 4.3, "averaged
    across rollouts"), so an episode it touches is scored and counted in the section."""
    tokens = normalize_answer(final).split()
    if not tokens:
        return False
    seen = set(normalize_answer(assistant_text).split())
    return sum(t not in seen for t in tokens) > len(tokens) / 2


REPLY = """You play a person who asked an assistant a question and has one specific meaning of \
it in mind. The assistant asked you a clarifying question. Answer it as that person would: in \
a few words, saying only what the clarifying question asks about your meaning. If your meaning \
does not tell you the answer to the clarifying question, reply that you do not know. Never state the \
answer to your own question, and do not repeat your whole intended question. Reply with JSON: \
{"reply": "<your answer to the clarifying question>"}"""

FINAL = """You play a person who asked an assistant a question and has one specific meaning of \
it in mind. The assistant has answered. Write down the answer you take away for your meaning, \
using only the assistant's words: if it gave several answers, keep the one that fits your \
meaning; if none fits, write what it said that comes closest. Never add facts of your own. \
Reply with JSON: {"answer": "<the answer, in the assistant's words>"}"""


def _text_of(key: str) -> Callable[[Any], str | None]:
    def check(data: Any) -> str | None:
        if not isinstance(data, dict) or not isinstance(data.get(key), str):
            return f'expected a JSON object with a string "{key}"'
        return None

    return check


def _said_as(key: str) -> dict[str, Any]:
    """The reply's JSON schema (one string, ``key``), asked with the server's structured
    output as the methods ask theirs."""
    return {"title": key, "type": "object", "properties": {key: {"type": "string"}}, "required": [key]}


class LLMUser:
    """The judge model as the user; every call goes through the judge's cache and retries.
    A call that cannot be made is a :class:`UserFailure`: the episode is unscored."""

    name = "llm"
    how = (
        "the judge model, told to answer only what the clarifying question asks, to say it does not "
        "know when its meaning does not tell, and to take its final answer from the assistant's words"
    )

    def __init__(self, client: Any, usage: Usage | None = None) -> None:
        self.client = client
        self.usage = usage or Usage()

    def bind(self, usage: Usage) -> LLMUser:
        """The same user, counting its calls into ``usage`` (one episode's)."""
        return LLMUser(self.client, usage)

    def _ask(self, system: str, facts: dict[str, str], key: str) -> str:
        messages = [
            {"role": "system", "content": system},
            {"role": "user", "content": json.dumps(facts, ensure_ascii=False, indent=1)},
        ]
        try:
            data, _ = self.client.chat_json(messages, _text_of(key), self.usage, schema=_said_as(key))
        except ScorerUnavailable as exc:
            raise UserFailure(str(exc)) from None
        except Exception as exc:  # noqa: BLE001 - the client failed in a way of its own: this episode
            raise UserFailure(f"{type(exc).__name__}: {excerpt(exc, 200)}") from None
        return data[key].strip()

    def reply(self, item: AmbigItem, episode: Episode, clarification: str) -> str:
        facts = {
            "your question": episode.question,
            "what you mean by it": meaning(item, episode),
            "the assistant's clarifying question": clarification,
        }
        return self._ask(REPLY, facts, "reply")

    def finalize(self, item: AmbigItem, episode: Episode, assistant_text: str, action: str) -> str:
        facts = {
            "your question": episode.question,
            "what you mean by it": meaning(item, episode),
            "the assistant's answer": assistant_text,
        }
        return self._ask(FINAL, facts, "answer")
