"""A drained broker is remembered: once a drain plan completes, later goals (on the
page and through the API) keep the broker empty and say why, until an add plan naming
it completes."""

from __future__ import annotations

from datetime import timedelta

import pytest

from backend.errors import BadInput
from backend.services import drained, plan_kinds, plan_preview, plans
from tests.plan_helpers import APPROVER, OPERATOR, T0
from tests.unit.test_execution_service import World


@pytest.fixture
def world(tmp_path):
    w = World(tmp_path)  # brokers 1-4, 12 replicas
    yield w
    w.store.close()


def run_goal(world: World, goal: dict) -> int:
    """Propose the planner's plan toward ``goal`` on the twin, approve, execute it to the end."""
    snap = world.twin.assignment()
    made = plan_preview.from_goal(snap, goal, drained=drained.remembered(world.store, snap))
    plan = plans.propose(world.store, OPERATOR, cluster="small", kind="reassignment",
                         content=made.content, preview=made.preview, snapshot=snap,
                         throttle=10**9, now=T0)
    plans.approve(world.store, APPROVER, plan.id, sha256=plan.sha256,
                  topics_of=lambda *_: snap, now=T0 + timedelta(seconds=1))
    plans.request_execute(world.store, OPERATOR, plan.id, topics_of=lambda *_: snap,
                          now=T0 + timedelta(seconds=2))
    world.until(plan.id, "completed")
    return plan.id


def counts_after(draft: plan_preview.Draft) -> dict[int, int]:
    return {b["id"]: b["after"] for b in draft.preview["brokers"]}


def test_a_completed_drain_keeps_its_broker_empty_until_an_add_takes_it_back(world):
    assert drained.remembered(world.store, world.twin.assignment()) == {}
    drain = run_goal(world, {"goal": "drain", "brokers": [4]})
    snap = world.twin.assignment()
    memory = drained.remembered(world.store, snap)
    assert list(memory) == [4] and memory[4]["plan"] == drain

    assert counts_after(plan_preview.from_goal(snap, {"goal": "balance"}))[4] > 0  # refilled
    kept = plan_preview.from_goal(snap, {"goal": "balance"}, drained=memory)
    assert counts_after(kept)[4] == 0
    assert kept.preview["kept_empty"] == [{"broker": 4, **memory[4]}]

    run_goal(world, {"goal": "add", "brokers": [4]})
    snap = world.twin.assignment()
    assert drained.remembered(world.store, snap) == {}
    assert snap.broker_replica_counts()[3] > 0


def test_the_api_keeps_a_drained_broker_empty_and_may_name_it_back(world):
    run_goal(world, {"goal": "drain", "brokers": [4]})
    snap = world.twin.assignment()
    memory = drained.remembered(world.store, snap)
    body = {"kind": "reassignment", "cluster": "small", "generate": {"goal": "balance"}}
    assert counts_after(plan_kinds.draft_from_request(snap, body))[4] > 0
    with pytest.raises(BadInput, match="generate: nothing to move"):  # 1-3 hold 4 each
        plan_kinds.draft_from_request(snap, body, memory)
    body["generate"] = {"goal": "add", "brokers": [4]}
    made = plan_kinds.draft_from_request(snap, body, memory)
    assert counts_after(made)[4] > 0 and made.preview["kept_empty"] == []


def test_an_uploaded_plan_that_refills_a_drained_broker_says_so(world):
    drain = run_goal(world, {"goal": "drain", "brokers": [4]})
    snap = world.twin.assignment()
    memory = drained.remembered(world.store, snap)
    first = snap.replicas_of(snap.partition_row("a", 0))
    refill = {"version": 1, "partitions": [
        {"topic": "a", "partition": 0, "replicas": [first[0], 4]}]}
    made = plan_preview.from_kafka_json(snap, refill, drained=memory)
    assert made.preview["risks"] == [
        f"gives broker 4 1 replica though plan {drain} drained it: the planner's goals keep "
        "it empty; leave it out of the plan unless you mean to take it back"]
    body = {"kind": "reassignment", "cluster": "small", "plan": refill}
    assert plan_kinds.draft_from_request(snap, body, memory).preview["risks"] == \
        made.preview["risks"]  # the API's proposal carries it to the approver
    assert plan_preview.from_kafka_json(snap, refill).preview["risks"] == []


def test_a_shrinks_migration_places_its_new_topic_off_a_drained_broker(world):
    drain = run_goal(world, {"goal": "drain", "brokers": [4]})
    snap = world.twin.assignment()
    memory = drained.remembered(world.store, snap)
    placed = {b for replicas in plan_preview.from_shrink(snap, "a", 2).content[
        "migration"]["assignment"].values() for b in replicas}
    assert 4 in placed  # Kafka's walk over every broker would put replicas there
    migration = plan_preview.from_shrink(snap, "a", 2, drained=memory).content["migration"]
    assert migration["ok"]
    assert 4 not in {b for r in migration["assignment"].values() for b in r}
    assert f"leaving out broker 4, which plan {drain} drained" in migration["steps"][0]
    body = {"kind": "shrink", "cluster": "small", "topic": "a", "partitions": 2}
    api = plan_kinds.draft_from_request(snap, body, memory).content["migration"]
    assert api["assignment"] == migration["assignment"]
