"""`railyard throttle plan` (KIP-73 replication throttles for a reassignment)."""

from __future__ import annotations

import argparse

from backend.cli import positive, positive_kafka_int, verb_parser, whole
from backend.services import throttle


def register(sub: argparse._SubParsersAction) -> None:
    p = verb_parser(sub, "throttle")
    actions = p.add_subparsers(dest="action", required=True)
    plan = actions.add_parser("plan", help="throttle configs, per-broker ETAs and safety checks")
    plan.add_argument("--snapshot", required=True, metavar="FILE")
    plan.add_argument("--reassignment", required=True, metavar="PLAN.json",
                      help='{"version":1,"partitions":[...]} as kafka-reassign-partitions reads it')
    plan.add_argument("--throttle", type=whole(unit="bytes/s"), required=True,
                      metavar="BYTES_PER_SEC",
                      help="the --throttle given to kafka-reassign-partitions --execute")
    plan.add_argument("--network-capacity", type=positive("bytes/s"), metavar="BYTES_PER_SEC",
                      help="each broker's network throughput N (default 1 GbE)")
    plan.add_argument("--fetch-response-max-bytes", type=positive_kafka_int,
                      default=throttle.DEFAULT_FETCH_RESPONSE_MAX_BYTES, metavar="N",
                      help="replica.fetch.response.max.bytes (default 10 MiB)")
    plan.add_argument("--window-num", type=positive_kafka_int, default=throttle.DEFAULT_WINDOW_NUM,
                      help="replication.quota.window.num (default 11)")
    plan.add_argument("--window-seconds", type=positive_kafka_int,
                      default=throttle.DEFAULT_WINDOW_SECONDS,
                      help="replication.quota.window.size.seconds (default 1)")
    plan.set_defaults(func=_plan)


def _plan(a: argparse.Namespace) -> dict:
    return throttle.plan_files(a.snapshot, a.reassignment, a.throttle, a.network_capacity,
                               a.fetch_response_max_bytes, a.window_num, a.window_seconds)
