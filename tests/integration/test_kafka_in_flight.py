"""A drain planned on Apache Kafka while partitions are being reassigned (issue 26 item 1).

Kafka lists a moving partition's replicas as its target followed by the replicas it
leaves (KIP-455), so a plan made from that list gave such a partition one replica more
for good. Here two partitions of an ex- topic move under a 10 kB/s throttle (KIP-73), so
they stay in flight: one onto broker 3, one off it. The Kafka gateway's snapshot carries
both moves as ListPartitionReassignments reports them; a drain of broker 3 counts them at
their targets, leaves them out and says which one keeps a replica on broker 3; the moves
it plans run on Kafka and keep every replication factor, and the throttled moves are still
in flight, untouched, afterwards."""

from __future__ import annotations

import pytest

from backend.services import plan_preview
from tests.kafka_moves import (
    FOLLOWER_RATE,
    FOLLOWER_REPLICAS,
    LEADER_RATE,
    LEADER_REPLICAS,
    create_placed,
    delete_topics,
    fill,
    in_flight,
    replicas,
    wait_until,
)

TOPIC = "ex-inflight"
PLACED = [[1, 2], [2, 3], [3, 1], [1, 3]]  # brokers 1, 2, 3 in racks r0, r1, r2
ONTO_3 = {"topic": TOPIC, "partition": 0, "replicas": [1, 3]}  # 1,2 -> 1,3
OFF_3 = {"topic": TOPIC, "partition": 1, "replicas": [2, 1]}  # 2,3 -> 2,1
SLOW = 10_000  # bytes/s: 3 MB stay in flight for minutes
RATES = {"1": {LEADER_RATE: SLOW, FOLLOWER_RATE: SLOW}, "2": {LEADER_RATE: SLOW},
         "3": {FOLLOWER_RATE: SLOW}}


@pytest.fixture
def moving(kafka_cluster, kafka_gateway):
    """The topic with partitions 0 and 1 moving under the throttle; afterwards the moves
    cancelled, the topic deleted and every broker config as it was."""
    gw = kafka_gateway
    create_placed(gw, {TOPIC: PLACED})
    fill(kafka_cluster.bootstrap_servers, [TOPIC], [3_000_000, 3_000_000, 0, 0])
    before = {b: gw.describe_configs("broker", b)["configs"] for b in RATES}
    try:
        for b, rates in RATES.items():
            gw.alter_configs("broker", b, rates)
        gw.alter_configs("topic", TOPIC, {LEADER_REPLICAS: "0:1,0:2,1:2,1:3",
                                          FOLLOWER_REPLICAS: "0:3,1:1"})
        gw.alter_reassignments({"version": 1, "partitions": [ONTO_3, OFF_3]})
        yield gw
    finally:
        flying = in_flight(gw, [TOPIC])
        if flying:
            gw.cancel_reassignments(sorted(flying))
            wait_until(lambda: not in_flight(gw, [TOPIC]), 60, "the moves to be cancelled")
        delete_topics(gw, [TOPIC])
        for b, was in before.items():
            now = gw.describe_configs("broker", b)["configs"]
            gone = [k for k in RATES[b] if k in now and k not in was]
            back = {k: was[k] for k in RATES[b] if k in was and now.get(k) != was[k]}
            if gone or back:
                gw.alter_configs("broker", b, back or None, gone or None)


def test_a_drain_leaves_the_moves_in_flight_out_on_kafka(moving):
    gw = moving
    flying = in_flight(gw, [TOPIC])
    assert flying == {
        (TOPIC, 0): {"topic": TOPIC, "partition": 0, "replicas": [1, 3, 2], "adding": [3],
                     "removing": [2]},
        (TOPIC, 1): {"topic": TOPIC, "partition": 1, "replicas": [2, 1, 3], "adding": [1],
                     "removing": [3]}}
    # Metadata lists each moving partition with 3 replicas: the list the planner used. The
    # controller lists the moves first; a broker answers Metadata once it has applied the
    # reassignment's record, later on a busy machine
    wait_until(lambda: replicas(gw, [TOPIC])[TOPIC][:2] == [[1, 3, 2], [2, 1, 3]], 30,
               "Metadata to list the moving partitions' replicas as target then leaving")

    snap = gw.assignment()
    assert {(m["topic"], m["partition"]): m for m in snap.in_flight
            if m["topic"] == TOPIC} == flying
    draft = plan_preview.from_goal(snap.only_topics([TOPIC]),
                                   {"goal": "drain", "brokers": [3]})
    entries = {e["partition"]: e["replicas"] for e in draft.content["partitions"]}
    assert sorted(entries) == [2, 3]  # the moving partitions 0 and 1 are left out
    assert all(len(r) == 2 and 3 not in r for r in entries.values())
    assert entries[2][1:] == [1] and entries[3][0] == 1  # the other replica stays
    p = draft.preview
    assert [m["partition"] for m in p["in_flight"]] == [f"{TOPIC}-0", f"{TOPIC}-1"]
    assert [m["target"] for m in p["in_flight"]] == [[1, 3], [2, 1]]
    # partition 0 moves onto broker 3: the drain is partial, and says why
    assert draft.title.startswith("partial drain 3: ")
    [undone] = p["unresolved"]
    assert (undone["broker"], undone["replicas"], undone["in_flight"]) == (3, 1, 1)
    assert f"{TOPIC}-0" in undone["message"]
    # each broker counted at the targets: 2 replicas per partition, 8 in all
    assert sum(b["before"] for b in p["brokers"]) == sum(b["after"] for b in p["brokers"]) == 8

    # the plan runs on Kafka: its moves finish with 2 replicas each; the throttled moves
    # are still in flight as they were
    gw.alter_reassignments(draft.content)
    wait_until(lambda: replicas(gw, [TOPIC])[TOPIC][2:] == [entries[2], entries[3]], 60,
               "the drain's moves to finish")
    assert in_flight(gw, [TOPIC]) == flying
