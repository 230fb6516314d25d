"""Approved plans run through the plan store: the executor thread (driven cycle by cycle
on the twin's clock) starts them, passes cancels on, finishes them in the workflow, and
writes every step to the audit log; pause and resume are the operator's."""

from __future__ import annotations

from datetime import timedelta

import pytest

from backend.errors import Conflict, Forbidden
from backend.services import execution, plan_events, plan_queue, plans
from backend.store.store import open_store
from backend.twin.cluster import TwinCluster, TwinSettings
from backend.twin.gateway import TwinGateway
from tests.plan_helpers import APPROVER, OPERATOR, T0, VIEWER, moves
from tests.unit.test_executor import MB, small_cluster


class World:
    """A store, a twin and an executor thread that is cycled by hand."""

    def __init__(self, tmp_path) -> None:
        self.store = open_store(f"sqlite:///{tmp_path}/plans.db")
        self.twin = TwinCluster(small_cluster({("a", 0): 6 * MB}),
                                TwinSettings(traffic_noise=0.0))
        self.gw = TwinGateway(self.twin)
        self.thread = execution.executor_thread(
            self.store, ["small"], lambda _c: self.gw, lambda _c: self.twin.assignment(),
            clock=self.now, holder="test")

    def now(self) -> float:
        return T0.timestamp() + self.twin.now_seconds

    def executing(self, content: dict, throttle: int | None = MB) -> int:
        snap = self.twin.assignment()
        plan = plans.propose(self.store, OPERATOR, cluster="small", kind="reassignment",
                             content=content, preview={"bytes_to_move": 10 * MB},
                             snapshot=snap, throttle=throttle, now=T0)
        plans.approve(self.store, APPROVER, plan.id, sha256=plan.sha256,
                      topics_of=lambda *_: snap, now=T0 + timedelta(seconds=1))
        plans.request_execute(self.store, OPERATOR, plan.id, topics_of=lambda *_: snap,
                              now=T0 + timedelta(seconds=2))
        return plan.id

    def cycle(self, n: int = 1) -> None:
        for _ in range(n):
            self.thread.cycle(self.now())
            self.twin.advance(1.0)

    def until(self, plan_id: int, state: str, limit: int = 300) -> None:
        for _ in range(limit):
            if plans.get(self.store, plan_id).state == state:
                return
            self.cycle()
        raise AssertionError(f"plan {plan_id} is {plans.get(self.store, plan_id).state}")

    def throttles(self) -> dict:
        return {(e, n): {k: v for k, v in cfg.items() if "throttled" in k}
                for e, store in (("broker", self.twin.broker_configs),
                                 ("topic", self.twin.topic_configs))
                for n, cfg in store.items() if any("throttled" in k for k in cfg)}


@pytest.fixture
def world(tmp_path):
    w = World(tmp_path)
    yield w
    w.store.close()


def test_an_approved_plan_runs_to_completed_with_every_step_audited(world):
    plan_id = world.executing(moves(("a", 0, [3, 2]), ("b", 1, [2, 3])))
    assert execution.progress(world.store, plan_id) is None
    world.cycle()
    p = execution.progress(world.store, plan_id)
    assert p["state"] == "running" and p["throttle"] == MB and p["partitions_total"] == 2
    assert world.throttles()  # set for the batch in flight
    world.until(plan_id, "completed")
    assert world.throttles() == {}
    p = execution.progress(world.store, plan_id)
    assert p["state"] == "completed" and p["fraction"] == 1.0
    assert p["partitions_done"] == 2 and p["observed_eta_seconds"] == 0.0
    actions = [e.action for e in plans.audit_entries(world.store, plan=plan_id)]
    assert actions[:4] == ["propose", "approve", "execute", "execution_started"]
    assert {"config_set", "batch_started", "batch_finished", "config_restored"} <= set(actions)
    assert actions[-2:] == ["execution_completed", "complete"]
    assert world.store.verify_audit()["intact"]
    markers = execution.batch_markers(world.store, "small", 0, world.now())
    assert [(m["plan_id"], m["state"], m["kind"]) for m in markers][:2] == [
        (plan_id, "batch 1 started", "batch"), (plan_id, "batch 1 ended", "batch")]
    first = execution.progress(world.store, plan_id)["per_batch"][0]
    assert (markers[0]["at"], markers[1]["at"]) == (first["started_at"], first["ended_at"])
    # the window bounds both ends; the monitoring charts get them with the plan events
    assert execution.batch_markers(world.store, "small", 0, first["started_at"] - 1) == []
    both = plan_events.markers(world.store, "small", 0, world.now())
    assert [m["state"] for m in both if m.get("kind") != "batch"] == [
        "proposed", "approved", "executing", "completed"]
    assert [m for m in both if m.get("kind") == "batch"] == markers
    assert [m["at"] for m in both] == sorted(m["at"] for m in both)


def ends_seen(world) -> list[tuple[str, str]]:
    """Spy on the store's transitions: (the plan's new state, its execution's state as
    another reader sees it when the transition begins)."""
    seen, real = [], world.store.transition

    def transition(plan_id, *args, **kwargs):
        seen.append((kwargs["state"], execution.progress(world.store, plan_id)["state"]))
        return real(plan_id, *args, **kwargs)
    world.store.transition = transition
    return seen


def test_an_execution_ends_in_one_write_with_its_plan(world):
    """No reader sees a completed execution under an executing plan (CI saw the API say
    so between the executor's two writes)."""
    plan_id = world.executing(moves(("a", 0, [3, 2])))
    world.cycle()
    seen = ends_seen(world)
    world.until(plan_id, "completed")
    assert seen == [("completed", "running")]
    assert execution.progress(world.store, plan_id)["state"] == "completed"


def test_an_executor_that_lost_the_row_at_the_end_leaves_the_plan_executing(world):
    """All or nothing: when the execution row changed under the executor (another took
    over), its end is not written and neither is the plan's."""
    plan_id = world.executing(moves(("a", 0, [3, 2])))
    world.cycle()
    real, tries = world.store.transition, []

    def overtaken(pid, *args, **kwargs):
        tries.append(kwargs["state"])
        records = world.thread.records
        records.save(records.get(pid), updated_at=world.now())  # another executor's write
        return real(pid, *args, **kwargs)
    world.store.transition = overtaken
    for _ in range(100):
        world.cycle()
        if not world.twin.list_reassignments() and world.throttles() == {}:
            break
    world.cycle()
    assert tries and set(tries) == {"completed"}
    assert plans.get(world.store, plan_id).state == "executing"
    assert execution.progress(world.store, plan_id)["state"] == "running"
    actions = [e.action for e in plans.audit_entries(world.store, plan=plan_id)]
    assert "complete" not in actions


def test_cancel_request_stops_the_moves_and_restores_throttles(world):
    world.twin.alter_configs("broker", "1", {"leader.replication.throttled.rate": "999"})
    before = world.throttles()
    plan_id = world.executing(moves(("a", 0, [3, 2])))
    world.cycle(2)
    assert world.twin.list_reassignments()
    plans.request_cancel(world.store, OPERATOR, plan_id, now=T0 + timedelta(seconds=5))
    world.until(plan_id, "cancelled")
    assert world.twin.list_reassignments() == [] and world.throttles() == before
    assert world.twin.snap.replicas_of(world.twin.snap.partition_row("a", 0)) == [1, 2]


def test_pause_and_resume_are_an_operators(world):
    plan_id = world.executing(moves(("a", 0, [3, 2]), ("a", 2, [1, 4])))
    with pytest.raises(Conflict, match="not running"):
        execution.pause(world.store, OPERATOR, plan_id, now=world.now())
    world.cycle()
    with pytest.raises(Forbidden):
        execution.pause(world.store, VIEWER, plan_id, now=world.now())
    assert execution.pause(world.store, OPERATOR, plan_id, now=world.now())["state"] == "pausing"
    with pytest.raises(Conflict, match="pausing"):
        execution.pause(world.store, OPERATOR, plan_id, now=world.now())
    world.cycle(30)
    assert execution.progress(world.store, plan_id)["state"] == "paused"
    assert plans.get(world.store, plan_id).state == "executing"
    execution.resume(world.store, OPERATOR, plan_id, now=world.now())
    world.until(plan_id, "completed")
    actions = [e.action for e in plans.audit_entries(world.store, plan=plan_id)]
    assert "execution_pause" in actions and "execution_paused" in actions
    assert "execution_resume" in actions


def test_one_plan_at_a_time_per_cluster_and_only_under_the_lease(world):
    first = world.executing(moves(("a", 0, [3, 2])))
    second = world.executing(moves(("b", 0, [4, 3])))
    assert world.thread.records.acquire("small", "someone-else", world.now(), 30)
    world.cycle(3)
    assert execution.progress(world.store, first) is None  # the lease is someone else's
    world.twin.advance(60)
    world.cycle()
    assert execution.progress(world.store, first)["state"] == "running"
    assert execution.progress(world.store, second) is None
    world.until(first, "completed")
    world.until(second, "completed")
    assert world.throttles() == {}


def test_a_plan_behind_another_says_which_it_waits_for(world):
    """An executing plan queued behind the one running on its cluster said nothing (no
    execution, an empty schedule and pause reason) until that one ended."""
    first = world.executing(moves(("a", 0, [3, 2])))
    second = world.executing(moves(("b", 0, [4, 3])))
    assert execution.waiting(world.store, "small") == \
        "the executor starts it within a few seconds"
    world.cycle()
    said = (f"plan {first} executes on cluster small first (one plan executes at a time on "
            f"a cluster): this one starts when it ends")
    assert execution.waiting(world.store, "small") == said
    rows = {r["id"]: r for r in plan_queue.queue(world.store, ["small"])}
    assert (rows[second]["execution"], rows[second]["pause_reason"]) == \
        (f"waiting for #{first}", said)
    assert (rows[first]["execution"], rows[first]["pause_reason"]) == ("running", None)
    world.until(first, "completed")
    world.cycle()
    assert execution.progress(world.store, second)["state"] == "running"
    assert plan_queue.queue(world.store, ["small"])[0]["execution"] == "running"


def test_a_shrink_runs_beside_reassignments_under_the_same_thread(world):
    """A shrink that reached executing (here through the workflow alone) runs the
    delete-partitions stages on a twin that can delete partitions; its own execution
    tests are tests/unit/test_shrink_execution.py."""
    from tests.plan_helpers import shrink_content

    snap = world.twin.assignment()
    plan = plans.propose(world.store, OPERATOR, cluster="small", kind="shrink",
                         content={**shrink_content("a", 2, 4), "delay_ms": 0}, preview={},
                         snapshot=snap, now=T0)
    plans.approve(world.store, APPROVER, plan.id, sha256=plan.sha256,
                  topics_of=lambda *_: snap, now=T0)
    plans.request_execute(world.store, OPERATOR, plan.id, topics_of=lambda *_: snap, now=T0)
    world.until(plan.id, "completed")
    assert world.twin.snap.topic_partition_count(world.twin.snap.topic_index("a")) == 2
    assert execution.progress(world.store, plan.id)["shrink"]["stage"] == "Removed"


def test_the_demo_starts_with_a_plan_the_scenario_leaves_alone(tmp_path):
    from backend.twin.examples import DEMO_SCENARIO, demo_snapshot
    from backend.twin.scenario import ScenarioRunner, load_scenario

    store = open_store(f"sqlite:///{tmp_path}/demo.db")
    twin = TwinCluster(demo_snapshot(), TwinSettings(traffic_noise=0.0))
    plan = execution.propose_demo_plan(store, twin.assignment(), OPERATOR)
    assert plan.state == "proposed" and len(plan.content["partitions"]) == 300
    assert plan.throttle == execution.DEMO_THROTTLE
    assert execution.propose_demo_plan(store, twin.assignment(), OPERATOR) is None
    ScenarioRunner(twin, load_scenario(DEMO_SCENARIO)).advance_to(120)
    approved = plans.approve(store, APPROVER, plan.id, sha256=plan.sha256,
                             topics_of=lambda *_: twin.assignment())
    assert approved.state == "approved"  # the scenario's own moves did not touch it
    store.close()
