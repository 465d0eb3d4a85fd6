"""The interactive section as the report shows it (``Protocol.blocks``): action sequences,
the costs (Figure 6), the reference policies and oracle (Tables 2-3), steerability (Table 4),
and the papers' rows as context (in scorecard.md; the terminal names them)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ...blocks import NOT_COMPARABLE, Block, Caption, Gap, Only, Table, fixed, row_label
from ...metrics import METRICS


def blocks(section: dict[str, Any], context: list[dict[str, Any]]) -> list[Block]:
    """``section`` as ``section.py`` built it; ``context``: the rows published under this
    protocol (Berant et al. 2025's, on other datasets), never compared with the run."""
    out: list[Block] = []

    def add(title: str, table: Table | None = None, only: Only = None) -> None:
        if only != "markdown":
            out.append(Gap())
        out.extend([Caption(title, only=only), replace(table or Table((), (), ""), only=only)])

    sequences = section["sequences"]
    names = list(dict.fromkeys(s for counts in sequences.values() for s in counts))
    if names:
        rows = tuple((split, *(str(c.get(s, 0)) for s in names)) for split, c in sequences.items())
        add("action sequences (scored episodes)", Table(("queries", *names), rows, "l" + "r" * len(names), 2))
    metrics = ("reward", "episode_f1", "clarify_rate", "multi_answer_rate", "answer_words")
    costs = []
    for row in section["costs"]:
        costs.append(
            (f"{row['alpha']:g}", f"{row['beta']:g}", f"{row['scored']}/{row['episodes']}")
            + tuple(fixed(None if row[m] is None else row[m] * METRICS[m].factor) for m in metrics)
        )
    head = ("alpha", "beta", "episodes", *(METRICS[m].label for m in metrics))
    add("by cost pair (corpus-level steerability)", Table(head, tuple(costs), "rrr" + "r" * len(metrics), 2))
    for reason, n in section["unscored"].items():
        add(f"unscored: {n} episode(s): {reason}")
    ignored = section.get("ignores", {})
    if ignored:
        add(
            f"final answer ignores the assistant's (the paper's training filter, not applied in "
            f"evaluation): {ignored['episodes']} episode(s), {ignored['forced']} forced play(s)"
        )
    reference = section["reference"]
    if "reason" in reference:
        add(f"reference policies, oracle and steerability: n/a ({reference['reason']})")
    else:
        _reference(section, reference, add)
    shown = [r for r in context if r["setting"] in ("ambiguous", "unambiguous")]
    if shown:
        sources = ", ".join(dict.fromkeys(f"{r['source']} ({r['dataset']})" for r in shown))
        add(f"{NOT_COMPARABLE}, context only, in scorecard.md: {sources}", only="terminal")
        rows = tuple(
            (
                f"{r['source']} ({r['dataset']})",
                row_label(r),
                r["setting"],
                *(f"{r[m]:g}" for m in ("reward", "episode_f1", "clarify_rate", "multi_answer_rate")),
            )
            for r in shown
        )
        add(
            f"published rows, context only ({NOT_COMPARABLE}: other items, another policy model)",
            Table(
                ("source", "method / model", "queries", "Reward", "F1", "% Clar.", "% MA"), rows, "lllrrrr", 2
            ),
            only="markdown",
        )
        steer = [r for r in context if r["setting"] == "steerability"]
        if steer:
            parts = [f"{c}_{m}" for c in ("alpha", "beta") for m in ("recall", "precision", "f1")]
            rows = tuple(
                (f"{r['source']} ({r['dataset']})", row_label(r), *(f"{r[p]:g}" for p in parts))
                for r in steer
            )
            head = ("source", "method / model", *(p.replace("_", " ") for p in parts))
            add(
                f"published steerability, context only ({NOT_COMPARABLE})",
                Table(head, rows, "ll" + "r" * len(parts), 2),
                only="markdown",
            )
    return out


def tables(section: dict[str, Any]) -> list[tuple[str, Table]]:
    """The section's findings and tables that both outputs show, each with its caption
    (report.html draws them as they are)."""
    shown = [b for b in blocks(section, []) if not isinstance(b, Gap) and b.only is None]
    return [
        (caption.text, table)
        for caption, table in zip(shown[::2], shown[1::2], strict=True)
        if isinstance(caption, Caption) and isinstance(table, Table)
    ]


def _reference(section: dict[str, Any], reference: dict[str, Any], add: Callable[..., None]) -> None:
    """The reference policies' table, what failed plays count, and steerability."""
    policies = []
    for plan, splits in reference["policies"].items():
        cells = []
        for split in ("ambiguous", "unambiguous"):
            got = splits.get(split, {})
            cells += [str(got.get("episodes", 0)), str(got.get("errors", 0))]
            cells += [fixed(got.get("reward")), fixed(got.get("f1"))]
        policies.append((plan, *cells))
    columns = ("n", "errors", "reward", "F1")
    head = ("policy", *(f"{s} {c}" for s in ("ambig.", "unambig.") for c in columns))
    add(
        "the system, its forced-action policies and the hindsight-best oracle (the same "
        "episodes in every row, those no play of which the user spoiled; an error counts F1 0 "
        "and the worst reward its row scored at its cost pair)",
        Table(head, tuple(policies), "l" + "r" * (len(head) - 1), 2),
    )
    for reason, n in reference.get("left_out", {}).items():
        add(f"left out of the table (the headline keeps them): {n} episode(s): {reason}")
    failed = {"system": section.get("failed", 0)} | {
        plan: sum(got.get("errors", 0) for got in splits.values())
        for plan, splits in reference["policies"].items()
        if plan not in ("SYSTEM", "ORACLE")
    }
    floors = {"system": section["error_rewards"], **reference.get("error_rewards", {})}
    for row, n in failed.items():
        if n:
            at = "; ".join(
                f"alpha {f['alpha']:g}, beta {f['beta']:g}: {f['reward']:.1f}" for f in floors[row]
            )
            add(f"a failed play of {row} counts F1 0 and reward {at}")
    for change_, got in reference["steerability"].items():
        if "reason" in got:
            add(f"steerability ({change_}): n/a ({got['reason']})")
        else:
            other = "beta" if change_ == "alpha" else "alpha"
            over = ", ".join(f"{v:g}" for v in got.get("over", ()))
            add(
                f"prompt-level steerability, {change_} {got['from']:g} → {got['to']:g}: recall "
                f"{got['recall']:.2f}, precision {got['precision']:.2f}, F1 {got['f1']:.2f} "
                f"(averaged over {other} {over}; {reference['queries']} query-cost pairs)"
            )
