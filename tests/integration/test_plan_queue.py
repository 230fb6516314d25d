"""The fleet's queue (services.plan_queue) on SQLite and on PostgreSQL: every plan of the
configured clusters, filtered by cluster, state and "needs my approval", sorted; a running
plan's progress and ETA as its page gives them, a paused one's reason; and the store
answers all clusters in a fixed number of statements, however many plans and clusters."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import event

from backend.errors import BadInput
from backend.services import execution, plan_queue, plans
from backend.store.approvals import Policies, parse_policy
from backend.store.executions import ExecutionRecords
from backend.store.store import open_store
from backend.store.workflow import SYSTEM, Actor
from tests.plan_helpers import (
    ADMIN,
    APPROVER,
    APPROVER2,
    OPERATOR,
    T0,
    VIEWER,
    moves,
    orders_cluster,
)

SNAP = orders_cluster()
CLUSTERS = ["c1", "c2", "c3"]


def same(_cluster, _topics):
    return SNAP


def propose(store, cluster: str, author: Actor = OPERATOR, nbytes: int | None = 100,
            title: str = "", content: dict | None = None, minute: int = 0):
    preview = {} if nbytes is None else {"bytes_to_move": nbytes, "batched_eta_seconds": 600.0}
    return plans.propose(store, author, cluster=cluster, kind="reassignment",
                         content=content or moves(("orders", 0, [3, 4])), preview=preview,
                         snapshot=SNAP, title=title, now=T0 + timedelta(minutes=minute))


@pytest.fixture
def store(store_url):
    s = open_store(store_url)
    yield s
    s.close()


@pytest.fixture
def fleet(store):
    """Plans on three clusters: proposed by olga on c1 and c2, one by ada on c3, an
    approved one on c2 and a withdrawn one on c1; plus one on an unconfigured cluster."""
    p = {
        "c1": propose(store, "c1", nbytes=300, title="alpha", minute=1),
        "c2": propose(store, "c2", nbytes=50, title="bravo", minute=2),
        "c3": propose(store, "c3", author=ADMIN, nbytes=None, title="charlie", minute=3),
        "approved": propose(store, "c2", nbytes=1000, title="delta", minute=4),
        "withdrawn": propose(store, "c1", nbytes=10, title="echo", minute=5),
        "elsewhere": propose(store, "gone", title="foxtrot", minute=6),
    }
    plans.approve(store, APPROVER, p["approved"].id, sha256=p["approved"].sha256,
                  topics_of=same, now=T0 + timedelta(minutes=10))
    plans.withdraw(store, OPERATOR, p["withdrawn"].id, now=T0 + timedelta(minutes=10))
    return p


def ids(rows):
    return [r["id"] for r in rows]


def test_every_configured_cluster_newest_first_with_approvals(store, fleet):
    rows = plan_queue.queue(store, CLUSTERS, cluster="*")
    assert ids(rows) == [fleet[k].id for k in ("withdrawn", "approved", "c3", "c2", "c1")]
    by = {r["id"]: r for r in rows}
    approved = by[fleet["approved"].id]
    assert (approved["approvers"], approved["approvals"], approved["still_needed"]) \
        == (["anna"], "1 of 1", 0)
    proposed = by[fleet["c1"].id]
    assert (proposed["approvals"], proposed["still_needed"], proposed["bytes_to_move"]) \
        == ("0 of 1", 1, 300)
    assert proposed["approval_text"] == "needs 1 approver: 0 of 1 so far"
    # a withdrawn plan waits for nobody: no "1 still needed"
    assert by[fleet["withdrawn"].id]["still_needed"] is None
    assert by[fleet["c3"].id]["bytes_to_move"] is None
    assert {r["schedule"] for r in rows} == {"—"}
    assert all(r["execution"] is None and r["eta_seconds"] is None for r in rows)


def test_filters_by_cluster_and_state(store, fleet):
    assert ids(plan_queue.queue(store, CLUSTERS, cluster="c2")) \
        == [fleet["approved"].id, fleet["c2"].id]
    assert ids(plan_queue.queue(store, CLUSTERS, state="proposed")) \
        == [fleet["c3"].id, fleet["c2"].id, fleet["c1"].id]
    assert ids(plan_queue.queue(store, CLUSTERS, cluster="c1", state="withdrawn")) \
        == [fleet["withdrawn"].id]
    assert plan_queue.queue(store, CLUSTERS, state="executing") == []
    with pytest.raises(BadInput, match="cluster: expected"):
        plan_queue.queue(store, CLUSTERS, cluster="gone")
    with pytest.raises(BadInput, match="state: expected"):
        plan_queue.queue(store, CLUSTERS, state="waiting")
    with pytest.raises(BadInput, match="sort: expected"):
        plan_queue.queue(store, CLUSTERS, sort="-content")


def test_needs_my_approval(store, fleet):
    """An approver sees every proposed plan but their own; the author not theirs; a
    viewer and an operator none; a plan already approved is no longer waiting."""
    def waiting(actor):
        return ids(plan_queue.queue(store, CLUSTERS, needs_approval_by=actor))

    assert waiting(APPROVER) == [fleet["c3"].id, fleet["c2"].id, fleet["c1"].id]
    assert waiting(ADMIN) == [fleet["c2"].id, fleet["c1"].id]  # c3 is ada's own
    assert waiting(VIEWER) == [] and waiting(OPERATOR) == []
    assert ids(plan_queue.queue(store, CLUSTERS, cluster="c2", needs_approval_by=APPROVER2)) \
        == [fleet["c2"].id]
    assert plan_queue.queue(store, CLUSTERS, state="approved",
                            needs_approval_by=APPROVER) == []
    flags = {r["id"]: r["for_you"] for r in plan_queue.queue(store, CLUSTERS, viewer=ADMIN)}
    assert [k for k, v in flags.items() if v] == [fleet["c2"].id, fleet["c1"].id]
    plans.approve(store, APPROVER, fleet["c1"].id, sha256=fleet["c1"].sha256,
                  topics_of=same, now=T0 + timedelta(minutes=11))
    assert waiting(APPROVER2) == [fleet["c3"].id, fleet["c2"].id]
    # the decision read again, though the plan's approvals were read (and kept) before
    [c1] = [r for r in plan_queue.queue(store, CLUSTERS, cluster="c1") if r["id"] == fleet["c1"].id]
    assert (c1["state"], c1["approvers"], c1["still_needed"]) == ("approved", ["anna"], 0)


def test_sorting(store, fleet):
    def titles(sort):
        return [r["title"] for r in plan_queue.queue(store, CLUSTERS, sort=sort)]

    assert titles("bytes_to_move") == ["echo", "bravo", "alpha", "delta", "charlie"]
    assert titles("-bytes_to_move") == ["delta", "alpha", "bravo", "echo", "charlie"]
    assert titles("title") == ["alpha", "bravo", "charlie", "delta", "echo"]
    assert titles("id") == ["alpha", "bravo", "charlie", "delta", "echo"]
    # ties keep newest first: c2's two plans, then c1's
    assert titles("cluster") == ["echo", "alpha", "delta", "bravo", "charlie"]


def test_all_clusters_in_a_fixed_number_of_statements(store):
    """Ten clusters of three plans and one cluster of one plan: the same statements."""
    statements = []

    def count(*_args):
        statements.append(1)

    event.listen(store.engine, "before_cursor_execute", count)
    try:
        propose(store, "k0")
        statements.clear()
        plan_queue.queue(store, ["k0"])
        few = len(statements)  # ids, rows, figures, decisions (and SQLite's BEGIN)
        names = [f"k{i}" for i in range(10)]
        for i, name in enumerate(names * 3):
            plan = propose(store, name, minute=i)
            if i % 4 == 0:
                plans.approve(store, APPROVER, plan.id, sha256=plan.sha256, topics_of=same,
                              now=T0 + timedelta(minutes=30))
        statements.clear()
        rows = plan_queue.queue(store, names, viewer=APPROVER)
        assert len(rows) == 31 and len(statements) == few <= 5
        # again, nothing changed: only the plans' ids and versions are read
        statements.clear()
        assert plan_queue.queue(store, names, viewer=APPROVER) == rows
        assert len(statements) == few - 3
        # one plan changed: its row and decisions are read again, by id
        plans.withdraw(store, OPERATOR, rows[0]["id"], now=T0 + timedelta(minutes=40))
        statements.clear()
        again = plan_queue.queue(store, names, viewer=APPROVER)
        assert again[0]["state"] == "withdrawn" and again[1:] == rows[1:]
        assert len(statements) == few - 1
    finally:
        event.remove(store.engine, "before_cursor_execute", count)


def test_a_running_plan_shows_its_page_s_progress_and_eta_and_a_paused_one_why(store):
    plan = propose(store, "c1", nbytes=400)
    plans.approve(store, APPROVER, plan.id, sha256=plan.sha256, topics_of=same,
                  now=T0 + timedelta(seconds=1))
    plans.request_execute(store, OPERATOR, plan.id, topics_of=same,
                          now=T0 + timedelta(seconds=2))
    records = ExecutionRecords(store)
    start = T0.timestamp() + 3
    records.create(plan.id, "c1", {"execution": {"throttle": 10}}, plan.sha256, [2, 2],
                   OPERATOR.name, start, bytes_total=400)
    records.save_batch(plan.id, 0, state="running", started_at=start)
    ex = records.get(plan.id)
    ex = records.finish_batch(ex, 0, 2, 200, start + 60)
    records.save_batch(plan.id, 1, state="running", done=1, bytes_done=50,
                       started_at=start + 60)
    [row] = plan_queue.queue(store, CLUSTERS, state="executing")
    page = execution.progress(store, plan.id, now=start + 90)
    assert row["execution"] == "running" and row["pause_reason"] is None
    assert row["progress"] == pytest.approx(page["fraction"]) == pytest.approx(0.75)
    # 250 of 400 bytes and 3 of 4 partitions done: the lesser share, 3/8, is left
    assert row["eta_seconds"] == pytest.approx(page["predicted_eta_seconds"]) \
        == pytest.approx(600.0 * 0.375)
    execution.pause(store, OPERATOR, plan.id, now=start + 100)
    [row] = plan_queue.queue(store, CLUSTERS, cluster="c1")
    assert row["execution"] == "pausing"
    assert row["pause_reason"] == "paused by olga; the batch in flight finishes first"
    assert plan_queue.pause_reason("paused", None, None) == "paused"


def test_the_window_shows_the_start_time_and_the_next_window_that_holds_it(store):
    plan = plans.propose(store, OPERATOR, cluster="c1", kind="reassignment",
                         content=moves(("orders", 0, [3, 4])), preview={}, snapshot=SNAP,
                         now=T0, not_before="2026-03-02T22:00:00Z")
    [row] = plan_queue.queue(store, CLUSTERS)
    assert row["schedule"] == "not before 2026-03-02 22:00 UTC"
    plans.approve(store, APPROVER, plan.id, sha256=plan.sha256, topics_of=same,
                  now=T0 + timedelta(seconds=1))
    plans.request_execute(store, OPERATOR, plan.id, topics_of=same,
                          now=T0 + timedelta(seconds=2))
    records = ExecutionRecords(store)
    records.create(plan.id, "c1", {"execution": {"throttle": 10}}, plan.sha256, [2],
                   OPERATOR.name, T0.timestamp(), bytes_total=100)
    opens = datetime(2026, 3, 2, 22, 0, tzinfo=UTC).timestamp()
    records.save(records.get(plan.id), state="paused", hold={
        "kind": "window", "next_window": opens, "since": T0.timestamp(),
        "text": "not before its start time"})
    [row] = plan_queue.queue(store, CLUSTERS)
    assert (row["execution"], row["pause_reason"]) \
        == ("waiting for window", "waiting for window: not before its start time")
    assert row["schedule"] == "not before 2026-03-02 22:00 UTC; next window 2026-03-02 22:00 UTC"
    plans.request_cancel(store, OPERATOR, plan.id, now=T0 + timedelta(minutes=1))
    plans.finish(store, SYSTEM, plan.id, "cancelled", now=T0 + timedelta(minutes=2))
    [row] = plan_queue.queue(store, CLUSTERS)
    assert row["schedule"] == "—"  # nothing left to schedule


def test_needs_my_approval_under_a_two_approver_rule(store_url):
    """A cluster whose rule asks for two approvers incl. an admin: after one approver, the
    plan still waits, but only for an admin (another approver's approval would not count),
    and the rows say how far it has come."""
    rule = Policies(parse_policy([{"name": "two incl. an admin", "require": {
        "approvers": 2, "admin": True}}], "approval.rules"))
    store = open_store(store_url, approval=rule)
    try:
        plan = propose(store, "c1")
        assert ids(plan_queue.queue(store, CLUSTERS, needs_approval_by=APPROVER2)) == [plan.id]
        plans.approve(store, APPROVER, plan.id, sha256=plan.sha256, topics_of=same,
                      now=T0 + timedelta(minutes=1))
        [row] = plan_queue.queue(store, CLUSTERS, viewer=ADMIN)
        assert (row["state"], row["approvers"], row["approvals"], row["still_needed"],
                row["admin_required"], row["for_you"]) \
            == ("proposed", ["anna"], "1 of 2", 1, True, True)
        assert row["approval_text"] == "needs 2 approvers incl. an admin: 1 of 2 so far: anna"
        for actor, waits in ((APPROVER, False), (APPROVER2, False), (ADMIN, True)):
            assert bool(plan_queue.queue(store, CLUSTERS, needs_approval_by=actor)) == waits
        plans.approve(store, ADMIN, plan.id, sha256=plan.sha256, topics_of=same,
                      now=T0 + timedelta(minutes=2))
        [row] = plan_queue.queue(store, CLUSTERS, viewer=ADMIN)
        assert (row["state"], row["still_needed"], row["for_you"]) == ("approved", 0, False)
    finally:
        store.close()


def test_a_plan_still_to_run_stays_however_many_ended_after_it(store):
    """The queue holds the newest plans and every open one: an old proposed plan is not
    pushed out by the history that came after it."""
    old = propose(store, "c1", title="old")
    for i in range(4):
        done = propose(store, "c2", title=f"done {i}", minute=i + 1)
        plans.withdraw(store, OPERATOR, done.id, now=T0 + timedelta(minutes=10))
    assert [r["title"] for r in plan_queue.queue(store, CLUSTERS, limit=2)] \
        == ["done 3", "done 2", "old"]
    assert [r["id"] for r in plan_queue.queue(store, CLUSTERS, state="withdrawn", limit=2)] \
        == [old.id + 4, old.id + 3]
