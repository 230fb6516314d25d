"""The plan services: every rule enforced, every refusal names its rule, every change audited."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from sqlalchemy import update

from backend.errors import BadInput, Conflict, Forbidden, NotFound
from backend.services import plans
from backend.store.schema import audit
from backend.store.store import open_store
from backend.store.workflow import SYSTEM, Actor
from tests.plan_helpers import (
    ADMIN,
    APPROVER,
    APPROVER2,
    OPERATOR,
    ORDERS,
    T0,
    VIEWER,
    cluster,
    moves,
    orders_cluster,
    shrink_content,
)

SNAP = orders_cluster()


def same(_cluster, _topics):
    return SNAP


@pytest.fixture
def store(tmp_path):
    s = open_store(f"sqlite:///{tmp_path}/plans.db", expiry_hours=24)
    yield s
    s.close()


def propose(store, actor=OPERATOR, **kw):
    args = {"cluster": "c1", "kind": "reassignment", "content": moves(("orders", 0, [3, 4])),
            "preview": {"replica_moves": 2}, "snapshot": SNAP, "now": T0, **kw}
    return plans.propose(store, actor, **args)


def approved(store):
    plan = propose(store)
    return plans.approve(store, APPROVER, plan.id, sha256=plan.sha256, topics_of=same,
                         now=T0 + timedelta(hours=1))


def test_propose_stores_the_frozen_plan(store):
    plan = propose(store, title="drain broker 1", throttle=10_000_000)
    assert plan.state == "proposed" and plan.author == "olga" and plan.version == 1
    assert plan.expires_at == T0 + timedelta(hours=24)
    assert plan.sha256 == plans.plan_sha256("reassignment", "c1", plan.content, 10_000_000)
    assert plan.basis == {"partitions": {"orders:0": [1, 2]}, "topics": {}}
    assert plan.title == "drain broker 1" and plan.throttle == 10_000_000
    [entry] = plans.audit_entries(store)
    assert (entry.user, entry.action, entry.plan_id, entry.before, entry.after,
            entry.address) == ("olga", "propose", plan.id, None, "proposed", "10.0.0.7")


def test_sha256_covers_what_runs():
    base = plans.plan_sha256("reassignment", "c1", moves(("orders", 0, [3, 4])), None)
    assert base == plans.plan_sha256("reassignment", "c1",
                                     {"partitions": [{"replicas": [3, 4], "partition": 0,
                                                      "topic": "orders"}], "version": 1},
                                     None), "key order does not matter"
    for other in (plans.plan_sha256("reassignment", "c2", moves(("orders", 0, [3, 4])), None),
                  plans.plan_sha256("reassignment", "c1", moves(("orders", 0, [4, 3])), None),
                  plans.plan_sha256("reassignment", "c1", moves(("orders", 0, [3, 4])), 1)):
        assert other != base


def test_shrink_plans_and_default_titles(store):
    plan = propose(store, kind="shrink", content=shrink_content("orders", to=2))
    assert plan.title == "shrink orders from 4 to 2 partitions"
    assert plan.basis["topics"] == {"orders": 4}
    assert propose(store).title == "reassign 1 partitions"


@pytest.mark.parametrize("kw,match", [
    ({"kind": "move"}, "kind: expected one of reassignment, shrink"),
    ({"cluster": " "}, "cluster: required"),
    ({"content": [1]}, "plan: expected a JSON object"),
    ({"throttle": 0}, "throttle: expected a positive integer"),
    ({"throttle": True}, "throttle: expected a positive integer"),
    ({"content": moves(("ghost", 0, [1]))}, "topic 'ghost' is not in cluster"),
    ({"content": {"partitions": [{"topic": "orders", "partition": 0,
                                  "replicas": [float("nan")]}]}}, "plan: not JSON"),
])
def test_bad_proposals_store_nothing(store, kw, match):
    with pytest.raises(BadInput, match=match):
        propose(store, **kw)
    assert plans.list_plans(store) == [] and plans.audit_entries(store) == []


@pytest.mark.parametrize("actor", [VIEWER, APPROVER])
def test_only_operators_and_admins_propose(store, actor):
    with pytest.raises(Forbidden, match=f"the {actor.role} role may not propose"):
        propose(store, actor)


def test_approve_by_another_approver(store):
    plan = approved(store)
    assert plan.state == "approved" and plan.version == 2
    [d] = plan.decisions
    assert (d.user, d.decision, d.sha256) == ("anna", "approve", plan.sha256)
    assert [e.action for e in plans.audit_entries(store, plan=plan.id)] == ["propose",
                                                                            "approve"]


def test_admin_may_approve_someone_elses_plan_not_their_own(store):
    plan = propose(store, ADMIN)
    with pytest.raises(Forbidden, match="author of a plan may not approve it"):
        plans.approve(store, ADMIN, plan.id, sha256=plan.sha256, topics_of=same, now=T0)
    other = propose(store)
    assert plans.approve(store, ADMIN, other.id, sha256=other.sha256, topics_of=same,
                         now=T0).state == "approved"


@pytest.mark.parametrize("actor,match", [
    (VIEWER, "viewer role may not approve: it needs the approver or admin role"),
    (OPERATOR, "operator role may not approve"),
    (Actor("olga", "approver"), "author of a plan may not approve it: two people"),
])
def test_approve_refuses_the_wrong_people(store, actor, match):
    plan = propose(store)
    with pytest.raises(Forbidden, match=match):
        plans.approve(store, actor, plan.id, sha256=plan.sha256, topics_of=same, now=T0)
    assert plans.get(store, plan.id).state == "proposed"


def test_approve_refuses_a_different_sha256(store):
    plan = propose(store)
    with pytest.raises(Conflict, match=r"sha256 you approved .* is not plan .*reload the"):
        plans.approve(store, APPROVER, plan.id, sha256="ab" * 32, topics_of=same, now=T0)


def test_approve_refuses_an_expired_plan(store):
    plan = propose(store)
    with pytest.raises(Conflict, match="expired at 2026-03-02T09:00:00\\+00:00: re-propose"):
        plans.approve(store, APPROVER, plan.id, sha256=plan.sha256, topics_of=same,
                      now=T0 + timedelta(hours=24))


def test_approve_refuses_a_changed_cluster_naming_the_partitions(store):
    plan = propose(store, content=moves(("orders", 0, [3, 4]), ("orders", 1, [1, 4])))
    moved = cluster({**ORDERS, "orders": [[2, 1], [2, 4], [3, 4], [4, 1]]})
    with pytest.raises(Conflict, match=r"cluster c1 changed since plan 1 was proposed: "
                       r"orders-0 replicas \[1, 2\] -> \[2, 1\]; orders-1 replicas "
                       r"\[2, 3\] -> \[2, 4\]: re-propose"):
        plans.approve(store, APPROVER, plan.id, sha256=plan.sha256,
                      topics_of=lambda *_: moved, now=T0)
    assert plans.get(store, plan.id).state == "proposed"


def test_many_changes_are_counted_not_listed(store):
    content = moves(*[("orders", p, [1, 3]) for p in range(4)], ("audit", 0, [2, 4]),
                    ("audit", 1, [1, 2]))
    plan = propose(store, content=content)
    moved = cluster({"orders": [[4, 3]] * 4, "audit": [[3, 1], [4, 2]]})
    with pytest.raises(Conflict, match=r"\(and 1 more\): re-propose"):
        plans.approve(store, APPROVER, plan.id, sha256=plan.sha256,
                      topics_of=lambda *_: moved, now=T0)


def test_a_decided_plan_cannot_be_decided_again(store):
    plan = approved(store)
    with pytest.raises(Conflict, match="plan 1 is approved, not proposed: it cannot be "
                       "approved now"):
        plans.approve(store, APPROVER2, plan.id, sha256=plan.sha256, topics_of=same,
                      now=T0)
    with pytest.raises(Conflict, match="cannot be rejected now"):
        plans.reject(store, APPROVER2, plan.id, now=T0)


def test_a_lost_race_is_a_clear_refusal(store, monkeypatch):
    """Two approvers read the plan at the same version; the second update matches no row."""
    plan = propose(store)
    stale = plans.get(store, plan.id)
    plans.reject(store, APPROVER2, plan.id, comment="no", now=T0)
    monkeypatch.setattr(plans, "_load", lambda _s, _i, **_: stale if _i == plan.id else None)
    with pytest.raises(Conflict, match="changed while you acted \\(it is now rejected\\): "
                       "someone else decided first"):
        plans.approve(store, APPROVER, plan.id, sha256=plan.sha256, topics_of=same, now=T0)
    monkeypatch.undo()
    final = plans.get(store, plan.id)
    assert final.state == "rejected" and len(final.decisions) == 1
    assert [e.action for e in plans.audit_entries(store)] == ["propose", "reject"]


def test_a_lost_execute_race_is_a_clear_refusal(store, monkeypatch):
    """Two operators press Execute at once: the second read the plan approved, then found
    the first's execute row in its audit trail, and answered "plan 1 is approved but its
    audit trail says it is executing", words for a store edited behind Railyard's back."""
    plan = approved(store)
    stale = plans.get(store, plan.id)
    at = T0 + timedelta(hours=2)
    plans.request_execute(store, OPERATOR, plan.id, topics_of=same, now=at)
    real, loads = plans._load, []

    def load(s, i, **kw):  # the second Execute's first read came before the first's write
        loads.append(i)
        return stale if len(loads) == 1 else real(s, i, **kw)
    monkeypatch.setattr(plans, "_load", load)
    with pytest.raises(Conflict, match=r"^plan 1 changed while you acted \(it is now "
                                       r"executing\): someone else decided first$"):
        plans.request_execute(store, OPERATOR, plan.id, topics_of=same, now=at)


def test_reject_and_withdraw(store):
    plan = propose(store)
    with pytest.raises(Forbidden, match="author of a plan may not reject"):
        plans.reject(store, Actor("olga", "admin"), plan.id, now=T0)
    for blank in ("", "  "):  # the author proposes again from the reason: none is refused
        with pytest.raises(BadInput, match=r"^comment: a rejection needs a reason"):
            plans.reject(store, APPROVER, plan.id, comment=blank, now=T0)
    assert plans.get(store, plan.id).state == "proposed"
    rejected = plans.reject(store, APPROVER, plan.id, comment="too big", now=T0)
    assert rejected.state == "rejected" and rejected.decisions[0].comment == "too big"
    other = propose(store)
    with pytest.raises(Forbidden, match="only the author \\(olga\\) may withdraw"):
        plans.withdraw(store, Actor("otto", "operator"), other.id, now=T0)
    assert plans.withdraw(store, OPERATOR, other.id, now=T0).state == "withdrawn"
    with pytest.raises(Conflict, match="is withdrawn, not proposed"):
        plans.withdraw(store, OPERATOR, other.id, now=T0)


def test_a_withdrawal_keeps_its_reason_in_the_audit_row_not_as_a_decision(store):
    plan = propose(store)
    with pytest.raises(BadInput, match="comment"):  # too long: nothing changes
        plans.withdraw(store, OPERATOR, plan.id, comment="x" * 2001, now=T0)
    assert plans.get(store, plan.id).state == "proposed"
    withdrawn = plans.withdraw(store, OPERATOR, plan.id, comment="wrong topic", now=T0)
    assert withdrawn.state == "withdrawn" and withdrawn.decisions == ()
    row = plans.audit_page(store, plan=plan.id).entries[-1]
    assert (row.action, row.user, row.detail) == ("withdraw", "olga", {"comment": "wrong topic"})


def test_execute_rechecks_expiry_and_the_cluster(store):
    plan = approved(store)
    with pytest.raises(Forbidden, match="approver role may not execute"):
        plans.request_execute(store, APPROVER, plan.id, topics_of=same, now=T0)
    with pytest.raises(Conflict, match="expired at"):
        plans.request_execute(store, OPERATOR, plan.id, topics_of=same,
                              now=T0 + timedelta(days=2))
    moved = cluster({**ORDERS, "orders": [[2, 1], *ORDERS["orders"][1:]]})
    with pytest.raises(Conflict, match=r"orders-0 replicas \[1, 2\] -> \[2, 1\]: re-propose"):
        plans.request_execute(store, OPERATOR, plan.id, topics_of=lambda *_: moved, now=T0)
    running = plans.request_execute(store, OPERATOR, plan.id, topics_of=same, now=T0)
    assert running.state == "executing"


def test_execute_needs_an_approved_plan(store):
    plan = propose(store)
    with pytest.raises(Conflict, match="is proposed, not approved: it cannot be executed"):
        plans.request_execute(store, OPERATOR, plan.id, topics_of=same, now=T0)


def test_a_refusal_the_store_cannot_audit_is_still_the_refusal(store, monkeypatch, caplog):
    """The refusal's audit row is written before the refusal goes on; a store failing that
    write is logged, and the user still hears why they were refused, not a 503."""
    from backend.errors import Unavailable

    plan = plans.request_execute(store, OPERATOR, approved(store).id, topics_of=same,
                                 now=T0)

    def down(*_args, **_kwargs):
        raise Unavailable("Plan store", "the disk is full")
    monkeypatch.setattr(store, "record", down)
    with pytest.raises(Forbidden, match="viewer role may not cancel"):
        plans.request_cancel(store, VIEWER, plan.id, now=T0)
    assert "refused cancel by " + VIEWER.name + " not audited" in caplog.text


def test_cancel_request_then_the_executor_finishes(store):
    plan = plans.request_execute(store, OPERATOR, approved(store).id, topics_of=same,
                                 now=T0)
    with pytest.raises(Forbidden, match="viewer role may not cancel"):
        plans.request_cancel(store, VIEWER, plan.id, now=T0)
    asked = plans.request_cancel(store, OPERATOR, plan.id, now=T0 + timedelta(minutes=5))
    assert asked.state == "executing" and asked.cancel_requested_at is not None
    assert plans.request_cancel(store, OPERATOR, plan.id, now=T0).version == asked.version
    done = plans.finish(store, SYSTEM, plan.id, "cancelled", detail={"batches": 1}, now=T0)
    assert done.state == "cancelled"
    with pytest.raises(Conflict, match="only an executing plan can be cancelled"):
        plans.request_cancel(store, OPERATOR, plan.id, now=T0)
    with pytest.raises(Conflict, match="is cancelled, not executing"):
        plans.finish(store, SYSTEM, plan.id, "completed", now=T0)
    with pytest.raises(BadInput, match="outcome: expected one of"):
        plans.finish(store, SYSTEM, plan.id, "done", now=T0)
    assert [e.action for e in plans.audit_entries(store, plan=plan.id)] == [
        "propose", "approve", "execute", "refused", "cancel-requested", "cancel"]
    refused = plans.audit_entries(store, plan=plan.id)[3]
    assert refused.user == VIEWER.name and refused.detail == {
        "attempted": "cancel", "reason": "the viewer role may not cancel: it needs the "
                                         "operator or admin role"}


def test_expire_due_moves_only_overdue_undecided_plans(store):
    old = propose(store)
    ok = approved(store)
    running = plans.request_execute(store, OPERATOR, approved(store).id, topics_of=same,
                                    now=T0)
    fresh = propose(store, now=T0 + timedelta(hours=12))
    assert plans.expire_due(store, now=T0 + timedelta(hours=23)) == []
    # the proposal 24 h after its proposal; the approved plan 24 h after its approval
    # (an hour after its proposal): expiry counts from approval, not from proposal
    assert plans.expire_due(store, now=T0 + timedelta(hours=24)) == [old.id]
    assert ok.expires_at == T0 + timedelta(hours=25)
    assert plans.expire_due(store, now=T0 + timedelta(hours=25)) == [ok.id]
    assert plans.get(store, ok.id).expires_at == T0 + timedelta(hours=25)
    assert plans.get(store, fresh.id).state == "proposed"
    assert plans.get(store, running.id).state == "executing"
    [entry] = plans.audit_entries(store, plan=old.id, user="railyard")
    assert (entry.action, entry.before, entry.after) == ("expire", "proposed", "expired")


def test_record_is_audit_only_and_refuses_state_changes(store):
    plan = propose(store)
    plans.record(store, SYSTEM, plan.id, "throttle-set", detail={"broker": 1}, now=T0)
    assert plans.get(store, plan.id).version == 1
    assert plans.audit_entries(store)[-1].detail == {"broker": 1}
    with pytest.raises(ValueError, match="is a state change"):
        plans.record(store, SYSTEM, plan.id, "approve", now=T0)


def test_get_and_lists(store):
    with pytest.raises(NotFound, match="no plan 7"):
        plans.get(store, 7)
    a = propose(store)
    b = propose(store, cluster="c2", kind="shrink", content=shrink_content())
    assert [p.id for p in plans.list_plans(store)] == [b.id, a.id]
    assert [p.id for p in plans.list_plans(store, cluster="c2")] == [b.id]
    assert plans.list_plans(store, state="approved") == []
    listed = plans.list_plans(store)[0]
    assert listed.content is None and listed.preview == {"replica_moves": 2}
    d = plans.get(store, a.id).to_dict()
    assert d["created_at"] == "2026-03-01T09:00:00+00:00" and d["decisions"] == []


def test_audit_filters_and_verify(store):
    plan = approved(store)
    plans.reject(store, APPROVER, propose(store, now=T0 + timedelta(hours=2)).id,
                 comment="not now", now=T0 + timedelta(hours=3))
    assert [e.action for e in plans.audit_entries(store, user="anna")] == ["approve",
                                                                           "reject"]
    assert len(plans.audit_entries(store, since=T0 + timedelta(hours=2))) == 2
    assert len(plans.audit_entries(store, plan=plan.id)) == 2
    assert store.verify_audit() == {"intact": True, "rows": 4, "broken_at": None,
                                    "reason": None, "legacy_rows": 0, "checkpoints": None}
    with store.write() as conn:
        conn.execute(update(audit).where(audit.c.id == 2).values(user="mallory"))
    assert store.verify_audit() == {
        "intact": False, "rows": 2, "broken_at": 2,
        "reason": "audit row 2: its content does not match its hash (the row was edited)",
        "legacy_rows": 0, "checkpoints": None}


def test_deleting_an_audit_row_breaks_the_chain_after_it(store):
    approved(store)
    propose(store)
    with store.write() as conn:
        conn.execute(audit.delete().where(audit.c.id == 2))
    result = store.verify_audit()
    assert (result["intact"], result["broken_at"]) == (False, 3)
    assert "prev_hash is not the hash of the row before it" in result["reason"]


def test_naive_times_are_refused(store):
    with pytest.raises(ValueError, match="timezone-aware"):
        propose(store, now=T0.replace(tzinfo=None))


def test_the_expiry_sweeper_expires_overdue_plans(tmp_path):
    store = open_store(f"sqlite:///{tmp_path}/sweep.db", expiry_hours=1e-6)  # 3.6 ms
    plan = plans.propose(store, OPERATOR, cluster="c1", kind="reassignment",
                         content=moves(("orders", 0, [3, 4])), preview={}, snapshot=SNAP)
    sweeper = plans.ExpirySweeper(store, interval=0.02)
    sweeper.start()
    try:
        deadline = time.monotonic() + 20
        while plans.get(store, plan.id).state != "expired" and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        sweeper.stop()
        sweeper.join(5)
        store.close()
    assert plans.get(store, plan.id).state == "expired"
    assert plans.audit_entries(store)[-1].action == "expire"
