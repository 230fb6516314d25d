"""One way to write the store: every plan state change (a cancel request and an expiry
too) goes through Store.transition, every write (an execution's too) through Store.write,
and the executor retries and gives up under one policy (issue 25)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from backend.errors import Unavailable
from backend.executor.journal import StoreJournal
from backend.executor.retry import RetryPolicy
from backend.gateways.base import GatewayError
from backend.services import plans
from backend.store.executions import ACTIVE, ENDED, LIVE, Execution, ExecutionRecords
from backend.store.store import open_store
from tests.plan_helpers import APPROVER, OPERATOR, T0, moves, orders_cluster

SNAP = orders_cluster()


@pytest.fixture
def store(tmp_path):
    s = open_store(f"sqlite:///{tmp_path}/plans.db", expiry_hours=24)
    yield s
    s.close()


def spy(store, name: str) -> list:
    """Record every call of ``store.<name>``, still running it."""
    calls, real = [], getattr(store, name)

    def wrapped(*args, **kwargs):
        calls.append((args, kwargs))
        return real(*args, **kwargs)
    setattr(store, name, wrapped)
    return calls


def executing(store) -> int:
    plan = plans.propose(store, OPERATOR, cluster="c", kind="reassignment",
                         content=moves(("orders", 0, [2, 3, 4])), preview={}, snapshot=SNAP,
                         now=T0)
    plans.approve(store, APPROVER, plan.id, sha256=plan.sha256, topics_of=lambda *_: SNAP,
                  now=T0)
    plans.request_execute(store, OPERATOR, plan.id, topics_of=lambda *_: SNAP, now=T0)
    return plan.id


def test_every_plan_state_change_goes_through_transition(store):
    calls = spy(store, "transition")
    plan_id = executing(store)
    plans.request_cancel(store, OPERATOR, plan_id, now=T0)
    StoreJournal(store).ended(plan_id, "cancelled", "asked to", (T0 + timedelta(1)).timestamp())
    other = plans.propose(store, OPERATOR, cluster="c", kind="reassignment",
                          content=moves(("orders", 1, [2, 3, 4])), preview={}, snapshot=SNAP,
                          now=T0)
    assert plans.expire_due(store, now=T0 + timedelta(days=2)) == [other.id]
    made = [(kw["state"], kw["audit_row"]["action"]) for _, kw in calls]
    assert made == [("approved", "approve"), ("executing", "execute"),
                    ("executing", "cancel-requested"), ("cancelled", "cancel"),
                    ("expired", "expire")]
    assert plans.get(store, plan_id).cancel_requested_at is not None


def test_execution_writes_take_the_store_writer(store):
    writes = spy(store, "write")
    records = ExecutionRecords(store)
    assert records.acquire("c", "me", 0.0, 30)
    records.create(1, "c", {"execution": {"throttle": None}}, "0" * 64, [1], "olga", 0.0)
    ex = records.get(1)
    assert isinstance(ex, Execution) and ex.state == "running" and ex.active
    assert records.save(ex, phase="running").version == ex.version + 1
    assert records.request(1, LIVE, "cancelling", 1.0)
    assert len(writes) == 5  # the first lease: an update that matched nothing, an insert


def test_one_set_of_execution_states():
    assert ACTIVE == ("running", "pausing", "paused", "cancelling", "failing")
    assert not set(ACTIVE) & set(ENDED)


def test_one_retry_verdict():
    policy = RetryPolicy(budget=3)
    timeout = GatewayError("REQUEST_TIMED_OUT", "slow")
    assert policy.judge(1, timeout).retry_in == 1.0
    assert policy.judge(2, Unavailable("Cluster", "down")).retry_in == 2.0
    assert policy.judge(3, timeout).cause == "gave up after 3 attempts: REQUEST_TIMED_OUT: slow"
    assert policy.judge(1, GatewayError("POLICY_VIOLATION", "no")).cause \
        == "the cluster refused: POLICY_VIOLATION: no"
    assert policy.judge(4, timeout, restoring=True).retry_in == 4.0
    assert policy.judge(10, timeout, restoring=True).abandon
