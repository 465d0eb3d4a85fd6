"""What the model calls behind one item cost (requests, cache hits, retries, tokens, dollars);
summed per suite on the controller. The judge, the LLM reader and LLM systems count alike."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

_SUMMED = (
    *("requests", "cached", "retries", "reasks", "prompt_tokens", "completion_tokens", "cost"),
    *("cached_tokens", "batched", "saved"),
)


@dataclass
class Usage:
    """What judging one item cost; summed per suite on the controller."""

    requests: int = 0
    cached: int = 0
    retries: int = 0
    reasks: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    # Of prompt_tokens, those the server read from its prompt cache (``cached_tokens``).
    cached_tokens: int = 0
    # Replies that came through the server's batch API (``models/batch.py``), not counted in
    # ``requests``; their tokens and cost (at the batch price) are in the sums above, and
    # ``saved`` is what they would have cost more at the synchronous price.
    batched: int = 0
    saved: float = 0.0
    fingerprints: list[str] = field(default_factory=list)
    # The last reply's text: what an errored llm: item shows of why; never summed nor written here.
    last_reply: str | None = field(default=None, compare=False)

    def add(self, other: Usage) -> None:
        for name in _SUMMED:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.fingerprints = sorted(set(self.fingerprints) | set(other.fingerprints))

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "last_reply"}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Usage:
        return cls(**data)
