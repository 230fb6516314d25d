"""`railyard snapshot generate|describe|import-assignment|capture`."""

from __future__ import annotations

import argparse

from backend.cli import non_negative_int, number, partition_limit, positive_int, verb_parser
from backend.errors import BadInput
from backend.model.io import load_snapshot, read_json
from backend.model.snapshot import Limits
from backend.services import snapshots
from backend.twin.generate import generate_snapshot


def register(sub: argparse._SubParsersAction) -> None:
    p = verb_parser(sub, "snapshot")
    actions = p.add_subparsers(dest="action", required=True)

    g = actions.add_parser("generate", help="a reproducible synthetic cluster")
    g.add_argument("--brokers", type=positive_int, required=True)
    g.add_argument("--racks", type=non_negative_int, default=0, help="0 = no rack information")
    g.add_argument("--topics", type=positive_int, required=True)
    g.add_argument("--partitions", type=positive_int, required=True,
                   help="partitions in all topics together")
    g.add_argument("--rf", type=positive_int, default=3)
    g.add_argument("--seed", type=non_negative_int, default=0)
    g.add_argument("--skew", type=number, default=0.3,
                   help="0..1: share of topics created before the newest brokers joined")
    g.add_argument("--cluster", default="synthetic")
    g.add_argument("--max-broker-partitions", type=partition_limit)
    g.add_argument("--max-partitions", type=partition_limit)
    g.add_argument("--out", required=True, help=".json or .parquet")
    g.set_defaults(func=_generate)

    d = actions.add_parser("describe", help="per-broker counts, racks, totals, headroom")
    d.add_argument("file")
    d.set_defaults(func=lambda a: snapshots.describe(load_snapshot(a.file)))

    i = actions.add_parser("import-assignment",
                           help="take Kafka's assignment JSON as a snapshot's assignment")
    i.add_argument("--assignment", required=True,
                   help='{"version":1,"partitions":[...]} as kafka-reassign-partitions prints it')
    i.add_argument("--snapshot", help="base snapshot (brokers, racks, sizes); "
                   "without it the brokers are the ids the assignment names")
    i.add_argument("--cluster", default="imported")
    i.add_argument("--out", required=True)
    i.set_defaults(func=_import)

    c = actions.add_parser("capture", help="a live cluster's assignment, through its gateway")
    c.add_argument("--config", required=True, help="the dashboard's YAML config")
    c.add_argument("--cluster", required=True, help="a cluster name from the config")
    c.add_argument("--out", required=True, help=".json or .parquet")
    c.set_defaults(func=_capture)


def _cluster_name(a: argparse.Namespace) -> None:
    """The name the snapshot file carries: its loaders refuse an empty one, so refuse it
    before writing a file no verb could read."""
    if not a.cluster:
        raise BadInput("--cluster: the cluster name must not be empty")


def _generate(a: argparse.Namespace) -> dict:
    _cluster_name(a)
    snapshots.check_out(a.out)
    snap = generate_snapshot(a.brokers, a.racks, a.topics, a.partitions, a.rf, seed=a.seed,
                             skew=a.skew, cluster=a.cluster,
                             limits=Limits(a.max_broker_partitions, a.max_partitions))
    return snapshots.write(snap, a.out)


def _import(a: argparse.Namespace) -> dict:
    _cluster_name(a)
    snapshots.check_out(a.out)
    if a.snapshot:
        base = load_snapshot(a.snapshot)
        snap = snapshots.import_assignment(base, read_json(a.assignment, "assignment file"),
                                           a.assignment)
    else:
        snap = snapshots.assignment_only_snapshot(a.assignment, a.cluster)
    return snapshots.write(snap, a.out)


def _capture(a: argparse.Namespace) -> dict:
    from backend.gateways.factory import open_gateway
    from dashboard.config import load_config
    config = load_config(a.config)
    cluster = next((c for c in config.clusters if c.name == a.cluster), None)
    if cluster is None:
        raise BadInput(f"{a.config}: no cluster named '{a.cluster}' (clusters: "
                       f"{', '.join(c.name for c in config.clusters)})")
    gateway = open_gateway(cluster)
    if gateway is None:
        raise BadInput(f"{a.config}: cluster '{a.cluster}' has no gateway to read (a twin "
                       "without a url runs inside `railyard demo`)")
    try:
        return snapshots.capture(gateway, cluster.limits, a.out)
    finally:
        getattr(gateway, "close", lambda: None)()
