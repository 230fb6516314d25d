"""Apache Kafka figures (`railyard kafka up`'s brokers, 4.1.1 from Maven Central): how long
three racked KRaft brokers take to answer; a throttled reassignment of at least 1 GB across
the three brokers run by Railyard's executor in its default batches, its predicted ETA
(KIP-73 maths at proposal, services.plan_preview.throttle_figures) against the time it
actually took (target: within 15%); and the executor's own time per tick on Apache Kafka
(gateway calls included: on a real cluster they are most of it).
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from backend.engines.batches import CLUSTER, PER_BROKER, execution_batches
from backend.engines.throttle import batched_eta_seconds
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

TOPIC = "bench-move"
PARTITIONS = 12
TOTAL_BYTES = 1_080_000_000  # one replica's worth: 90 MB per partition
THROTTLE = 9_000_000  # bytes/s per broker: each broker receives ~360 MB, about 40 s
START_TARGET_S = 30.0
ETA_TARGET = 0.15
TICK_TARGET_MS = 250.0


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
        predicted = plan_preview.throttle_figures(snap, parsed, THROTTLE)["eta_seconds"]
        batched = batched_eta_seconds(
            snap, parsed, execution_batches(snap, parsed, PER_BROKER, CLUSTER), THROTTLE)
        records = ExecutionRecords(sqlite_store(tmp / "bench.db"))
        content = executable_content(snap, plan, THROTTLE, per_broker=PER_BROKER,
                                     cluster=PARTITIONS)
        batches = len(content["execution"]["batches"])
        records.create(1, "bench", content, "bench", [len(b) for b in
                                                      content["execution"]["batches"]],
                       "bench", time.time())
        executor = Executor(records, gw, ListJournal())
        ticks, t0 = [], time.perf_counter()
        while True:
            s = time.perf_counter()
            ex = executor.tick(1, time.time())
            ticks.append(time.perf_counter() - s)
            if ex.state in ("completed", "failed", "cancelled"):
                break
            time.sleep(1.0)
        actual = time.perf_counter() - t0
        gw.delete_topics([TOPIC])
    finally:
        gw.close()
    moved = written  # each partition gets one new replica: one replica's worth in all
    what = (f"throttled move of {moved / 1e9:.2f} GB in {batches} batches at "
            f"{THROTTLE / 1e6:g} MB/s per broker ({ex.state}, {actual:.1f} s)")
    return [
        Figure(f"{what}: |actual - predicted| / predicted, the preview's whole-plan ETA",
               abs(actual - predicted) / predicted, "", ETA_TARGET,
               note=f"predicted {predicted:.1f} s; filled in {fill_s:.0f} s; {load}"),
        Figure(f"{what}: the same for the ETA of the executor's batches "
               "(engines.throttle.batched_eta_seconds)", abs(actual - batched) / batched, "",
               ETA_TARGET, note=f"predicted {batched:.1f} s, "
                                f"{(actual - batched) / batches:+.1f} s per batch"),
        Figure("executor tick on Apache Kafka (median, gateway calls included)",
               sorted(ticks)[len(ticks) // 2] * 1000, "ms", TICK_TARGET_MS,
               note=f"{len(ticks)} ticks, slowest {max(ticks) * 1000:.0f} ms"),
    ]
