"""The plan workflow as data: states, transitions, roles and who may do what.

Pure (no I/O) so the services, the API, the pages and docs/api.md's role table all read
the same rules. A refusal names the rule that failed, in words a user can act on.
"""

from __future__ import annotations

from dataclasses import dataclass

from backend.errors import Forbidden

STATES = ("proposed", "approved", "executing", "completed", "failed", "cancelled",
          "rejected", "withdrawn", "expired")
TERMINAL = frozenset({"completed", "failed", "cancelled", "rejected", "withdrawn", "expired"})
KINDS = ("reassignment", "shrink", "clear_throttles")
ROLES = ("viewer", "operator", "approver", "admin")
ACTIONS = ("view", "propose", "approve", "reject", "withdraw", "execute", "cancel",
           "clear_throttles")  # clear_throttles: propose a plan deleting leftover throttles

# action -> (states it may start from, state it leads to); approve leads to approved once
# the approvals meet the plan's requirement (approvals.py), and leaves it proposed before
TRANSITIONS: dict[str, tuple[frozenset[str], str]] = {
    "approve": (frozenset({"proposed"}), "approved"),
    "reject": (frozenset({"proposed"}), "rejected"),
    "withdraw": (frozenset({"proposed"}), "withdrawn"),
    "expire": (frozenset({"proposed", "approved"}), "expired"),
    "execute": (frozenset({"approved"}), "executing"),
    "complete": (frozenset({"executing"}), "completed"),
    "fail": (frozenset({"executing"}), "failed"),
    "cancel": (frozenset({"executing"}), "cancelled"),
}
# an execution's end -> the workflow action that records it
OUTCOMES = {"completed": "complete", "failed": "fail", "cancelled": "cancel"}

# role -> the actions it may take; "others" = only on plans someone else wrote,
# "own" = only on plans the user wrote
_GRANTS: dict[str, dict[str, str]] = {
    "viewer": {"view": "any"},
    "operator": {"view": "any", "propose": "any", "withdraw": "own", "execute": "any",
                 "cancel": "any"},
    "approver": {"view": "any", "approve": "others", "reject": "others"},
    "admin": {"view": "any", "propose": "any", "approve": "others", "reject": "others",
              "withdraw": "own", "execute": "any", "cancel": "any", "clear_throttles": "any"},
}
_CELL = {"any": "yes", "own": "own plans only", "others": "others' plans only"}


@dataclass(frozen=True)
class Actor:
    """Who acts, with which role, from which client address (for the audit log)."""

    name: str
    role: str
    address: str | None = None


SYSTEM = Actor("railyard", "admin")  # expiry and executor steps


def may(actor: Actor, action: str, author: str | None = None) -> str | None:
    """None when ``actor`` may take ``action`` on a plan written by ``author`` (None for
    propose), else the rule that forbids it."""
    if actor.role not in ROLES:
        return f"unknown role '{actor.role}' (roles: {', '.join(ROLES)})"
    scope = _GRANTS[actor.role].get(action)
    if scope is None:
        allowed = [r for r in ROLES if action in _GRANTS[r]]
        return (f"the {actor.role} role may not {action}: it needs the "
                f"{' or '.join(allowed)} role")
    if scope == "others" and author is not None and author == actor.name:
        return f"the author of a plan may not {action} it: two people must agree"
    if scope == "own" and author is not None and author != actor.name:
        return f"only the author ({author}) may {action} this plan"
    return None


def authorize(actor: Actor, action: str, author: str | None = None) -> None:
    """Raise Forbidden naming the rule when ``may`` refuses."""
    rule = may(actor, action, author)
    if rule is not None:
        raise Forbidden(rule)


def next_state(action: str, state: str) -> str | None:
    """The state ``action`` leads to from ``state``, or None when it is not allowed there."""
    sources, target = TRANSITIONS[action]
    return target if state in sources else None


def role_table() -> dict[str, dict[str, str]]:
    """Role x action: "yes", "no", "own plans only" or "others' plans only"."""
    return {role: {a: _CELL[g[a]] if a in g else "no" for a in ACTIONS}
            for role, g in _GRANTS.items()}


def role_table_markdown() -> str:
    """The role x action table as docs/api.md prints it."""
    table = role_table()
    lines = ["| role | " + " | ".join(ACTIONS) + " |",
             "| --- |" + " --- |" * len(ACTIONS)]
    lines += [f"| {role} | " + " | ".join(cells[a] for a in ACTIONS) + " |"
              for role, cells in table.items()]
    return "\n".join(lines) + "\n"
