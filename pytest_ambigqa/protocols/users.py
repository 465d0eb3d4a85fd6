"""The LLM simulated user of the interactive protocol, through the judge's client.

Berant, Chen, Fisch et al. 2025 (section 3.1) give the user the query and the intended
interpretation: it answers a clarifying question with only what the question asks, and
writes the final answer from the assistant's text alone. The instructions are ours; the
checks that make an episode unscored (a reply that leaks the answer, a final answer that
ignores the assistant) are in ``interactive.play``.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import ScorerUnavailable, UserFailure
from ..models.usage import Usage
from ..schema import AmbigItem, safe_str
from .interactive import Episode, meaning

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


class LLMUser:
    """The judge model as the user; every call goes through the judge's cache and retries.
    A call that cannot be made is a :class:`UserFailure`: the episode is unscored."""

    name = "llm"

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
            data, _ = self.client.chat_json(messages, _text_of(key), self.usage)
        except ScorerUnavailable as exc:
            raise UserFailure(str(exc)) from None
        except Exception as exc:  # noqa: BLE001 - the client failed in a way of its own: this episode
            raise UserFailure(f"{type(exc).__name__}: {safe_str(exc)[:200]}") from None
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
