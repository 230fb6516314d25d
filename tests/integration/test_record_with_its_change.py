"""Store.record with ``also``, on SQLite and on a real PostgreSQL: the change an audit
event records (a pause, a throttle switch, a migration step checked off) commits with its
row or not at all, and a change that matched nothing writes no row."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy.exc import OperationalError

from backend.services import plans
from backend.store import store as store_module
from backend.store.executions import (
    ExecutionRecords,
    checking_off,
    requesting,
    switching_throttle,
)
from backend.store.store import open_store
from tests.plan_helpers import OPERATOR, T0, moves, orders_cluster


def full(*_args, **_kwargs) -> None:
    """The audit insert as a full disk answers it."""
    raise OperationalError("INSERT INTO audit", {}, Exception("database or disk is full"))


def test_a_change_stands_or_falls_with_its_audit_row(store_url, monkeypatch):
    store = open_store(store_url)
    try:
        plan = plans.propose(store, OPERATOR, cluster="c1", kind="reassignment",
                             content=moves(("orders", 0, [3, 4])), preview={},
                             snapshot=orders_cluster(), now=T0)
        records = ExecutionRecords(store)
        now = T0.timestamp()
        records.create(plan.id, "c1", {"execution": {"throttle": None}}, plan.sha256,
                       [1, 1], OPERATOR.name, now)
        at = T0 + timedelta(seconds=1)

        def row(action: str) -> dict:
            return {"user": OPERATOR.name, "action": action, "plan_id": plan.id,
                    "detail": None}

        def logged() -> list[str]:
            return [e.action for e in plans.audit_entries(store, plan=plan.id)]

        with monkeypatch.context() as m:
            m.setattr(store_module, "append", full)
            for change in (requesting(plan.id, ("running",), "pausing", now),
                           switching_throttle(plan.id, "fixed", None, OPERATOR.name, now),
                           checking_off(plan.id, 1, now)):
                with pytest.raises(OperationalError, match="disk is full"):
                    store.record(at, row("execution_pause"), also=change)
        assert records.get(plan.id).state == "running" and records.get(plan.id).version == 0
        assert records.throttle_mode(plan.id) is None
        assert records.batch(plan.id, 1)["state"] == "pending"
        assert logged() == ["propose"]

        pause = requesting(plan.id, ("running",), "pausing", now)
        assert store.record(at, row("execution_pause"), also=pause)
        assert not store.record(at, row("execution_pause"), also=pause)  # already pausing
        assert records.get(plan.id).state == "pausing" and records.get(plan.id).version == 1
        assert store.record(at, row("throttle_mode_switched"), also=switching_throttle(
            plan.id, "adaptive", 1000, OPERATOR.name, now))
        assert records.throttle_mode(plan.id)["floor"] == 1000
        step = checking_off(plan.id, 1, now)
        assert store.record(at, row("migration_step_done"), also=step)
        assert not store.record(at, row("migration_step_done"), also=step)  # done already
        assert records.batch(plan.id, 1)["state"] == "done"
        assert store.record(at, row("config_set"))  # an event with no change of its own
        assert logged() == ["propose", "execution_pause", "throttle_mode_switched",
                            "migration_step_done", "config_set"]
        assert store.verify_audit()["intact"]
    finally:
        store.close()
