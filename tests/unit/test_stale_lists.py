"""The lists say which open plans Approve would refuse as stale: the nav's "Plans (N for
you)" and the fleet queue (its rows, its "needs my approval" filter, the API's row)
check each proposed or approved plan's basis against its cluster's cached snapshot, in
Approve's own words, and never guess: a plan whose basis is throttle configs, or whose
cluster has no snapshot at hand, is "not checked"."""

from __future__ import annotations

import base64
import sys

import dash
import pytest

from backend.errors import Conflict, Unavailable
from backend.model.io import save_snapshot
from backend.model.snapshot import Limits
from backend.services import plan_actions, plan_queue, plans
from backend.services.cluster import ClusterSource
from backend.store.workflow import Actor
from dashboard import shell
from tests.executor_rig import sqlite_store
from tests.plan_helpers import (
    ADMIN,
    APPROVER,
    OPERATOR,
    ORDERS,
    T0,
    cluster,
    moves,
    orders_cluster,
    shrink_content,
)
from tests.unit.test_plan_view import text_of

SNAP = orders_cluster()
GROWN = cluster({**ORDERS, "orders": ORDERS["orders"] + [[1, 3]]})  # orders gained one
CLUSTERS = ["c1", "c2"]


def propose(store, kind: str, content: dict, cluster_name: str = "c1", author=OPERATOR) -> int:
    return plans.propose(store, author, cluster=cluster_name, kind=kind, content=content,
                         preview={}, snapshot=SNAP, now=T0).id


@pytest.fixture
def world(tmp_path):
    """On c1: a shrink of orders (its basis is orders' partition count), a reassignment
    of audit (its basis: audit-0's replicas), an approved shrink; on c2 a reassignment."""
    store = sqlite_store(tmp_path / "r.db")
    p = {"shrink": propose(store, "shrink", shrink_content("orders", to=2)),
         "move": propose(store, "reassignment", moves(("audit", 0, [2, 4]))),
         "approved": propose(store, "shrink", shrink_content("orders", to=3)),
         "c2": propose(store, "reassignment", moves(("orders", 0, [3, 4])), "c2")}
    plans.approve(store, APPROVER, p["approved"], topics_of=lambda *_: SNAP, now=T0,
                  sha256=plans.get(store, p["approved"]).sha256)
    return store, p


def refusal(store, plan_id: int, snap) -> str:
    """What Approve says of the plan on ``snap``."""
    with pytest.raises(Conflict) as e:
        plans.approve(store, ADMIN, plan_id, sha256=plans.get(store, plan_id).sha256,
                      topics_of=lambda *_: snap, now=T0)
    return str(e.value)


def test_a_grown_topic_makes_its_shrink_stale_in_approve_s_words(world):
    store, p = world
    snapshot_of = {"c1": GROWN, "c2": SNAP}.get
    ready, stale = plan_actions.waiting_seen(store, APPROVER, snapshot_of)
    assert [x.id for x in ready] == [p["move"], p["c2"]]  # their bases hold
    assert [x.id for x in stale] == [p["shrink"]]
    rows = {r["id"]: r for r in plan_queue.queue(store, CLUSTERS, viewer=APPROVER,
                                                 snapshot_of=snapshot_of)}
    why = refusal(store, p["shrink"], GROWN)
    assert "orders partition count 4 -> 5" in why and why.endswith("re-propose")
    shrink = rows[p["shrink"]]
    assert (shrink["basis"], shrink["stale"], shrink["basis_note"], shrink["for_you"]) \
        == ("stale", why, why, False)
    assert plans.stale(store, p["shrink"], lambda *_: GROWN) == why  # the plan's page
    # an approved plan Execute would refuse says so too (it waits for nobody's approval)
    assert rows[p["approved"]]["stale"] == plans.stale(store, p["approved"],
                                                        lambda *_: GROWN) is not None
    for kept in ("move", "c2"):
        assert (rows[p[kept]]["basis"], rows[p[kept]]["stale"], rows[p[kept]]["for_you"]) \
            == ("holds", None, True)
    # "needs my approval" leaves out what Approve would refuse
    assert [r["id"] for r in plan_queue.queue(store, CLUSTERS, needs_approval_by=APPROVER,
                                              snapshot_of=snapshot_of)] \
        == [p["c2"], p["move"]]


def test_plans_whose_basis_holds_count_as_before(world):
    store, p = world
    same = {"c1": SNAP, "c2": SNAP}.get
    ready, stale = plan_actions.waiting_seen(store, APPROVER, same)
    assert ready == plan_actions.waiting_for(store, APPROVER) and stale == []
    rows = plan_queue.queue(store, CLUSTERS, viewer=APPROVER, snapshot_of=same)
    assert [r["id"] for r in rows if r["for_you"]] == [p["c2"], p["move"], p["shrink"]]
    assert {r["basis"] for r in rows} == {"holds"}


def test_what_cannot_be_judged_is_not_checked(world):
    store, p = world
    clear = propose(store, "clear_throttles", {"configs": [
        {"entity_type": "broker", "name": "1", "key": "leader.replication.throttled.rate",
         "value": "100"}]}, author=ADMIN)
    # c2 has no snapshot at hand; a clear-throttles plan's basis is configs
    rows = {r["id"]: r for r in plan_queue.queue(store, CLUSTERS, viewer=APPROVER,
                                                 snapshot_of={"c1": GROWN}.get)}
    for plan_id in (p["c2"], clear):
        assert (rows[plan_id]["basis"], rows[plan_id]["stale"]) == ("not checked", None)
        assert rows[plan_id]["basis_note"].startswith("not checked: ")
    assert rows[p["c2"]]["for_you"] and rows[clear]["for_you"]  # not seen stale: they wait
    # without snapshots (a caller that gives none) nothing is judged
    unjudged = plan_queue.queue(store, CLUSTERS, viewer=APPROVER)
    assert {r["basis"] for r in unjudged if r["state"] in ("proposed", "approved")} \
        == {"not checked"}
    assert [r["id"] for r in unjudged if r["for_you"]] \
        == [clear, p["c2"], p["move"], p["shrink"]]


class DownGateway:
    """A gateway that does not answer."""

    def assignment(self):
        raise Unavailable("Cluster 'down'", "no answer")


def test_a_cluster_shown_from_its_file_because_its_gateway_is_down_is_not_judged(tmp_path):
    path = tmp_path / "down.parquet"
    save_snapshot(SNAP, path)
    sources = {"down": ClusterSource("down", str(path), Limits(), gateway=DownGateway()),
               "file": ClusterSource("file", str(path), Limits())}
    snapshot_of = plan_queue.cached_snapshots(sources.get)
    # the pages show the file's assignment, but it is not the cluster now
    assert snapshot_of("down") is None and snapshot_of("gone") is None
    assert snapshot_of("file").n_partitions == SNAP.n_partitions  # its file is the cluster


def test_a_plan_past_approval_has_no_basis_to_say(world):
    store, p = world
    plans.withdraw(store, OPERATOR, p["move"], now=T0)
    [row] = [r for r in plan_queue.queue(store, CLUSTERS, snapshot_of={"c1": GROWN}.get)
             if r["id"] == p["move"]]
    assert (row["basis"], row["stale"], row["basis_note"]) == (None, None, None)


def test_one_snapshot_per_cluster_and_a_verdict_kept_while_it_is_the_same(world, monkeypatch):
    store, _p = world
    asked: list[str] = []
    checks: list[int] = []
    check = plans.basis_refusal

    def snapshot_of(name):
        asked.append(name)
        return GROWN

    def counted(plan, topics_of, configs_of=None):
        checks.append(plan.id)
        return check(plan, topics_of, configs_of)

    monkeypatch.setattr(plans, "basis_refusal", counted)
    first = plan_queue.queue(store, CLUSTERS, viewer=APPROVER, snapshot_of=snapshot_of)
    assert sorted(asked) == CLUSTERS and len(checks) == 4  # each open plan once
    assert plan_queue.queue(store, CLUSTERS, viewer=APPROVER, snapshot_of=snapshot_of) \
        == first
    assert len(checks) == 4  # the same snapshots: the verdicts kept
    newer = cluster({**ORDERS, "orders": ORDERS["orders"] + [[1, 3]]})
    plan_queue.queue(store, CLUSTERS, viewer=APPROVER, snapshot_of=lambda _: newer)
    assert len(checks) == 8  # a newer snapshot: judged again


class FakeRuntime:
    """What the nav's link asks of the runtime: the plan store and the clusters' sources."""

    def __init__(self, store, sources: dict[str, ClusterSource]):
        self.store, self.sources = store, sources

    def plan_store(self):
        return self.store

    def known_source(self, name: str) -> ClusterSource | None:
        return self.sources.get(name)


def test_the_nav_counts_stale_plans_apart_from_the_cached_snapshot(world, tmp_path):
    store, _p = world
    grown, same = tmp_path / "c1.parquet", tmp_path / "c2.parquet"
    save_snapshot(GROWN, grown)
    save_snapshot(SNAP, same)
    sources = {"c1": ClusterSource("c1", str(grown), Limits()),
               "c2": ClusterSource("c2", str(same), Limits())}
    assert shell.plans_link(FakeRuntime(store, sources), APPROVER) \
        == "Plans (2 for you, 1 stale)"
    assert shell.plans_link(FakeRuntime(store, {"c1": ClusterSource(
        "c1", str(same), Limits())}), APPROVER) == "Plans (3 for you)"  # c2: not checked
    assert shell.plans_link(FakeRuntime(store, sources), OPERATOR) == "Plans"
    for waiting in (_p["move"], _p["c2"]):  # only the stale one left: no "0 for you"
        plans.withdraw(store, OPERATOR, waiting)
    assert shell.plans_link(FakeRuntime(store, sources), APPROVER) == "Plans (1 stale)"


def test_the_dashboard_s_queue_and_nav_say_it_from_the_runtime_s_cached_read(tmp_path):
    """Through the running dashboard: a shrink proposed on a twin cluster whose topic then
    gains a partition is stale on the queue page (its count line too) and in the nav, in
    the words Approve answers with; a reassignment on the other cluster still waits."""
    from werkzeug.security import generate_password_hash

    from backend.services import plan_kinds
    from backend.twin.cluster import TwinCluster
    from backend.twin.gateway import TwinGateway
    from backend.twin.generate import generate_snapshot
    from dashboard import auth, runtime, sessions
    from dashboard.app import create_app
    from dashboard.config import parse_config

    twins = {n: TwinCluster(generate_snapshot(6, 3, 3, 30, 3, seed=7, cluster=n))
             for n in ("east", "west")}
    users = [{"name": n, "role": r, "password_hash": generate_password_hash("x")}
             for n, r in (("otto", "operator"), ("anna", "approver"))]
    app = create_app(parse_config({
        "clusters": [{"name": n, "gateway": {"type": "twin", "url": "http://127.0.0.1:9"}}
                     for n in twins],
        "cache": {"background_dir": str(tmp_path / "cache")},
        "store": {"url": f"sqlite:///{tmp_path / 'railyard.db'}"},
        "auth": {"users": users, "secret_key_file": str(tmp_path / "key")}}, "cfg"),
        gateways={n: TwinGateway(t) for n, t in twins.items()})
    rt = runtime.current()
    store, otto = rt.plan_store(), Actor("otto", "operator")

    def propose(name: str, body: dict) -> int:
        snap = rt.snapshot_of(name)
        draft = plan_kinds.draft_from_request(snap, {"cluster": name, **body})
        return plans.propose(store, otto, cluster=name, kind=draft.kind, content=draft.content,
                             preview=draft.preview, snapshot=snap).id

    snap = rt.snapshot_of("east")
    topic = str(snap.topic_names[0])
    count = snap.topic_partition_count(0)
    shrink = propose("east", {"kind": "shrink", "topic": topic, "partitions": count - 1})
    west = rt.snapshot_of("west")
    replicas = west.replicas_of(west.partition_row(topic, 0))
    spare = [b for b in map(int, west.broker_ids) if b not in replicas][:len(replicas)]
    move = propose("west", {"kind": "reassignment", "plan": {"version": 1, "partitions": [
        {"topic": topic, "partition": 0, "replicas": spare}]}})
    assert twins["east"].create_partitions(topic, count + 1)["error"] is None
    rt.snapshot_of("east")  # what a page shows next: the cluster's kept read, as it is now

    queue_page = sys.modules[next(p["module"] for p in dash.page_registry.values()
                                  if p["path"] == "/queue")]  # create_app loaded it
    ctx = app.server.test_request_context("/")
    ctx.push()
    try:
        settings = auth.settings()
        sessions.sign_in(settings, settings.user("anna"))
        anna = auth.current_actor()
        why = plans.stale(store, shrink, rt.topics_of)  # the plan's page, read live
        assert f"{topic} partition count {count} -> {count + 1}" in why
        assert why == refusal_as(store, anna, shrink, rt)
        assert shell.plans_link(rt, anna) == "Plans (1 for you, 1 stale)"
        rows, error = queue_page._rows(plan_queue.ALL, None, False)
        assert error is None
        by = {r["id"]: r for r in rows}
        # its title is marked stale, the tooltip says why (the grid's formatter and tooltip)
        assert (by[shrink]["stale"], by[shrink]["basis_note"], by[shrink]["for_you"]) \
            == (why, why, False)
        assert (by[move]["stale"], by[move]["basis_note"], by[move]["for_you"]) \
            == (None, None, True)
        assert queue_page._count(rows) == "2 plans; 1 needs your approval; 1 stale (re-propose)"
        mine, _ = queue_page._rows(plan_queue.ALL, None, True)
        assert [r["id"] for r in mine] == [move]
        # the /plans page's waiting list sets the stale plan apart, under the same count
        plans_page = sys.modules[next(p["module"] for p in dash.page_registry.values()
                                      if p["path"] == "/plans")]
        listed = text_of(plans_page.waiting(None))
        assert "Waiting for your approval (1)" in listed
        assert "Approve would refuse them; their authors re-propose (1)" in listed
    finally:
        ctx.pop()
    # the API's queue row: the same reason, from the runtime's kept read
    basic = {"Authorization": "Basic " + base64.b64encode(b"anna:x").decode()}
    api = app.server.test_client().get("/api/v1/plans?cluster=*", headers=basic)
    assert api.status_code == 200, api.get_data(as_text=True)
    by = {r["id"]: r for r in api.get_json()["plans"]}
    assert (by[shrink]["stale"], by[shrink]["for_you"]) == (why, False)
    assert (by[move]["stale"], by[move]["for_you"]) == (None, True)


def refusal_as(store, actor, plan_id: int, rt) -> str:
    """What Approve answers ``actor`` on the live cluster."""
    with pytest.raises(Conflict) as e:
        plans.approve(store, actor, plan_id, sha256=plans.get(store, plan_id).sha256,
                      topics_of=rt.topics_of)
    return str(e.value)
