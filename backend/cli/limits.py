"""`railyard limits create-topics|add-partitions|check-reassignment` (KIP-578)."""

from __future__ import annotations

import argparse

from backend.cli import (
    counts_spec,
    non_negative_int,
    partition_limit,
    positive_int,
    verb_parser,
)
from backend.model.io import load_snapshot
from backend.model.reassignment import load_reassignment
from backend.services import limits


def register(sub: argparse._SubParsersAction) -> None:
    p = verb_parser(sub, "limits")
    actions = p.add_subparsers(dest="action", required=True)

    c = actions.add_parser("create-topics", help="place new topics under the limits")
    c.add_argument("--topic", action="append", required=True, metavar="NAME:PARTITIONS:RF",
                   type=counts_spec("NAME:PARTITIONS:RF", "orders:12:3"),
                   help="repeatable; topics are created in order, each all-or-nothing")
    _common(c, placement=True)
    c.set_defaults(func=_create)

    a = actions.add_parser("add-partitions", help="grow a topic as kafka-topics --alter does")
    a.add_argument("--topic", required=True)
    a.add_argument("--total", type=positive_int, required=True, help="partition count after")
    _common(a, placement=True)
    a.set_defaults(func=_add)

    r = actions.add_parser("check-reassignment", help="limits a reassignment plan would break")
    r.add_argument("--reassignment", required=True, metavar="PLAN.json")
    _common(r, placement=False)
    r.set_defaults(func=_check)


def _common(p: argparse.ArgumentParser, placement: bool) -> None:
    p.add_argument("--snapshot", required=True, metavar="FILE")
    p.add_argument("--max-broker-partitions", type=partition_limit,
                   help="overrides the snapshot's limit")
    p.add_argument("--max-partitions", type=partition_limit,
                   help="cluster-wide replica limit; overrides the snapshot's")
    if placement:
        p.add_argument("--start-index", type=non_negative_int,
                       help="Kafka's start index (also its initial replica shift)")
        p.add_argument("--seed", type=non_negative_int, default=0,
                       help="seed for the random start when --start-index is not given")


def _loaded(a: argparse.Namespace):
    snap = load_snapshot(a.snapshot)
    return snap, limits.effective_limits(snap, a.max_broker_partitions, a.max_partitions)


def _create(a: argparse.Namespace) -> dict:
    requests = [limits.parse_topic_spec(t) for t in a.topic]
    snap, lim = _loaded(a)
    return limits.create_topics(snap, requests, lim, a.start_index, a.seed, compact=True)


def _add(a: argparse.Namespace) -> dict:
    snap, lim = _loaded(a)
    return limits.add_partitions(snap, a.topic, a.total, lim, a.start_index, a.seed,
                                 compact=True)


def _check(a: argparse.Namespace) -> dict:
    snap, lim = _loaded(a)
    return limits.check_reassignment(snap, load_reassignment(a.reassignment, snap), lim)
