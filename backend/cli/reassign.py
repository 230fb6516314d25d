"""`railyard reassign generate|diff`: minimal reassignment plans in Kafka's own JSON."""

from __future__ import annotations

import argparse

from backend.cli import (
    non_negative_int,
    partition_limit,
    positive_float,
    positive_int,
    verb_parser,
)
from backend.model.io import load_snapshot
from backend.services import fields, reassign


def broker_ids(text: str) -> tuple[int, ...]:
    """'4,5,6' -> (4, 5, 6): the form's reading (fields.broker_ids: each an id Kafka can
    have, each once, commas or spaces between them), refused in a flag's words (argparse
    names the flag), and at least one."""
    try:
        ids = fields.broker_ids(text, "--brokers")
    except fields.BrokerIdRefused as e:
        raise argparse.ArgumentTypeError(
            f"broker {e.twice} is named twice in {text!r}" if e.twice is not None
            else f"expected comma-separated broker ids: {e.why}") from None
    if not ids:
        raise argparse.ArgumentTypeError("expected at least one broker id")
    return tuple(ids)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--snapshot", required=True, help="cluster snapshot (.json or .parquet)")
    p.add_argument("--max-broker-partitions", type=partition_limit,
                   help="overrides the snapshot's max.broker.partitions")
    p.add_argument("--max-partitions", type=partition_limit,
                   help="overrides the snapshot's max.partitions")
    p.add_argument("--per-broker-moves", type=positive_int, default=reassign.PER_BROKER,
                   help="concurrent movements per broker in one batch (Cruise Control: 5)")
    p.add_argument("--cluster-moves", type=positive_int, default=reassign.CLUSTER,
                   help="concurrent movements in the cluster in one batch (Cruise Control: 1250)")


def register(sub: argparse._SubParsersAction) -> None:
    p = verb_parser(sub, "reassign")
    actions = p.add_subparsers(dest="action", required=True)

    g = actions.add_parser("generate", help="a minimal plan toward one goal")
    _common(g)
    g.add_argument("--goal", required=True, choices=reassign.GOALS)
    g.add_argument("--brokers", type=broker_ids,
                   help="broker ids to drain or to fill (drain and add goals), e.g. 7,8")
    g.add_argument("--keep-empty", type=broker_ids,
                   help="brokers drained earlier that this goal leaves empty (they take "
                        "nothing, lose what they hold again), e.g. 9; the dashboard "
                        "remembers them from completed plans")
    g.add_argument("--target-utilization", type=positive_float, default=1.0,
                   help="fraction of max.broker.partitions a broker may hold, e.g. 0.9")
    g.add_argument("--threshold", type=positive_float, default=reassign.BALANCE_THRESHOLD,
                   help="balance goal: counts within avg x (2 - t) .. avg x t")
    g.add_argument("--seed", type=non_negative_int, default=0)
    g.add_argument("--plan-out", help="write the bare Kafka plan (for --execute) here")
    g.set_defaults(func=_generate)

    d = actions.add_parser("diff", help="validate any plan and summarise what it does")
    _common(d)
    d.add_argument("--reassignment", required=True,
                   help='{"version":1,"partitions":[...]} as kafka-reassign-partitions reads it')
    d.set_defaults(func=_diff)


def _generate(a: argparse.Namespace) -> dict:
    snap = load_snapshot(a.snapshot)
    goal = reassign.goal(a.goal, a.brokers or (), a.target_utilization, a.threshold,
                         a.keep_empty or ())
    limits = snap.limits.merged(a.max_broker_partitions, a.max_partitions)
    return reassign.generate(snap, goal, limits, a.seed, a.plan_out, a.per_broker_moves,
                             a.cluster_moves)


def _diff(a: argparse.Namespace) -> dict:
    snap = load_snapshot(a.snapshot)
    limits = snap.limits.merged(a.max_broker_partitions, a.max_partitions)
    return reassign.diff(snap, a.reassignment, limits, a.per_broker_moves, a.cluster_moves)
