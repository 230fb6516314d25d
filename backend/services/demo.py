"""The demo cluster: 9 brokers in 3 racks, ~30,000 partitions, two brokers near their
max.broker.partitions. Shared by `make demo`, the twin's demo scenario and the docs."""

from __future__ import annotations

import numpy as np

from backend.engines.limits import PlacementResult, TopicRequest, create_topics
from backend.model.generate import generate_snapshot
from backend.model.snapshot import Limits, Snapshot

DEMO_SEED = 578
NEAR = 0.9  # utilisation from which a broker counts as near its limit


def demo_snapshot() -> Snapshot:
    """A reproducible 9-broker cluster where two brokers sit just under the limit."""
    snap = generate_snapshot(9, 3, 300, 30_000, 3, seed=DEMO_SEED, skew=0.35, cluster="demo")
    counts = np.sort(snap.broker_replica_counts())
    # the two fullest brokers at 90% or more of the limit, none over it
    limit = max(int(counts[-2] / NEAR // 100 * 100), int(counts[-1]) + 50)
    return snap.with_limits(Limits(max_broker_partitions=limit, max_partitions=200_000))


def demo_whatifs(snap: Snapshot) -> tuple[PlacementResult, PlacementResult]:
    """One topic that fits and one that the limits reject."""
    fits = create_topics(snap, [TopicRequest("payments-v2", 24, 3)], snap.limits, seed=1)
    room = int((snap.limits.max_broker_partitions - snap.broker_replica_counts()).clip(0).sum())
    too_big = create_topics(snap, [TopicRequest("clickstream-raw", room // 3 + 50, 3)],
                            snap.limits, seed=1)
    return fits, too_big
