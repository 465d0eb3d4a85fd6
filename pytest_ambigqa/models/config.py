"""The models a run talks to, read from their options (``--ambig-judge*``, ``--ambig-llm-*``):
the judge, the model of an ``llm:`` system, and the limits every client of theirs shares.

Its defaults are :class:`~.chat.ChatSettings`' (the option table shows the same ones:
``tests/test_layout.py``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from .. import options
from ..output import redact
from .batch import BatchSettings
from .chat import ChatSettings

_DEFAULTS = ChatSettings("", None)


@dataclass(frozen=True)
class ModelConfig:
    judge: str | None = None
    judge_base_url: str | None = None
    judge_price: tuple[float, float] | None = None
    judge_samples: int = 1
    judge_concurrency: int = _DEFAULTS.concurrency
    judge_batch: float | None = None  # seconds to wait for the batch; None: no batch judging
    judge_batch_price: tuple[float, float] | None = None
    judge_batch_poll: float = 10.0
    llm_model: str | None = None
    llm_base_url: str | None = None
    llm_price: tuple[float, float] | None = None
    llm_temperature: float | None = None  # None: as each method's paper states
    llm_max_tokens: int | None = None  # None: as each method's paper states; 0: no limit
    # every client's: the judge's, the llm: system's and the simulated user's
    timeout: float = _DEFAULTS.timeout
    retries: int = _DEFAULTS.max_retries
    reasks: int = _DEFAULTS.max_reasks

    @classmethod
    def read(cls, config: Any) -> ModelConfig:
        """``--ambig-judge*`` and ``--ambig-llm-*``, checked (a bad one is a usage error naming it)."""

        def count(flag: str, low: int, high: int) -> int:
            return options.number(flag, options.text(config, flag), kind=int, low=low, high=high)

        def optional(flag: str, kind: type, high: float) -> Any:  # no default of its own: None
            given = options.value(config, flag)
            return options.number(flag, given, kind=kind, low=0, high=high) if given else None

        return cls(
            judge=options.value(config, "--ambig-judge"),
            judge_base_url=options.value(config, "--ambig-judge-base-url"),
            judge_price=options.price("--ambig-judge-price", options.value(config, "--ambig-judge-price")),
            judge_samples=count("--ambig-judge-samples", 1, 100),
            judge_concurrency=count("--ambig-judge-concurrency", 1, options.MAX_THREADS),
            judge_batch=optional("--ambig-judge-batch", float, options.MAX_SECONDS),
            judge_batch_price=options.price(
                "--ambig-judge-batch-price", options.value(config, "--ambig-judge-batch-price")
            ),
            judge_batch_poll=options.number(
                "--ambig-judge-batch-poll",
                options.text(config, "--ambig-judge-batch-poll"),
                low=0.001,
                high=options.MAX_SECONDS,
            ),
            llm_model=options.value(config, "--ambig-llm-model"),
            llm_base_url=options.value(config, "--ambig-llm-base-url"),
            llm_price=options.price("--ambig-llm-price", options.value(config, "--ambig-llm-price")),
            llm_temperature=optional("--ambig-llm-temperature", float, 2),
            llm_max_tokens=optional("--ambig-llm-max-tokens", int, 1_000_000),
            timeout=options.number(
                "--ambig-judge-timeout",
                options.text(config, "--ambig-judge-timeout"),
                low=0.001,
                high=options.MAX_SECONDS,
            ),
            retries=count("--ambig-judge-retries", 0, 100),
            reasks=count("--ambig-judge-reasks", 0, 20),
        )

    def judge_settings(self, seed: int) -> ChatSettings | None:
        """The judge's client settings (None: no judge)."""
        if not self.judge:
            return None
        return self._settings(self.judge, self.judge_base_url, self.judge_price, self.judge_concurrency, seed)

    def batch_settings(self) -> BatchSettings | None:
        """Batch judging's (None: the judge is asked call by call). The batch price is half
        the judge's unless given: OpenAI's Batch API costs 50% of the synchronous price."""
        if self.judge_batch is None:
            return None
        price = self.judge_batch_price
        if price is None and self.judge_price is not None:
            price = (self.judge_price[0] / 2, self.judge_price[1] / 2)
        price_in, price_out = price or (None, None)
        return BatchSettings(self.judge_batch, self.judge_batch_poll, price_in, price_out)

    def llm_settings(self, seed: int, concurrency: int) -> ChatSettings | None:
        """The ``llm:`` systems' client settings, sized for ``concurrency`` items at once."""
        if not self.llm_model:
            return None
        settings = self._settings(
            self.llm_model, self.llm_base_url, self.llm_price, concurrency, seed, "model"
        )
        return dataclasses.replace(settings, temperature=self.llm_temperature, max_tokens=self.llm_max_tokens)

    def _settings(
        self,
        model: str,
        base_url: str | None,
        price: tuple[float, float] | None,
        concurrency: int,
        seed: int,
        role: str = "judge",
    ) -> ChatSettings:
        price_in, price_out = price or (None, None)
        return ChatSettings(
            model=model,
            base_url=base_url,
            seed=seed,
            timeout=self.timeout,
            max_retries=self.retries,
            max_reasks=self.reasks,
            concurrency=concurrency,
            price_in=price_in,
            price_out=price_out,
            role=role,
        )

    def to_dict(self) -> dict[str, Any]:
        """As the scorecard records it: URLs without credentials; keys are never here."""
        return {
            "llm_model": self.llm_model,
            "llm_base_url": redact(self.llm_base_url) if self.llm_base_url else None,
            "llm_price": list(self.llm_price) if self.llm_price else None,
            "llm_temperature": self.llm_temperature,
            "llm_max_tokens": self.llm_max_tokens,
            "judge": self.judge,
            "judge_base_url": redact(self.judge_base_url) if self.judge_base_url else None,
            "judge_samples": self.judge_samples,
            "judge_price": list(self.judge_price) if self.judge_price else None,
        }
