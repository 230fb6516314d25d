"""Reproducible synthetic clusters that look like real ones.

Topic sizes and byte rates follow a Zipf-like law (a few huge topics, a long tail);
placement is Kafka's own (AdminUtils) with a random start per topic; unevenness per
broker comes the way it does in real fleets: brokers were added over time, and topics
created before a broker joined never landed on it (``skew`` sets how strong that is).
"""

from __future__ import annotations

import numpy as np

from backend.engines.placement import kafka_assign
from backend.errors import BadInput
from backend.model.bounds import MAX_GENERATED_BROKERS, check_count, check_replicas
from backend.model.snapshot import Limits, Snapshot


def generate_snapshot(
    brokers: int,
    racks: int,
    topics: int,
    partitions: int,
    rf: int,
    seed: int = 0,
    skew: float = 0.3,
    cluster: str = "synthetic",
    limits: Limits | None = None,
) -> Snapshot:
    """A cluster of ``brokers`` brokers in ``racks`` racks (0 = no rack information),
    ``topics`` topics holding ``partitions`` partitions in all, replication factor ``rf``.
    """
    if brokers < 1 or topics < 1 or partitions < topics:
        raise BadInput("need brokers >= 1, topics >= 1 and partitions >= topics")
    check_count(brokers, MAX_GENERATED_BROKERS, "--brokers")
    check_replicas(partitions, rf, "snapshot generate")
    if not 1 <= rf <= brokers:
        raise BadInput(f"replication factor {rf} must be between 1 and the broker count {brokers}")
    if racks < 0 or racks > brokers:
        raise BadInput(f"racks must be between 0 and the broker count {brokers}, got {racks}")
    if not 0 <= skew < 1:
        raise BadInput(f"skew must be in [0, 1), got {skew}")
    rng = np.random.default_rng(seed)

    # Zipf-like weights: a few large topics, a long tail of small ones.
    weights = 1.0 / np.arange(1, topics + 1) ** 1.1
    weights = rng.permutation(weights)
    counts = 1 + _apportion(partitions - topics, weights)

    # Brokers joined over time: topic t may use brokers [0, eligible[t]).
    min_eligible = max(rf, racks, 1)
    eligible = np.full(topics, brokers, dtype=np.int64)
    if skew > 0 and brokers > min_eligible:
        older = rng.random(topics) < skew
        eligible[older] = rng.integers(min_eligible, brokers, size=int(older.sum()), endpoint=True)

    rack_of = np.arange(brokers) % racks if racks else None
    blocks = []
    for n_elig in np.unique(eligible):
        group = np.flatnonzero(eligible == n_elig)
        group_racks = rack_of[:n_elig] if rack_of is not None else None
        for t in group:  # one Kafka placement per topic, vectorised inside
            start = int(rng.integers(n_elig))
            blocks.append((t, kafka_assign(int(n_elig), int(counts[t]), rf, start,
                                           shift=int(rng.integers(n_elig)), racks=group_racks)))
    blocks.sort(key=lambda b: b[0])
    assignment = np.concatenate([b for _, b in blocks]).astype(np.int32)

    part_topic = np.repeat(np.arange(topics, dtype=np.int32), counts)
    topic_bytes = 5e10 * weights / weights.max()  # the largest topic holds ~50 GB per replica
    topic_rate = 2e7 * weights / weights.max()  # and takes ~20 MB/s of produce traffic
    noise = rng.lognormal(0.0, 0.3, size=partitions)
    size = (topic_bytes[part_topic] / counts[part_topic] * noise).astype(np.int64)
    rate = topic_rate[part_topic] / counts[part_topic] * noise
    return Snapshot.build(
        cluster,
        np.arange(1, brokers + 1),
        _rack_names(rack_of, racks) if rack_of is not None else [None] * brokers,
        [f"topic-{t:0{len(str(topics))}d}" for t in range(topics)],
        part_topic,
        np.arange(0, partitions * rf + 1, rf, dtype=np.int64),
        assignment.ravel(),
        topic_keyed=rng.random(topics) < 0.3,
        part_size=size,
        part_rate=rate,
        limits=limits,
    )


def _apportion(total: int, weights: np.ndarray) -> np.ndarray:
    """Split ``total`` into integer parts proportional to weights (largest remainder)."""
    share = total * weights / weights.sum()
    base = np.floor(share).astype(np.int64)
    rest = total - int(base.sum())
    if rest:
        base[np.argsort(-(share - base), kind="stable")[:rest]] += 1
    return base


def _rack_names(rack_of: np.ndarray, racks: int) -> list[str]:
    """r1, r2, ... zero-padded so that name order equals number order (Kafka sorts names)."""
    width = len(str(racks))
    return [f"r{r + 1:0{width}d}" for r in rack_of]
