"""Leftover throttles on the twin: every throttle config no executing plan holds, with
when Railyard first saw it; and the clear-throttles plan: admins propose it, someone else
approves it (409 naming a config changed since), the executor deletes exactly its
configs, with audit entries."""

from __future__ import annotations

from datetime import timedelta

import pytest

from backend.errors import BadInput, Conflict, Forbidden
from backend.model.snapshot import Limits
from backend.services import plans, throttle_leftovers
from backend.services.cluster import ClusterSource
from tests.plan_helpers import ADMIN, APPROVER, OPERATOR, T0, moves
from tests.unit.test_execution_service import World

LEADER_RATE = "leader.replication.throttled.rate"
FOLLOWER_RATE = "follower.replication.throttled.rate"
LEADER_LIST = "leader.replication.throttled.replicas"


@pytest.fixture
def world(tmp_path):
    w = World(tmp_path)
    w.source = ClusterSource("small", None, Limits(), gateway=w.gw)
    yield w
    w.store.close()


def test_a_throttle_on_a_move_in_flight_says_so(world):
    world.twin.alter_configs("topic", "b", {LEADER_LIST: "0:1,0:3"})
    world.twin.alter_configs("topic", "a", {LEADER_LIST: "1:2"})
    world.twin.alter_configs("broker", "4", {LEADER_RATE: "10"})
    world.twin.alter_configs("broker", "<default>", {LEADER_RATE: "10"})
    world.twin.alter_reassignments(moves(("b", 0, [1, 2])))  # kafka-reassign-partitions
    got = throttle_leftovers.leftovers(world.store, world.source, now=world.now(), fresh=True)
    assert {(r["entity_type"], r["name"]): r["moving"] for r in got["leftovers"]} == {
        ("topic", "b"): True, ("topic", "a"): False, ("broker", "4"): False,
        ("broker", "<default>"): True}


def listed(world, now: float) -> dict:
    got = throttle_leftovers.leftovers(world.store, world.source, now=now,
                                       fresh=True)["leftovers"]
    return {(r["entity_type"], r["name"], r["key"]): (r["value"], r["first_seen"], r["clear_plan"])
            for r in got}


def fresh(world):
    return lambda _cluster: throttle_leftovers.throttle_configs(world.source, fresh=True)


def test_leftovers_are_first_seen_when_railyard_first_reads_them(world):
    t = T0.timestamp()
    assert listed(world, t) == {}
    world.twin.alter_configs("broker", "1", {LEADER_RATE: "1000"})
    world.twin.alter_configs("broker", "<default>", {FOLLOWER_RATE: "2000"})
    world.twin.alter_configs("topic", "a", {LEADER_LIST: "0:1", "retention.ms": "1000"})
    seen = {("broker", "1", LEADER_RATE): ("1000", t + 10, None),
            ("broker", "<default>", FOLLOWER_RATE): ("2000", t + 10, None),
            ("topic", "a", LEADER_LIST): ("0:1", t + 10, None)}  # retention.ms is no throttle
    assert listed(world, t + 10) == seen
    assert listed(world, t + 20) == seen  # still the first sighting
    world.twin.alter_configs("broker", "1", {LEADER_RATE: "3000"})
    world.twin.alter_configs("topic", "a", delete=[LEADER_LIST])
    assert listed(world, t + 30) == {**{k: v for k, v in seen.items() if k[0] == "broker"},
                                     ("broker", "1", LEADER_RATE): ("3000", t + 30, None)}
    world.twin.alter_configs("topic", "a", {LEADER_LIST: "0:1"})  # gone, then back: new
    assert listed(world, t + 40)[("topic", "a", LEADER_LIST)] == ("0:1", t + 40, None)


def test_what_an_executing_plan_holds_is_no_leftover(world):
    world.twin.alter_configs("broker", "1", {LEADER_RATE: "999"})
    t = world.now()
    assert set(listed(world, t)) == {("broker", "1", LEADER_RATE)}
    plan_id = world.executing(moves(("a", 0, [3, 2])))
    world.cycle(2)  # the plan's throttles are set, broker 1's rate among them
    assert world.throttles()[("broker", "1")][LEADER_RATE] != "999"
    during = throttle_leftovers.leftovers(world.store, world.source, now=world.now(),
                                         fresh=True)
    assert during["leftovers"] == [] and during["held"] > 0
    world.until(plan_id, "completed")
    # the operator's rate is back: a leftover again, seen since before the plan
    assert listed(world, world.now()) == {("broker", "1", LEADER_RATE): ("999", t, None)}


def test_only_admins_propose_a_clear_plan_and_someone_else_approves_it(world):
    world.twin.alter_configs("broker", "2", {LEADER_RATE: "1000", FOLLOWER_RATE: "1000"})
    world.twin.alter_configs("topic", "b", {LEADER_LIST: "1:2"})
    with pytest.raises(Forbidden, match="admin"):
        throttle_leftovers.propose_clear(world.store, OPERATOR, world.source)
    plan = throttle_leftovers.propose_clear(world.store, ADMIN, world.source, now=T0)
    assert plan.kind == "clear_throttles" and plan.state == "proposed"
    assert plan.content == {"configs": [
        {"entity_type": "broker", "name": "2", "key": FOLLOWER_RATE, "value": "1000"},
        {"entity_type": "broker", "name": "2", "key": LEADER_RATE, "value": "1000"},
        {"entity_type": "topic", "name": "b", "key": LEADER_LIST, "value": "1:2"}]}
    assert plan.sha256 == plans.plan_sha256("clear_throttles", "small", plan.content, None)
    assert {r["clear_plan"] for r in throttle_leftovers.leftovers(
        world.store, world.source, now=world.now(), fresh=True)["leftovers"]} == {plan.id}
    with pytest.raises(Forbidden, match="two people"):
        plans.approve(world.store, ADMIN, plan.id, sha256=plan.sha256, topics_of=None,
                      configs_of=fresh(world), now=T0)
    world.twin.alter_configs("broker", "2", {LEADER_RATE: "5000"})
    with pytest.raises(Conflict, match=f"broker 2 {LEADER_RATE} 1000 -> 5000: re-propose"):
        plans.approve(world.store, APPROVER, plan.id, sha256=plan.sha256, topics_of=None,
                      configs_of=fresh(world), now=T0)
    world.twin.alter_configs("broker", "2", {LEADER_RATE: "1000"})
    assert plans.approve(world.store, APPROVER, plan.id, sha256=plan.sha256, topics_of=None,
                         configs_of=fresh(world), now=T0).state == "approved"


def test_the_executor_deletes_exactly_the_approved_configs(world):
    world.twin.alter_configs("broker", "2", {LEADER_RATE: "1000"})
    world.twin.alter_configs("topic", "b", {LEADER_LIST: "1:2", "retention.ms": "5000"})
    plan = throttle_leftovers.propose_clear(world.store, ADMIN, world.source, now=T0)
    world.twin.alter_configs("broker", "3", {LEADER_RATE: "7"})  # set after: not in the plan
    plans.approve(world.store, APPROVER, plan.id, sha256=plan.sha256, topics_of=None,
                  configs_of=fresh(world), now=T0)
    plans.request_execute(world.store, ADMIN, plan.id, topics_of=None,
                          configs_of=fresh(world), now=T0 + timedelta(seconds=1))
    world.until(plan.id, "completed")
    assert world.throttles() == {("broker", "3"): {LEADER_RATE: "7"}}
    assert world.twin.topic_configs["b"] == {"retention.ms": "5000"}
    entries = plans.audit_entries(world.store, plan=plan.id)
    cleared = [e.detail for e in entries if e.action == "config_cleared"]
    assert cleared == [
        {"entity_type": "broker", "name": "2", "deleted": [LEADER_RATE],
         "values": {LEADER_RATE: "1000"}},
        {"entity_type": "topic", "name": "b", "deleted": [LEADER_LIST],
         "values": {LEADER_LIST: "1:2"}}]
    assert [e.action for e in entries][-2:] == ["execution_completed", "complete"]
    assert world.store.verify_audit()["intact"]


def test_a_config_changed_after_execute_is_not_deleted_and_the_plan_fails(world):
    world.twin.alter_configs("broker", "2", {LEADER_RATE: "1000", FOLLOWER_RATE: "1000"})
    plan = throttle_leftovers.propose_clear(world.store, ADMIN, world.source, now=T0)
    plans.approve(world.store, APPROVER, plan.id, sha256=plan.sha256, topics_of=None,
                  configs_of=fresh(world), now=T0)
    plans.request_execute(world.store, ADMIN, plan.id, topics_of=None,
                          configs_of=fresh(world), now=T0)
    world.twin.alter_configs("broker", "2", {FOLLOWER_RATE: "2000"})
    world.until(plan.id, "failed")
    assert world.throttles() == {("broker", "2"): {LEADER_RATE: "1000", FOLLOWER_RATE: "2000"}}
    fail = plans.audit_entries(world.store, plan=plan.id)[-1]
    assert fail.action == "fail" and f"broker 2 {FOLLOWER_RATE} 1000 -> 2000" in \
        fail.detail["cause"] and "nothing cleared" in fail.detail["cause"]


def test_a_clear_plan_names_only_loose_throttle_configs(world):
    with pytest.raises(BadInput, match="no leftover throttle config: nothing to clear"):
        throttle_leftovers.propose_clear(world.store, ADMIN, world.source)
    world.twin.alter_configs("broker", "1", {LEADER_RATE: "999"})
    world.twin.alter_configs("broker", "4", {LEADER_RATE: "10"})
    plan_id = world.executing(moves(("a", 0, [3, 2])))
    world.cycle(2)
    one = {"entity_type": "broker", "name": "4", "key": LEADER_RATE}
    with pytest.raises(BadInput, match=f"held by executing plan {plan_id}"):
        throttle_leftovers.propose_clear(world.store, ADMIN, world.source, configs=[
            {"entity_type": "broker", "name": "1", "key": LEADER_RATE}])
    with pytest.raises(BadInput, match="has no follower"):
        throttle_leftovers.propose_clear(world.store, ADMIN, world.source, configs=[
            {**one, "key": FOLLOWER_RATE}])
    with pytest.raises(BadInput, match="not a replication throttle config"):
        throttle_leftovers.propose_clear(world.store, ADMIN, world.source, configs=[
            {**one, "key": "retention.ms"}])
    with pytest.raises(Conflict, match="is 10 now, not 11"):
        throttle_leftovers.propose_clear(world.store, ADMIN, world.source,
                                         configs=[{**one, "value": "11"}])
    plan = throttle_leftovers.propose_clear(world.store, ADMIN, world.source,
                                            configs=[{**one, "value": "10"}])
    assert plan.content["configs"] == [{**one, "value": "10"}]


def test_a_plan_a_guard_pauses_holds_its_floor_throttles_and_the_overview_says_so(world):
    from backend.engines.guards import Figures
    from backend.executor.guards import Watch
    from backend.model.guards import GuardSettings, Windows
    from backend.services import execution

    class Offline:
        def __init__(self) -> None:
            self.now = Figures(offline_partitions=0)

        def figures(self, moving):
            return self.now

        def assignment(self):
            return world.twin.assignment()

    health = Offline()
    watch = Watch(GuardSettings(floor=500_000, resume_after_seconds=5), Windows(), health)
    world.thread = execution.executor_thread(
        world.store, ["small"], lambda _c: world.gw, lambda _c: world.twin.assignment(),
        clock=world.now, holder="test", watches=lambda _c: watch)
    plan_id = world.executing(moves(("a", 0, [3, 2])))
    world.cycle(2)
    health.now = Figures(offline_partitions=2)
    world.cycle(2)
    p = execution.progress(world.store, plan_id)
    assert p["state"] == "paused" and p["status"] == "paused by a guard"
    assert world.throttles()[("broker", "1")][LEADER_RATE] == "500000"  # the floor
    during = throttle_leftovers.leftovers(world.store, world.source, now=world.now(),
                                         fresh=True)
    assert during["leftovers"] == [] and during["held"] > 0
    assert during["holding"] == [{"plan_id": plan_id, "configs": during["held"],
                                  "status": "paused by a guard"}]
    assert execution.held_plans(world.store, "small") == [{
        "plan_id": plan_id, "title": plans.get(world.store, plan_id).title,
        "status": "paused by a guard", "text": "2 offline partitions (more than 0)",
        "next_window": None}]
    health.now = Figures(offline_partitions=0)
    world.until(plan_id, "completed")
    assert world.throttles() == {}
    actions = [e.action for e in plans.audit_entries(world.store, plan=plan_id)]
    assert "execution_held" in actions and "execution_released" in actions


def test_every_leftover_leaves_out_the_throttles_of_a_move_in_flight(world):
    """The API's clear plan without configs took every config no executing plan held,
    the throttles of a kafka-reassign-partitions move in flight too, titled "leftover":
    executed, that move copied unthrottled. They are left out now; named, they are
    proposed, and the plan says they slow a move."""
    world.twin.alter_configs("broker", "1", {FOLLOWER_RATE: "1000"})
    world.twin.alter_configs("topic", "b", {LEADER_LIST: "0:1"})
    world.twin.alter_reassignments(moves(("b", 0, [1, 2])))  # not Railyard's
    with pytest.raises(BadInput, match="nothing to clear; 2 more slow a reassignment in "
                                       r"flight \(name them in configs"):
        throttle_leftovers.propose_clear(world.store, ADMIN, world.source)
    world.twin.alter_configs("broker", "4", {LEADER_RATE: "10"})  # no move there
    plan = throttle_leftovers.propose_clear(world.store, ADMIN, world.source, now=T0)
    assert plan.content["configs"] == [
        {"entity_type": "broker", "name": "4", "key": LEADER_RATE, "value": "10"}]
    assert plan.preview["in_flight"] == [] and plan.title == "clear 1 leftover throttle configs"
    named = throttle_leftovers.propose_clear(world.store, ADMIN, world.source, configs=[
        {"entity_type": "broker", "name": "1", "key": FOLLOWER_RATE},
        {"entity_type": "broker", "name": "4", "key": LEADER_RATE}], now=T0)
    assert named.preview["in_flight"] == [
        {"entity_type": "broker", "name": "1", "key": FOLLOWER_RATE}]
    assert named.title == "clear 2 throttle configs, 1 of them slowing a reassignment in flight"
