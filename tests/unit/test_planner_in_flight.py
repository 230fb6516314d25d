"""The planner on a cluster with reassignments in flight (issue 26 item 1): Kafka lists a
moving partition's replicas as target + removing (KIP-455), so planning from that list
raised the replication factor for good (topic-000-2 7,2,9,3 -> 7,2,6,3). A plan counts each
moving partition at its target, leaves it out and says so."""

from __future__ import annotations

from dataclasses import replace

from backend.engines.planner import Goal, plan
from backend.model.snapshot import Limits
from tests.unit.test_planner import make

BROKERS = [1, 2, 3, 4, 5, 6, 7, 8, 9]


def moving(topic: str, partition: int, replicas: list[int], adding: list[int],
           removing: list[int]) -> dict:
    return {"topic": topic, "partition": partition, "replicas": replicas, "adding": adding,
            "removing": removing}


def cluster(in_flight: list[dict]):
    """topic-000-2 moves 3 -> 9 (Kafka lists 7,2,9,3); topic-001-0 moves 9 -> 5."""
    snap = make({"topic-000": [[1, 2, 3], [4, 5, 6], [7, 2, 9, 3], [9, 1, 5]],
                 "topic-001": [[9, 8, 4, 5], [2, 9, 6], [3, 4, 8]]}, BROKERS)
    return replace(snap, in_flight=tuple(in_flight))


ISSUE_MOVES = [moving("topic-000", 2, [7, 2, 9, 3], [9], [3]),
               moving("topic-001", 0, [9, 8, 4, 5], [5], [9])]


def plan_entries(result) -> dict[str, list[int]]:
    before = result.before
    return {f"{before.topic_names[before.part_topic[r]]}-{before.part_id[r]}":
            before.broker_ids[result.reassignment.brokers[a:b]].tolist()
            for r, a, b in zip(result.reassignment.rows.tolist(),
                               result.reassignment.offsets[:-1].tolist(),
                               result.reassignment.offsets[1:].tolist(), strict=True)}


def test_a_drain_leaves_moving_partitions_out_and_keeps_every_replication_factor():
    result = plan(cluster(ISSUE_MOVES), Goal("drain", (9,)))
    entries = plan_entries(result)
    assert "topic-000-2" not in entries and "topic-001-0" not in entries
    # planned against the targets: every partition keeps its replication factor of 3
    assert set(result.before.replication_factors.tolist()) == {3}
    assert all(len(r) == 3 and 9 not in r for r in entries.values())
    assert sorted(entries) == ["topic-000-3", "topic-001-1"]
    assert [m["partition"] for m in result.in_flight] == ["topic-000-2", "topic-001-0"]
    assert result.in_flight[0]["target"] == [7, 2, 9]
    # topic-000-2 moves onto broker 9: the drain cannot finish without it, and says why
    [undone] = result.unresolved
    assert (undone["kind"], undone["broker"], undone["replicas"], undone["in_flight"]) == \
        ("not_drained", 9, 1, 1)
    assert "topic-000-2" in undone["message"] and "already moving" in undone["message"]


def test_a_partition_moving_off_the_drained_broker_needs_nothing_more():
    result = plan(cluster(ISSUE_MOVES[1:]), Goal("drain", (9,)))
    assert result.ok and "topic-001-0" not in plan_entries(result)
    assert 9 not in result.after.broker_ids[result.after.replica_broker].tolist()


def test_counts_and_limits_use_the_targets():
    snap = cluster(ISSUE_MOVES)
    counts = plan(snap, Goal("balance")).before.broker_replica_counts()
    # Kafka's full lists hold 3 + 9 on topic-000-2 and 9 + 5 on topic-001-0
    assert int(counts.sum()) == 21 and int(snap.broker_replica_counts().sum()) == 23
    result = plan(snap, Goal("limits"), Limits(3, None))
    assert result.after.broker_replica_counts().max() <= 3
    assert not {"topic-000-2", "topic-001-0"} & set(plan_entries(result))


def test_no_leader_change_on_a_moving_partition():
    snap = make({"a": [[1, 2, 3]] * 6 + [[2, 1, 3]]}, [1, 2, 3, 4])
    flying = replace(snap, in_flight=tuple(moving("a", p, [1, 2, 3, 4], [4], [3])
                                           for p in range(3)))
    entries = plan_entries(plan(flying, Goal("balance")))
    assert entries and not {"a-0", "a-1", "a-2"} & set(entries)
    assert all(len(r) == 3 for r in entries.values())
