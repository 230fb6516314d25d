"""One registry of plan kinds (issue 25): every kind answers the same questions, and the
services and the executor thread ask it instead of comparing kind names."""

from __future__ import annotations

import pytest

from backend.errors import BadInput, Conflict, Forbidden
from backend.services import execution, plans
from backend.services.plan_kinds import KINDS, kind_of, touched
from backend.store.store import open_store
from backend.store.workflow import KINDS as STORED_KINDS
from tests.plan_helpers import ADMIN, APPROVER, OPERATOR, T0, VIEWER, moves, orders_cluster

SNAP = orders_cluster()


def test_the_registry_holds_every_kind_the_store_accepts():
    assert tuple(KINDS) == STORED_KINDS
    for name, kind in KINDS.items():
        assert kind.name == name and callable(kind.start) and callable(kind.basis)


def test_an_unknown_kind_names_all_three():
    with pytest.raises(BadInput, match="kinds: reassignment, shrink, clear_throttles"):
        kind_of("move")


def test_a_clear_throttles_plan_touches_no_partition():
    configs = {"configs": [{"entity_type": "broker", "name": "1",
                            "key": "leader.replication.throttled.rate", "value": "10"}]}
    assert touched("clear_throttles", configs) == ([], [])


def test_the_executor_thread_starts_each_kind_as_its_module_says(tmp_path):
    store = open_store(f"sqlite:///{tmp_path}/plans.db")
    try:
        thread = execution.executor_thread(store, [], lambda _c: None, lambda _c: SNAP)
        assert thread.starts == {name: kind.start for name, kind in KINDS.items()}
    finally:
        store.close()


def test_execute_asks_the_kind_whether_this_cluster_can_run_it(tmp_path):
    store = open_store(f"sqlite:///{tmp_path}/plans.db")
    try:
        plan = plans.propose(store, OPERATOR, cluster="c", kind="reassignment",
                             content=moves(("orders", 0, [2, 3, 4])), preview={},
                             snapshot=SNAP, now=T0)
        plans.approve(store, APPROVER, plan.id, sha256=plan.sha256,
                      topics_of=lambda *_: SNAP, now=T0)
        with pytest.raises(BadInput, match="only a shrink has one"):
            plans.execute(store, OPERATOR, plan.id, gateway=None, migration=True,
                          topics_of=lambda *_: SNAP, now=T0)
        assert plans.execute(store, ADMIN, plan.id, gateway=None, topics_of=lambda *_: SNAP,
                             now=T0).state == "executing"
        with pytest.raises(Conflict, match="is executing, not approved"):
            plans.execute(store, OPERATOR, plan.id, gateway=None, topics_of=lambda *_: SNAP,
                          now=T0)
    finally:
        store.close()


def test_a_viewer_s_execute_is_refused_and_audited_before_the_kind_is_asked(tmp_path):
    """The kind's question about the cluster came first: a viewer asking to run a plan
    the way this cluster cannot got a 409 about the cluster, and no "refused" row."""
    store = open_store(f"sqlite:///{tmp_path}/plans.db")
    try:
        plan = plans.propose(store, OPERATOR, cluster="c", kind="reassignment",
                             content=moves(("orders", 0, [2, 3, 4])), preview={},
                             snapshot=SNAP, now=T0)
        with pytest.raises(Forbidden, match="the viewer role may not execute"):
            plans.execute(store, VIEWER, plan.id, gateway=None, migration=True,
                          topics_of=lambda *_: SNAP, now=T0)
        refused = [e for e in plans.audit_entries(store, plan=plan.id)
                   if e.action == "refused"]
        assert [(e.user, e.detail["attempted"]) for e in refused] == [(VIEWER.name, "execute")]
    finally:
        store.close()
