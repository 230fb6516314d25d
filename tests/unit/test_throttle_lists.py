"""Moves and throttled-replica lists exactly as kafka-reassign-partitions --execute sets them.

References: ReassignPartitionsCommand.calculateProposedMoveMap / calculateLeaderThrottles /
calculateFollowerThrottles / calculateReassigningBrokers (tools/.../reassign), and the
throttle examples in Kafka's operations docs ("Limiting Bandwidth Usage during Data
Migration").
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from backend.engines import throttle
from backend.engines.throttle import ThrottleParams, plan_throttle, proposed_moves
from backend.model.io import snapshot_from_dict
from backend.model.reassignment import reassignment_from_dict
from backend.twin.generate import generate_snapshot
from benchmarks.bench_throttle import random_reassignment


def cluster(brokers, topics: dict[str, list[list[int]]], size=0, rate=0.0):
    """A snapshot from {topic: [replicas of partition 0, of partition 1, ...]}."""
    return snapshot_from_dict({
        "cluster": "t", "brokers": [{"id": b} for b in brokers],
        "topics": [{"name": t, "partitions": [
            {"partition": i, "replicas": r, "size_bytes": size, "bytes_in_per_sec": rate}
            for i, r in enumerate(parts)]} for t, parts in topics.items()]})


def plan_for(snap, moves: list[tuple[str, int, list[int]]]):
    return reassignment_from_dict({"version": 1, "partitions": [
        {"topic": t, "partition": p, "replicas": r} for t, p, r in moves]}, snap)


def throttle_json(snap, moves, throttle=1_000_000):
    return plan_throttle(snap, plan_for(snap, moves), ThrottleParams(throttle)).to_dict()


def test_operations_docs_my_topic_swap():
    # The docs' kafka-configs --describe shows leader 1:102,0:101 and follower 1:101,0:102
    # (printed in ZooKeeper's order); today's tool writes the same entries in TreeSet order.
    snap = cluster([101, 102], {"my-topic": [[101], [102]]})
    out = throttle_json(snap, [("my-topic", 0, [102]), ("my-topic", 1, [101])])
    assert out["leader_throttled_replicas"] == {"my-topic": "0:101,1:102"}
    assert out["follower_throttled_replicas"] == {"my-topic": "0:102,1:101"}
    assert out["throttled_brokers"] == [101, 102]


def test_operations_docs_101_102_to_102_103():
    # "a partition with replicas on brokers 101,102, being reassigned to 102,103, a leader
    # throttle ... would be applied to 101,102 and a follower throttle ... to 103 only."
    snap = cluster([101, 102, 103], {"my-topic": [[101, 102]]})
    out = throttle_json(snap, [("my-topic", 0, [102, 103])])
    assert out["leader_throttled_replicas"] == {"my-topic": "0:101,0:102"}
    assert out["follower_throttled_replicas"] == {"my-topic": "0:103"}
    assert out["throttled_brokers"] == [101, 102, 103]


def test_string_order_is_java_treeset_order():
    # TreeSet<String>: "10:1" < "1:2" (':' sorts after digits) and "5:1" < "5:10".
    snap = cluster(range(1, 12), {"t": [[1]] * 11})
    out = throttle_json(snap, [("t", 10, [11]), ("t", 1, [2]), ("t", 2, [10])])
    assert out["leader_throttled_replicas"]["t"] == "10:1,1:1,2:1"
    assert out["follower_throttled_replicas"]["t"] == "10:11,1:2,2:10"
    snap = cluster(range(1, 12), {"t": [[5], [5]]})
    out = throttle_json(snap, [("t", 0, [5, 10, 1]), ("t", 1, [2])])
    assert out["leader_throttled_replicas"]["t"] == "0:5,1:5"
    assert out["follower_throttled_replicas"]["t"] == "0:1,0:10,1:2"


def test_unchanged_partition_is_no_move():
    snap = cluster([1, 2, 3, 4], {"a": [[1, 2], [2, 3]], "b": [[3, 4]]})
    out = throttle_json(snap, [("a", 0, [1, 2]), ("a", 1, [3, 2]), ("b", 0, [3, 1])])
    assert out["moved_partitions"] == 1 and out["unchanged_partitions"] == 2
    assert out["leader_throttled_replicas"] == {"b": "0:3,0:4"}
    assert out["follower_throttled_replicas"] == {"b": "0:1"}
    assert out["throttled_brokers"] == [1, 3, 4]
    assert out["move_ratio"] == 1 / 3
    # --verify clears the throttles on every topic of the plan and every broker.
    assert out["verify_removes"]["topics"] == ["b"]
    assert out["verify_removes"]["brokers"] == [1, 2, 3, 4]


def test_only_unchanged_partitions():
    snap = cluster([1, 2], {"a": [[1, 2]]})
    out = throttle_json(snap, [("a", 0, [2, 1])])
    assert out["moved_partitions"] == 0 and out["throttled_brokers"] == []
    assert out["leader_throttled_replicas"] == {} and out["eta_seconds"] == 0.0
    assert out["suggested_throttle"] is None


def test_replication_factor_decrease_moves_no_data_but_keeps_leader_entries():
    # calculateProposedMoveMap: sources {1,2,3}, destinations {} -> follower config "".
    snap = cluster([1, 2, 3], {"a": [[1, 2, 3]]}, size=100)
    out = throttle_json(snap, [("a", 0, [1, 2])])
    assert out["leader_throttled_replicas"] == {"a": "0:1,0:2,0:3"}
    assert out["follower_throttled_replicas"] == {"a": ""}
    assert out["bytes_to_move"] == 0 and out["throttled_brokers"] == [1, 2, 3]


def test_rates_on_sources_and_destinations():
    snap = cluster([1, 2, 3, 4, 5], {"a": [[1, 2]], "b": [[3]]})
    out = throttle_json(snap, [("a", 0, [2, 4]), ("b", 0, [5])], throttle=7_000_000)
    assert out["throttled_brokers"] == [1, 2, 3, 4, 5]
    assert out["broker_configs"] == {"leader.replication.throttled.rate": 7_000_000,
                                     "follower.replication.throttled.rate": 7_000_000}
    assert out["verify_removes"]["broker_configs"] == [
        "leader.replication.throttled.rate", "follower.replication.throttled.rate",
        "replica.alter.log.dirs.io.max.bytes.per.second"]
    assert out["verify_removes"]["topic_configs"] == [
        "leader.replication.throttled.replicas", "follower.replication.throttled.replicas"]


def kafka_reference(snap, plan):
    """ReassignPartitionsCommand's calculation, written plainly over Python sets."""
    leader, follower, brokers = {}, {}, set()
    off = plan.offsets.tolist()
    for i, row in enumerate(plan.rows.tolist()):
        sources = set(snap.replicas_of(row))
        target = snap.broker_ids[plan.brokers[off[i]:off[i + 1]]].tolist()
        if sources == set(target):
            continue  # Railyard: an unchanged replica set is no move
        dest = set(target) - sources
        topic, p = snap.topic_names[snap.part_topic[row]], int(snap.part_id[row])
        leader.setdefault(topic, set()).update(f"{p}:{b}" for b in sources)
        follower.setdefault(topic, set()).update(f"{p}:{b}" for b in dest)
        brokers |= sources | dest
    as_config = {t: ",".join(sorted(v)) for t, v in leader.items()}
    return as_config, {t: ",".join(sorted(follower[t])) for t in leader}, sorted(brokers)


@settings(max_examples=40, deadline=None)
@given(brokers=st.integers(3, 14), partitions=st.integers(1, 60), rf=st.integers(1, 3),
       moves=st.integers(1, 40), seed=st.integers(0, 10_000))
def test_lists_contain_exactly_the_moved_partitions(brokers, partitions, rf, moves, seed):
    snap = generate_snapshot(brokers, 0, 3, max(partitions, 3), min(rf, brokers), seed=seed)
    plan = random_reassignment(snap, moves, seed=seed)
    out = plan_throttle(snap, plan, ThrottleParams(1e6)).to_dict()
    leader, follower, throttled = kafka_reference(snap, plan)
    assert out["leader_throttled_replicas"] == leader
    assert out["follower_throttled_replicas"] == follower
    assert out["throttled_brokers"] == throttled
    assert out["moved_partitions"] == len(plan) == len(proposed_moves(snap, plan))


@settings(max_examples=30, deadline=None)
@given(ids=st.lists(st.integers(0, 2_000_000_000), min_size=3, max_size=8, unique=True),
       parts=st.integers(1, 120), seed=st.integers(0, 1000))
def test_random_plans_with_arbitrary_ids_match_reference(ids, parts, seed):
    # Any replica lists, reorders and RF changes included, with ids of every digit count.
    rng = np.random.default_rng(seed)
    topics = {"x": [rng.choice(ids, size=rng.integers(1, len(ids)), replace=False).tolist()
                    for _ in range(parts)]}
    snap = cluster(ids, topics)
    moves = [("x", int(p), rng.permutation(
        topics["x"][p] if rng.random() < 0.3 else
        rng.choice(ids, size=rng.integers(1, len(ids)), replace=False)).tolist())
        for p in sorted(rng.choice(parts, size=rng.integers(1, parts + 1), replace=False))]
    plan = plan_for(snap, moves)
    out = plan_throttle(snap, plan, ThrottleParams(1e6)).to_dict()
    leader, follower, throttled = kafka_reference(snap, plan)
    assert out["leader_throttled_replicas"] == leader
    assert out["follower_throttled_replicas"] == follower
    assert out["throttled_brokers"] == throttled


def test_three_column_sort_for_keys_beyond_int64(monkeypatch):
    monkeypatch.setattr(throttle, "SINGLE_KEY_LIMIT", 0)
    snap = generate_snapshot(12, 0, 4, 300, 3, seed=5)
    plan = random_reassignment(snap, 120, seed=5)
    out = plan_throttle(snap, plan, ThrottleParams(1e6)).to_dict()
    leader, follower, _ = kafka_reference(snap, plan)
    assert out["leader_throttled_replicas"] == leader
    assert out["follower_throttled_replicas"] == follower
