"""What a user may do with a plan now, as the services say it (issue 25): the plan page
shows exactly these buttons instead of working the rules out itself."""

from __future__ import annotations

from dataclasses import replace

import pytest

from backend.services import plans
from backend.services.plan_actions import allowed_actions, can_propose
from backend.store.store import open_store
from tests.plan_helpers import (
    ADMIN,
    APPROVER,
    OPERATOR,
    T0,
    VIEWER,
    moves,
    orders_cluster,
    shrink_content,
)

SNAP = orders_cluster()


@pytest.fixture
def store(tmp_path):
    s = open_store(f"sqlite:///{tmp_path}/plans.db")
    yield s
    s.close()


def proposed(store, kind="reassignment"):
    content = moves(("orders", 0, [2, 3, 4])) if kind == "reassignment" else shrink_content()
    return plans.propose(store, OPERATOR, cluster="c", kind=kind, content=content,
                         preview={}, snapshot=SNAP, now=T0)


def test_a_proposed_plan_is_decided_by_others_and_withdrawn_by_its_author(store):
    plan = proposed(store)
    assert allowed_actions(plan, APPROVER) == {"approve", "reject"}
    assert allowed_actions(plan, OPERATOR) == {"withdraw"}
    assert allowed_actions(plan, VIEWER) == frozenset()


def test_an_executing_plan_pauses_resumes_and_cancels_by_its_execution_state(store):
    plan = replace(proposed(store), state="executing")
    assert allowed_actions(plan, OPERATOR, running="running") == {"pause", "cancel"}
    assert allowed_actions(plan, OPERATOR, running="paused") == {"resume", "cancel"}
    assert allowed_actions(plan, APPROVER, running="running") == frozenset()


def test_a_shrink_never_pauses_and_offers_its_migration_where_it_runs_one(store):
    from backend.twin.cluster import TwinCluster, TwinSettings
    from backend.twin.gateway import TwinGateway
    from tests.unit.test_executor import small_cluster

    shrink = proposed(store, "shrink")
    assert allowed_actions(replace(shrink, state="executing"), OPERATOR,
                           running="running") == {"cancel"}
    approved = replace(shrink, state="approved")
    cannot = TwinGateway(TwinCluster(small_cluster(), TwinSettings(
        delete_partition_enable=False)))
    assert allowed_actions(approved, OPERATOR, gateway=cannot) == {"execute", "migrate"}
    assert allowed_actions(approved, OPERATOR, gateway=None) == {"execute"}


def test_only_admins_propose_clear_throttles_plans():
    assert can_propose(OPERATOR) and can_propose(ADMIN, "clear_throttles")
    assert not can_propose(OPERATOR, "clear_throttles") and not can_propose(VIEWER)


def test_the_plan_page_answers_by_name():
    from dashboard.plan_views.stored import NO_STEP, Buttons, ExecutionAnswer, steps_mark

    assert steps_mark(None, NO_STEP) == "||True"  # no steps, no step next, its button hidden
    answer = ExecutionAnswer("Done", "inline-done", None, "executing", "state",
                             Buttons(True, False, True, False, True), False, None, NO_STEP,
                             "||True")
    out = answer.outputs()
    assert len(out) == len(ExecutionAnswer.unchanged()) == 16
    assert out[3] == "executing" and out[5:10] == (True, False, True, False, True)
    # the steps, the next step's button, then the steps' mark
    assert out[11:] == (None, "", "", True, "||True")
