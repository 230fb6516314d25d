"""Plans under approval policies: the requirement computed at proposal and stored, a plan
proposed until its approvals meet it, the workflow state machine extended to N approvals
with no illegal transition, and the status the page, the API and the fleet queue show."""

from __future__ import annotations

import random
from collections import Counter
from datetime import timedelta

import pytest

from backend.errors import Conflict, Forbidden
from backend.services import approval_status, plan_actions, plans
from backend.store.approvals import Policies, Requirement, parse_policy
from backend.store.store import open_store
from backend.store.workflow import SYSTEM, TRANSITIONS, Actor
from tests.plan_helpers import ADMIN, APPROVER, APPROVER2, OPERATOR, T0, moves, orders_cluster

SNAP = orders_cluster()
RULES = [
    {"name": "audit topics", "when": {"topics": "audit"},
     "require": {"approvers": 2, "admin": True}},
    {"name": "many moves", "when": {"replica_moves": {"min": 3}},
     "require": {"approvers": 3}},
]
POLICIES = Policies(parse_policy(RULES, "approval.rules"))
ADMIN2 = Actor("adele", "admin", "10.0.0.12")
LATER = T0 + timedelta(hours=1)


def same(_cluster, _topics):
    return SNAP


@pytest.fixture
def store(tmp_path):
    s = open_store(f"sqlite:///{tmp_path}/plans.db", approval=POLICIES)
    yield s
    s.close()


def propose(store, topic="audit", moved=1, author=OPERATOR):
    return plans.propose(store, author, cluster="c1", kind="reassignment",
                         content=moves((topic, 0, [3, 4])), preview={"replica_moves": moved},
                         snapshot=SNAP, now=T0)


def approve(store, actor, plan):
    return plans.approve(store, actor, plan.id, sha256=plan.sha256, topics_of=same, now=LATER)


def test_the_rule_is_computed_at_proposal_stored_and_audited(store):
    audit_plan, many, plain = propose(store), propose(store, "orders", 5), \
        propose(store, "orders", 1)
    assert audit_plan.approval == {"rule": "audit topics", "approvers": 2,
                                   "roles": ["approver", "admin"], "admin": True}
    assert plans.get(store, audit_plan.id).approval == audit_plan.approval
    assert plans.get(store, many.id).approval["rule"] == "many moves"
    assert plans.get(store, plain.id).approval == Requirement().to_dict()  # today's rule
    proposed = [e.detail for e in plans.audit_entries(store) if e.action == "propose"]
    assert [d["approval"]["rule"] for d in proposed] == ["audit topics", "many moves",
                                                         "default"]


def test_a_plan_stays_proposed_until_its_requirement_is_met(store):
    plan = propose(store)
    first = approve(store, APPROVER, plan)
    assert (first.state, first.version) == ("proposed", 2)
    status = approval_status.status(plans.get(store, plan.id))
    assert status == approval_status.ApprovalStatus(
        ("anna",), 2, ("approver", "admin"), True, False, 1,
        "needs 2 approvers incl. an admin: 1 of 2 so far: anna")
    with pytest.raises(Conflict, match="anna already approved this plan"):
        approve(store, APPROVER, plan)
    with pytest.raises(Forbidden, match="the last approval must be an admin's"):
        approve(store, APPROVER2, plan)
    with pytest.raises(Conflict, match="is proposed, not approved"):
        plans.request_execute(store, OPERATOR, plan.id, topics_of=same, now=LATER)
    done = approve(store, ADMIN, plan)
    assert (done.state, done.version) == ("approved", 3)
    stored = plans.get(store, plan.id)
    assert [(d.user, d.role, d.sha256) for d in stored.decisions] == [
        ("anna", "approver", plan.sha256), ("ada", "admin", plan.sha256)]
    assert approval_status.status(stored).met
    rows = [(e.user, e.before, e.after, e.detail) for e in plans.audit_entries(store)
            if e.action == "approve"]
    assert rows == [
        ("anna", "proposed", "proposed", {"sha256": plan.sha256, "role": "approver",
                                          "rule": "audit topics", "approvals": 1,
                                          "required": 2}),
        ("ada", "proposed", "approved", {"sha256": plan.sha256, "role": "admin",
                                         "rule": "audit topics", "approvals": 2,
                                         "required": 2})]
    assert store.verify_audit()["intact"]


def test_who_the_plan_waits_for(store):
    plan = propose(store)
    assert approval_status.needs_approval_by(plan, APPROVER)
    assert not approval_status.needs_approval_by(plan, OPERATOR)  # the author
    assert not approval_status.needs_approval_by(plan, Actor("vic", "viewer"))
    approve(store, APPROVER, plan)
    partly = plans.get(store, plan.id)
    assert not approval_status.needs_approval_by(partly, APPROVER)  # already approved
    assert not approval_status.needs_approval_by(partly, APPROVER2)  # an admin must finish
    assert approval_status.needs_approval_by(partly, ADMIN)
    assert "approve" in plan_actions.allowed_actions(partly, ADMIN)
    assert "approve" not in plan_actions.allowed_actions(partly, APPROVER)
    assert [p.id for p in plan_actions.waiting_for(store, ADMIN)] == [plan.id]
    assert plan_actions.waiting_for(store, APPROVER) == []
    listed = plans.list_plans(store)[0]  # a listing carries the approvals so far
    assert approval_status.status(listed).approvers == ("anna",)
    approve(store, ADMIN, plan)
    assert not approval_status.needs_approval_by(plans.get(store, plan.id), ADMIN2)


def test_a_changed_policy_does_not_change_a_stored_plans_requirement(tmp_path):
    url = f"sqlite:///{tmp_path}/plans.db"
    first = open_store(url, approval=POLICIES)
    plan = propose(first)
    first.close()
    relaxed = open_store(url)  # no rules now: one approval for new plans
    try:
        assert approve(relaxed, ADMIN, plan).state == "proposed"  # still two
        assert propose(relaxed).approval["approvers"] == 1
        assert approve(relaxed, APPROVER, plan).state == "approved"
    finally:
        relaxed.close()


def test_every_way_out_of_proposed_still_works_after_a_partial_approval(store):
    rejected, withdrawn, expired = propose(store), propose(store), propose(store)
    for plan in (rejected, withdrawn, expired):
        approve(store, APPROVER, plan)
    assert plans.reject(store, APPROVER2, rejected.id, comment="no", now=LATER).state == "rejected"
    assert plans.withdraw(store, OPERATOR, withdrawn.id, now=LATER).state == "withdrawn"
    assert plans.expire_due(store, now=T0 + timedelta(days=1)) == [expired.id]
    with pytest.raises(Conflict, match="cannot be approved now"):
        approve(store, ADMIN, rejected)


def test_roles_a_rule_counts(tmp_path):
    only_admins = Policies(parse_policy([{"name": "admins", "require": {
        "approvers": 2, "roles": ["admin"]}}], "approval.rules"))
    store = open_store(f"sqlite:///{tmp_path}/plans.db", approval=only_admins)
    try:
        plan = propose(store)
        with pytest.raises(Forbidden, match="counts only approvals by the admin role"):
            approve(store, APPROVER, plan)
        assert approve(store, ADMIN, plan).state == "proposed"
        assert approve(store, ADMIN2, plan).state == "approved"
    finally:
        store.close()


# the (action, before, after) an audit row of a plan may record: the workflow's transitions
# and an approval that leaves the plan proposed
LEGAL = {(a, s, t) for a, (sources, t) in TRANSITIONS.items() for s in sources} | {
    ("approve", "proposed", "proposed"), ("propose", None, "proposed")}
CROWD = [APPROVER, APPROVER2, ADMIN, ADMIN2, Actor("abe", "approver"),
         Actor("vic", "viewer"), OPERATOR, Actor("otto", "operator")]
DO = ("approve",) * 8 + ("reject", "withdraw", "execute", "execute", "expire")


def test_random_walks_take_no_illegal_transition(store):
    """Random people try random actions on three-approver plans: every audit row is a legal
    transition, a plan is approved exactly when its third distinct approval lands, and
    nothing happens that the rules refuse; the walks reach every end."""
    reached = sum((walk(store, seed) for seed in range(8)), Counter())
    assert {"executing", "rejected", "withdrawn", "expired"} <= set(reached), reached
    assert store.verify_audit()["intact"]


def walk(store, seed: int) -> Counter:
    """One random walk over four new plans; the states they end in."""
    rng = random.Random(seed)
    ids = [propose(store, "orders", 5).id for _ in range(4)]
    forbidden = 0
    for step in range(80):
        plan = plans.get(store, rng.choice(ids))
        actor, action = rng.choice(CROWD), rng.choice(DO)
        now = LATER + timedelta(seconds=step)
        try:
            if action == "approve":
                approve(store, actor, plan)
            elif action == "reject":
                plans.reject(store, actor, plan.id, comment="no", now=now)
            elif action == "withdraw":
                plans.withdraw(store, actor, plan.id, now=now)
            elif action == "execute":
                plans.request_execute(store, actor, plan.id, topics_of=same, now=now)
            elif rng.random() < 0.05:
                plans.expire_due(store, now=T0 + timedelta(days=2))
                break
        except Forbidden:
            forbidden += 1
        except Conflict:
            pass
    logged = [e for e in plans.audit_entries(store, limit=10_000) if e.plan_id in ids]
    # every refusal is in the log once, as a row that changes nothing
    refused = [e for e in logged if e.action == plans.REFUSED]
    assert len(refused) == forbidden and all(e.before is e.after is None for e in refused)
    rows = [e for e in logged if e.action != plans.REFUSED]
    reached: Counter = Counter()
    assert {(e.action, e.before, e.after) for e in rows} <= LEGAL
    for plan_id in ids:
        plan = plans.get(store, plan_id)
        approvals = [d for d in plan.decisions if d.decision == "approve"]
        assert len({d.user for d in approvals}) == len(approvals) <= 3
        assert all(d.user != plan.author for d in plan.decisions)
        went = [e.after for e in rows if e.plan_id == plan_id and e.action == "approve"]
        assert went.count("approved") == (1 if len(approvals) == 3 else 0)
        assert went == ["proposed"] * min(len(approvals), 2) + ["approved"] * \
            (len(approvals) == 3)
        if plan.state in ("approved", "executing"):
            assert len(approvals) == 3
        reached[plan.state] += 1
    return reached


def test_the_system_actor_expiry_needs_no_approvals(store):
    plan = propose(store)
    assert plans.expire_due(store, now=T0 + timedelta(days=1)) == [plan.id]
    rows = [(e.user, e.action) for e in plans.audit_entries(store, plan=plan.id)]
    assert rows[-1] == (SYSTEM.name, "expire")


def test_a_plan_outside_its_clusters_windows_gets_the_off_window_rule(tmp_path):
    off = Policies(parse_policy([{"name": "off-window", "when": {"outside_window": True},
                                  "require": {"approvers": 2}}], "approval.rules"))
    store = open_store(f"sqlite:///{tmp_path}/plans.db", approval=off)
    try:
        def rule(**kw):
            return plans.propose(store, OPERATOR, cluster="c1", kind="reassignment",
                                 content=moves(("orders", 0, [3, 4])), snapshot=SNAP,
                                 now=T0, **kw).approval["rule"]
        assert rule(preview={}, outside_windows=True) == "off-window"  # signed in content
        assert rule(preview={"outside_window": True}) == "default"  # not a preview's say
        assert rule(preview={}) == "default"  # a plan that waits for the windows
    finally:
        store.close()
