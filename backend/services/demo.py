"""The demo: the twin's demo cluster (9 brokers in 3 racks, 30,000 partitions, two brokers
near max.broker.partitions) and two what-ifs on it, one accepted and one rejected."""

from __future__ import annotations

from backend.engines.limits import PlacementResult, TopicRequest, create_topics
from backend.model.snapshot import Snapshot
from backend.twin.demo import demo_snapshot

__all__ = ["NEAR", "demo_snapshot", "demo_whatifs"]

NEAR = 0.9  # utilisation from which a broker counts as near its limit


def demo_whatifs(snap: Snapshot) -> tuple[PlacementResult, PlacementResult]:
    """One topic that fits and one that the limits reject."""
    fits = create_topics(snap, [TopicRequest("payments-v2", 24, 3)], snap.limits, seed=1)
    room = int((snap.limits.max_broker_partitions - snap.broker_replica_counts()).clip(0).sum())
    too_big = create_topics(snap, [TopicRequest("clickstream-raw", room // 3 + 50, 3)],
                            snap.limits, seed=1)
    return fits, too_big
