"""Previews on the demo twin while its scenario moves 150 partitions off broker 3 to broker
9 under a 1 MB/s throttle (issue 26 item 1): a drain of broker 9 planned from Kafka's full
replica lists put 4 replicas on those partitions for good (topic-000-2 7,2,9,3 -> 7,2,6,3).
Now the twin's snapshot carries the moves in flight, the plan leaves them out, the preview
says which and why, and an uploaded plan that touches one is refused."""

from __future__ import annotations

import pytest

from backend.errors import BadInput
from backend.services import plan_preview
from backend.twin.cluster import TwinCluster
from backend.twin.examples import DEMO_SCENARIO, demo_snapshot
from backend.twin.gateway import TwinGateway
from backend.twin.scenario import ScenarioRunner, load_scenario
from dashboard.plan_views import preview as plans


@pytest.fixture(scope="module")
def demo_moving():
    """The demo twin 60 s in: the throttled move 3 -> 9 is in flight."""
    sc = load_scenario(DEMO_SCENARIO)
    twin = TwinCluster(demo_snapshot(), sc.settings)
    ScenarioRunner(twin, sc).advance_to(60)
    assert len(twin.moves) == 150
    return twin


def test_the_twins_snapshot_carries_the_moves_in_flight(demo_moving):
    snap = TwinGateway(demo_moving).assignment()
    assert snap.in_flight == tuple(demo_moving.list_reassignments())
    first = snap.in_flight[0]
    assert first["adding"] == [9] and first["removing"] == [3]
    assert len(snap.replicas_of(snap.partition_row(first["topic"], first["partition"]))) == 4


def test_a_drain_of_9_leaves_the_moving_partitions_out(demo_moving):
    snap = TwinGateway(demo_moving).assignment()
    draft = plan_preview.from_goal(snap, {"goal": "drain", "brokers": [9]})
    moving = {f"{m['topic']}-{m['partition']}" for m in snap.in_flight}
    entries = draft.content["partitions"]
    assert entries and not moving & {f"{e['topic']}-{e['partition']}" for e in entries}
    assert {len(e["replicas"]) for e in entries} == {3}  # no replication factor raised
    assert all(9 not in e["replicas"] for e in entries)
    p = draft.preview
    assert p["in_flight_partitions"] == 150 and len(p["in_flight"]) == 100
    assert all(len(m["target"]) == 3 and 9 in m["target"] for m in p["in_flight"])
    # they move onto broker 9: the drain is partial and its title and words say so
    assert draft.title.startswith("partial drain 9: ")
    undone = next(u for u in p["unresolved"] if u["kind"] == "not_drained")
    assert undone["in_flight"] == 150 and "already moving" in undone["message"]
    words = " ".join(str(w.children) for w in plans.words(p))
    assert "Left out, already moving: 150 partitions" in words
    # before and after count each moving partition at its target, 3 replicas
    before = {b["id"]: b["before"] for b in p["brokers"]}
    counts = snap.broker_replica_counts()
    assert before[3] == counts[snap.broker_positions([3])[0]] - 150
    assert sum(before.values()) == int(counts.sum()) - 150


def test_an_uploaded_plan_touching_a_moving_partition_is_refused(demo_moving):
    snap = TwinGateway(demo_moving).assignment()
    m = snap.in_flight[0]
    target = [b for b in m["replicas"] if b not in m["removing"]]
    other = next(b for b in range(1, 10) if b not in m["replicas"])
    obj = {"version": 1, "partitions": [{"topic": m["topic"], "partition": m["partition"],
                                         "replicas": [other, *target[1:]]}]}
    with pytest.raises(BadInput, match=f"partition {m['topic']}-{m['partition']} is being "
                                       r"reassigned already \(replicas "):
        plan_preview.from_kafka_json(snap, obj, source="cc.json")


def test_a_shrink_of_a_topic_with_a_moving_partition_is_refused(demo_moving):
    """Proposed, its basis held the replicas mid-move (topic-005-19 9,1,2,3), and Approve
    refused it as stale once the move ended ("[9, 1, 2, 3] -> [9, 1, 2]: re-propose")."""
    snap = TwinGateway(demo_moving).assignment()
    topic = snap.in_flight[0]["topic"]
    moving = [m for m in snap.in_flight if m["topic"] == topic]
    m = min(moving, key=lambda x: x["partition"])
    more = f" (and {len(moving) - 1} more)" if len(moving) > 1 else ""
    count = snap.topic_partition_count(snap.topic_index(topic))
    with pytest.raises(BadInput) as e:
        plan_preview.from_shrink(snap, topic, count - 1)
    assert str(e.value) == (
        f"topic: partition {topic}-{m['partition']}{more} is being reassigned already "
        f"(replicas {m['replicas']}, adding {m['adding']}, removing {m['removing']}): wait "
        f"until its move finishes or cancel it")
    calm = next(str(n) for n in snap.topic_names
                if all(x["topic"] != str(n) for x in snap.in_flight))
    calm_count = snap.topic_partition_count(snap.topic_index(calm))
    assert plan_preview.from_shrink(snap, calm, calm_count - 1).content["topic"] == calm


def test_headroom_at_the_limit_is_a_warning():
    assert plans._headroom_card(0).className == "card card-near"
    assert plans._headroom_card(-1).className == "card card-over"
    assert plans._headroom_card(5).className == "card card-ok"
