"""The twin's KIP-73 leader side reads what Apache Kafka's does: every follower fetch's
response overhead, throttled partitions or not (KafkaApis.handleFetchRequest records
sizeOfThrottledPartitions, FetchResponse.sizeOf over none of them is still the response's
fixed fields), plus the throttled bytes; the follower side only throttled bytes
(ReplicaFetcherThread). The twin used to read 0 on an idle cluster and made the leader
bean only on throttled bytes."""

from __future__ import annotations

import pytest

from backend.metrics.dialects import STRIMZI
from backend.model.snapshot import Snapshot
from backend.twin.cluster import TwinCluster
from backend.twin.exporter import broker_families
from backend.twin.generate import generate_snapshot
from backend.twin.replication import EMPTY_FETCH_RESPONSE_BYTES, IDLE_FETCHES_PER_SECOND
from tests.unit.test_twin import QUIET, move_to_13, tiny

# one follower broker's fetcher: a fetch per replica.fetch.wait.max.ms, each recorded
PER_FETCHER = IDLE_FETCHES_PER_SECOND * EMPTY_FETCH_RESPONSE_BYTES


def ring() -> Snapshot:
    """3 brokers, one topic of 3 partitions at RF 3, partition p led by broker p + 1."""
    reps = [[1, 2, 3], [2, 3, 1], [3, 1, 2]]
    return Snapshot.build("ring", [1, 2, 3], [None] * 3, ["t"], [0] * 3, [0, 3, 6, 9],
                          [b - 1 for r in reps for b in r], part_size=[1e6] * 3,
                          part_rate=[1e4] * 3)


def exported(twin: TwinCluster, name: str) -> dict[int, float]:
    """Broker id -> the value of ``name`` that broker exports (no entry: no series)."""
    out = {}
    with twin.lock:
        for pos, bid in enumerate(twin.snap.broker_ids.tolist()):
            for fam in broker_families(twin, pos, STRIMZI):
                if fam.name == name:
                    out[bid] = float(fam.values[0])
    return out


def test_idle_three_broker_cluster_reads_the_fetch_floor_on_the_leader_side_only():
    # FetchResponse.sizeOf at fetch version 12+ with no partition: 4 (size) + ThrottleTimeMs
    # 4 + ErrorCode 2 + SessionId 4 + an empty compact array 1 + no tagged field 1 = 16 B,
    # a fetch every replica.fetch.wait.max.ms (500 ms), two follower brokers: 64 B/s
    assert 2 * PER_FETCHER == 64.0
    twin = TwinCluster(ring(), QUIET)
    # a snapshot is of a running cluster: its followers fetch before the first step
    assert exported(twin, STRIMZI.leader_byte_rate) == {1: 64.0, 2: 64.0, 3: 64.0}
    twin.advance(5)
    assert twin.throttled_rate["leader"].tolist() == [2 * PER_FETCHER] * 3
    assert exported(twin, STRIMZI.leader_byte_rate) == {1: 64.0, 2: 64.0, 3: 64.0}
    assert twin.throttled_rate["follower"].tolist() == [0.0] * 3
    assert exported(twin, STRIMZI.follower_byte_rate) == {}  # no throttled bytes: no bean


def test_throttled_move_reads_the_floor_plus_the_throttled_bytes():
    size, w, t = 1e6, 1e4, 1.1e5
    twin = TwinCluster(tiny(size, w), QUIET)
    move_to_13(twin, t)  # [1, 2] -> [1, 3]: 1 leads, followers on 2 (in sync) and 3 (new)
    twin.advance(3)
    assert twin.moves
    leader = exported(twin, STRIMZI.leader_byte_rate)
    assert leader == {1: pytest.approx(t + 2 * PER_FETCHER)}  # 2 and 3 lead nothing
    # the new replica gets what the leader's throttle leaves after 2's keep-up writes
    assert exported(twin, STRIMZI.follower_byte_rate) == {3: pytest.approx(t - w)}


def test_only_live_follower_brokers_fetch():
    twin = TwinCluster(ring(), QUIET)
    twin.fail_broker(3)  # 1 takes partition 2; each live leader keeps one live follower
    twin.advance(2)
    assert twin.throttled_rate["leader"].tolist() == [PER_FETCHER, PER_FETCHER, 0.0]


def test_no_follower_no_leader_side_series():
    """Kafka records the leader side on follower fetches only: at RF 1 nothing fetches."""
    twin = TwinCluster(generate_snapshot(3, 0, 2, 6, 1, seed=1), QUIET)
    twin.advance(2)
    assert exported(twin, STRIMZI.leader_byte_rate) == {}
