"""The models a run talks to, read from their options (``--ambig-judge*``, ``--ambig-llm-*``):
the judge (one model, or a panel of several: ``judge/panel.py``), the model of an ``llm:``
system, and the limits every client of theirs shares.

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


PANEL_AGGREGATIONS = ("mean", "median")  # how a panel's scores make the item's (judge/panel.py)


@dataclass(frozen=True)
class ModelConfig:
    judge: str | None = None  # as given: one model, or a panel's, comma-separated
    judge_base_url: str | None = None  # as given: one URL for every judge, or one per judge
    judge_price: tuple[float, float] | None = None  # every judge's, or None when judge_prices differ
    judge_samples: int = 1
    judge_prices: tuple[tuple[float, float], ...] = ()  # one per judge of a panel, when given so
    judge_panel: str = "mean"
    judge_disagreement: float = 0.4  # a panel's spread, as a share of the metric's scale, flagged
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
    preflight: bool = True  # probe each model server once before any item (``preflight.py``)

    @classmethod
    def read(cls, config: Any) -> ModelConfig:
        """``--ambig-judge*`` and ``--ambig-llm-*``, checked (a bad one is a usage error naming it)."""

        def count(flag: str, low: int, high: int) -> int:
            return options.number(flag, options.text(config, flag), kind=int, low=low, high=high)

        def optional(flag: str, kind: type, high: float) -> Any:  # no default of its own: None
            given = options.value(config, flag)
            return options.number(flag, given, kind=kind, low=0, high=high) if given else None

        judge, base_url = (
            options.value(config, "--ambig-judge"),
            options.value(config, "--ambig-judge-base-url"),
        )
        models = _panel(judge, base_url)
        prices = options.prices(
            "--ambig-judge-price", options.value(config, "--ambig-judge-price"), len(models)
        )
        return cls(
            judge=judge,
            judge_base_url=base_url,
            judge_price=prices[0] if len(set(prices)) == 1 else None,
            judge_prices=tuple(p for p in prices if p is not None) if len(set(prices)) > 1 else (),
            judge_samples=count("--ambig-judge-samples", 1, 100),
            judge_panel=options.choice(config, "--ambig-judge-panel", PANEL_AGGREGATIONS),
            judge_disagreement=options.number(
                "--ambig-judge-disagreement",
                options.text(config, "--ambig-judge-disagreement"),
                low=0,
                high=1,
            ),
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
            preflight=not options.value(config, "--ambig-no-preflight"),
        )

    def judge_settings(self, seed: int) -> list[ChatSettings]:
        """Each judge's client settings, in the order given (none: no judge)."""
        models = _panel(self.judge, self.judge_base_url)
        prices = self.judge_prices or (self.judge_price,) * len(models)
        return [
            self._settings(model, url, price, self.judge_concurrency, seed)
            for (model, url), price in zip(models, prices, strict=True)
        ]

    def batch_settings(self) -> BatchSettings | None:
        """Batch judging's (None: the judge is asked call by call). The batch price as given;
        without one, each judge's is half its own (``judge.batch.attach``)."""
        if self.judge_batch is None:
            return None
        price_in, price_out = self.judge_batch_price or (None, None)
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

    def judge_urls(self) -> str | None:
        """``--ambig-judge-base-url`` as it may be shown: each URL without credentials."""
        if not self.judge_base_url:
            return None
        return ",".join(redact(url.strip()) for url in self.judge_base_url.split(","))

    def to_dict(self) -> dict[str, Any]:
        """As the scorecard records it: URLs without credentials; keys are never here."""
        return {
            "llm_model": self.llm_model,
            "llm_base_url": redact(self.llm_base_url) if self.llm_base_url else None,
            "llm_price": list(self.llm_price) if self.llm_price else None,
            "llm_temperature": self.llm_temperature,
            "llm_max_tokens": self.llm_max_tokens,
            "judge": self.judge,
            "judge_base_url": self.judge_urls(),
            "judge_samples": self.judge_samples,
            "judge_price": list(self.judge_price) if self.judge_price else None,
            **({"judge_prices": [list(p) for p in self.judge_prices]} if self.judge_prices else {}),
            **({"judge_panel": self.judge_panel} if len(_panel(self.judge, None)) > 1 else {}),
        }


def _panel(judge: str | None, base_url: str | None) -> list[tuple[str, str | None]]:
    """The judges as (model, base URL): ``--ambig-judge=A,B`` names a panel, and
    ``--ambig-judge-base-url`` gives one URL for them all or one per judge, in their order."""
    if not judge:
        return []
    models = [m.strip() for m in judge.split(",")]
    if not all(models):
        options.refuse(f"--ambig-judge={judge}: an empty model name in the list")
    urls = [u.strip() for u in base_url.split(",")] if base_url else [None]
    if len(urls) == 1:
        urls *= len(models)
    elif len(urls) != len(models):
        options.refuse(
            f"--ambig-judge-base-url: {len(urls)} URLs for {len(models)} judges; give one URL for "
            "every judge, or one per judge in the order of --ambig-judge"
        )
    pairs = list(zip(models, urls, strict=True))
    doubled = sorted({m for m, u in pairs if pairs.count((m, u)) > 1})
    if doubled:
        options.refuse(f"--ambig-judge: {', '.join(doubled)} named twice on the same server")
    return pairs
