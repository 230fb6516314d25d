"""`railyard quota replay`: KIP-599 controller mutation quotas over a request workload."""

from __future__ import annotations

import argparse

from backend.cli import positive, positive_kafka_int, verb_parser
from backend.services import quota


def register(sub: argparse._SubParsersAction) -> None:
    p = verb_parser(sub, "quota")
    actions = p.add_subparsers(dest="action", required=True)
    r = actions.add_parser("replay", help="replay a JSON Lines workload through Kafka's "
                           "token buckets")
    r.add_argument("--requests", required=True, help="FILE.jsonl, one request a line")
    r.add_argument("--rate", type=positive("partitions/s"),
                   help="controller_mutation_rate for user=<default>, client-id=<default> "
                        "(partitions/s); required unless --quotas is given")
    r.add_argument("--samples", type=positive_kafka_int, default=quota.DEFAULT_SAMPLES,
                   help="controller.quota.window.num (default 11)")
    r.add_argument("--window-seconds", type=positive_kafka_int,
                   default=quota.DEFAULT_WINDOW_SECONDS,
                   help="controller.quota.window.size.seconds (default 1)")
    r.add_argument("--mode", choices=("strict", "permissive"), default="strict",
                   help="strict: current clients (rejected with THROTTLING_QUOTA_EXCEEDED); "
                        "permissive: old clients (admitted, then throttled)")
    r.add_argument("--quotas", help="QUOTAS.json: per-entity rates with Kafka's precedence")
    r.set_defaults(func=lambda a: quota.replay(a.requests, a.rate, a.samples,
                                               a.window_seconds, a.mode, a.quotas))
