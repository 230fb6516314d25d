"""Which plans wait for a user (issue 26 item 9): proposed ones they may approve, never
their own, never for a viewer, oldest first, on every cluster."""

from __future__ import annotations

from backend.services import plan_actions, plans
from backend.store.workflow import Actor
from tests.executor_rig import sqlite_store
from tests.plan_helpers import APPROVER, OPERATOR, T0, moves, orders_cluster

SNAP = orders_cluster()


def propose(store, cluster: str, partition: int) -> int:
    return plans.propose(store, OPERATOR, cluster=cluster, kind="reassignment",
                         content=moves(("orders", partition, [3, 4])), preview={},
                         snapshot=SNAP, now=T0).id


def test_proposed_plans_wait_for_those_who_may_approve_them(tmp_path):
    store = sqlite_store(tmp_path / "r.db")
    first, second, third = propose(store, "c1", 0), propose(store, "c2", 1), \
        propose(store, "c1", 2)
    plans.approve(store, APPROVER, second, sha256=plans.get(store, second).sha256,
                  topics_of=lambda *_: SNAP, now=T0)
    waiting = plan_actions.waiting_for(store, APPROVER)
    assert [p.id for p in waiting] == [first, third]  # the approved one no longer waits
    assert plan_actions.waiting_for(store, OPERATOR) == []  # their own plans
    assert plan_actions.waiting_for(store, Actor("vera", "viewer")) == []
    assert [p.id for p in plan_actions.waiting_for(store, Actor("ines", "admin"))] == [
        first, third]
