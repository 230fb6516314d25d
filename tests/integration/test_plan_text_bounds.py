"""What the plan services store fits both stores (issue 27 item 5): PostgreSQL refuses a NUL
in text, a user name past its column and ids past its 32-bit INTEGER, and answered each
with a 500; SQLite stored them. Now both refuse them before writing, with one line, and
store nothing. Comments are capped too (item 8)."""

from __future__ import annotations

import pytest

from backend.errors import BadInput, NotFound
from backend.services import plans
from backend.store.store import open_store
from backend.store.workflow import Actor
from tests.plan_helpers import APPROVER, OPERATOR, T0, moves, orders_cluster

SNAP = orders_cluster()
LONG_NAME = "n" * 201


@pytest.fixture
def store(store_url):
    opened = open_store(store_url)
    yield opened
    opened.close()


def _propose(store, actor=OPERATOR, **kw):
    return plans.propose(store, actor, cluster="c1", kind="reassignment",
                         content=moves(("orders", 0, [3, 4])), preview={}, snapshot=SNAP,
                         now=T0, **kw)


def _stored(store) -> tuple[int, int]:
    return len(plans.list_plans(store)), len(plans.audit_entries(store))


@pytest.mark.parametrize(("act", "error"), [
    (lambda s, _: _propose(s, title="drain\x00 1"),
     "title: control character '\\x00' at position 5: give plain text"),
    (lambda s, _: _propose(s, title="t" * 201), "title: 201 characters, more than the 200 allowed"),
    (lambda s, _: _propose(s, actor=Actor(LONG_NAME, "operator")),
     "user name: 201 characters, more than the 200 the plan store keeps"),
    (lambda s, pid: plans.reject(s, APPROVER, pid, comment="no\x00", now=T0),
     "comment: control character '\\x00' at position 2: give plain text"),
    (lambda s, pid: plans.reject(s, Actor(LONG_NAME, "approver"), pid, comment="why", now=T0),
     "user name: 201 characters, more than the 200 the plan store keeps"),
    (lambda s, pid: plans.reject(s, APPROVER, pid, comment="c" * 2001, now=T0),
     "comment: 2,001 characters, more than the 2,000 allowed"),
    (lambda s, pid: plans.reject(s, APPROVER, pid, sha256="f" * 65, now=T0),
     "sha256: 65 characters, more than the 64 allowed"),
    (lambda s, _: _propose(s, throttle=2**63), "throttle: expected a positive integer (bytes/s) "
                                            "up to Kafka's largest value (2^63-1), got "
                                            "9223372036854775808"),
], ids=["nul-title", "long-title", "long-user-propose", "nul-comment", "long-user-reject",
        "long-comment", "long-sha256", "throttle-2**63"])
def test_text_past_the_store_is_refused_before_writing(store, act, error):
    plan = _propose(store)  # a proposed plan to decide on
    before = _stored(store)
    with pytest.raises(BadInput) as refused:
        act(store, plan.id)
    assert str(refused.value) == error
    assert _stored(store) == before
    assert plans.get(store, plan.id).decisions == ()
    assert store.verify_audit()["intact"]


@pytest.mark.parametrize("plan_id", [2**31, 10**25])
def test_plan_ids_past_the_column_are_not_found(store, plan_id):
    with pytest.raises(NotFound, match=f"^no plan {plan_id}$"):
        plans.get(store, plan_id)
    with pytest.raises(NotFound):
        plans.reject(store, APPROVER, plan_id, now=T0)


def test_a_comment_with_line_breaks_at_the_limit_is_stored(store):
    plan = _propose(store)
    comment = "not now:\n\tthe sale" + "." * (2000 - 18)
    plans.reject(store, APPROVER, plan.id, comment=comment, now=T0)
    assert plans.get(store, plan.id).decisions[0].comment == comment
