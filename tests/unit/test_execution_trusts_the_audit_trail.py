"""Nothing runs unless the plan's sealed audit trail shows it approved, byte for byte:
someone who can write the database but not read the audit key edits a plan's content
after its approval, or sets a plan's state to executing with SQL, and the executor does
not start it (it ends failed, naming what did not match) and Execute is refused."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import delete, select, update

from backend.errors import Conflict
from backend.services import execution, plans
from backend.store.approvals import Condition, Policies, Policy, Requirement, Rule
from backend.store.schema import audit, exec_batches, exec_configs, exec_content, executions
from backend.store.schema import plans as plan_rows
from backend.store.store import open_store
from tests.audit_attacks import append_forged_approval
from tests.plan_helpers import APPROVER, APPROVER2, OPERATOR, T0, moves
from tests.unit.test_execution_service import World
from tests.unit.test_executor import MB

MOVE = moves(("a", 0, [3, 2]))


@pytest.fixture
def world(tmp_path):
    w = World(tmp_path)
    yield w
    w.store.close()


def proposed(world: World, content: dict = MOVE) -> plans.Plan:
    return plans.propose(world.store, OPERATOR, cluster="small", kind="reassignment",
                         content=content, preview={"bytes_to_move": 4 * MB},
                         snapshot=world.twin.assignment(), throttle=MB, now=T0)


def approve(world: World, plan: plans.Plan, who=APPROVER) -> None:
    plans.approve(world.store, who, plan.id, sha256=plan.sha256,
                  topics_of=lambda *_: world.twin.assignment(), now=T0 + timedelta(seconds=1))


def execute(world: World, plan_id: int) -> plans.Plan:
    return plans.request_execute(world.store, OPERATOR, plan_id,
                                 topics_of=lambda *_: world.twin.assignment(),
                                 now=T0 + timedelta(seconds=2))


def sql(world: World, statement) -> None:
    """What a database writer does: straight to the tables, past every service."""
    with world.store.engine.begin() as conn:
        conn.execute(statement)


def edit_content(world: World, plan_id: int) -> None:
    sql(world, update(plan_rows).where(plan_rows.c.id == plan_id)
        .values(content=moves(("a", 0, [4, 2]))))


def set_state(world: World, plan_id: int, state: str) -> None:
    sql(world, update(plan_rows).where(plan_rows.c.id == plan_id)
        .values(state=state, version=plan_rows.c.version + 1))


def not_started(world: World, plan_id: int, cause: str) -> None:
    """One cycle later the plan is failed with ``cause`` in its fail row, nothing ran."""
    world.cycle()
    assert plans.get(world.store, plan_id).state == "failed"
    last = plans.audit_entries(world.store, plan=plan_id)[-1]
    assert (last.user, last.action, last.before, last.after, last.detail) == (
        "railyard", "fail", "executing", "failed", {"cause": cause})
    assert execution.progress(world.store, plan_id) is None
    assert world.twin.list_reassignments() == [] and world.throttles() == {}
    assert world.store.verify_audit()["intact"]


def test_a_plan_whose_content_was_edited_after_its_execute_is_not_started(world):
    plan = proposed(world)
    approve(world, plan)
    execute(world, plan.id)
    edit_content(world, plan.id)
    not_started(world, plan.id, f"plan {plan.id}'s content does not hash to the sha256 "
                                f"its approvers signed")


def test_execute_is_refused_for_a_plan_whose_content_was_edited_after_approval(world):
    plan = proposed(world)
    approve(world, plan)
    edit_content(world, plan.id)
    with pytest.raises(Conflict) as refused:
        execute(world, plan.id)
    assert str(refused.value) == (f"plan {plan.id}'s content does not hash to the sha256 "
                                  f"its approvers signed")
    assert plans.get(world.store, plan.id).state == "approved"


def test_execute_is_refused_when_content_and_sha256_were_both_replaced(world):
    plan = proposed(world)
    approve(world, plan)
    other = moves(("a", 0, [4, 2]))
    sql(world, update(plan_rows).where(plan_rows.c.id == plan.id).values(
        content=other, sha256=plans.plan_sha256("reassignment", "small", other, MB)))
    with pytest.raises(Conflict, match=f"plan {plan.id}'s sha256 is not the one its "
                                       f"proposal in the audit trail recorded"):
        execute(world, plan.id)


def test_a_plan_set_to_executing_without_approvals_is_not_started(world):
    plan = proposed(world)
    set_state(world, plan.id, "executing")
    not_started(world, plan.id, f"plan {plan.id} has 0 approvals in its audit trail, its "
                                f"rule asks for 1")


def test_an_approved_plan_set_to_executing_without_execute_is_not_started(world):
    plan = proposed(world)
    approve(world, plan)
    set_state(world, plan.id, "executing")
    not_started(world, plan.id, f"plan {plan.id} is executing but its audit trail says it "
                                f"is approved")


def test_a_forged_approval_row_does_not_count(world):
    plan = proposed(world)
    row = append_forged_approval(world.store, plan.id, world.store.keys.current)
    set_state(world, plan.id, "executing")
    world.cycle()
    assert plans.get(world.store, plan.id).state == "failed"
    assert plans.audit_entries(world.store, plan=plan.id)[-1].detail == {
        "cause": f"plan {plan.id}'s audit row {row} (approve by mallory): it is not sealed"}
    assert execution.progress(world.store, plan.id) is None


def test_a_completed_plan_set_back_to_executing_is_not_run_again(world):
    plan = proposed(world)
    approve(world, plan)
    execute(world, plan.id)
    world.until(plan.id, "completed")
    set_state(world, plan.id, "executing")
    for table in (exec_batches, exec_content, exec_configs, executions):
        sql(world, delete(table).where(table.c.plan_id == plan.id))
    not_started(world, plan.id, f"plan {plan.id} is executing but its audit trail says it "
                                f"is completed")


def test_a_running_plan_whose_execution_row_was_deleted_is_not_started_again(world):
    plan = proposed(world)
    approve(world, plan)
    execute(world, plan.id)
    world.cycle()
    assert execution.progress(world.store, plan.id)["state"] == "running"
    for table in (exec_batches, exec_content, exec_configs, executions):
        sql(world, delete(table).where(table.c.plan_id == plan.id))
    with world.store.read() as conn:
        started = conn.execute(select(audit.c.id).where(
            audit.c.plan_id == plan.id, audit.c.action == "execution_started")).scalar_one()
    world.cycle()
    assert plans.get(world.store, plan.id).state == "failed"
    assert plans.audit_entries(world.store, plan=plan.id)[-1].detail == {
        "cause": f"plan {plan.id} already started (audit row {started}): its execution "
                 f"row is gone"}


def under_rule(tmp_path, requirement: Requirement) -> World:
    """A world whose store's one approval rule, for every plan, is ``requirement``."""
    world = World(tmp_path)
    world.store.close()
    world.store = open_store(f"sqlite:///{tmp_path}/ruled.db", approval=Policies(
        Policy((Rule(requirement.rule, Condition(), requirement),))))
    world.thread = execution.executor_thread(
        world.store, ["small"], lambda _c: world.gw, lambda _c: world.twin.assignment(),
        clock=world.now, holder="test")
    return world


def test_a_plan_needing_two_approvals_runs_only_with_both(tmp_path):
    world = under_rule(tmp_path, Requirement(approvers=2, rule="two"))
    try:
        short, full = proposed(world), proposed(world, moves(("b", 1, [2, 3])))
        approve(world, short)
        set_state(world, short.id, "approved")  # one approval, made to look enough
        with pytest.raises(Conflict, match=f"^plan {short.id} has 1 approval in its audit "
                                           f"trail, its rule asks for 2$"):
            execute(world, short.id)
        approve(world, full)
        approve(world, full, APPROVER2)
        execute(world, full.id)
        world.until(full.id, "completed")
    finally:
        world.store.close()


def test_a_properly_approved_plan_still_runs(world):
    plan = proposed(world)
    approve(world, plan)
    assert execute(world, plan.id).state == "executing"
    world.until(plan.id, "completed")
    actions = [e.action for e in plans.audit_entries(world.store, plan=plan.id)]
    assert actions[:4] == ["propose", "approve", "execute", "execution_started"]
    assert "fail" not in actions


def test_an_approval_of_other_bytes_does_not_count(world):
    """Content and sha256 replaced before the approval and put back after: the approver
    signed other bytes, which their sealed approve row now says."""
    plan = proposed(world)
    other = moves(("a", 0, [4, 2]))
    other_sha = plans.plan_sha256("reassignment", "small", other, MB)
    sql(world, update(plan_rows).where(plan_rows.c.id == plan.id).values(
        content=other, sha256=other_sha))
    approve(world, plans.get(world.store, plan.id))  # what the approver was shown
    sql(world, update(plan_rows).where(plan_rows.c.id == plan.id).values(
        content=MOVE, sha256=plan.sha256))
    with pytest.raises(Conflict, match=f"^plan {plan.id}'s approval by "
                                       f"{APPROVER.name} \\(audit row \\d+\\) is of sha256 "
                                       f"{other_sha[:12]}\\.\\.\\., not the plan's$"):
        execute(world, plan.id)


def test_an_admin_rule_is_met_only_by_the_roles_the_rows_say(tmp_path):
    """A rule asking for an admin among two approvers, its stored requirement rewritten to
    two approvers of any role: two approvers approve through the service, and the sealed
    rows (their roles, the proposal's requirement) do not meet the rule."""
    world = under_rule(tmp_path, Requirement(approvers=2, rule="two incl. admin",
                                             admin=True))
    try:
        plan = proposed(world)
        sql(world, update(plan_rows).where(plan_rows.c.id == plan.id).values(
            approval=Requirement(approvers=2, rule="two incl. admin").to_dict()))
        approve(world, plan)
        approve(world, plan, APPROVER2)
        assert plans.get(world.store, plan.id).state == "approved"  # as the column said
        with pytest.raises(Conflict, match=f"^plan {plan.id}'s approvals in its audit trail "
                                           f"do not meet rule 'two incl. admin': needs 2 "
                                           f"approvers incl. an admin: 2 of 2 so far"):
            execute(world, plan.id)
    finally:
        world.store.close()
