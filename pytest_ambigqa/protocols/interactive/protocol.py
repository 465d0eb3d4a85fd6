"""The interactive protocol as a strategy (``protocols/base.py``)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ... import options
from ...errors import SystemFailure
from ...evaluate import ACTION_KEY
from ...metrics.interactive import METRIC_NAMES
from ...models.chat import ChatClient
from ...models.usage import Usage
from ...options import refuse
from ...schema import AmbigItem, Answer, ItemResult, Status
from ..base import Protocol
from . import view
from .config import InteractiveConfig
from .episodes import COST_GRID, SPLITS, Episode, episodes
from .play import PLANS, Outcome, play, summed
from .scoring import failed_result, group_of, query_of, scored_result, settled, split_of, unscored_result
from .section import section
from .users import LLMUser, OfflineUser, User

if TYPE_CHECKING:
    import pytest

    from ...blocks import Block, Table
    from ...evaluate import Evaluator
    from ...judge import Judge
    from ...store.pool import Scoring
    from ...systems import System

TURN_INPUTS = ("history", "alpha", "beta", "actions")  # what of a turn shapes its answer: part of its key


class Interactive(Protocol):
    """Interactive clarification (seeds/003): one test per (item, reading, cost pair); the
    system may answer, multi-answer or ask, and a simulated user replies."""

    name = "interactive"
    judges_suites = False  # the judge model, if any, plays the user
    own_options = ("--ambig-costs", "--ambig-clarifications", "--ambig-user", "--ambig-steerability")
    config_keys = ("costs", "clarifications", "user", "steerability")
    unit = "episodes"
    slice_heading = "queries"  # ambiguous and unambiguous ones
    papers_column = False  # the rows published under it are other datasets': context in its section
    # AmbigQA's episodes are answered from parametric knowledge ("Learning Steerable Clarification
    # Policies with Collaborative Self-play", §4): a run without evidence is the paper's setting,
    # not a silent zero
    needs_evidence = False
    has_section = True
    suite_values_are_item_means = False  # an item's tests weigh as groups (``group``)
    repeats_trials = False  # its section reads one transcript per test
    single_shot_options = ("--ambig-reader", "--ambig-retrieval-report", "--ambig-judge-samples")

    @classmethod
    def check_options(cls, config: pytest.Config) -> None:
        given = [o for o in cls.single_shot_options if options.given(config, o)]
        if given:
            refuse(
                f"{', '.join(given)}: an interactive run scores episodes with the protocol's own metrics; "
                "it has no reader, evidence report or judge metrics"
            )
        llm_user = options.choice(config, "--ambig-user") == "llm"
        if llm_user and not options.value(config, "--ambig-judge"):
            refuse("--ambig-user=llm: the simulated user is the judge model; set --ambig-judge")
        if not llm_user and options.given(config, "--ambig-judge"):
            refuse(
                "--ambig-judge: an interactive run judges nothing; "
                "the model plays the user with --ambig-user=llm"
            )

    @classmethod
    def check_rescore(cls) -> None:
        refuse(
            "--ambig-rescore replays single-shot answers; an interactive episode's turns depend on "
            "the user's replies: run it again with --ambig-resume, which reuses every stored turn"
        )

    def __init__(
        self,
        costs: Sequence[tuple[float, float]] = COST_GRID,
        clarifications: int = 1,
        user_name: str = "offline",
        steerability: bool = False,
        user: User | None = None,
    ) -> None:
        self.costs, self.clarifications = tuple(costs), clarifications
        self.user_name, self.steerability, self.user = user_name, steerability, user
        self.episodes: dict[str, tuple[AmbigItem, Episode]] = {}  # test key: (the file's item, its episode)

    @classmethod
    def read_options(cls, config: pytest.Config) -> InteractiveConfig:
        return InteractiveConfig.read(config)

    @classmethod
    def uses_judge(cls, own: InteractiveConfig) -> bool:
        return own.user == "llm"  # the judge model plays the user; nothing is judged

    @classmethod
    def configured(cls, own: InteractiveConfig, judge: Judge | None) -> Protocol:
        """The simulated user is offline, or the judge model speaking as the user (its
        model, cache and limits)."""
        user: User = OfflineUser()
        if own.user == "llm":
            assert judge is not None  # the options require --ambig-judge
            client = judge.client
            user = LLMUser(ChatClient(dataclasses.replace(client.settings, role="user"), client.cache))
        return cls(own.costs, own.clarifications, own.user, own.steerability, user)

    def expand(self, items: tuple[AmbigItem, ...]) -> tuple[AmbigItem, ...]:
        """The episodes of the selected items, in order, as items the tests and the scorecard
        carry: ``<suite>-<id>-<reading>-a<alpha>-b<beta>``, asking the episode's question."""
        by_key = {item.key: item for item in items}
        out: list[AmbigItem] = []
        for episode in episodes(items, self.costs, self.clarifications):
            base = by_key[episode.item]
            copy = dataclasses.replace(
                base, id=f"{base.id}-{episode.suffix}", question=episode.question, index=len(out)
            )
            self.episodes[copy.key] = (base, episode)
            out.append(copy)
        return tuple(out)

    def base_key(self, item: AmbigItem) -> str:
        return self.episodes[item.key][0].key

    def metrics(self, suite: Any) -> tuple[str, ...]:
        return METRIC_NAMES

    def setup(self, inputs: Any) -> Any:
        """Episodes over the suite's inputs (its setting still says what a system is given);
        compared with no published row of the suite."""
        costs = ", ".join(f"{a:g}/{b:g}" for a, b in self.costs)
        how = f" ({self.user.how})" if self.user is not None else ""
        label = (
            f"interactive clarification (Berant et al. 2025): {self.user_name} user{how}, at most "
            f"{self.clarifications} clarification(s), alpha/beta {costs}; each query weighs the same; "
            f"inputs as in {inputs.label}"
        )
        return dataclasses.replace(inputs, name=self.name, label=label, reads_as=None)

    def ask(
        self, evaluator: Evaluator, item: AmbigItem, system: System, extras: dict[str, Any], evidence: Any
    ) -> Scoring:
        """Play the item's episode (and, with ``--ambig-steerability``, the forced-action
        policies) with the system; each turn is asked once and stored like an answer."""
        base, episode = self.episodes[item.key]
        started = time.perf_counter()
        cached: list[bool] = []
        finals: list[Answer] = []
        calls: list[dict[str, Any]] = []  # a reference policy's model calls, turn by turn
        usage = Usage()
        assert self.user is not None  # a run's protocol has its user
        user = self.user.bind(usage)

        def policy(
            question: str,
            history: tuple[tuple[str, str], ...],
            alpha: float,
            beta: float,
            allowed: tuple[str, ...],
        ) -> tuple[str, str]:
            turn = extras | {
                "id": base.id,
                "history": [{"question": q, "answer": a} for q, a in history],
                "alpha": alpha,
                "beta": beta,
                "actions": list(allowed),
            }
            asked = evaluator.answer(item, system, turn, allowed, TURN_INPUTS)
            cached.append(asked.cached)
            answer = asked.answer
            if answer is None:
                raise SystemFailure(asked.error, asked.trace, asked.calls)
            action = answer.metadata.get(ACTION_KEY, "answer")
            answer = dataclasses.replace(
                answer, metadata={k: v for k, v in answer.metadata.items() if k != ACTION_KEY}
            )
            finals.append(answer)
            if isinstance(answer.metadata.get("llm"), dict):
                calls.append(answer.metadata["llm"])
            return action, answer.text

        def played(
            plan: tuple[str, ...] | None, transcript: list[dict]
        ) -> tuple[Outcome | None, str | None, str | None, str | None]:
            try:
                outcome, why, _ = play(base, episode, policy, user, plan, transcript)
                return outcome, why, None, None
            except SystemFailure as exc:  # a PolicyError too: an action the turn does not allow
                if exc.calls:  # the failed turn's calls cost too (last, so its last reply is kept)
                    calls.append(exc.calls)
                return None, None, str(exc), exc.trace

        transcript: list[dict] = []
        outcome, why, error, trace = played(None, transcript)
        final = finals[-1] if finals and outcome is not None else None
        forced = _forced(played) if self.steerability else {}
        duration = time.perf_counter() - started
        details: dict[str, Any] = {"episode": episode.describe(), "transcript": transcript}
        if outcome is not None:
            details["sequence"] = outcome.sequence
            if outcome.ignores:
                details["ignores"] = True
        if forced:
            details["forced"] = forced
        if error is not None:
            result = failed_result(item, "error", error, duration)
            result = dataclasses.replace(result, trace=trace)
            if calls:  # what the turns that were played cost, the failed one's included
                details["calls"] = summed(calls)
        elif outcome is None:
            result = unscored_result(item, why or "unscored", duration)
        else:
            if final is not None and len(calls) > 1:  # the cost line counts every turn, forced ones too
                final = dataclasses.replace(final, metadata={**final.metadata, "llm": summed(calls)})
            result = scored_result(item, evaluator.scorers.keep(outcome.scores()), final, duration)
        used = usage.to_dict() if usage.requests or usage.cached else None  # the LLM user's calls
        done = dataclasses.replace(result, details=details, evidence=evidence, cached=any(cached), usage=used)
        return lambda: done

    def failed(
        self, suite: Any, item: AmbigItem, scorers: Any, status: Status, error: str, duration: float = 0.0
    ) -> ItemResult:
        known = self.episodes.get(item.key)
        return failed_result(item, status, error, duration, known[1] if known else None)

    def settle(self, results: Sequence[ItemResult]) -> list[ItemResult]:
        return settled(results)

    def group(self, result: ItemResult) -> str:
        return group_of(result)

    def cluster(self, result: ItemResult) -> str:
        return query_of(result)

    def slice_of(self, result: ItemResult) -> str | None:
        return split_of(result)

    def slice_names(self, suite: Any) -> tuple[str, ...]:
        return SPLITS

    def section(self, results: Sequence[ItemResult]) -> dict[str, Any] | None:
        return section(results)

    def blocks(self, section: dict[str, Any], context: list[dict[str, Any]]) -> list[Block]:
        return view.blocks(section, context)

    def tables(self, section: dict[str, Any]) -> list[tuple[str, Table]]:
        return view.tables(section)

    def shortfalls(
        self,
        suite: str,
        items: int,
        answered: int,
        section: Mapping[str, Any] | None,
        max_unscored_rate: float | None,
    ) -> list[str]:
        """Episodes the user spoiled or could not finish: a user model that finished none
        fails the run, as a dead judge does; ``--ambig-max-unscored-rate`` bounds the rest."""
        if section is None or not items:
            return []
        reasons = section["unscored"]
        unscored = sum(reasons.values())
        failed = {r: n for r, n in reasons.items() if r.startswith("the simulated user failed")}
        if answered and sum(failed.values()) == answered:
            return [f"{suite}: the simulated user finished no episode: {next(iter(failed))}"]
        if max_unscored_rate is not None and unscored / items > max_unscored_rate:
            top = next(iter(reasons))
            return [
                f"{suite}: {unscored} of {items} episodes unscored ({unscored / items:.0%}) "
                f"> {max_unscored_rate:g}: {top}"
            ]
        return []

    def gold_item(self, result: ItemResult, items: Mapping[str, AmbigItem]) -> AmbigItem | None:
        """The episode's item, asking the episode's question."""
        episode = result.details.get("episode")
        if not episode or episode.get("item") not in items:
            return items.get(result.key)
        question = episode.get("question") or ""
        return dataclasses.replace(items[episode["item"]], id=result.item_id, question=question)

    def detail(self, result: ItemResult) -> str | None:
        """The episode: its query, the reading the user has in mind, the costs, the actions."""
        episode = result.details.get("episode")
        if not episode:
            return None
        query = (
            f"ambiguous query, reading {episode['interpretation'] + 1}"
            if episode["ambiguous"]
            else "unambiguous query"
        )
        actions = f" · actions {result.details['sequence']}" if result.details.get("sequence") else ""
        return f"episode: {query} · alpha {episode['alpha']:g} · beta {episode['beta']:g}{actions}"


Played = Callable[
    [tuple[str, ...] | None, list[dict]], tuple[Outcome | None, str | None, str | None, str | None]
]


def _forced(played: Played) -> dict[str, dict[str, Any]]:
    """Each forced-action policy's play of the episode (``--ambig-steerability``)."""
    forced: dict[str, dict[str, Any]] = {}
    for name, plan in PLANS.items():
        o, w, e, _ = played(plan, [])
        if o is not None:
            forced[name] = {"sequence": o.sequence, "reward": o.reward, "f1": o.f1}
            if o.ignores:
                forced[name]["ignores"] = True
        else:
            forced[name] = {"unscored": w} if w is not None else {"error": e}
    return forced
