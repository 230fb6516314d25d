"""What a user may do with a plan now, for the pages to show only the buttons that would
work (the services refuse the others anyway, naming the rule): the workflow's roles and
authorship rules (backend/store/workflow.py), the approvals its requirement still needs
(backend/services/approval_status.py), the plan's state, its execution's state and what
its kind allows on this cluster."""

from __future__ import annotations

from backend.gateways.base import ClusterReader
from backend.services import approval_status, plan_queue, plans
from backend.services.plan_kinds import KINDS, REASSIGNMENT, kind_of
from backend.store.executions import LIVE
from backend.store.store import Plan, Store
from backend.store.workflow import STATES, Actor, may

PLAN_STATES = STATES  # every state a plan can be in, in the order of its life
ACTIONS = ("approve", "reject", "withdraw", "execute", "migrate", "pause", "resume", "cancel")


def allowed_actions(plan: Plan, user: Actor, *, running: str | None = None,
                    gateway: ClusterReader | None = None) -> frozenset[str]:
    """The ACTIONS ``user`` may take on ``plan`` now; ``running``: its execution's state
    (None before it starts), ``gateway``: its cluster's (whether a shrink would run as
    its migration there)."""
    kind = kind_of(plan.kind)
    proposed, approved = plan.state == "proposed", plan.state == "approved"
    executing = plan.state == "executing"
    runs = may(user, "execute", plan.author) is None
    pauses = runs and executing and kind.unpausable is None
    allowed = {
        "approve": approval_status.needs_approval_by(plan, user),
        "reject": proposed and may(user, "reject", plan.author) is None,
        "withdraw": proposed and may(user, "withdraw", plan.author) is None,
        "execute": runs and approved,
        "migrate": runs and approved and kind.migration_here(gateway),
        "pause": pauses and running == LIVE[0],
        "resume": pauses and running in LIVE[1:],
        "cancel": runs and executing,
    }
    return frozenset(a for a in ACTIONS if allowed[a])


def can_propose(user: Actor, kind: str = REASSIGNMENT) -> bool:
    """Whether ``user`` may propose a plan of ``kind`` (a clear-throttles plan: admins)."""
    right = KINDS[kind].propose_right
    return may(user, "propose") is None and (right is None or may(user, right) is None)


def waiting_for(store: Store, user: Actor) -> list[Plan]:
    """Proposed plans ``user`` may approve (not their own, with the approve right, not
    approved by them yet, their role counting), oldest first: the plans that wait for
    them, across every cluster."""
    proposed = plans.list_plans(store, state="proposed")
    return [p for p in reversed(proposed) if "approve" in allowed_actions(p, user)]


def waiting_seen(store: Store, user: Actor, snapshot_of: plan_queue.SnapshotOf | None
                 ) -> tuple[list[Plan], list[Plan]]:
    """``waiting_for`` split as the lists see it: (the plans ``user`` may approve, those
    whose cluster changed under their basis so that Approve would refuse them), from
    each cluster's cached snapshot (plan_queue.seen; a plan not checked counts as
    waiting). What the navigation counts; Approve still checks the cluster live."""
    waiting = waiting_for(store, user)
    bases = plan_queue.seen(store, waiting, snapshot_of)
    stale = {i for i, b in bases.items() if b.stale is not None}
    return [p for p in waiting if p.id not in stale], [p for p in waiting if p.id in stale]
