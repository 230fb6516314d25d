"""How far a plan's approvals have come against the requirement stored with it, and who
could add one now: what the plan page, the API and the fleet queue show.

The requirement was computed at proposal from the plan's frozen numbers (``facts``
here, the rule language in backend/store/approvals.py) and never changes afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass

from backend.store.approvals import (
    Facts,
    Policies,
    Policy,
    Progress,
    Requirement,
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


def progress(plan: Plan) -> Progress:
    """The plan's stored requirement and its approvals so far (a plan's listing carries
    them too: backend/store/store.py query_plans)."""
    approvals = [d for d in plan.decisions if d.decision == "approve"]
    return Progress(Requirement.from_dict(plan.approval), tuple(d.user for d in approvals),
                    tuple(d.role or "" for d in approvals))


def status(plan: Plan) -> ApprovalStatus:
    """The plan's approval status, for its page, the API and the fleet queue."""
    p = progress(plan)
    r = p.requirement
    return ApprovalStatus(p.approvers, r.approvers, r.roles, r.admin, p.met, p.still_needed,
                          p.text())


def needs_approval_by(plan: Plan, actor: Actor) -> bool:
    """Whether ``actor`` could approve ``plan`` now and it still needs approvals: it is
    proposed, they may approve others' plans, are not its author, have not approved it
    yet and their role counts toward what is still missing."""
    return plan.state == "proposed" and may(actor, "approve", plan.author) is None \
        and progress(plan).refusal(actor) is None


def facts(kind: str, content: dict, preview: dict, basis: dict,
          outside_window: bool = False, reads: frozenset[str] | None = None) -> Facts:
    """A plan's frozen numbers as the approval rules read them: its preview's bytes and
    replica moves and partitions, the brokers and topics its content touches (counted
    only when ``reads`` names them, None: always), and whether it may run outside its
    cluster's execution windows (``outside_window``: its signed "outside_windows")."""
    wanted = reads is None or bool({"brokers", "topics"} & reads)
    brokers, topics = _touched(kind, content, preview, basis) if wanted else (set(), set())
    return Facts(kind, int(preview.get("bytes_to_move") or 0),
                 int(preview.get("replica_moves") or 0), int(preview.get("partitions") or 0),
                 len(brokers), tuple(sorted(topics)), outside_window)


def _touched(kind: str, content: dict, preview: dict, basis: dict) -> tuple[set, set[str]]:
    """The brokers that gain or lose a replica or a leadership, and the topics, of a
    plan of ``kind``."""
    if kind == "reassignment":  # Kafka's reassignment JSON against the replicas before
        before = basis.get("partitions", {})
        brokers = set()
        for e in content.get("partitions", []):
            then, now = before.get(f"{e['topic']}:{e['partition']}", []), e["replicas"]
            brokers |= set(then) ^ set(now)
            if then[:1] != now[:1]:
                brokers |= {*then[:1], *now[:1]}
        return brokers, {str(e["topic"]) for e in content.get("partitions", [])}
    if kind == "shrink":  # the brokers whose replicas of the removed partitions go
        return ({b["id"] for b in preview.get("brokers", []) if b.get("replicas_reclaimed")},
                {str(content.get("topic"))})
    configs = content.get("configs", [])  # clear_throttles: the entities it changes
    return ({str(c["name"]) for c in configs if c["entity_type"] == "broker"},
            {str(c["name"]) for c in configs if c["entity_type"] == "topic"})


__all__ = ["ApprovalStatus", "Policies", "Policy", "check_users", "facts", "needs_approval_by",
           "parse_policy", "progress", "status"]
