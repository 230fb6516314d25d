"""Approval policies as data: which rule applies to a plan, what it requires, and how far
its approvals have come.

Pure (no I/O, no clock) beside the workflow rules (workflow.py): the config parses a
policy with ``parse_policy``, the plan service computes a plan's requirement from its
frozen numbers at proposal (``Policy.requirement``) and stores it with the plan, and
every later question (may this user approve now, is it met, what does the page say)
reads only that stored requirement and the plan's approvals, so a policy changed later
never changes a stored plan's requirement.

A policy is an ordered list of rules, the first whose condition matches wins; no match
is today's rule (DEFAULT): one approval by someone other than the author. A rule can
only ask for more: at least one approver, always someone other than the author.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from backend.errors import BadInput
from backend.store.workflow import KINDS, ROLES, Actor, may

# the roles whose users may approve at all (the workflow's grants)
APPROVING_ROLES = tuple(r for r in ROLES if may(Actor("someone", r), "approve") is None)
RANGED = ("bytes_to_move", "replica_moves", "partitions", "brokers")  # {min, max}
CONDITIONS = ("kind", *RANGED, "topics", "outside_window")
RULE_KEYS = ("name", "when", "require")
REQUIRE_KEYS = ("approvers", "roles", "admin")
MAX_APPROVERS = 10


@dataclass(frozen=True)
class Facts:
    """A plan's frozen numbers, the only things a condition reads."""

    kind: str
    bytes_to_move: int = 0
    replica_moves: int = 0
    partitions: int = 0  # partitions touched
    brokers: int = 0  # brokers touched (a replica or a leadership gained or lost)
    topics: tuple[str, ...] = ()
    outside_window: bool = False  # runs outside its cluster's windows (never, without any)


@dataclass(frozen=True)
class Condition:
    """All of its parts must hold; an empty condition matches every plan (a catch-all)."""

    kinds: frozenset[str] | None = None
    ranges: tuple[tuple[str, int, int | None], ...] = ()  # (fact, min, max or None)
    topics: str | None = None  # a glob: matches when any touched topic matches it
    outside_window: bool | None = None

    def matches(self, f: Facts) -> bool:
        return ((self.kinds is None or f.kind in self.kinds)
                and all(lo <= getattr(f, key) and (hi is None or getattr(f, key) <= hi)
                        for key, lo, hi in self.ranges)
                and (self.topics is None or any(fnmatchcase(t, self.topics) for t in f.topics))
                and (self.outside_window is None or f.outside_window == self.outside_window))

    def covers(self, other: Condition) -> bool:
        """Every plan ``other`` matches, this matches too (so a rule with ``other`` after a
        rule with this condition can never match)."""
        if self.kinds is not None and (other.kinds is None or not other.kinds <= self.kinds):
            return False
        theirs = {key: (lo, hi) for key, lo, hi in other.ranges}
        for key, lo, hi in self.ranges:
            olo, ohi = theirs.get(key, (0, None))
            if olo < lo or (hi is not None and (ohi is None or ohi > hi)):
                return False
        return (self.topics is None or self.topics == other.topics) and \
            (self.outside_window is None or self.outside_window == other.outside_window)


@dataclass(frozen=True)
class Requirement:
    """What a plan needs before it is approved, stored with it: ``approvers`` users other
    than its author, each of one of ``roles``, and an admin among them when ``admin``;
    ``rule`` names the rule it came from."""

    approvers: int = 1
    roles: tuple[str, ...] = APPROVING_ROLES
    admin: bool = False
    rule: str = "default"

    def to_dict(self) -> dict:
        return {"rule": self.rule, "approvers": self.approvers, "roles": list(self.roles),
                "admin": self.admin}

    @classmethod
    def from_dict(cls, stored: Mapping[str, Any] | None) -> Requirement:
        """The stored requirement; a plan stored before policies (None) needs DEFAULT."""
        if not stored:
            return DEFAULT
        return cls(int(stored["approvers"]), tuple(stored["roles"]), bool(stored["admin"]),
                   str(stored["rule"]))

    def describe(self) -> str:
        """'2 approvers incl. an admin', '1 approver'."""
        text = f"{self.approvers} approver{'s' if self.approvers != 1 else ''}"
        if set(self.roles) != set(APPROVING_ROLES):
            text += f" ({' or '.join(self.roles)})"
        return text + (" incl. an admin" if self.admin else "")


DEFAULT = Requirement()


@dataclass(frozen=True)
class Rule:
    name: str
    when: Condition
    require: Requirement


@dataclass(frozen=True)
class Policy:
    """An ordered list of rules: the first that matches a plan's facts gives its
    requirement, DEFAULT when none does."""

    rules: tuple[Rule, ...] = ()

    def requirement(self, facts: Facts) -> Requirement:
        return next((r.require for r in self.rules if r.when.matches(facts)), DEFAULT)

    @property
    def reads(self) -> frozenset[str]:
        """The facts its conditions read (those a plan's content gives are counted only
        when read: a 100k-move plan's touched brokers cost 0.1 s)."""
        return frozenset(key for r in self.rules for key in (
            *(k for k, _, _ in r.when.ranges), *(("topics",) if r.when.topics else ())))


@dataclass(frozen=True)
class Policies:
    """The fleet's default policy and each cluster's own (which replaces it)."""

    fleet: Policy = field(default_factory=Policy)
    clusters: Mapping[str, Policy] = field(default_factory=dict)

    def of(self, cluster: str) -> Policy:
        return self.clusters.get(cluster, self.fleet)


@dataclass(frozen=True)
class Progress:
    """A requirement against the approvals a plan has so far (oldest first)."""

    requirement: Requirement
    approvers: tuple[str, ...] = ()
    roles: tuple[str, ...] = ()  # each approver's role when they approved

    @property
    def admin_missing(self) -> bool:
        return self.requirement.admin and "admin" not in self.roles

    @property
    def still_needed(self) -> int:
        """Approvals still needed (one at least while an admin is still missing)."""
        return max(self.requirement.approvers - len(self.approvers), int(self.admin_missing))

    @property
    def met(self) -> bool:
        return self.still_needed == 0

    def text(self) -> str:
        """'needs 2 approvers incl. an admin: 1 of 2 so far: bob'."""
        r = self.requirement
        text = f"needs {r.describe()}: {len(self.approvers)} of {r.approvers} so far"
        return text + (f": {', '.join(self.approvers)}" if self.approvers else "")

    def refusal(self, actor: Actor) -> str | None:
        """None when ``actor`` (not the author: workflow.may says that) may add their
        approval now, else the rule that forbids it."""
        r = self.requirement
        if actor.name in self.approvers:
            return f"{actor.name} already approved this plan: it needs {r.describe()}, " \
                   f"each a different user"
        if actor.role not in r.roles:
            return f"rule '{r.rule}' counts only approvals by the {' or '.join(r.roles)} " \
                   f"role, not {actor.role}"
        if self.admin_missing and self.still_needed <= 1 and actor.role != "admin":
            return f"rule '{r.rule}' needs an admin among its {r.approvers} approvers: " \
                   f"the last approval must be an admin's"
        return None

    def after(self, actor: Actor) -> Progress:
        """The progress once ``actor`` has approved too."""
        return Progress(self.requirement, (*self.approvers, actor.name),
                        (*self.roles, actor.role))


# ---- parsing (the dashboard's config) ---------------------------------------------------
def parse_policy(rules: Any, where: str) -> Policy:
    """A policy from the config's ``approval.rules`` list at ``where``; BadInput with one
    line naming the rule on an unknown key, a bad value or a rule that can never match."""
    if rules is None:
        return Policy()
    if not isinstance(rules, list):
        raise BadInput(f"{where}: expected a list of rules")
    parsed: list[Rule] = []
    for i, doc in enumerate(rules):
        at = f"{where}[{i}]"
        if not isinstance(doc, dict):
            raise BadInput(f"{at}: expected a rule {{name, when, require}}")
        name = doc.get("name")
        if not isinstance(name, str) or not name.strip():
            raise BadInput(f"{at}.name: required: a name the audit log records")
        at = f"{at} '{name}'"
        _only(doc, RULE_KEYS, at)
        if any(r.name == name for r in parsed):
            raise BadInput(f"{at}: the name is used twice")
        rule = Rule(name, _condition(doc.get("when"), f"{at}.when"),
                    _requirement(doc.get("require"), f"{at}.require", name))
        shadow = next((r for r in parsed if r.when.covers(rule.when)), None)
        if shadow is not None:
            raise BadInput(f"{at}: can never match: rule '{shadow.name}' before it matches "
                           f"every plan it would")
        parsed.append(rule)
    return Policy(tuple(parsed))


def check_users(policy: Policy, users: Iterable[tuple[str, str]], where: str) -> None:
    """BadInput naming the first rule no configured users (name, role) can meet: some
    proposer's plan must find enough approvers other than them."""
    users = list(users)
    proposers = [u for u in users if may(Actor(u[0], u[1]), "propose") is None]
    for i, rule in enumerate(policy.rules):
        r = rule.require
        fits = [u for u in users if u[1] in r.roles]
        if not any(len(others := [u for u in fits if u != p]) >= r.approvers
                   and (not r.admin or any(role == "admin" for _, role in others))
                   for p in proposers or [("", "")]):
            raise BadInput(f"{where}[{i}] '{rule.name}': no configured users can meet it: "
                           f"it needs {r.describe()} other than the author, and auth.users "
                           f"has {len(fits)} with the {' or '.join(r.roles)} role")


def _only(doc: dict, keys: tuple[str, ...], at: str) -> None:
    unknown = sorted(str(k) for k in set(doc) - set(keys))
    if unknown:
        raise BadInput(f"{at}: unknown key '{unknown[0]}' (known: {', '.join(keys)})")


def _condition(doc: Any, at: str) -> Condition:
    if doc is None:
        return Condition()
    if not isinstance(doc, dict):
        raise BadInput(f"{at}: expected a mapping of conditions ({', '.join(CONDITIONS)})")
    _only(doc, CONDITIONS, at)
    kinds = doc.get("kind")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if not isinstance(kinds, list) or not kinds or any(k not in KINDS for k in kinds):
            raise BadInput(f"{at}.kind: expected one or a list of {', '.join(KINDS)}, "
                           f"got {doc['kind']!r}")
        kinds = frozenset(kinds)
    ranges = tuple(_range(doc[key], f"{at}.{key}", key) for key in RANGED if key in doc)
    topics = doc.get("topics")
    if topics is not None and not (isinstance(topics, str) and topics.strip()):
        raise BadInput(f"{at}.topics: expected a topic name pattern such as 'payments-*', "
                       f"got {topics!r}")
    outside = doc.get("outside_window")
    if outside is not None and not isinstance(outside, bool):
        raise BadInput(f"{at}.outside_window: expected true or false, got {outside!r}")
    return Condition(kinds, ranges, topics, outside)


def _range(doc: Any, at: str, key: str) -> tuple[str, int, int | None]:
    if not isinstance(doc, dict) or not doc:
        raise BadInput(f"{at}: expected {{min: N}} and/or {{max: N}}, got {doc!r}")
    _only(doc, ("min", "max"), at)
    for bound in ("min", "max"):
        value = doc.get(bound)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < 0):
            raise BadInput(f"{at}.{bound}: expected a whole number >= 0, got {value!r}")
    lo, hi = doc.get("min") or 0, doc.get("max")
    if hi is not None and hi < lo:
        raise BadInput(f"{at}: can never match: max {hi} is below min {lo}")
    return key, lo, hi


def _requirement(doc: Any, at: str, rule: str) -> Requirement:
    if not isinstance(doc, dict):
        raise BadInput(f"{at}: required: {{approvers: N, roles: [...], admin: true|false}}")
    _only(doc, REQUIRE_KEYS, at)
    n = doc.get("approvers", 1)
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_APPROVERS:
        raise BadInput(f"{at}.approvers: expected 1 to {MAX_APPROVERS} (someone other than "
                       f"the author always approves: a rule can only ask for more), got {n!r}")
    roles = doc.get("roles", list(APPROVING_ROLES))
    roles = [roles] if isinstance(roles, str) else roles
    if not isinstance(roles, list) or not roles or any(r not in APPROVING_ROLES for r in roles):
        raise BadInput(f"{at}.roles: expected some of {', '.join(APPROVING_ROLES)} (the roles "
                       f"that may approve), got {doc.get('roles')!r}")
    admin = doc.get("admin", False)
    if not isinstance(admin, bool):
        raise BadInput(f"{at}.admin: expected true or false, got {admin!r}")
    if admin and "admin" not in roles:
        raise BadInput(f"{at}: can never be met: admin is required but roles leave it out")
    return Requirement(n, tuple(r for r in APPROVING_ROLES if r in roles), admin, rule)
