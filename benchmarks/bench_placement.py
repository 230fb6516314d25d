"""Railyard's placement against Kafka's own, in the same run (issue 16 targets).

Kafka's AdminUtils.assignReplicasToBrokers runs in a warm JVM (benchmarks/kafka_java.py);
Railyard's `limits create-topics` engine runs here; the two alternate, round by round, and
each side's fastest round counts. A ratio measured in one run does not drift with the
machine the way a fixed replicas/s figure does. Every case without a binding limit also
checks that both placed exactly the same replicas (a checksum over every replica).
"""

from __future__ import annotations

import os
import time

import numpy as np

from backend.engines.limits import TopicRequest, create_topics
from backend.model.snapshot import Limits, Snapshot
from benchmarks.common import Figure
from benchmarks.kafka_java import KafkaJava, checksum

ROUNDS = 5  # per 1M-partition case; a 10k-partition round takes a millisecond, so
SMALL_ROUNDS = 30  # more of them make the fastest round (of either side) steadier
START = 7


def cluster(brokers: int, racks: int, held: np.ndarray | None = None) -> Snapshot:
    """Brokers 1..n, broker b in rack r((b-1) % racks) as the Java side builds them, each
    holding ``held[b-1]`` single-replica partitions of one existing topic."""
    held = np.zeros(brokers, np.int64) if held is None else held
    owners = np.repeat(np.arange(brokers, dtype=np.int32), held)
    return Snapshot.build(
        "bench", np.arange(1, brokers + 1),
        [f"r{i % racks}" for i in range(brokers)] if racks else [None] * brokers,
        ["fill"] if len(owners) else [], np.zeros(len(owners), np.int32),
        np.arange(len(owners) + 1, dtype=np.int64), owners)


def compare(java: KafkaJava, name: str, snap: Snapshot, racks: int, partitions: int,
            limits: Limits, target: float, exact: bool) -> Figure:
    request = [TopicRequest("new", partitions, 3)]
    ours, theirs = float("inf"), float("inf")
    for _ in range(ROUNDS if partitions >= 1_000_000 else SMALL_ROUNDS):
        seconds, java_sum = java.place(snap.n_brokers, racks, partitions, 3, START)
        theirs = min(theirs, seconds)
        t0 = time.perf_counter()
        res = create_topics(snap, request, limits, start_index=START)
        ours = min(ours, time.perf_counter() - t0)
    assert res.ok, res.topics[0].error
    placed = snap.broker_ids[res.topics[0].assignment]
    if exact:
        assert res.topics[0].kafka_compatible and checksum(placed) == java_sum, name
    load = os.getloadavg()[0]
    return Figure(f"{name}: Railyard / Kafka speed", theirs / ours, "x", target,
                  higher_is_better=True,
                  note=f"Kafka {theirs * 1000:.2f} ms, Railyard {ours * 1000:.2f} ms, "
                       f"{'same replicas' if exact else 'limit binds'}, load {load:.1f}")


def binding(brokers: int, racks: int) -> tuple[Snapshot, Limits]:
    """An existing spread so that a limit binds (a fifth of the brokers at or over it) and
    the topic still fits by capacity."""
    held = np.random.default_rng(11).integers(0, 1000, brokers)
    return cluster(brokers, racks, held), Limits(int(np.percentile(held, 80)))


def run() -> list[Figure]:
    unlimited = Limits(max_broker_partitions=4000)  # set, but not binding for a new cluster
    figures = []
    with KafkaJava() as java:
        java.place(100, 3, 10_000, 3, START)  # JIT warm-up on both code paths
        java.place(100, 0, 10_000, 3, START)
        for racks, label, target in ((3, "3 racks", 1.5), (0, "no racks", 1.0)):
            figures.append(compare(java, f"1M partitions x RF 3 on 1,000 brokers, {label}",
                                   cluster(1000, racks), racks, 1_000_000, unlimited, target,
                                   exact=True))
        for racks, label in ((3, "3 racks"), (0, "no racks")):
            figures.append(compare(java, f"10k-partition topic on 100 brokers, {label}",
                                   cluster(100, racks), racks, 10_000, unlimited, 1.0,
                                   exact=True))
            snap, limits = binding(100, racks)
            figures.append(compare(java, f"10k-partition topic on 100 brokers, {label}, "
                                   f"binding limit {limits.max_broker_partitions}", snap,
                                   racks, 10_000, limits, 1.0, exact=False))
    return figures
