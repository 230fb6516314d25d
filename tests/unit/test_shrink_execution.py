"""Approved shrinks executed through the plan store and the executor thread, on the twin's
clock: the delete-partitions KIP's stages where the cluster can delete partitions
(ReadOnly at once, None at the controller's first check after the delay, Removed once
every broker deleted its replica; delete.topic.partition.interval.delay.ms = 300,000 ms),
crash and resume mid-shrink, and the migration checklist on a cluster that cannot."""

from __future__ import annotations

from datetime import timedelta

import pytest

from backend.errors import Conflict, Forbidden
from backend.executor.thread import ExecutorThread
from backend.services import execution, plan_preview, plans, shrink_execution
from backend.store.store import open_store
from backend.twin.cluster import TwinCluster, TwinSettings
from backend.twin.gateway import TwinGateway
from tests.executor_rig import Crash, CrashingGateway
from tests.plan_helpers import APPROVER, OPERATOR, T0, VIEWER
from tests.unit.test_executor import small_cluster

DELAY_MS = 700_000  # requested at twin second 0: due at 700 s, run by the check at 900 s
KIP_INTERVAL_S = 300  # delete.topic.partition.interval.delay.ms default, in seconds


class World:
    """A store, a twin (that can delete partitions, or not) and an executor thread cycled
    by hand on the twin's clock."""

    def __init__(self, tmp_path, enable: bool = True, gateway=TwinGateway) -> None:
        self.store = open_store(f"sqlite:///{tmp_path}/plans.db")
        self.twin = TwinCluster(small_cluster(), TwinSettings(
            traffic_noise=0.0, delete_partition_enable=enable))
        self.gw = gateway(self.twin)
        self.thread = self.new_thread()

    def new_thread(self) -> ExecutorThread:
        return execution.executor_thread(self.store, ["small"], lambda _c: self.gw,
                                        lambda _c: self.twin.assignment(), clock=self.now,
                                        holder="test")

    def now(self) -> float:
        return T0.timestamp() + self.twin.now_seconds

    def approved(self, delay_ms: int = DELAY_MS, keep: int = 2) -> int:
        snap = self.twin.assignment()
        draft = plan_preview.from_shrink(snap, "a", keep, delay_ms=delay_ms)
        plan = plans.propose(self.store, OPERATOR, cluster="small", kind="shrink",
                             content=draft.content, preview=draft.preview, snapshot=snap,
                             now=T0)
        plans.approve(self.store, APPROVER, plan.id, sha256=plan.sha256,
                      topics_of=lambda *_: snap, now=T0 + timedelta(seconds=1))
        return plan.id

    def execute(self, plan_id: int, migration: bool = False) -> None:
        plans.execute(
            self.store, OPERATOR, plan_id, gateway=self.gw, migration=migration,
            topics_of=lambda *_: self.twin.assignment(), now=T0 + timedelta(seconds=2))

    def cycle(self, n: int = 1) -> None:
        for _ in range(n):
            self.thread.cycle(self.now())
            self.twin.advance(1.0)

    def check(self, plan_id: int, step: int, actor=OPERATOR, source_of=None) -> dict:
        """An operator checks migration step ``step`` off, the cluster read as the page
        reads it (the last step is refused while the old topic is there; ``source_of``:
        where the producer and consumer checks read the cluster, None for nowhere)."""
        return shrink_execution.check_step(
            self.store, actor, plan_id, step, now=self.now(), source_of=source_of,
            topics_of=lambda _c, names: self.gw.topics_assignment(names))

    def shrink(self, plan_id: int) -> dict:
        return execution.progress(self.store, plan_id, self.now())["shrink"]

    def actions(self, plan_id: int) -> list[str]:
        return [e.action for e in plans.audit_entries(self.store, plan=plan_id)]


@pytest.fixture
def world(tmp_path):
    w = World(tmp_path)
    yield w
    w.store.close()


def test_approve_execute_read_only_then_none_after_the_delay_then_removed(world):
    plan_id = world.approved()
    world.execute(plan_id)
    world.cycle()  # starts the execution and sends DeletePartitions at twin second 0
    s = world.shrink(plan_id)
    assert s["stage"] == "ReadOnly" and s["counts"]["ReadOnly"] == 2
    assert world.twin.partition_modes("a") == ["ReadWrite", "ReadWrite", "ReadOnly",
                                               "ReadOnly"]
    # the page says: at the earliest once the delay is over, at the latest one check
    # interval later (the controller's schedule is its own); now is twin second 1
    assert s["next_stage"] == "None"
    assert s["next_in_seconds"] == pytest.approx(DELAY_MS / 1000 - 1)
    assert s["next_latest_in_seconds"] == pytest.approx(DELAY_MS / 1000 + KIP_INTERVAL_S - 1)
    while world.twin.now_seconds < 3 * KIP_INTERVAL_S:
        world.cycle()
    assert world.shrink(plan_id)["stage"] == "ReadOnly"  # the check at 600 s was too early
    # the twin's check at 900 s turned them None
    assert world.twin.partition_modes("a") == ["ReadWrite"] * 2 + ["None"] * 2
    world.cycle()
    assert world.shrink(plan_id)["stage"] == "None"
    world.cycle()  # every broker deleted its replica: removed
    assert plans.get(world.store, plan_id).state == "completed"
    assert world.twin.snap.topic_partition_count(world.twin.snap.topic_index("a")) == 2
    s = world.shrink(plan_id)
    assert s["stage"] == "Removed" and s["counts"]["Removed"] == 2
    actions = world.actions(plan_id)
    assert actions[:5] == ["propose", "approve", "execute", "execution_started",
                           "partitions_delete_requested"]
    stages = [e.detail["stage"] for e in plans.audit_entries(world.store, plan=plan_id)
              if e.action == "shrink_stage"]
    assert stages == ["ReadOnly", "None", "Removed"]
    assert actions[-2:] == ["execution_completed", "complete"]
    assert world.store.verify_audit()["intact"]


def test_immediate_delete_goes_straight_to_none(world):
    plan_id = world.approved(delay_ms=0)
    world.execute(plan_id)
    for _ in range(10):
        world.cycle()
    assert plans.get(world.store, plan_id).state == "completed"
    stages = [e.detail["stage"] for e in plans.audit_entries(world.store, plan=plan_id)
              if e.action == "shrink_stage"]
    assert stages[0] == "None" and stages[-1] == "Removed" and "ReadOnly" not in stages


def test_a_shrink_cannot_pause_and_cancels_only_before_the_request(world):
    plan_id = world.approved()
    world.execute(plan_id)
    world.cycle()
    with pytest.raises(Conflict, match="cannot pause"):
        execution.pause(world.store, OPERATOR, plan_id, now=world.now())
    world.cycle()  # DeletePartitions accepted
    plans.request_cancel(world.store, OPERATOR, plan_id, now=T0 + timedelta(seconds=5))
    world.cycle(3)
    assert "cancel_impossible" in world.actions(plan_id)
    assert "no way back" in execution.progress(world.store, plan_id)["cause"]
    while plans.get(world.store, plan_id).state == "executing":
        world.cycle()
    assert plans.get(world.store, plan_id).state == "completed"
    second = world.approved(keep=1)
    world.execute(second)
    plans.request_cancel(world.store, OPERATOR, second, now=T0 + timedelta(seconds=6))
    world.cycle(3)
    assert plans.get(world.store, second).state == "cancelled"
    assert world.twin.partition_modes("a") == ["ReadWrite"] * 2  # nothing was sent


def test_crash_and_resume_mid_shrink(tmp_path):
    """Killed at every gateway call in turn, before or after it reaches the twin, and
    restarted from the store: the shrink completes, DeletePartitions reached the cluster
    once, and every stage is audited once."""
    for call in range(1, 12):
        for after in (False, True):
            w = World(tmp_path / f"{call}-{after}", gateway=CrashingGateway)
            sent = []
            w.twin.delete_partitions = _counting(w.twin.delete_partitions, sent)
            plan_id = w.approved(delay_ms=0)
            w.execute(plan_id)
            w.gw.crash_at = (call, after)
            for _ in range(40):
                try:
                    w.cycle()
                except Crash:
                    w.gw.crash_at = None
                    w.thread = w.new_thread()  # restarted: nothing in memory
                    w.thread.records.release("small", "test")
            assert plans.get(w.store, plan_id).state == "completed", (call, after)
            assert len(sent) == 1
            stages = [e.detail["stage"] for e in plans.audit_entries(w.store, plan=plan_id)
                      if e.action == "shrink_stage"]
            assert stages[-1] == "Removed" and len(stages) == len(set(stages))
            w.store.close()


def _counting(call, sent: list):
    def counted(*args, **kwargs):
        sent.append(args)
        return call(*args, **kwargs)
    return counted


def test_refused_where_partitions_cannot_be_deleted_and_the_migration_offered(tmp_path):
    w = World(tmp_path, enable=False)  # a real gateway saying it cannot
    assert shrink_execution.mode_on(w.gw) == "migration"
    assert "cannot delete partitions" in shrink_execution.what_happens(w.gw)
    plan_id = w.approved()
    with pytest.raises(Conflict, match=r"^cluster 'small' cannot delete partitions .*: run "
                                       r"the migration to 'a\.p2' instead$"):
        w.execute(plan_id)
    assert plans.get(w.store, plan_id).state == "approved"
    w.twin.set_mutation_quota(None, "railyard", 0.5)  # burst 5.5: 2 partitions fit
    w.execute(plan_id, migration=True)
    w.cycle(3)
    assert w.twin.snap.topic_partition_count(w.twin.snap.topic_index("a.p2")) == 2
    content = plans.get(w.store, plan_id).content["migration"]
    assert [w.twin.snap.replicas_of(w.twin.snap.partition_row("a.p2", p)) for p in (0, 1)] \
        == [content["assignment"][str(p)] for p in (0, 1)]
    created = next(e.detail for e in plans.audit_entries(w.store, plan=plan_id)
                   if e.action == "migration_topic_created")
    assert created["throttle_time_ms"] == 0
    assert created["quota"] == {"quota": "/config/clients/railyard", "rate": 0.5,
                                "burst": 5.5, "cost": 2, "tokens_after": 3.5,
                                "throttle_ms": 0, "charged_to": {
                                    "user": "ANONYMOUS", "client_id": "railyard"}}
    steps = w.shrink(plan_id)["steps"]
    assert [s["done"] for s in steps] == [True, False, False, False]
    with pytest.raises(Forbidden):
        w.check(plan_id, 1, VIEWER)
    with pytest.raises(Conflict, match="comes after step 2"):
        w.check(plan_id, 2)
    for step in (1, 2, 3):
        if step == 3:  # the old topic's deletion is the cluster's to confirm
            with pytest.raises(Conflict, match="step 4: topic 'a' is still on cluster small: "
                                               "delete it"):
                w.check(plan_id, 3)
            assert not w.shrink(plan_id)["steps"][3]["done"]
            w.gw.delete_topics(["a"])
        w.check(plan_id, step)
        assert execution.progress(w.store, plan_id, w.now())["shrink"]["steps"][step]["done"]
        if step == 1:  # a second click on a button still naming step 2 checks nothing else
            with pytest.raises(Conflict, match="step 2 is already checked off"):
                w.check(plan_id, 1)
        w.cycle()
    assert plans.get(w.store, plan_id).state == "completed"
    done = [(e.user, e.detail["step"]) for e in plans.audit_entries(w.store, plan=plan_id)
            if e.action == "migration_step_done"]
    assert done == [(OPERATOR.name, 2), (OPERATOR.name, 3), (OPERATOR.name, 4)]
    # the charts' markers of a migration name steps (its band read "#1: 4 batches")
    marks = execution.batch_markers(w.store, "small", 0, w.now())
    assert {m["unit"] for m in marks} == {"step"}
    assert [m["state"] for m in marks][:2] == ["step 1 started", "step 1 ended"]


def test_the_migration_waits_out_the_quota_throttle(tmp_path):
    w = World(tmp_path, enable=False)
    plan_id = w.approved()
    w.twin.set_mutation_quota(None, "railyard", 0.1)  # burst 1.1 tokens
    w.twin.create_topics([{"name": "other", "partitions": 3, "rf": 1}], client_id="railyard")
    w.execute(plan_id, migration=True)  # tokens 1.1 - 3 = -1.9: throttled 19,000 ms
    w.cycle(2)
    p = execution.progress(w.store, plan_id, w.now())
    assert "THROTTLING_QUOTA_EXCEEDED" in p["error"] and "19000 ms" in p["error"]
    assert not w.twin.snap.has_topic("a.p2")
    for _ in range(25):
        w.cycle()
    assert w.twin.snap.has_topic("a.p2")
    assert plans.get(w.store, plan_id).state == "executing"  # the operator's steps remain


class LaggingMetadata(TwinGateway):
    """The twin as a busy Apache Kafka answers: a topic CreateTopics committed is missing
    from Metadata until the broker asked has applied the record (``hidden`` answers)."""

    hidden = 0

    def describe_topics(self, names=None, missing_ok=False):
        if self.hidden and names == ["a.p2"]:
            self.hidden -= 1
            return []
        return super().describe_topics(names, missing_ok)


def test_a_created_topic_the_brokers_do_not_serve_yet_is_waited_for(tmp_path, monkeypatch):
    """Created, then absent from Metadata for a few answers: the migration waits for it
    and audits its creation once (it failed the plan, "no topic", when it did not wait);
    absent longer than the wait, it is retried and found as the plan's own."""
    w = World(tmp_path / "short", enable=False, gateway=LaggingMetadata)
    plan_id = w.approved()
    w.execute(plan_id, migration=True)
    w.gw.hidden = 3
    w.cycle(3)
    assert w.shrink(plan_id)["steps"][0]["done"] and w.gw.hidden == 0
    assert w.actions(plan_id).count("migration_topic_created") == 1
    assert plans.get(w.store, plan_id).state == "executing"
    w.store.close()
    monkeypatch.setattr("backend.executor.migration.METADATA_LAG_SECONDS", 0.3)
    w = World(tmp_path / "long", enable=False, gateway=LaggingMetadata)
    plan_id = w.approved()
    w.execute(plan_id, migration=True)
    w.gw.hidden = 10
    w.cycle(2)
    p = execution.progress(w.store, plan_id, w.now())
    assert "is not in the brokers' metadata 0.3 s after it was created" in p["error"]
    w.gw.hidden = 0
    w.cycle(5)
    assert w.shrink(plan_id)["steps"][0]["done"]
    assert "migration_topic_found" in w.actions(plan_id)
    assert plans.get(w.store, plan_id).state == "executing"
    w.store.close()


def test_gateway_faults_are_retried_then_fail_with_the_cause(tmp_path):
    """Faults injected into the twin's gateway: a timeout is retried and the shrink goes
    on; a refusal fails the plan with Kafka's error in words, nothing sent."""
    w = World(tmp_path / "retried")
    w.twin.faults.add("delete_partitions", "REQUEST_TIMED_OUT", times=2)
    plan_id = w.approved(delay_ms=0)
    w.execute(plan_id)
    for _ in range(20):
        w.cycle()
    assert plans.get(w.store, plan_id).state == "completed"
    assert w.actions(plan_id).count("execution_retry") == 2
    w.store.close()
    w = World(tmp_path / "refused")
    w.twin.faults.add("delete_partitions", "POLICY_VIOLATION", times=1)
    plan_id = w.approved(delay_ms=0)
    w.execute(plan_id)
    w.cycle(3)
    assert plans.get(w.store, plan_id).state == "failed"
    assert execution.progress(w.store, plan_id)["cause"].startswith(
        "the cluster refused: POLICY_VIOLATION")
    assert w.twin.partition_modes("a") == ["ReadWrite"] * 4
    w.store.close()


def test_a_migration_topic_that_is_not_the_plans_fails_it(tmp_path):
    w = World(tmp_path, enable=False)
    plan_id = w.approved()
    w.twin.create_topics([{"name": "a.p2", "partitions": 3, "rf": 1}])  # someone else's
    w.execute(plan_id, migration=True)
    w.cycle(3)
    assert plans.get(w.store, plan_id).state == "failed"
    assert "exists with 3 partitions, not the planned 2" in execution.progress(
        w.store, plan_id)["cause"]


def test_crash_and_resume_mid_migration(tmp_path):
    """Killed at every gateway call in turn while creating the migration's topic, and
    restarted from the store: the topic is created once, as planned, and found again
    after a crash that followed its creation."""
    found = 0
    for call in (1, 2, 3):  # DescribeClientQuotas, CreateTopics, Metadata (the check)
        for after in (False, True):
            w = World(tmp_path / f"{call}-{after}", enable=False, gateway=CrashingGateway)
            plan_id = w.approved()
            w.execute(plan_id, migration=True)
            w.gw.crash_at = (call, after)
            crashed = False
            for _ in range(10):
                try:
                    w.cycle()
                except Crash:
                    crashed, w.gw.crash_at = True, None
                    w.thread = w.new_thread()
                    w.thread.records.release("small", "test")
            assert crashed and w.shrink(plan_id)["steps"][0]["done"], (call, after)
            found += "migration_topic_found" in w.actions(plan_id)
            assert w.twin.snap.topic_partition_count(w.twin.snap.topic_index("a.p2")) == 2
            actions = w.actions(plan_id)
            assert actions.count("migration_topic_created") + \
                actions.count("migration_topic_found") == 1
            w.gw.delete_topics(["a"])  # the operator's part, before its last step
            for step in (1, 2, 3):
                w.check(plan_id, step)
            w.cycle()
            assert plans.get(w.store, plan_id).state == "completed", (call, after)
            w.store.close()
    assert found == 3  # killed once CreateTopics had reached the cluster: found again
