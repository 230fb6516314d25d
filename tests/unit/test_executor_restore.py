"""Putting throttles back has a retry budget: a transient failure is retried with backoff
and the plan ends clean; past the budget the plan ends naming, in words, every config it
could not put back (its cause, an audit entry), and the records stay booked."""

from __future__ import annotations

import pytest

from backend.engines.throttle import FOLLOWER_RATE, LEADER_RATE, LEADER_REPLICAS
from backend.executor.book import ConfigBook
from backend.executor.retry import RetryPolicy
from tests.executor_rig import Rig
from tests.unit.test_executor import MB, plan, small_cluster

FOREVER = 1e9


@pytest.fixture
def rig(tmp_path) -> Rig:
    return Rig(small_cluster({("a", 0): 8 * MB}), tmp_path / "store.db",
               retry=RetryPolicy(budget=3, restore_budget=4))


def _entries(rig: Rig, action: str) -> list[dict]:
    return [d for _, a, d, _ in rig.journal.entries if a == action]


def _booked(rig: Rig, plan_id: int) -> list[dict]:
    return ConfigBook(rig.records, plan_id, rig.gw, lambda *_: None).records()


def test_a_transient_failure_putting_throttles_back_is_retried(rig):
    rig.start(1, plan(("a", 0, [3, 2])), 4 * MB)
    while rig.step(1).phase != "running" or rig.twin.list_reassignments():
        pass  # the move is done; the next tick takes its throttles off
    assert rig.throttle_configs() != {}
    rig.twin.faults.add("alter_configs", "REQUEST_TIMED_OUT", until=rig.now + 2)
    ex = rig.run(1)
    assert ex.state == "completed" and ex.cause is None
    assert [r["retry_in"] for r in _entries(rig, "execution_retry")] == [1.0, 2.0]
    assert rig.throttle_configs() == {} and _booked(rig, 1) == []
    assert _entries(rig, "configs_not_restored") == []


def test_past_the_restore_budget_the_plan_names_what_it_could_not_put_back(rig):
    rig.twin.alter_configs("broker", "1", {LEADER_RATE: "123"})  # an operator's own
    rig.start(1, plan(("a", 0, [3, 2])), 4 * MB)
    rig.step(1)
    left = rig.throttle_configs()
    rig.twin.faults.add("alter_configs", "REQUEST_TIMED_OUT", until=FOREVER)
    ex = rig.run(1)
    assert ex.state == "failed"
    assert ex.cause.startswith("gave up after 3 attempts: REQUEST_TIMED_OUT")
    assert "could not put back 8 config(s) after 4 attempts (REQUEST_TIMED_OUT: " in ex.cause
    assert "broker 1 leader.replication.throttled.rate is '4000000' (was '123')" in ex.cause
    assert "broker 3 follower.replication.throttled.rate is '4000000' (was not set)" \
        in ex.cause
    assert "in flight" not in ex.cause  # the move itself finished
    assert rig.journal.ends == [(1, "failed", ex.cause)]
    (note,) = _entries(rig, "configs_not_restored")
    assert note["text"] in ex.cause and note["attempts"] == 4
    booked = {(c["entity_type"], c["name"], c["key"]): (c["value"], c["prior"])
              for c in note["configs"]}
    assert booked[("broker", "1", LEADER_RATE)] == ("4000000", "123")
    assert booked[("broker", "3", FOLLOWER_RATE)] == ("4000000", None)
    # the record matches the cluster: every config left is booked, and stays booked
    assert {(e, n, k) for (e, n), cfg in left.items() for k in cfg} == set(booked)
    assert rig.throttle_configs() == left
    assert {(r["entity_type"], r["name"], r["key"]) for r in _booked(rig, 1)} == set(booked)


def test_the_entities_that_can_be_put_back_are_even_when_one_cannot(rig):
    """One entity failing does not keep the others on: only what failed stays booked."""
    rig.twin.alter_configs("topic", "a", {LEADER_REPLICAS: "9:9"})
    rig.start(1, plan(("a", 0, [3, 2])), 4 * MB)
    rig.step(1)
    rig.twin.faults.add("alter_configs", "NOT_CONTROLLER", times=1)  # the first entity
    ex = rig.run(1)
    assert ex.state == "completed"
    assert rig.throttle_configs() == {("topic", "a"): {LEADER_REPLICAS: "9:9"}}
    restored = [d["name"] for d in _entries(rig, "config_restored")]
    assert restored == ["2", "3", "a", "1"]  # broker 1 (sorted first) on the retry


def test_a_cancel_past_the_restore_budget_ends_cancelled_with_the_list(rig):
    rig.start(1, plan(("a", 0, [3, 2])), 1 * MB)
    rig.step(1)
    rig.twin.faults.add("alter_configs", "BROKER_NOT_AVAILABLE", until=FOREVER)
    assert rig.records.request(1, ("running",), "cancelling", rig.now)
    ex = rig.run(1)
    assert ex.state == "cancelled" and rig.twin.list_reassignments() == []
    assert ex.cause.startswith("could not put back 8 config(s) after 4 attempts")
    assert [a for a in rig.journal.actions(1) if a in (
        "reassignments_cancelled", "configs_not_restored", "execution_cancelled")] == [
        "reassignments_cancelled", "configs_not_restored", "execution_cancelled"]


def test_without_a_fault_the_budget_changes_nothing(rig):
    rig.start(1, plan(("a", 0, [3, 2]), ("b", 1, [2, 3])), 4 * MB, per_broker=1)
    assert rig.run(1).state == "completed"
    assert rig.throttle_configs() == {} and "execution_retry" not in rig.journal.actions(1)


class _UnreachableBroker:
    """The rig's gateway, except that broker ``down`` takes no config change: on Apache
    Kafka a broker's configs are altered through that broker (KAFKA-13392), so while it
    is stopped the client fails with a connection error or an unknown node id."""

    def __init__(self, gw, down: str) -> None:
        self.gw, self.down = gw, down

    def __getattr__(self, name):
        return getattr(self.gw, name)

    def alter_configs(self, entity_type, name, set_=None, delete=None):
        from backend.errors import Unavailable
        if entity_type == "broker" and name == self.down:
            raise Unavailable("Kafka at 127.0.0.1:9092",
                              f"IncrementalAlterConfigs failed: UnknownBrokerIdError: {name}")
        return self.gw.alter_configs(entity_type, name, set_=set_, delete=delete)


def test_a_broker_down_while_its_throttle_is_put_back_is_named_and_waited_for(rig):
    """Seen on Apache Kafka 4.1.1 (tests/integration/test_kafka_plan_flow.py): the error
    while putting back a stopped broker's throttle named a connection, not the broker."""
    rig.start(1, plan(("a", 0, [3, 2])), 1 * MB)
    rig.step(1)
    rig.twin.fail_broker(3)
    rig.client = _UnreachableBroker(rig.gw, "3")
    rig.executor = rig.new_executor()
    assert rig.records.request(1, ("running",), "cancelling", rig.now)
    for _ in range(3):
        ex = rig.step(1)
    assert ex.state == "cancelling"
    assert ex.error.startswith("BROKER_NOT_AVAILABLE: broker 3 is down: its throttle "
                                  "configs are put back once it is up again (")
    assert set(rig.throttle_configs()) == {("broker", "3")}  # the others are back
    rig.twin.recover_broker(3)
    rig.client = rig.gw
    rig.executor = rig.new_executor()
    ex = rig.run(1)
    assert ex.state == "cancelled" and rig.throttle_configs() == {}
