"""The plan workflow: transitions, roles, the role table, and a state machine over the
store in which no illegal transition ever succeeds."""

from __future__ import annotations

import copy
import random
import tempfile
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)
from sqlalchemy import func, select

from backend.errors import Conflict, Forbidden
from backend.services import plans
from backend.store.schema import decisions
from backend.store.store import open_store
from backend.store.workflow import (
    ACTIONS,
    ROLES,
    STATES,
    TERMINAL,
    TRANSITIONS,
    Actor,
    authorize,
    may,
    next_state,
    role_table,
    role_table_markdown,
)
from tests.plan_helpers import ORDERS, T0, cluster, moves

ROOT = Path(__file__).resolve().parents[2]


def test_transitions_follow_the_issue_graph():
    edges = {(s, t) for sources, t in TRANSITIONS.values() for s in sources}
    assert edges == {
        ("proposed", "approved"), ("approved", "executing"), ("executing", "completed"),
        ("executing", "failed"), ("executing", "cancelled"), ("proposed", "rejected"),
        ("proposed", "withdrawn"), ("proposed", "expired"), ("approved", "expired")}
    assert not any(s in TERMINAL for s, _ in edges), "terminal states have no way out"
    assert set(STATES) == {s for e in edges for s in e}


@pytest.mark.parametrize("state", STATES)
def test_next_state_only_along_an_edge(state):
    for action, (sources, target) in TRANSITIONS.items():
        assert next_state(action, state) == (target if state in sources else None)


def test_roles():
    op, ap, ad, vi = (Actor("o", "operator"), Actor("a", "approver"), Actor("d", "admin"),
                      Actor("v", "viewer"))
    assert may(op, "propose") is None and may(ad, "propose") is None
    assert "operator or admin" in may(ap, "propose")
    assert "approver or admin" in may(op, "approve", "x")
    assert may(ap, "approve", "someone") is None
    assert "two people" in may(ap, "approve", "a")
    assert "two people" in may(ad, "approve", "d")
    assert "two people" in may(ad, "reject", "d")
    assert may(op, "withdraw", "o") is None
    assert "only the author (x)" in may(op, "withdraw", "x")
    assert may(vi, "view") is None and may(vi, "approve", "x") is not None
    assert "unknown role" in may(Actor("z", "root"), "view")
    with pytest.raises(Forbidden, match="viewer role may not execute"):
        authorize(vi, "execute", "x")


def test_role_table_covers_every_role_and_action():
    table = role_table()
    assert list(table) == list(ROLES)
    for role, cells in table.items():
        assert list(cells) == list(ACTIONS)
        for action, cell in cells.items():
            own, other = may(Actor("me", role), action, "me"), may(Actor("me", role), action,
                                                                   "you")
            expected = {(True, True): "yes", (True, False): "own plans only",
                        (False, True): "others' plans only", (False, False): "no"}
            assert cell == expected[(own is None, other is None)], (role, action)


def test_docs_api_role_table_is_generated():
    """docs/api.md carries the table role_table_markdown() prints, cell for cell."""
    doc = ROOT / "docs" / "api.md"
    if not doc.exists():
        pytest.skip("docs/api.md not written yet (the API issue writes it)")
    assert role_table_markdown() in doc.read_text()


# ---- the state machine -------------------------------------------------------------
ACTORS = [Actor("olga", "operator"), Actor("otto", "operator"), Actor("anna", "approver"),
          Actor("ada", "admin"), Actor("vic", "viewer")]
actors = st.sampled_from(ACTORS)
picks = st.integers(0, 1000)


class PlanMachine(RuleBasedStateMachine):
    """Random actors do random things to random plans while the cluster moves and the
    clock runs; a model says what must succeed. Whatever the store accepts is an edge of
    the workflow graph taken by someone allowed to, and audit rows match the changes and
    the refusals."""

    @initialize()
    def open(self):
        self.dir = tempfile.TemporaryDirectory()
        self.store = open_store(f"sqlite:///{self.dir.name}/m.db", expiry_hours=2)
        self.assignment = copy.deepcopy(ORDERS)
        self.now = T0
        self.model: dict[int, dict] = {}  # id -> state, author, expires, basis
        self.changes = 0
        self.refusals = 0  # Forbidden answers: each an audit row that changes nothing
        for p, author in enumerate(("olga", "ada", "otto")):  # plans in play from step one
            self.propose(Actor(author, "admin" if author == "ada" else "operator"), p)

    def teardown(self):
        if hasattr(self, "store"):
            self.store.close()
            self.dir.cleanup()

    def snap(self):
        return cluster(self.assignment)

    @rule(actor=actors, p=st.integers(0, 3))
    def propose(self, actor, p):
        try:
            plan = plans.propose(self.store, actor, cluster="c1", kind="reassignment",
                                 content=moves(("orders", p, [1, 4])), preview={},
                                 snapshot=self.snap(), now=self.now)
        except Forbidden:
            assert actor.role not in ("operator", "admin")
            self.refusals += 1
            return
        assert actor.role in ("operator", "admin")
        self.model[plan.id] = {"state": "proposed", "author": actor.name, "p": p,
                               "expires": self.now + timedelta(hours=2),
                               "basis": list(self.assignment["orders"][p])}
        self.changes += 1

    @rule(minutes=st.integers(1, 40))
    def tick(self, minutes):
        self.now += timedelta(minutes=minutes)

    @rule(p=st.integers(0, 3))
    def move_partition(self, p):
        self.assignment["orders"][p] = list(reversed(self.assignment["orders"][p]))

    def pick(self, i):
        """Mostly a plan still in play (where the rules matter), sometimes any plan."""
        live = sorted(k for k, m in self.model.items() if m["state"] not in TERMINAL)
        pool = live if live and i % 4 else sorted(self.model)
        return pool[i % len(pool)]

    def expect(self, plan_id, action, actor):
        m = self.model[plan_id]
        permission = "execute" if action in plans.OUTCOMES.values() else action
        allowed = may(actor, permission, m["author"]) is None and \
            next_state(action, m["state"]) is not None
        return m, allowed

    def fresh(self, m):
        return self.now < m["expires"] and self.assignment["orders"][m["p"]] == m["basis"]

    def apply(self, plan_id, action, actor, allowed, call):
        m = self.model[plan_id]
        before = m["state"]
        try:
            plan = call()
        except (Forbidden, Conflict) as e:
            assert not allowed, f"{actor} {action} on {before} refused: {e}"
            assert plans.get(self.store, plan_id).state == before
            self.refusals += isinstance(e, Forbidden)
            return
        assert allowed, f"{actor} {action} on {before} succeeded"
        assert plan.state == TRANSITIONS[action][1]
        assert before in TRANSITIONS[action][0]
        m["state"] = plan.state
        if plan.state == "approved":  # expiry counts from the approval (issue 28)
            m["expires"] = self.now + timedelta(hours=2)
        self.changes += 1

    def call(self, plan, action, actor, right_sha):
        """The service call for ``action`` and whether the rules say it must succeed."""
        m, ok = self.expect(plan, action, actor)
        at = {"topics_of": lambda *_: self.snap(), "now": self.now}
        if action == "approve":
            sha = plans.get(self.store, plan).sha256 if right_sha else "0" * 64
            return ok and right_sha and self.fresh(m), lambda: plans.approve(
                self.store, actor, plan, sha256=sha, **at)
        if action == "execute":
            return ok and self.fresh(m), lambda: plans.request_execute(
                self.store, actor, plan, **at)
        if action in ("reject", "withdraw"):
            return ok, lambda: getattr(plans, action)(self.store, actor, plan, comment="why",
                                                      now=self.now)
        outcome = next(o for o, a in plans.OUTCOMES.items() if a == action)
        return ok, lambda: plans.finish(self.store, actor, plan, outcome, now=self.now)

    @precondition(lambda self: self.model)
    @rule(i=picks, actor=actors, right_sha=st.booleans(),
          action=st.sampled_from(["approve", "approve", "reject", "withdraw", "execute",
                                  "execute", "complete", "fail", "cancel"]))
    def act(self, i, actor, right_sha, action):
        plan = self.pick(i)
        ok, call = self.call(plan, action, actor, right_sha)
        self.apply(plan, action, actor, ok, call)

    @rule()
    def expire(self):
        expired = plans.expire_due(self.store, now=self.now)
        due = sorted(i for i, m in self.model.items()
                     if m["state"] in ("proposed", "approved") and self.now >= m["expires"])
        assert expired == due
        for i in expired:
            self.model[i]["state"] = "expired"
        self.changes += len(expired)

    @invariant()
    def store_matches_model(self):
        if not hasattr(self, "store"):
            return
        stored = {p.id: p.state for p in plans.list_plans(self.store)}
        assert stored == {i: m["state"] for i, m in self.model.items()}
        logged = plans.audit_entries(self.store, limit=100_000)
        entries = [e for e in logged if e.action != plans.REFUSED]
        assert len(entries) == self.changes
        assert len(logged) - len(entries) == self.refusals
        for e in entries:
            if e.before is not None and e.action in TRANSITIONS:
                assert e.before in TRANSITIONS[e.action][0]
                assert e.after == TRANSITIONS[e.action][1]

    @invariant()
    def each_plan_decided_at_most_once(self):
        if not hasattr(self, "store"):
            return
        with self.store.read() as conn:
            twice = conn.execute(select(decisions.c.plan_id).group_by(decisions.c.plan_id)
                                 .having(func.count() > 1)).all()
        assert not twice


PlanMachine.TestCase.settings = settings(
    max_examples=20, stateful_step_count=30, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow])
test_plan_state_machine = PlanMachine.TestCase


def test_seeded_walk_through_the_same_machine():
    """The machine's rules driven by a seeded walk of many steps: every rule of the
    workflow gets exercised, including the rare ones (an admin approving their own plan,
    an approval after expiry, a stale cluster), which short hypothesis runs may miss."""
    rng = random.Random(11)
    machine = PlanMachine()
    try:
        machine.open()
        names = ["approve", "approve", "reject", "withdraw", "execute", "execute",
                 "complete", "fail", "cancel"]
        for step in range(1500):
            roll = rng.random()
            if roll < 0.12:
                machine.propose(rng.choice(ACTORS), rng.randrange(4))
            elif roll < 0.20:
                machine.tick(rng.randint(1, 40))
            elif roll < 0.25:
                machine.move_partition(rng.randrange(4))
            elif roll < 0.28:
                machine.expire()
            else:
                machine.act(rng.randrange(1000), rng.choice(ACTORS), rng.random() < 0.8,
                            rng.choice(names))
            if step % 100 == 0:
                machine.store_matches_model()
        machine.store_matches_model()
        machine.each_plan_decided_at_most_once()
    finally:
        machine.teardown()
