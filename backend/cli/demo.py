"""`railyard demo`: the full stack (twin, exporters, Prometheus, Spark, dashboard) on
127.0.0.1 until Ctrl-C (`--kafka`: Apache Kafka instead of the twin); `railyard demo
--report`: the demo cluster's guard rails and two what-ifs, as a text report."""

from __future__ import annotations

import argparse
from pathlib import Path

from backend.cli import port_number, port_or_zero, positive_float, verb_parser
from backend.engines.limits import PlacementResult
from backend.model.snapshot import NEAR_LIMIT_RATIO
from backend.services import snapshots
from backend.services.limits import demo_whatifs
from backend.twin.examples import demo_snapshot

BAR = 40


def register(sub: argparse._SubParsersAction) -> None:
    p = verb_parser(sub, "demo")
    p.add_argument("--report", action="store_true",
                   help="print a guard-rail report on the demo cluster and exit")
    p.add_argument("--port", type=port_number, default=8050, help="dashboard port")
    p.add_argument("--prometheus-port", type=port_or_zero, default=9090,
                   help="live Prometheus port (0: any free port)")
    p.add_argument("--speed", type=positive_float, default=1.0,
                   help="simulated seconds per wall second")
    p.add_argument("--scrape-interval", type=positive_float, default=5.0, help="seconds")
    p.add_argument("--home", default="var/demo", help="where the demo keeps its files")
    p.add_argument("--kafka", action="store_true",
                   help="run the live cluster on Apache Kafka (3 racked KRaft brokers from "
                        "`make install`, real data, a steady producer) instead of the twin")
    p.add_argument("--no-warm-spark", action="store_true",
                   help="do not start the Spark session at start-up")
    p.set_defaults(func=_demo)


def _demo(a: argparse.Namespace) -> None:
    if a.report:
        return _report(a)
    from dashboard.demo_stack import DemoSettings, run  # Dash is imported only when serving

    run(DemoSettings(Path(a.home), a.port, a.prometheus_port, a.speed, a.scrape_interval,
                     not a.no_warm_spark, kafka=a.kafka))


def _report(_: argparse.Namespace) -> None:
    snap = demo_snapshot()
    desc = snapshots.describe(snap)
    limit = snap.limits.max_broker_partitions
    print(f"Railyard demo: cluster '{snap.cluster}', {snap.n_brokers} brokers in "
          f"{len(snap.rack_names)} racks, {snap.n_topics} topics, {snap.n_partitions:,} "
          f"partitions, {snap.n_replicas:,} replicas")
    print(f"Limits: max.broker.partitions={limit:,}, max.partitions="
          f"{snap.limits.max_partitions:,} (KIP-578; internal topics not counted)\n")
    print(f"{'broker':>6} {'rack':>4} {'replicas':>9} {'leaders':>8} {'headroom':>9}  "
          f"partitions vs limit (| = limit)")
    for b in desc["brokers"]:
        used = min(round(b["replicas"] / limit * BAR), BAR)
        bar = "#" * used + "." * (BAR - used) + "|"
        flag = "  << near the limit" if b["replicas"] >= NEAR_LIMIT_RATIO * limit else ""
        print(f"{b['id']:>6} {b['rack']:>4} {b['replicas']:>9,} {b['leaders']:>8,} "
              f"{b['capacity']:>9,}  {bar}{flag}")
    print(f"\ncluster: {desc['cluster_partitions']:,} of {snap.limits.max_partitions:,} "
          f"replicas ({desc['cluster_capacity']:,} left)\n")
    for label, res in zip(("What-if 1", "What-if 2"), demo_whatifs(snap), strict=True):
        _whatif(label, res)
    print("Try: railyard limits create-topics --help, railyard snapshot generate --help")


def _whatif(label: str, res: PlacementResult) -> None:
    t = res.topics[0]
    rf = "?" if t.assignment is None else t.assignment.shape[1]
    request = f"create topic '{t.name}'"
    if t.ok:
        print(f"{label}: {request} with {len(t.assignment)} partitions x RF {rf}: ACCEPTED "
              f"({'Kafka placement' if t.kafka_compatible else 'limit-aware placement'}, "
              f"racks {'distinct' if t.rack_aware else 'shared'})")
    else:
        print(f"{label}: {request}: REJECTED\n  {t.error}")
    print()
