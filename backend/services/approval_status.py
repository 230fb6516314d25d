"""Where a plan stands on its approvals: who approved, how many are needed, and whether
a given user is one of those it waits for.

Today's rule (backend/store/workflow.py): one approval of the frozen sha256 by someone
other than the author who holds the approve right. Pure: it reads the plan's decisions
as loaded (the queue loads them in bulk), so asking it for 5,000 plans asks the store
nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from backend.store.store import Plan
from backend.store.workflow import ROLES, Actor, may

REQUIRED = 1  # approvers besides the author
APPROVER_ROLES = tuple(r for r in ROLES if may(Actor("", r), "approve") is None)


@dataclass(frozen=True)
class ApprovalStatus:
    """A plan's approvals: ``approvers`` so far (of its sha256), ``required`` in all, of
    ``roles``, whether an admin must be among them, and the line a page shows."""

    approvers: tuple[str, ...]
    required: int
    roles: tuple[str, ...]
    admin_required: bool
    met: bool
    still_needed: int
    text: str


def status(plan: Plan) -> ApprovalStatus:
    """The plan's approvals from its decisions (an approval binds the plan's sha256)."""
    approvers = tuple(dict.fromkeys(
        d.user for d in plan.decisions
        if d.decision == "approve" and d.sha256 == plan.sha256))
    still = max(REQUIRED - len(approvers), 0)
    so_far = f"{len(approvers)} of {REQUIRED} so far" + (
        f": {', '.join(approvers)}" if approvers else "")
    text = (f"approved: {', '.join(approvers)}" if not still else
            f"needs {REQUIRED} approver{'s' if REQUIRED > 1 else ''}: {so_far}")
    return ApprovalStatus(approvers, REQUIRED, APPROVER_ROLES, False, not still, still, text)


def needs_approval_by(plan: Plan, actor: Actor) -> bool:
    """Whether ``plan`` waits for ``actor``'s approval: proposed, not yet approved enough,
    not theirs, and ``actor`` may approve it and has not decided on it yet."""
    if plan.state != "proposed" or may(actor, "approve", plan.author) is not None:
        return False
    if any(d.user == actor.name for d in plan.decisions):
        return False
    return not status(plan).met
