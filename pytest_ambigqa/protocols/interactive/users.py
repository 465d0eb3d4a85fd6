"""The simulated users: what one has in mind (the interpretation), the offline user that
replies and finalises without a model, the checks on what a user said (a reply that gives
the answer away leaves the episode unscored; a final answer that ignores the assistant is
counted), and the LLM user through the judge's client.

Berant, Chen, Fisch et al. 2025 (section 3.1) give the user the query and the intended
interpretation: it answers a clarifying question with only what the question asks, and
writes the final answer from the assistant's text alone. The LLM user's instructions are
ours; ``play.py`` applies the checks.
"""

from __future__ import annotations

import json
import string
import typing
from collections.abc import Sequence
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


def disambiguation(meaning: str, question: str) -> str:
    """The offline user's reply to a clarifying question: the words of its reading (the
    clarified question, or the condition) that the question it sent does not contain, in
    order, at most :data:`REPLY_WORDS`, and never the whole reading.

    The paper's user answers only what it is asked and never repeats the unambiguous
    question (section 3.1; Appendix E.2's user prompt). Without a model, what the reading
    adds to the question is what a clarifying question can be after. Where it adds nothing
    (the reading is the question, or only reorders or drops its words) or only stopwords
    ("the", "of"), the user says :data:`DO_NOT_KNOW`, as the paper's user does when its reading
    cannot answer the clarifying question. Where the added words would still contain the
    whole reading (a condition sharing no word with the question), words are dropped from
    the end until they do not (:func:`gives_away`).
    """
    asked = {_key(w) for w in question.split()}
    added = [w.strip(_EDGES) for w in meaning.split() if _key(w) and _key(w) not in asked]
    added = added[:REPLY_WORDS]
    while added and gives_away(" ".join(added), meaning):
        added.pop()
    if all(_key(w) in STOPWORDS for w in added):  # nothing added, or nothing that reads
        return DO_NOT_KNOW if not gives_away(DO_NOT_KNOW, meaning) else "?"  # a reading "know": "?"
    return " ".join(added)


def gives_away(reply: str, reading: str) -> bool:
    """A reply that contains its whole reading (SQuAD-normalised): the clarified question
    or condition repeated, which the paper's user must never say (Appendix E.2)."""
    whole = normalize_answer(reading)
    return bool(whole) and f" {whole} " in f" {normalize_answer(reply)} "


class OfflineUser:
    """The deterministic user, for tests and runs without a model: it replies with the
    words its reading adds to the question (:func:`disambiguation`) and, from a
    multi-answer, keeps the part (line, else sentence, else clause) that best matches its
    reading, and of a "reading: answer" part, the answer."""

    name = "offline"
    how = (
        f"replies with the words its reading adds to the question, at most {REPLY_WORDS} and never "
        f"the whole reading, or '{DO_NOT_KNOW}' when it adds none; keeps the part of a multi-answer "
        "that best matches its reading"
    )

    def bind(self, usage: Usage) -> OfflineUser:
        return self

    def reply(self, item: AmbigItem, episode: Episode, clarification: str) -> str:
        return disambiguation(meaning(item, episode), episode.question)

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
a few words, saying only what the clarifying question asks about your meaning. Never state the \
answer to your own question, and do not repeat your whole intended question. Reply with JSON: \
{"reply": "<your answer to the clarifying question>"}"""

FINAL = """You play a person who asked an assistant a question and has one specific meaning of \
it in mind. The assistant has answered. Write down the answer you take away for your meaning, \
using only the assistant's words: if it gave several answers, keep the one that fits your \
meaning; if none fits, write what it said that comes closest. Never add facts of your own. \
Reply with JSON: {"answer": "<the answer, in the assistant's words>"}"""


def _text_of(key: str):
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
        "the judge model, told to answer only what the clarifying question asks and to take its "
        "final answer from the assistant's words"
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
