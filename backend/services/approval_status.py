"""How far a plan's approvals have come against the requirement stored with it, and who
could add one now: what the plan page, the API and the fleet queue show.

The requirement was computed at proposal from the plan's frozen numbers (``facts``
here, the rule language in backend/store/approvals.py) and never changes afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass

from backend.services.plan_kinds import kind_of
from backend.store.approvals import (
    Facts,
    Policies,
    Policy,
    check_users,
    parse_policy,
)
from backend.store.store import Plan
from backend.store.workflow import Actor, may


@dataclass(frozen=True)
class ApprovalStatus:
    """A plan's approvals against its requirement."""

    approvers: tuple[str, ...]  # who approved so far, oldest first
    required: int  # approvers the requirement asks for
    roles: tuple[str, ...]  # the roles whose approvals count
    admin_required: bool  # an admin must be among them
    met: bool
    still_needed: int
    text: str  # "needs 2 approvers incl. an admin: 1 of 2 so far: bob"


def status(plan: Plan) -> ApprovalStatus:
    """The plan's approval status, for its page, the API and the fleet queue."""
    p = plan.progress()
    r = p.requirement
    return ApprovalStatus(p.approvers, r.approvers, r.roles, r.admin, p.met, p.still_needed,
                          p.text())


def needs_approval_by(plan: Plan, actor: Actor) -> bool:
    """Whether ``actor`` could approve ``plan`` now and it still needs approvals: it is
    proposed, they may approve others' plans, are not its author, have not approved it
    yet and their role counts toward what is still missing."""
    return plan.state == "proposed" and may(actor, "approve", plan.author) is None \
        and plan.progress().refusal(actor) is None


def facts(kind: str, content: dict, preview: dict, basis: dict,
          outside_window: bool = False, reads: frozenset[str] | None = None) -> Facts:
    """A plan's frozen numbers as the approval rules read them: its preview's bytes and
    replica moves and partitions, the brokers and topics its content touches (counted
    only when ``reads`` names them, None: always), and whether it may run outside its
    cluster's execution windows (``outside_window``: its signed "outside_windows")."""
    brokers, topics = set(), set()
    if reads is None or {"brokers", "topics"} & reads:
        brokers, topics = kind_of(kind).affects(content, preview, basis)
    return Facts(kind, int(preview.get("bytes_to_move") or 0),
                 int(preview.get("replica_moves") or 0), int(preview.get("partitions") or 0),
                 len(brokers), tuple(sorted(topics)), outside_window)


__all__ = ["ApprovalStatus", "Policies", "Policy", "check_users", "facts", "needs_approval_by",
           "parse_policy", "status"]
