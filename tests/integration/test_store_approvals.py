"""Concurrent approvals by different users on SQLite and a real PostgreSQL: a plan that
needs N approvals is approved exactly once, by the approval that completes them; each
user's approval counts once, and the audit rows are exactly the approvals that landed."""

from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from backend.errors import Conflict, Forbidden
from backend.services import approval_status, plans
from backend.store.approvals import Policies, parse_policy
from backend.store.store import open_store
from backend.store.workflow import Actor
from tests.plan_helpers import OPERATOR, T0, moves, orders_cluster

SNAP = orders_cluster()
NEEDED = 3
POLICIES = Policies(parse_policy([{"name": "three", "require": {"approvers": NEEDED}}],
                                 "approval.rules"))
# eight approvers race, each twice (a double click): three approvals land per plan
CROWD = [Actor(f"approver{i}", "approver", f"10.1.0.{i}") for i in range(8)]


def same(_cluster, _topics):
    return SNAP


def test_concurrent_approvals_reach_the_requirement_exactly_once(store_url):
    store = open_store(store_url, approval=POLICIES)
    try:
        ids = [plans.propose(store, OPERATOR, cluster="c1", kind="reassignment",
                             content=moves(("orders", p % 4, [3, 4])), preview={},
                             snapshot=SNAP, now=T0).id for p in range(4)]
        outcomes: Counter = Counter()
        refusals: list[str] = []
        lock = threading.Lock()

        def race(plan_id: int) -> None:
            sha = plans.get(store, plan_id).sha256
            tries = [a for a in CROWD for _ in range(2)]
            gate = threading.Barrier(len(tries))

            def approve(actor: Actor) -> str:
                gate.wait()
                try:
                    plan = plans.approve(store, actor, plan_id, sha256=sha, topics_of=same,
                                         now=T0)
                    return plan.state
                except (Conflict, Forbidden) as e:
                    with lock:
                        refusals.append(str(e))
                    return "refused"

            with ThreadPoolExecutor(len(tries)) as pool:
                outcomes.update(pool.map(approve, tries))

        for plan_id in ids:
            race(plan_id)
        tries = len(CROWD) * 2
        assert outcomes == {"approved": len(ids), "proposed": len(ids) * (NEEDED - 1),
                            "refused": len(ids) * (tries - NEEDED)}
        assert all("already approved" in r or "cannot be approved now" in r
                   for r in refusals), refusals
        for plan_id in ids:
            plan = plans.get(store, plan_id)
            status = approval_status.status(plan)
            assert plan.state == "approved" and plan.version == 1 + NEEDED
            assert status.met and len(set(status.approvers)) == NEEDED
            assert {d.role for d in plan.decisions} == {"approver"}  # as each one approved
            went = [e.after for e in plans.audit_entries(store, plan=plan_id)
                    if e.action == "approve"]
            assert went == ["proposed"] * (NEEDED - 1) + ["approved"]
        assert store.verify_audit()["intact"]
    finally:
        store.close()
