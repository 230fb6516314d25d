"""The start's check of a plan against its sealed audit trail on SQLite and on a real
PostgreSQL: a plan read back hashes to its sha256 on both (unicode, a start time), an edit
is refused at Execute and at the start, and a row not sealed yet (PostgreSQL seals just
after the commit) holds the start for a while instead of failing it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select, update

from backend.errors import Conflict
from backend.executor.thread import SEAL_WAIT
from backend.services import execution, plans
from backend.store.schema import audit
from backend.store.schema import plans as plan_rows
from backend.store.store import open_store
from backend.twin.cluster import TwinCluster, TwinSettings
from backend.twin.gateway import TwinGateway
from tests.plan_helpers import APPROVER, OPERATOR, T0, moves
from tests.unit.test_executor import MB, small_cluster


@pytest.fixture
def store(store_url):
    s = open_store(store_url)
    yield s
    s.close()


def approved(store, snap, content: dict) -> plans.Plan:
    plan = plans.propose(store, OPERATOR, cluster="small", kind="reassignment",
                         content=content, preview={"bytes_to_move": 4 * MB}, snapshot=snap,
                         throttle=MB, title="ünïcode ✓", now=T0,
                         not_before=T0.timestamp() + 0.5)
    plans.approve(store, APPROVER, plan.id, sha256=plan.sha256, topics_of=lambda *_: snap,
                  now=T0 + timedelta(seconds=1))
    return plan


def test_an_edited_plan_is_refused_and_an_untouched_one_passes(store):
    snap = small_cluster()
    content = moves(("a", 0, [3, 2]))
    content["partitions"][0]["note"] = "ünïcode ✓ 1.5"
    edited, kept = approved(store, snap, content), approved(store, snap, content)
    with store.engine.begin() as conn:
        conn.execute(update(plan_rows).where(plan_rows.c.id == edited.id)
                     .values(content=moves(("a", 0, [4, 2]))))
    cause = f"plan {edited.id}'s content does not hash to the sha256 its approvers signed"
    with pytest.raises(Conflict, match=f"^{cause}$"):
        plans.request_execute(store, OPERATOR, edited.id, topics_of=lambda *_: snap,
                              now=T0 + timedelta(seconds=2))
    plans.request_execute(store, OPERATOR, kept.id, topics_of=lambda *_: snap,
                          now=T0 + timedelta(seconds=2))
    assert plans.execution_doubt(store, plans.get(store, kept.id), "executing") is None
    assert store.verify_audit()["intact"]


def test_a_row_not_sealed_yet_holds_the_start_on_postgresql_only(store):
    twin = TwinCluster(small_cluster(), TwinSettings(traffic_noise=0.0))
    gw = TwinGateway(twin)
    clock = [T0.timestamp() + 10]
    thread = execution.executor_thread(store, ["small"], lambda _c: gw,
                                       lambda _c: twin.assignment(), clock=lambda: clock[0],
                                       holder="test")
    plan = approved(store, twin.assignment(), moves(("a", 0, [3, 2])))
    plans.request_execute(store, OPERATOR, plan.id, topics_of=lambda *_: twin.assignment(),
                          now=T0 + timedelta(seconds=2))
    with store.engine.begin() as conn:  # as between the commit and the seal
        row, seal = conn.execute(select(audit.c.id, audit.c.seal).where(
            audit.c.plan_id == plan.id, audit.c.action == "execute")).one()
        conn.execute(update(audit).where(audit.c.id == row).values(seal=None))
    cause = f"plan {plan.id}'s audit row {row} (execute by olga): it is not sealed"
    doubt = plans.execution_doubt(store, plans.get(store, plan.id), "executing")
    assert doubt == plans.Doubt(cause, unsealed=store.postgres)
    thread.cycle(clock[0])
    if not store.postgres:  # SQLite seals in the row's own transaction: a forgery
        assert plans.get(store, plan.id).state == "failed"
        assert plans.audit_entries(store, plan=plan.id)[-1].detail == {"cause": cause}
        return
    clock[0] += SEAL_WAIT - 1
    thread.cycle(clock[0])
    assert plans.get(store, plan.id).state == "executing"
    assert execution.progress(store, plan.id) is None
    with store.engine.begin() as conn:  # the seal arrives
        conn.execute(update(audit).where(audit.c.id == row).values(seal=seal))
    thread.cycle(clock[0])
    assert execution.progress(store, plan.id)["state"] == "running"
    # one that never gets its seal fails once SEAL_WAIT has passed
    other = approved(store, twin.assignment(), moves(("b", 1, [2, 3])))
    plans.request_cancel(store, OPERATOR, plan.id, now=T0 + timedelta(seconds=3))
    for _ in range(600):
        if plans.get(store, plan.id).state != "executing":
            break
        clock[0] += 1
        twin.advance(1.0)
        thread.cycle(clock[0])
    assert plans.get(store, plan.id).state == "cancelled"
    plans.request_execute(store, OPERATOR, other.id, topics_of=lambda *_: twin.assignment(),
                          now=T0 + timedelta(seconds=4))
    with store.engine.begin() as conn:
        row = conn.execute(select(audit.c.id).where(
            audit.c.plan_id == other.id, audit.c.action == "execute")).scalar_one()
        conn.execute(update(audit).where(audit.c.id == row).values(seal=None))
    thread.cycle(clock[0])
    assert plans.get(store, other.id).state == "executing"
    clock[0] += SEAL_WAIT
    thread.cycle(clock[0])
    assert plans.get(store, other.id).state == "failed"
    assert plans.audit_entries(store, plan=other.id)[-1].detail == {
        "cause": f"plan {other.id}'s audit row {row} (execute by olga): it is not sealed"}
    assert execution.progress(store, other.id) is None
