"""`railyard shrink plan` (the delete-partitions KIP, and the migration that works today)."""

from __future__ import annotations

import argparse

from backend.cli import non_negative_int, partition_limit, positive_int, verb_parser
from backend.model.io import load_snapshot
from backend.services.limits import effective_limits
from backend.services.shrink import shrink_plan


def register(sub: argparse._SubParsersAction) -> None:
    p = verb_parser(sub, "shrink")
    actions = p.add_subparsers(dest="action", required=True)
    s = actions.add_parser("plan", help="stages, reclaimed room, risks and a migration")
    s.add_argument("--snapshot", required=True, metavar="FILE")
    s.add_argument("--topic", required=True)
    s.add_argument("--partitions", type=positive_int, required=True, metavar="M",
                   help="partition count after; the highest-numbered partitions go")
    s.add_argument("--delay-ms", type=non_negative_int,
                   help="ReadOnly -> None delay (default: the topic's retention.ms)")
    s.add_argument("--new-topic", help="name of the migration topic (default TOPIC.pM)")
    s.add_argument("--max-broker-partitions", type=partition_limit)
    s.add_argument("--max-partitions", type=partition_limit)
    s.add_argument("--seed", type=positive_int, default=1)
    s.set_defaults(func=_plan)


def _plan(a: argparse.Namespace) -> dict:
    snap = load_snapshot(a.snapshot)
    limits = effective_limits(snap, a.max_broker_partitions, a.max_partitions)
    return shrink_plan(snap, a.topic, a.partitions, limits, a.delay_ms, a.new_topic, a.seed)
