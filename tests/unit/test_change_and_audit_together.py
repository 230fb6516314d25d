"""An accepted pause, resume, throttle switch or migration step is written in the one
transaction that writes its audit row (Store.record's ``also``): a store that cannot take
the row (full, locked, or the process gone between two writes) leaves the change unmade,
and a change that did not happen (its conditional update matched nothing) has no row."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import OperationalError

from backend.errors import Conflict
from backend.services import execution, migration_checks, plans
from backend.store import store as store_module
from backend.store.executions import ExecutionRecords
from tests.plan_helpers import OPERATOR
from tests.unit import test_execution_service, test_shrink_execution


def full(*_args, **_kwargs) -> None:
    """The audit insert as a full disk answers it."""
    raise OperationalError("INSERT INTO audit", {}, Exception("database or disk is full"))


def actions(store, plan_id: int) -> list[str]:
    return [e.action for e in plans.audit_entries(store, plan=plan_id)]


@pytest.fixture
def world(tmp_path):
    w = test_execution_service.World(tmp_path)
    yield w
    w.store.close()


@pytest.fixture
def migrating(tmp_path):
    """A shrink running as its migration (Railyard's step 1 done): (world, plan id)."""
    w = test_shrink_execution.World(tmp_path, enable=False)
    plan_id = w.approved()
    w.execute(plan_id, migration=True)
    w.cycle(3)
    assert [s["done"] for s in w.shrink(plan_id)["steps"]] == [True, False, False, False]
    yield w, plan_id
    w.store.close()


def test_a_pause_the_store_cannot_audit_leaves_the_execution_running(world, monkeypatch):
    plan_id = world.executing(test_execution_service.moves(("a", 0, [3, 2])))
    world.cycle()
    row = ExecutionRecords(world.store).get(plan_id)
    with monkeypatch.context() as m:
        m.setattr(store_module, "append", full)
        with pytest.raises(OperationalError, match="disk is full"):
            execution.pause(world.store, OPERATOR, plan_id, now=world.now())
    assert ExecutionRecords(world.store).get(plan_id) == row  # state, version: unchanged
    assert "execution_pause" not in actions(world.store, plan_id)
    assert execution.pause(world.store, OPERATOR, plan_id, now=world.now())["state"] == \
        "pausing"
    with pytest.raises(Conflict, match="execution is pausing: it can pause only when running"):
        execution.pause(world.store, OPERATOR, plan_id, now=world.now())
    assert actions(world.store, plan_id).count("execution_pause") == 1  # not the refused one
    assert world.store.verify_audit()["intact"]


def test_a_throttle_switch_the_store_cannot_audit_is_not_made(world, monkeypatch):
    plan_id = world.executing(test_execution_service.moves(("a", 0, [3, 2])))
    world.cycle()
    records = ExecutionRecords(world.store)
    with monkeypatch.context() as m:
        m.setattr(store_module, "append", full)
        with pytest.raises(OperationalError, match="disk is full"):
            execution.switch_throttle(world.store, OPERATOR, plan_id, "adaptive",
                                      now=world.now())
    assert records.throttle_mode(plan_id) is None
    assert "throttle_mode_switched" not in actions(world.store, plan_id)
    after = execution.switch_throttle(world.store, OPERATOR, plan_id, "fixed",
                                      now=world.now())
    assert after["mode"] == "fixed" and after["switched_by"] == OPERATOR.name
    assert records.throttle_mode(plan_id)["mode"] == "fixed"
    assert [(e.user, e.detail) for e in plans.audit_entries(world.store, plan=plan_id)
            if e.action == "throttle_mode_switched"] == [(OPERATOR.name, {"mode": "fixed"})]


def test_a_migration_step_the_store_cannot_audit_stays_unchecked(migrating, monkeypatch):
    w, plan_id = migrating
    with monkeypatch.context() as m:
        m.setattr(store_module, "append", full)
        with pytest.raises(OperationalError, match="disk is full"):
            w.check(plan_id, 1)
    step = ExecutionRecords(w.store).batch(plan_id, 1)
    assert step["state"] == "pending" and step["ended_at"] is None
    assert "migration_step_done" not in w.actions(plan_id)
    assert w.check(plan_id, 1)["checked"]["step"] == 2
    assert w.shrink(plan_id)["steps"][1]["done"]
    assert w.actions(plan_id).count("migration_step_done") == 1


def test_a_step_another_operator_checked_meanwhile_is_refused_unaudited(migrating,
                                                                        monkeypatch):
    """Two operators check step 2 at once: the one whose write finds it done hears so,
    and the log keeps one check, not two."""
    w, plan_id = migrating
    real, other = migration_checks.producers_switched, [OPERATOR]

    def other_operator_first(*args, **kwargs) -> str:
        """The cluster read: meanwhile the other operator's check (reading it too) lands."""
        if other:
            w.check(plan_id, 1, other.pop())
        return real(*args, **kwargs)
    monkeypatch.setattr(migration_checks, "producers_switched", other_operator_first)
    with pytest.raises(Conflict, match=r"^step 2 is already checked off$"):
        w.check(plan_id, 1)
    assert w.actions(plan_id).count("migration_step_done") == 1
