"""The executor on the twin with the twin's clock: throttles as Kafka's tool sets them,
restored exactly (an operator's own values put back), a broker's rate off as soon as it
has nothing in flight, pause, resume, cancel, retries and failure."""

from __future__ import annotations

import numpy as np
import pytest

from backend.engines.throttle import (
    FOLLOWER_RATE,
    FOLLOWER_REPLICAS,
    LEADER_RATE,
    LEADER_REPLICAS,
)
from backend.errors import BadInput, Unavailable
from backend.executor.freeze import freeze, spec_from_dict
from backend.executor.retry import RetryPolicy
from backend.gateways.base import METADATA_LAG_SECONDS
from backend.model.snapshot import Snapshot
from tests.executor_rig import CountingGateway, Rig

MB = 1_000_000


def small_cluster(sizes: dict[tuple[str, int], int] | None = None) -> Snapshot:
    """Brokers 1-4; topic a: 4 partitions, topic b: 2, RF 2, nothing written meanwhile."""
    reps = {("a", 0): [1, 2], ("a", 1): [2, 3], ("a", 2): [3, 4], ("a", 3): [4, 1],
            ("b", 0): [1, 3], ("b", 1): [2, 4]}
    sizes = sizes or {}
    keys = list(reps)
    flat = [b - 1 for k in keys for b in reps[k]]
    return Snapshot.build("small", [1, 2, 3, 4], [None] * 4, ["a", "b"],
                          [0 if t == "a" else 1 for t, _ in keys],
                          np.arange(0, 2 * len(keys) + 1, 2), flat,
                          part_size=[sizes.get(k, 4 * MB) for k in keys])


def plan(*moves: tuple[str, int, list[int]]) -> dict:
    return {"version": 1, "partitions": [{"topic": t, "partition": p, "replicas": r}
                                         for t, p, r in moves]}


@pytest.fixture
def rig(tmp_path) -> Rig:
    return Rig(small_cluster(), tmp_path / "store.db")


def replicas(rig: Rig, topic: str, p: int) -> list[int]:
    return rig.twin.snap.replicas_of(rig.twin.snap.partition_row(topic, p))


def test_sets_throttles_as_kafka_reassign_partitions_and_removes_them(rig):
    rig.start(1, plan(("a", 0, [3, 2]), ("a", 1, [2, 4])), 2 * MB, per_broker=5)
    rig.step(1)
    # sources = current replicas, destinations = target - current, "p:b" in string order
    assert rig.throttle_configs() == {
        ("broker", str(b)): {LEADER_RATE: "2000000", FOLLOWER_RATE: "2000000"}
        for b in (1, 2, 3, 4)} | {
        ("topic", "a"): {LEADER_REPLICAS: "0:1,0:2,1:2,1:3", FOLLOWER_REPLICAS: "0:3,1:4"}}
    ex = rig.run(1)
    assert ex.state == "completed"
    assert replicas(rig, "a", 0) == [3, 2] and replicas(rig, "a", 1) == [2, 4]
    assert rig.throttle_configs() == {}
    assert dict(rig.gw.starts) == {"a-0": 1, "a-1": 1}
    assert ex.partitions_done == 2 and ex.bytes_done == 8 * MB
    assert rig.journal.ends == [(1, "completed", None)]


def test_puts_back_what_an_operator_had_set(rig):
    rig.twin.alter_configs("broker", "1", {LEADER_RATE: "777"})
    rig.twin.alter_configs("topic", "a", {FOLLOWER_REPLICAS: "*"})
    rig.twin.alter_configs("broker", "4", {"max.broker.partitions": "100"})
    before = rig.throttle_configs()
    rig.start(1, plan(("a", 0, [3, 2]), ("b", 1, [2, 3])), 2 * MB)
    rig.step(1)
    assert rig.twin.broker_configs["1"][LEADER_RATE] == "2000000"
    assert rig.twin.topic_configs["a"][FOLLOWER_REPLICAS] == "0:3"
    assert rig.run(1).state == "completed"
    assert rig.throttle_configs() == before
    assert rig.twin.broker_configs["4"] == {"max.broker.partitions": "100"}


def test_a_brokers_rate_comes_off_as_soon_as_it_has_nothing_in_flight(tmp_path):
    rig = Rig(small_cluster({("a", 0): 1 * MB, ("b", 1): 20 * MB}), tmp_path / "s.db")
    # a-0: 1 -> 3 (brokers 1, 2, 3); b-1: 2 -> ... no: b-1 [2, 4] -> [3, 4]
    rig.start(1, plan(("a", 0, [1, 4]), ("b", 1, [3, 4])), 1 * MB, per_broker=5)
    rig.step(1)
    assert {n for e, n in rig.throttle_configs() if e == "broker"} == {"1", "2", "3", "4"}
    for _ in range(5):  # a-0 (1 MB) is done, b-1 (20 MB) still copies
        rig.step(1)
    assert rig.twin.list_reassignments()[0]["topic"] == "b"
    rig.step(1)
    brokers = {n for e, n in rig.throttle_configs() if e == "broker"}
    assert brokers == {"2", "3", "4"}  # broker 1 only served a-0
    assert rig.throttle_configs()[("topic", "b")] == {LEADER_REPLICAS: "1:2,1:4",
                                                      FOLLOWER_REPLICAS: "1:3"}
    assert ("topic", "a") not in rig.throttle_configs()
    assert rig.run(1).state == "completed" and rig.throttle_configs() == {}


def test_batches_run_in_the_frozen_order_within_the_limits(rig):
    content = rig.start(1, plan(("a", 0, [3, 2]), ("a", 1, [2, 4]), ("a", 2, [1, 4]),
                                ("b", 0, [4, 3])), 1 * MB, per_broker=1)
    batches = content["execution"]["batches"]
    assert len(batches) > 1 and sorted(i for b in batches for i in b) == [0, 1, 2, 3]
    seen = []
    for _ in range(200):
        done = rig.step(1).state == "completed"
        seen.append({(r["topic"], r["partition"]) for r in rig.twin.list_reassignments()})
        if done:
            break
    entries = content["reassignment"]["partitions"]
    first = {(entries[i]["topic"], entries[i]["partition"]) for i in batches[0]}
    assert next(s for s in seen if s) == first
    assert max(len(s) for s in seen) <= max(len(b) for b in batches)
    assert [a for a in rig.journal.actions() if a.startswith("batch_")] == \
        ["batch_started", "batch_finished"] * len(batches)


def test_pause_finishes_the_batch_in_flight_and_starts_nothing(rig):
    rig.start(1, plan(("a", 0, [3, 2]), ("a", 2, [1, 4]), ("b", 1, [2, 3])), 2 * MB,
              per_broker=1)
    rig.step(1)
    assert rig.records.request(1, ("running",), "pausing", rig.now)
    for _ in range(30):
        ex = rig.step(1)
    assert ex.state == "paused" and ex.batch == 0
    assert rig.twin.list_reassignments() == [] and rig.throttle_configs() == {}
    assert rig.records.batches(1)[1]["state"] == "pending"
    assert rig.records.request(1, ("pausing", "paused"), "running", rig.now)
    assert rig.run(1).state == "completed"
    assert all(n == 1 for n in rig.gw.starts.values()) and len(rig.gw.starts) == 3


def test_cancel_stops_the_moves_in_flight_and_restores_the_throttles(rig):
    rig.twin.alter_configs("broker", "2", {FOLLOWER_RATE: "123"})
    before = rig.throttle_configs()
    rig.start(1, plan(("a", 0, [3, 2]), ("b", 0, [4, 3])), 1 * MB, per_broker=5)
    rig.step(1)
    assert len(rig.twin.list_reassignments()) == 2
    assert rig.records.request(1, ("running", "pausing", "paused"), "cancelling", rig.now)
    ex = rig.step(1)
    assert ex.state == "cancelled"
    assert rig.twin.list_reassignments() == []
    assert replicas(rig, "a", 0) == [1, 2] and replicas(rig, "b", 0) == [1, 3]
    assert rig.throttle_configs() == before
    assert "reassignments_cancelled" in rig.journal.actions(1)
    assert rig.journal.ends == [(1, "cancelled", None)]


def test_gateway_errors_are_retried_with_backoff(rig):
    rig.twin.faults.add("alter_reassignments", "REQUEST_TIMED_OUT", times=2)
    rig.start(1, plan(("a", 0, [3, 2])), 4 * MB)
    assert rig.run(1).state == "completed"
    retries = [d for _, a, d, _ in rig.journal.entries if a == "execution_retry"]
    assert [r["retry_in"] for r in retries] == [1.0, 2.0]
    assert rig.throttle_configs() == {} and dict(rig.gw.starts) == {"a-0": 1}


def test_past_the_retry_budget_the_plan_fails_with_its_cause_and_nothing_left(tmp_path):
    rig = Rig(small_cluster(), tmp_path / "s.db", retry=RetryPolicy(budget=3, base=1.0))
    rig.twin.alter_configs("topic", "a", {LEADER_REPLICAS: "3:4"})
    before = rig.throttle_configs()
    rig.twin.faults.add("alter_reassignments", "NOT_CONTROLLER", until=60.0)
    rig.start(1, plan(("a", 0, [3, 2])), 4 * MB)
    ex = rig.run(1)
    assert ex.state == "failed"
    assert ex.cause.startswith("gave up after 3 attempts: NOT_CONTROLLER")
    assert rig.throttle_configs() == before and rig.twin.list_reassignments() == []
    assert rig.journal.ends == [(1, "failed", ex.cause)]


def test_a_refusal_fails_at_once(rig):
    rig.twin.faults.add("alter_reassignments", "POLICY_VIOLATION", times=1)
    rig.start(1, plan(("a", 0, [3, 2])), 4 * MB)
    ex = rig.run(1)
    assert ex.state == "failed" and "refused: POLICY_VIOLATION" in ex.cause
    assert rig.throttle_configs() == {}


def test_a_broker_down_mid_move_fails_the_plan_past_the_budget(tmp_path):
    rig = Rig(small_cluster({("a", 0): 50 * MB}), tmp_path / "s.db",
              retry=RetryPolicy(budget=3))
    rig.start(1, plan(("a", 0, [3, 2])), 1 * MB)
    rig.step(1)
    rig.twin.fail_broker(3)
    ex = rig.run(1)
    assert ex.state == "failed" and "broker 3 is down" in ex.cause
    assert rig.throttle_configs() == {} and rig.twin.list_reassignments() == []


def test_a_move_cancelled_outside_railyard_fails_the_plan(rig):
    rig.start(1, plan(("a", 0, [3, 2])), 1 * MB)
    rig.step(1)
    rig.twin.cancel_reassignments()
    ex = rig.run(1)
    assert ex.state == "failed" and "outside Railyard" in ex.cause
    assert rig.throttle_configs() == {}


class StaleAssignment(CountingGateway):
    """The twin as a busy Apache Kafka answers: ListPartitionReassignments is the
    controller's, Metadata the answering broker's, which may not have applied the
    controller's last records yet; ``stale`` answers give the assignment ``old``."""

    old: Snapshot | None = None
    stale = 0

    def assignment(self) -> Snapshot:
        if self.stale:
            self.stale -= 1
            return self.old
        return super().assignment()


def stale_assignment(rig: Rig) -> StaleAssignment:
    rig.client = rig.gw = StaleAssignment(rig.twin)
    rig.executor = rig.new_executor()
    return rig.gw


def test_a_finished_move_the_answering_broker_has_not_applied_yet_completes(rig):
    """A move out of flight whose Metadata still shows the replicas before it (as a broker
    behind the controller answers) is read again for up to METADATA_LAG_SECONDS before
    the batch is judged: the plan completes (it failed, "cancelled or changed outside
    Railyard", when it judged the first answer). Lagging longer, it fails as before."""
    gw = stale_assignment(rig)
    gw.old = rig.twin.assignment()
    rig.start(1, plan(("a", 0, [3, 2])), 4 * MB)
    rig.step(1)
    gw.stale = 5  # answers, one a tick: the broker catches up within 5 s
    ex = rig.run(1)
    assert ex.state == "completed" and ex.cause is None and gw.stale == 0
    assert replicas(rig, "a", 0) == [3, 2] and rig.throttle_configs() == {}
    assert "execution_failing" not in rig.journal.actions(1)
    assert rig.records.batches(1)[0]["done"] == 1

    gw.old = rig.twin.assignment()
    rig.start(2, plan(("a", 0, [1, 2])), 4 * MB)
    rig.step(2)
    gw.stale = 10_000
    t0 = rig.now
    ex = rig.run(2)
    assert ex.state == "failed" and ex.cause.startswith("a-0 is not at its target")
    assert rig.now - t0 >= METADATA_LAG_SECONDS and rig.throttle_configs() == {}


def test_without_a_throttle_nothing_is_set(rig):
    rig.start(1, plan(("a", 0, [3, 2])), None)
    rig.step(1)
    assert rig.throttle_configs() == {}
    assert rig.run(1).state == "completed"


def test_frozen_spec_is_checked(rig):
    snap = rig.twin.assignment()
    p = plan(("a", 0, [3, 2]), ("a", 1, [2, 4]))
    spec = freeze(snap, p, 5 * MB, per_broker=1)
    assert spec_from_dict(spec.to_dict(), 2) == spec
    with pytest.raises(BadInput, match="exactly once"):
        spec_from_dict({**spec.to_dict(), "batches": [[0]]}, 2)
    with pytest.raises(BadInput, match="throttle"):
        freeze(snap, p, 0)


def test_a_scenario_injects_gateway_faults(rig):
    from backend.gateways.base import GatewayError
    from backend.twin.scenario import ScenarioRunner, scenario_from_dict

    sc = scenario_from_dict({"events": [
        {"at": "10s", "action": "gateway_fault", "op": "alter_configs",
         "error": "REQUEST_TIMED_OUT", "for": "5s"},
        {"at": "20s", "action": "gateway_fault", "op": "*", "error": "NOT_CONTROLLER",
         "calls": 1}]})
    runner = ScenarioRunner(rig.twin, sc)
    runner.advance_to(11)
    with pytest.raises(GatewayError, match="REQUEST_TIMED_OUT") as e:
        rig.gw.alter_configs("broker", "1", {LEADER_RATE: "5"})
    assert e.value.retriable
    runner.advance_to(16)
    rig.gw.alter_configs("broker", "1", {LEADER_RATE: "5"})
    runner.advance_to(21)
    # a refused read is Unavailable (a banner; the executor retries it), as from Kafka
    with pytest.raises(Unavailable, match="list_reassignments refused: NOT_CONTROLLER"):
        rig.gw.list_reassignments()
    assert rig.gw.list_reassignments() == []
    with pytest.raises(BadInput, match="operation"):
        rig.twin.faults.add("create_acls", "X", times=1)


def test_the_done_count_never_drops_when_a_move_is_changed_outside_railyard(tmp_path):
    """Issue 26 item 1: a partition counts as done only once it is at its target, so one
    cancelled outside Railyard mid-batch is never counted and the figure, read after every
    write the executor makes (as the dashboard may read it), never goes back."""
    sizes = {("a", 0): 1 * MB, ("a", 1): 10 * MB, ("b", 1): 20 * MB}
    rig = Rig(small_cluster(sizes), tmp_path / "s.db")
    rig.start(1, plan(("a", 0, [1, 4]), ("a", 1, [2, 1]), ("b", 1, [3, 4])), 1 * MB,
              per_broker=5)
    seen: list[int] = []
    for name in ("save", "save_batch", "finish_batch"):
        write = getattr(rig.records, name)

        def observed(*args, _write=write, **kwargs):
            out = _write(*args, **kwargs)
            seen.append(partitions_done(rig))
            return out
        setattr(rig.records, name, observed)
    for _ in range(7):  # a-0 (1 MB) is done; a-1 and b-1 still copy
        rig.step(1)
    assert {r["partition"] for r in rig.twin.list_reassignments()} == {1}
    rig.twin.cancel_reassignments([("a", 1)])
    rig.step(1)
    assert partitions_done(rig) == 1  # a-0 only
    ex = rig.run(1)
    assert ex.state == "failed" and ex.cause.startswith("a-1 is not at its target")
    assert seen == sorted(seen) and seen[-1] == 2


def partitions_done(rig: Rig, plan_id: int = 1) -> int:
    """The figure the progress view shows: finished batches, plus the one in flight."""
    ex = rig.records.get(plan_id)
    return ex.partitions_done + sum(b["done"] for b in rig.records.batches(plan_id)
                                    if b["state"] == "running")
