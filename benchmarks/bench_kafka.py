"""Apache Kafka figures (`railyard kafka up`'s brokers, 4.1.1 from Maven Central): how long
three racked KRaft brokers take to answer; a throttled reassignment of at least 1 GB across
the three brokers run by Railyard's executor in its default batches, its predicted ETA
(KIP-73 maths at proposal, services.plan_preview.throttle_figures) against the time it
actually took (target: within 15%); and the executor's own time per tick on Apache Kafka
(gateway calls included: on a real cluster they are most of it). Then the same 1 GB moves
on along the ring under an adaptive throttle (issue 28): the executor reads each broker's
traffic from a Prometheus scraping the brokers' JMX exporters and sets kafka-kit's
headroom rate between the floor and the ceiling; every rate set is read back with
kafka-python (it must stay within the band) and none may be left once it ends. Last, it
moves once more with Kafka's own kafka-reassign-partitions --execute --throttle, every
move at once, as `railyard throttle plan`'s whole-plan ETA assumes (target: within 15%).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

from backend.engines.batches import PER_BROKER
from backend.executor.freeze import executable_content
from backend.executor.loop import Executor
from backend.gateways.config import parse_kafka
from backend.gateways.kafka import KafkaGateway
from backend.localkafka.cluster import LocalKafka
from backend.localkafka.workload import fill
from backend.model.reassignment import reassignment_from_dict
from backend.services import plan_preview
from backend.store.executions import ExecutionRecords
from benchmarks.common import Figure
from tests.executor_rig import ListJournal, sqlite_store
from tests.kafka_tools import kafka_reassign

TOPIC = "bench-move"
PARTITIONS = 12
TOTAL_BYTES = 1_080_000_000  # one replica's worth: 90 MB per partition
THROTTLE = 9_000_000  # bytes/s per broker: each broker receives ~360 MB, about 40 s
START_TARGET_S = 30.0
ETA_TARGET = 0.15
TICK_TARGET_MS = 250.0
FLOOR = 3_000_000  # bytes/s: the adaptive run's floor, under the ceiling THROTTLE
# each broker's network as the adaptive run counts it (kafka-kit's capacity): small enough
# that the move's own traffic eats into the headroom, so the rates move below the ceiling
ADAPTIVE_CAPACITY = 8_000_000.0


def _ring(partition: int, shift: int) -> list[int]:
    """Replicas of a partition at replication factor 2 on brokers 1-3, leader first."""
    first = (partition + shift) % 3 + 1
    return [first, first % 3 + 1]


def run() -> list[Figure]:
    load = f"load {os.getloadavg()[0]:.1f}"
    with tempfile.TemporaryDirectory() as tmp:
        cluster = LocalKafka(Path(tmp) / "kafka", brokers=3, racks=3)
        t0 = time.perf_counter()
        cluster.start()
        started = time.perf_counter() - t0
        try:
            return [Figure("3 KRaft brokers answering (format, start, exporters)", started,
                           "s", START_TARGET_S, note=load), *_move(cluster, Path(tmp), load)]
        finally:
            cluster.stop()


def _move(cluster: LocalKafka, tmp: Path, load: str) -> list[Figure]:
    """Every partition's replicas shift one broker along the ring: each broker receives a
    third of the data and sends a third, at the throttle."""
    gw = KafkaGateway(parse_kafka({"bootstrap_servers": cluster.bootstrap_servers,
                                   "timeout_seconds": 30}, lambda k: k), "bench")
    try:
        gw.create_topics([{"name": TOPIC,
                           "assignment": [_ring(p, 0) for p in range(PARTITIONS)]}])
        t0 = time.perf_counter()
        written = fill(cluster.bootstrap_servers, TOPIC, PARTITIONS, TOTAL_BYTES)
        fill_s = time.perf_counter() - t0
        snap = gw.assignment()
        plan = {"version": 1, "partitions": [
            {"topic": TOPIC, "partition": p, "replicas": _ring(p, 1)}
            for p in range(PARTITIONS)]}
        parsed = reassignment_from_dict(plan, snap)
        # the figures the plan page shows: every move at once, and batch after batch in
        # whole executor ticks (what the executor below runs)
        figures = plan_preview.throttle_figures(snap, parsed, THROTTLE)
        predicted, batched = figures["eta_seconds"], figures["batched_eta_seconds"]
        records = ExecutionRecords(sqlite_store(tmp / "bench.db"))
        content = executable_content(snap, plan, THROTTLE, per_broker=PER_BROKER,
                                     cluster=PARTITIONS)
        batches = len(content["execution"]["batches"])
        records.create(1, "bench", content, "bench", [len(b) for b in
                                                      content["execution"]["batches"]],
                       "bench", time.time())
        executor = Executor(records, gw, ListJournal(records.store))
        ticks, t0 = [], time.perf_counter()
        while True:
            s = time.perf_counter()
            ex = executor.tick(1, time.time())
            ticks.append(time.perf_counter() - s)
            if ex.state in ("completed", "failed", "cancelled"):
                break
            time.sleep(1.0)
        actual = time.perf_counter() - t0
        adaptive = _adaptive_move(cluster, gw, tmp, snap_after=gw.assignment())
        by_tool = _tool_move(cluster, gw, tmp, load)
        gw.delete_topics([TOPIC])
    finally:
        gw.close()
    moved = written  # each partition gets one new replica: one replica's worth in all
    what = (f"throttled move of {moved / 1e9:.2f} GB in {batches} batches at "
            f"{THROTTLE / 1e6:g} MB/s per broker ({ex.state}, {actual:.1f} s)")
    return [
        Figure(f"{what}: |actual - predicted| / predicted, the ETA of the executor's batches "
               "(the plan page's)", abs(actual - batched) / batched, "",
               ETA_TARGET, note=f"predicted {batched:.1f} s, "
                                f"{(actual - batched) / batches:+.1f} s per batch (every "
                                f"move at once: {predicted:.1f} s); filled in {fill_s:.0f} s; "
                                f"{load}"),
        Figure("executor tick on Apache Kafka (median, gateway calls included)",
               sorted(ticks)[len(ticks) // 2] * 1000, "ms", TICK_TARGET_MS,
               note=f"{len(ticks)} ticks, slowest {max(ticks) * 1000:.0f} ms"),
        *adaptive, by_tool,
    ]


def _tool_move(cluster: LocalKafka, gw: KafkaGateway, tmp: Path, load: str) -> Figure:
    """The 1 GB moves one broker further along the ring with kafka-reassign-partitions
    --execute --throttle, which starts every move at once: the case the whole-plan ETA
    (services.plan_preview.throttle_figures' eta_seconds, `railyard throttle plan`) is
    for. Timed from the tool's exit (its moves are in flight then) until Kafka lists none;
    --verify then removes the tool's throttles, as an operator runs it."""
    snap = gw.assignment()
    plan = {"version": 1, "partitions": [
        {"topic": TOPIC, "partition": p, "replicas": _ring(p, 3)} for p in range(PARTITIONS)]}
    predicted = plan_preview.throttle_figures(snap, reassignment_from_dict(plan, snap),
                                              THROTTLE)["eta_seconds"]
    plan_file = tmp / "tool-plan.json"
    plan_file.write_text(json.dumps(plan))
    bootstrap = ",".join(cluster.bootstrap_servers)
    kafka_reassign(bootstrap, ["--reassignment-json-file", str(plan_file), "--execute",
                               "--throttle", str(THROTTLE)])
    t0 = time.perf_counter()
    while gw.list_reassignments():
        time.sleep(0.2)
    actual = time.perf_counter() - t0
    kafka_reassign(bootstrap, ["--reassignment-json-file", str(plan_file), "--verify"])
    return Figure(f"kafka-reassign-partitions --throttle {THROTTLE / 1e6:g} MB/s, every move "
                  f"at once ({actual:.1f} s): |actual - predicted| / predicted, the "
                  "whole-plan ETA", abs(actual - predicted) / predicted, "", ETA_TARGET,
                  note=f"predicted {predicted:.1f} s; the brokers copied at "
                       f"{predicted / actual:.2f} of the throttle on average (a follower "
                       f"sustains about 10/11 of it, docs/throttle.md); {load}")


def _adaptive_move(cluster: LocalKafka, gw: KafkaGateway, tmp: Path,
                   snap_after) -> list[Figure]:
    """The 1 GB moves one broker further along the ring, adaptive between FLOOR and
    THROTTLE; figures: the rates read back against the band, and what is left after."""
    from kafka import KafkaAdminClient

    from backend.executor.adaptive import ControlSettings, ThrottleControl
    from backend.metrics.server import PrometheusProcess, scrape_config
    from backend.services import throttle_traffic
    from backend.services.cluster import ClusterSource
    from tests.kafka_moves import raw_rates

    prom = PrometheusProcess(tmp / "prom")
    prom.write_config(scrape_config({b.id: b.exporter_url.split("/")[2]
                                     for b in cluster.brokers}, "bench", 1.0),
                      "strimzi", rules_interval=1.0)
    prom.start()
    raw = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers,
                           client_id="bench-adaptive-raw")
    try:
        plan = {"version": 1, "partitions": [
            {"topic": TOPIC, "partition": p, "replicas": _ring(p, 2)}
            for p in range(PARTITIONS)]}
        content = executable_content(snap_after, plan, THROTTLE, per_broker=PER_BROKER,
                                     cluster=PARTITIONS,
                                     throttle_mode={"mode": "adaptive", "floor": FLOOR})
        records = ExecutionRecords(sqlite_store(tmp / "adaptive.db"))
        records.create(2, "bench", content, "bench", [len(b) for b in
                                                      content["execution"]["batches"]],
                       "bench", time.time())
        source = ClusterSource("bench", None, snap_after.limits, prometheus_url=prom.url,
                               metrics_ttl=0, prometheus_timeout=10)
        journal = ListJournal(records.store)
        control = ThrottleControl(records, journal, throttle_traffic.PrometheusTraffic(source),
                                  ControlSettings(interval_seconds=5, hold_seconds=60,
                                                  network_capacity=ADAPTIVE_CAPACITY))
        executor = Executor(records, gw, journal, control=control)
        seen: list[int] = []
        t0 = time.perf_counter()
        while True:
            ex = executor.tick(2, time.time())
            if ex.state in ("completed", "failed", "cancelled"):
                break
            seen += [int(v) for cfg in raw_rates(raw, (1, 2, 3)).values()
                     for v in cfg.values()]
            time.sleep(1.0)
        took = time.perf_counter() - t0
        deadline = time.monotonic() + 30
        while raw_rates(raw, (1, 2, 3)) and time.monotonic() < deadline:
            time.sleep(1.0)
        left = raw_rates(raw, (1, 2, 3))
    finally:
        raw.close()
        prom.stop()
    changes = sum(1 for _, a, _, _ in journal.entries if a == "throttle_adjusted")
    outside = [v for v in seen if not FLOOR <= v <= THROTTLE]
    what = (f"adaptive move of the same 1 GB ({ex.state}, {took:.1f} s; the fixed run "
            f"above at the ceiling)")
    return [
        Figure(f"{what}: rates read back with kafka-python outside [floor, ceiling]",
               len(outside), "", 0,
               note=f"{len(seen)} rates read, {min(seen, default=0) / 1e6:.1f}.."
                    f"{max(seen, default=0) / 1e6:.1f} MB/s, {changes} changes"),
        Figure(f"{what}: brokers with a rate left once it ended", len(left), "", 0,
               note=f"floor {FLOOR / 1e6:g} MB/s, ceiling {THROTTLE / 1e6:g} MB/s, network "
                    f"capacity {ADAPTIVE_CAPACITY / 1e6:g} MB/s per broker"),
    ]
