"""/api/v1 on a twin: the role x action x (own plan, someone else's) matrix matches
docs/api.md in every cell, the doc's table is the workflow's, error shapes and codes, a
bad plan stores nothing, and a plan whose partition moved on the twin is refused (409,
naming it)."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest
from werkzeug.security import generate_password_hash

from backend.services import execution, plan_kinds, plan_preview
from backend.services import plans as plan_service
from backend.store.workflow import ACTIONS, ROLES, Actor, role_table_markdown
from backend.twin.cluster import TwinCluster
from backend.twin.gateway import TwinGateway
from backend.twin.generate import generate_snapshot
from dashboard.config import parse_config
from tests.plan_helpers import Recording, moves, settle
from tests.unit.helpers import login_token

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "api.md"
PASSWORD = "pw-{}"
# two users per role, so "someone else's plan" is never the acting user's
USERS = {f"{role}{i}": role for role in ROLES for i in (1, 2)}
OTHER_AUTHOR = "writer"  # the author of "someone else's" plans
ALLOWED = {"view": 200, "propose": 201, "approve": 200, "reject": 200, "withdraw": 200,
           "execute": 202, "cancel": 202, "clear_throttles": 201}
LEFTOVER = ("broker", "1", "leader.replication.throttled.rate", "1000")  # set on the twin
# moves on topic-2 need two approvers, an admin among them (the other plans: one approver)
TWO = {"name": "topic-2 moves", "when": {"kind": "reassignment", "topics": "topic-2"},
       "require": {"approvers": 2, "admin": True}}


def basic(name: str) -> dict:
    token = base64.b64encode(f"{name}:{PASSWORD.format(name)}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """An app on a small twin cluster, its store, and a draft to propose again and again."""
    from dashboard import runtime
    from dashboard.app import create_app

    tmp = tmp_path_factory.mktemp("api")
    twin = TwinCluster(generate_snapshot(6, 3, 3, 30, 3, seed=7, cluster="demo"))
    twin.alter_configs(*LEFTOVER[:2], {LEFTOVER[2]: LEFTOVER[3]})
    users = [{"name": n, "role": r, "password_hash": generate_password_hash(
        PASSWORD.format(n), method="pbkdf2:sha256:1000")} for n, r in
        {**USERS, OTHER_AUTHOR: "admin"}.items()]
    doc = {"clusters": [{"name": "demo", "gateway": {"type": "twin",
                                                     "url": "http://127.0.0.1:9"}}],
           "cache": {"background_dir": str(tmp / "cache")},
           "store": {"url": f"sqlite:///{tmp / 'railyard.db'}"},
           "auth": {"users": users, "secret_key_file": str(tmp / "key")},
           "approval": {"rules": [TWO]}}
    app = create_app(parse_config(doc, "cfg"), gateways={"demo": TwinGateway(twin)})
    rt = runtime.current()
    return {"client": app.server.test_client(), "app": app, "twin": twin, "rt": rt,
            "store": rt.plan_store(), "body": _body(twin)}


def _body(twin: TwinCluster, topic: str | None = None) -> dict:
    """Move partition 0 of ``topic`` (the first) to the brokers that do not hold it."""
    snap = twin.assignment()
    topic = topic or str(snap.topic_names[0])
    replicas = snap.replicas_of(snap.partition_row(topic, 0))
    spare = [b for b in map(int, snap.broker_ids) if b not in replicas]
    return {"cluster": "demo", "kind": "reassignment",
            "plan": {"version": 1, "partitions": [
                {"topic": topic, "partition": 0, "replicas": spare[:len(replicas)]}]}}


def make_plan(env, author: str, state: str) -> int:
    """A plan by ``author`` in ``state``, set up through the services (a user's own plan
    even when their role cannot propose: authorship is by name)."""
    store, rt = env["store"], env["rt"]
    snap = rt.snapshot_of("demo")
    draft = plan_kinds.draft_from_request(snap, env["body"])
    plan = plan_service.propose(store, Actor(author, "admin"), cluster="demo",
                                kind=draft.kind, content=draft.content,
                                preview=draft.preview, snapshot=snap)
    decider = Actor("decider", "admin")
    if state in ("approved", "executing"):
        plan_service.approve(store, decider, plan.id, sha256=plan.sha256,
                             topics_of=rt.topics_of)
    if state == "executing":
        plan_service.request_execute(store, decider, plan.id, topics_of=rt.topics_of)
    return plan.id


def half_approved(env, author: str) -> int:
    """A plan by ``author`` under TWO, approved once (by approver2): it still needs an
    admin's approval."""
    store, rt = env["store"], env["rt"]
    snap = rt.snapshot_of("demo")
    draft = plan_kinds.draft_from_request(snap, _body(env["twin"], "topic-2"))
    plan = plan_service.propose(store, Actor(author, "admin"), cluster="demo",
                                kind=draft.kind, content=draft.content,
                                preview=draft.preview, snapshot=snap)
    first = plan_service.approve(store, Actor("approver2", "approver"), plan.id,
                                 sha256=plan.sha256, topics_of=rt.topics_of)
    assert first.state == "proposed"
    return plan.id


def doc_table() -> dict[str, dict[str, str]]:
    """docs/api.md's role x action table, as the reader sees it."""
    text = DOC.read_text()
    block = text.split("<!-- role-table")[1].split("-->", 1)[1].split("<!-- /role-table")[0]
    rows = [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in block.strip().splitlines()]
    header = rows[0][1:]
    return {r[0]: dict(zip(header, r[1:], strict=True)) for r in rows[2:]}


def test_doc_table_is_the_workflows():
    text = DOC.read_text()
    block = text.split("<!-- role-table")[1].split("-->\n", 1)[1].split("<!-- /role-table")[0]
    assert block == role_table_markdown()
    assert set(doc_table()) == set(ROLES)
    assert all(set(cells) == set(ACTIONS) for cells in doc_table().values())


def act(env, user: str, action: str, plan_id: int):
    client, headers = env["client"], basic(user)
    if action == "view":
        return client.get(f"/api/v1/plans/{plan_id}", headers=headers)
    if action == "propose":
        return client.post("/api/v1/plans", json=env["body"], headers=headers)
    if action == "clear_throttles":
        return client.post("/api/v1/plans", json={"cluster": "demo", "kind": "clear_throttles"},
                           headers=headers)
    body = {"approve": {"sha256": plan_service.get(env["store"], plan_id).sha256,
                        "comment": "fine"}, "reject": {"comment": "no"}}.get(action, {})
    return client.post(f"/api/v1/plans/{plan_id}/{action}", json=body, headers=headers)


STATE_FOR = {"view": "proposed", "propose": "proposed", "approve": "proposed",
             "reject": "proposed", "withdraw": "proposed", "execute": "approved",
             "cancel": "executing", "clear_throttles": "proposed"}


@pytest.mark.parametrize("whose", ["own", "others"])
@pytest.mark.parametrize("action", ACTIONS)
@pytest.mark.parametrize("role", ROLES)
def test_role_action_matrix_matches_the_doc(env, role, action, whose):
    cell = doc_table()[role][action]
    allowed = cell == "yes" or (cell == "own plans only" and whose == "own") \
        or (cell == "others' plans only" and whose == "others")
    user = f"{role}1"
    plan_id = make_plan(env, user if whose == "own" else OTHER_AUTHOR, STATE_FOR[action])
    answer = act(env, user, action, plan_id)
    expected = ALLOWED[action] if allowed else 403
    assert answer.status_code == expected, (cell, answer.get_json())
    if not allowed:
        assert set(answer.get_json()) == {"error"}
    before = STATE_FOR[action]
    after = plan_service.get(env["store"], plan_id)
    if allowed and action not in ("view", "propose", "cancel", "clear_throttles"):
        assert after.state != before and answer.get_json()["state"] == after.state
    elif not allowed:
        assert after.state == before  # a refusal changes nothing


def test_propose_answers_the_preview(env):
    answer = env["client"].post("/api/v1/plans", headers=basic("operator1"),
                                json={**env["body"], "title": "move p0", "throttle": 5_000_000})
    assert answer.status_code == 201
    body = answer.get_json()
    assert set(body) == {"id", "state", "sha256", "expires_at", "preview"}
    assert body["state"] == "proposed" and len(body["sha256"]) == 64
    assert answer.headers["Location"] == f"/api/v1/plans/{body['id']}"
    preview = body["preview"]
    for key in ("replica_moves", "bytes_to_move", "eta_seconds", "brokers", "violations",
                "unresolved"):
        assert key in preview
    assert preview["replica_moves"] == 3
    assert {"id", "before", "after", "limit"} <= set(preview["brokers"][0])
    plan = env["client"].get(f"/api/v1/plans/{body['id']}", headers=basic("viewer1"))
    got = plan.get_json()
    assert got["title"] == "move p0" and got["throttle"] == 5_000_000
    assert got["content"]["partitions"][0]["replicas"] == \
        env["body"]["plan"]["partitions"][0]["replicas"]
    assert got["sha256"] == body["sha256"] and got["decisions"] == []
    listed = env["client"].get("/api/v1/plans?cluster=demo&state=proposed",
                               headers=basic("viewer1")).get_json()["plans"]
    assert body["id"] in [p["id"] for p in listed]
    assert all(p["state"] == "proposed" for p in listed)


def test_propose_without_a_throttle_freezes_the_one_its_preview_suggested(env):
    """The preview an approver reads names a suggested rate (kafka-kit's autothrottle
    headroom): the plan runs at it, not unthrottled (the plan's throttle was null)."""
    answer = env["client"].post("/api/v1/plans", headers=basic("operator1"),
                                json={**env["body"], "title": "move p0, suggested"})
    assert answer.status_code == 201
    preview = answer.get_json()["preview"]
    assert preview["throttle_source"].startswith("suggested")
    got = env["client"].get(f"/api/v1/plans/{answer.get_json()['id']}",
                            headers=basic("viewer1")).get_json()
    assert got["throttle"] == round(preview["throttle"]) > 0


def test_propose_a_generated_plan_and_a_shrink(env):
    client, snap = env["client"], env["twin"].assignment()
    drain = client.post("/api/v1/plans", headers=basic("admin1"), json={
        "cluster": "demo", "kind": "reassignment", "generate": {"goal": "drain", "brokers": [1]}})
    assert drain.status_code == 201
    on_1 = int((snap.replica_broker == snap.broker_positions([1])[0]).sum())
    assert drain.get_json()["preview"]["replica_moves"] == on_1
    partitions = snap.topic_partition_count(snap.topic_index("topic-1"))
    shrink = client.post("/api/v1/plans", headers=basic("operator2"), json={
        "cluster": "demo", "kind": "shrink", "topic": "topic-1", "partitions": partitions // 2})
    assert shrink.status_code == 201
    content = client.get(f"/api/v1/plans/{shrink.get_json()['id']}",
                         headers=basic("viewer2")).get_json()["content"]
    assert (content["topic"], content["from"], content["to"]) == \
        ("topic-1", partitions, partitions // 2)


def test_a_shrink_names_the_risk_that_the_cluster_cannot_delete_partitions_only_there(env):
    """The proposal's risks said "Apache Kafka cannot delete partitions ..." on the twin,
    which implements the delete-partitions KIP; now only where the cluster cannot."""
    import dataclasses

    client, twin = env["client"], env["twin"]
    snap = twin.assignment()
    said = {}
    try:
        for enabled, topic in ((True, "topic-2"), (False, "topic-0")):
            twin.settings = dataclasses.replace(twin.settings, delete_partition_enable=enabled)
            partitions = snap.topic_partition_count(snap.topic_index(topic))
            made = client.post("/api/v1/plans", headers=basic("operator2"), json={
                "cluster": "demo", "kind": "shrink", "topic": topic,
                "partitions": partitions // 2})
            assert made.status_code == 201, made.get_json()
            said[enabled] = " | ".join(made.get_json()["preview"]["risks"])
    finally:
        twin.settings = dataclasses.replace(twin.settings, delete_partition_enable=True)
    assert "Apache Kafka cannot delete partitions" not in said[True]
    assert "Apache Kafka cannot delete partitions" in said[False]
    assert "consumer groups' committed offsets" in said[True]  # the other risks stay


def count(env) -> tuple[int, int]:
    store = env["store"]
    return len(plan_service.list_plans(store, limit=100_000)), \
        len(plan_service.audit_entries(store, limit=100_000))


@pytest.mark.parametrize(("body", "message"), [
    ({"cluster": "nope", "kind": "reassignment", "plan": {}},
     "cluster: expected one of demo, got 'nope'"),
    ({"cluster": "demo", "kind": "reassignment", "plan": {"version": 1, "partitions": [
        {"topic": "no-such-topic", "partition": 0, "replicas": [1, 2, 3]}]}},
     "no-such-topic"),
    ({"cluster": "demo", "kind": "move"}, "kind"),
    ({"cluster": "demo", "kind": "shrink", "topic": "t", "partitions": "x"}, ""),
])
def test_a_bad_plan_is_400_and_nothing_is_stored(env, body, message):
    before = count(env)
    answer = env["client"].post("/api/v1/plans", json=body, headers=basic("operator1"))
    assert answer.status_code == 400
    error = answer.get_json()["error"]
    assert message in error and "\n" not in error
    assert count(env) == before


def test_error_shapes(env):
    client = env["client"]
    plan_id = make_plan(env, "operator1", "proposed")
    none = client.get("/api/v1/plans")
    assert none.status_code == 401 and set(none.get_json()) == {"error"}
    assert none.headers["WWW-Authenticate"].startswith("Basic")
    wrong = {"Authorization": "Basic " + base64.b64encode(b"operator1:guess").decode()}
    assert client.get("/api/v1/plans", headers=wrong).status_code == 401
    assert client.get("/api/v1/plans", headers={"Authorization": "Basic !!"}) \
        .status_code == 401
    # the browser's session does not open the API
    assert client.get("/api/v1/plans", headers={"Cookie": "railyard_session_8050=x"}) \
        .status_code == 401
    form = client.post(f"/api/v1/plans/{plan_id}/reject", data={"comment": "x"},
                       headers=basic("approver1"))
    assert form.status_code == 415
    assert form.get_json() == {"error": "expected Content-Type: application/json, got "
                                        "application/x-www-form-urlencoded"}
    bad = client.post(f"/api/v1/plans/{plan_id}/reject", data="{nope",
                      content_type="application/json", headers=basic("approver1"))
    assert bad.status_code == 400 and bad.get_json() == {"error": "body: not valid JSON"}
    listed = client.post(f"/api/v1/plans/{plan_id}/reject", json=[1],
                         headers=basic("approver1"))
    assert listed.get_json() == {"error": "body: expected a JSON object, got list"}
    missing = client.post(f"/api/v1/plans/{plan_id}/approve", json={},
                          headers=basic("approver1"))
    assert missing.status_code == 400 and missing.get_json() == {"error": "sha256: required"}
    assert client.get("/api/v1/plans/999999", headers=basic("viewer1")).get_json() == \
        {"error": "no plan 999999"}
    unknown = client.get("/api/v1/nothing", headers=basic("viewer1"))
    assert unknown.status_code == 404 and "no such endpoint" in unknown.get_json()["error"]
    state = client.get("/api/v1/plans?state=done", headers=basic("viewer1"))
    assert state.status_code == 400 and state.get_json()["error"].startswith("state:")
    assert plan_service.get(env["store"], plan_id).state == "proposed"


def test_api_answers_carry_no_session(env):
    """API clients authenticate on every request: the API neither reads a session cookie
    nor sets one (not even the refresh a signed-in browser's session gets on each page),
    so it signs nothing per request."""
    client = env["app"].server.test_client()  # a browser of its own
    signed_in = client.post("/login", data={"username": "viewer1",
                                            "csrf_token": login_token(client),
                                            "next": "/", "password": PASSWORD.format(
                                                "viewer1")})
    assert signed_in.status_code == 302
    assert any(c.startswith("railyard_session_") for c in
               signed_in.headers.getlist("Set-Cookie"))
    # a page sets the session cookie where the browser has none (the id lives on the
    # server since issue 27: a page no longer re-signs the cookie on every answer)
    assert any(c.startswith("railyard_session_") for c in env["app"].server.test_client()
               .get("/login").headers.getlist("Set-Cookie"))
    for answer in (client.get("/api/v1/plans", headers=basic("viewer1")),
                   client.get("/api/v1/plans")):
        assert answer.headers.getlist("Set-Cookie") == []
    assert client.get("/api/v1/plans").status_code == 401  # the cookie opens no API


def test_author_cannot_approve_and_sha_must_match(env):
    client = env["client"]
    plan_id = make_plan(env, "admin1", "proposed")
    sha = plan_service.get(env["store"], plan_id).sha256
    own = client.post(f"/api/v1/plans/{plan_id}/approve", json={"sha256": sha},
                      headers=basic("admin1"))
    assert own.status_code == 403 and "two people must agree" in own.get_json()["error"]
    other = client.post(f"/api/v1/plans/{plan_id}/approve", json={"sha256": "0" * 64},
                        headers=basic("approver1"))
    assert other.status_code == 409 and "sha256" in other.get_json()["error"]
    ok = client.post(f"/api/v1/plans/{plan_id}/approve",
                     json={"sha256": sha, "comment": "looks right"}, headers=basic("approver1"))
    assert ok.status_code == 200 and ok.get_json() == {"id": plan_id, "state": "approved"}
    again = client.post(f"/api/v1/plans/{plan_id}/reject", json={}, headers=basic("approver2"))
    assert again.status_code == 409 and "approved" in again.get_json()["error"]
    decisions = client.get(f"/api/v1/plans/{plan_id}", headers=basic("viewer1")) \
        .get_json()["decisions"]
    assert [(d["user"], d["decision"], d["comment"], d["sha256"]) for d in decisions] == \
        [("approver1", "approve", "looks right", sha)]


def test_audit_filters(env):
    client = env["client"]
    plan_id = make_plan(env, "operator2", "proposed")
    client.post(f"/api/v1/plans/{plan_id}/withdraw", json={}, headers=basic("operator2"))
    entries = client.get(f"/api/v1/audit?plan={plan_id}", headers=basic("viewer1")) \
        .get_json()["entries"]
    assert [(e["user"], e["action"], e["before"], e["after"]) for e in entries] == \
        [("operator2", "propose", None, "proposed"),
         ("operator2", "withdraw", "proposed", "withdrawn")]
    assert entries[1]["address"] == "127.0.0.1"
    mine = client.get("/api/v1/audit?user=operator2", headers=basic("viewer1")) \
        .get_json()["entries"]
    assert {e["user"] for e in mine} == {"operator2"}
    later = client.get("/api/v1/audit?since=2999-01-01T00:00", headers=basic("viewer1"))
    assert later.get_json() == {"entries": [], "total": 0, "next": None}
    bad = client.get("/api/v1/audit?since=yesterday", headers=basic("viewer1"))
    assert bad.status_code == 400 and bad.get_json()["error"].startswith("since:")


def test_a_plan_shows_its_execution(env):
    from backend.executor.journal import StoreJournal
    from backend.executor.retry import RetryPolicy
    from backend.executor.runs import Site, start_batches
    from backend.store.executions import ExecutionRecords

    plan_id = make_plan(env, "operator1", "approved")
    client = env["client"]
    assert client.get(f"/api/v1/plans/{plan_id}", headers=basic("viewer1")) \
        .get_json()["execution"] is None
    started = client.post(f"/api/v1/plans/{plan_id}/execute", json={},
                          headers=basic("operator1"))
    assert started.status_code == 202 and started.get_json()["state"] == "executing"
    store = env["store"]
    queued = client.get(f"/api/v1/plans/{plan_id}", headers=basic("viewer1")).get_json()
    assert (queued["execution"], queued["waiting"]) == (None, execution.waiting(store, "demo"))
    # what the executor thread does next: the execution row of the approved plan
    site = Site(ExecutionRecords(store), StoreJournal(store), lambda: None,
                lambda: env["rt"].snapshot_of("demo"), RetryPolicy())
    start_batches(site, plan_service.get(store, plan_id), 1_000.0)
    shown = client.get(f"/api/v1/plans/{plan_id}", headers=basic("viewer1")).get_json()
    assert shown["state"] == "executing"
    assert shown["execution"]["plan_id"] == plan_id
    assert shown["execution"]["partitions_total"] == 1
    assert shown["waiting"] is None
    cancel = client.post(f"/api/v1/plans/{plan_id}/cancel", json={},
                         headers=basic("operator1"))
    assert cancel.status_code == 202 and cancel.get_json()["cancel_requested_at"]


def test_approve_and_execute_read_only_the_plans_topics_from_the_gateway(env, monkeypatch):
    """Not the whole cluster's assignment: a 200k-partition cluster's metadata per approval."""
    from backend.store.workflow import SYSTEM
    client = env["client"]
    plan = client.post("/api/v1/plans", json=env["body"], headers=basic("operator1")).get_json()
    gw = Recording(env["rt"].gateways["demo"])
    monkeypatch.setitem(env["rt"].gateways, "demo", gw)
    approved = client.post(f"/api/v1/plans/{plan['id']}/approve",
                           json={"sha256": plan["sha256"]}, headers=basic("approver1"))
    assert approved.status_code == 200, approved.get_json()
    started = client.post(f"/api/v1/plans/{plan['id']}/execute", json={},
                          headers=basic("operator1"))
    assert started.status_code == 202, started.get_json()
    touched = sorted({e["topic"] for e in env["body"]["plan"]["partitions"]})
    assert gw.asked == [touched, touched] and gw.whole_reads == 0
    plan_service.finish(env["store"], SYSTEM, plan["id"], "cancelled")


def test_a_partition_moved_on_the_twin_makes_approve_409_naming_it(env):
    client, twin = env["client"], env["twin"]
    proposed = client.post("/api/v1/plans", json=env["body"], headers=basic("operator1"))
    plan = proposed.get_json()
    entry = env["body"]["plan"]["partitions"][0]
    snap = twin.assignment()
    now = snap.replicas_of(snap.partition_row(entry["topic"], 0))
    moved = [now[1], now[0], *now[2:]]  # same brokers, another leader order: a real change
    settle(twin, moves((entry["topic"], 0, moved)))
    answer = client.post(f"/api/v1/plans/{plan['id']}/approve",
                         json={"sha256": plan["sha256"]}, headers=basic("approver1"))
    assert answer.status_code == 409
    error = answer.get_json()["error"]
    assert re.search(rf"\b{re.escape(entry['topic'])}-0\b", error) and "re-propose" in error
    assert plan_service.get(env["store"], plan["id"]).state == "proposed"
    # put it back: the twin is shared by this module's tests
    settle(twin, moves((entry["topic"], 0, now)))


def test_an_unreachable_gateway_makes_approve_and_execute_503_not_the_snapshot_file(env):
    """A twin gateway pointing at a closed port (a real one, nobody listening): approve
    and execute refuse with 503 naming the cluster and the cause, and change nothing."""
    from backend.gateways.twin_http import TwinHttpGateway
    from tests.servers import free_port

    client, rt = env["client"], env["rt"]
    proposed = make_plan(env, "operator1", "proposed")
    approved = make_plan(env, "operator1", "approved")
    sha = plan_service.get(env["store"], proposed).sha256
    trail = {i: plan_service.audit_entries(env["store"], plan=i) for i in (proposed, approved)}
    live, dead = rt.gateways["demo"], f"http://127.0.0.1:{free_port()}"
    rt.gateways["demo"] = TwinHttpGateway(dead, timeout=2)
    try:
        approve = client.post(f"/api/v1/plans/{proposed}/approve", json={"sha256": sha},
                              headers=basic("approver1"))
        execute = client.post(f"/api/v1/plans/{approved}/execute", json={},
                              headers=basic("operator1"))
    finally:
        rt.gateways["demo"] = live
    for answer in (approve, execute):
        assert answer.status_code == 503
        error = answer.get_json()["error"]
        assert error.startswith(f"Cluster 'demo': its gateway did not answer (Twin at {dead}: "
                                "unreachable") and "\n" not in error
        assert "never a snapshot file" in error
    assert plan_service.get(env["store"], proposed).state == "proposed"
    assert plan_service.get(env["store"], proposed).decisions == ()
    assert plan_service.get(env["store"], approved).state == "approved"
    assert trail == {i: plan_service.audit_entries(env["store"], plan=i) for i in trail}


def test_execution_progress_pause_and_resume(env):
    from backend.services.execution import executor_thread
    from backend.store.workflow import SYSTEM

    for other in plan_service.list_plans(env["store"], state="executing"):
        plan_service.finish(env["store"], SYSTEM, other.id, "cancelled")  # one at a time
    plan_id = make_plan(env, "operator1", "executing")
    got = env["client"].get(f"/api/v1/plans/{plan_id}", headers=basic("viewer1")).get_json()
    assert got["execution"] is None  # the executor has not picked it up yet
    twin, rt = env["twin"], env["rt"]
    thread = executor_thread(env["store"], ["demo"], rt.gateways.__getitem__, rt.snapshot_of,
                             clock=lambda: 1e9 + twin.now_seconds, holder="api-test")
    for _ in range(3):  # plans other tests left executing wind down first
        thread.cycle(1e9 + twin.now_seconds)
    got = env["client"].get(f"/api/v1/plans/{plan_id}", headers=basic("viewer1")).get_json()
    progress = got["execution"]
    assert progress["state"] == "running" and progress["partitions_total"] == 1
    assert {"bytes_done", "bytes_total", "observed_rate", "throttle", "predicted_eta_seconds",
            "observed_eta_seconds", "per_batch"} <= set(progress)
    url = f"/api/v1/plans/{plan_id}"
    assert env["client"].post(f"{url}/pause", json={}, headers=basic("viewer1")).status_code \
        == 403
    answer = env["client"].post(f"{url}/pause", json={}, headers=basic("operator2"))
    assert answer.status_code == 202 and answer.get_json()["state"] == "pausing"
    assert env["client"].post(f"{url}/pause", json={}, headers=basic("operator2")).status_code \
        == 409
    answer = env["client"].post(f"{url}/resume", json={}, headers=basic("operator1"))
    assert answer.status_code == 202 and answer.get_json()["state"] == "running"
    env["client"].post(f"{url}/cancel", json={}, headers=basic("operator1"))
    thread.cycle(1e9 + twin.now_seconds)
    thread.cycle(1e9 + twin.now_seconds)
    assert plan_service.get(env["store"], plan_id).state == "cancelled"
    assert twin.list_reassignments() == []
    thread.stop()


def test_adaptive_throttle_proposed_frozen_and_switched(env):
    """issue 28: throttle_mode in the propose body is frozen (its sha256), refused with one
    line when its floor is above the throttle; GET .../throttle is the throttle over time,
    POST .../throttle switches a running plan (the execute right)."""
    from backend.services.execution import executor_thread
    from backend.store.executions import ExecutionRecords
    from backend.store.workflow import SYSTEM

    client, store, rt, twin = env["client"], env["store"], env["rt"], env["twin"]
    body = {**env["body"], "throttle": 5_000_000}
    bad = client.post("/api/v1/plans", headers=basic("operator1"),
                      json={**body, "throttle_mode": {"mode": "adaptive", "floor": 6_000_000}})
    assert bad.status_code == 400 and "throttle_mode.floor" in bad.get_json()["error"]
    fixed = client.post("/api/v1/plans", json=body, headers=basic("operator1")).get_json()
    made = client.post("/api/v1/plans", headers=basic("operator1"), json={
        **body, "throttle_mode": {"mode": "adaptive", "floor": 1_000_000}}).get_json()
    assert made["sha256"] != fixed["sha256"]
    got = client.get(f"/api/v1/plans/{made['id']}", headers=basic("viewer1")).get_json()
    assert got["throttle_mode"] == {"mode": "adaptive", "floor": 1_000_000}
    for other in plan_service.list_plans(store, state="executing"):
        plan_service.finish(store, SYSTEM, other.id, "cancelled")  # one at a time
    decider = Actor("decider", "admin")
    plan_service.approve(store, decider, made["id"], sha256=made["sha256"],
                         topics_of=rt.topics_of)
    plan_service.request_execute(store, decider, made["id"], topics_of=rt.topics_of)
    thread = executor_thread(store, ["demo"], rt.gateways.__getitem__, rt.snapshot_of,
                             clock=lambda: 2e9 + twin.now_seconds, holder="api-adaptive")
    records = ExecutionRecords(store)
    for _ in range(20):  # plans other tests left executing wind down first
        thread.cycle(2e9 + twin.now_seconds)
        twin.advance(1.0)
        if records.get(made["id"]) is not None:
            break
    url = f"/api/v1/plans/{made['id']}/throttle"
    history = client.get(url, headers=basic("viewer1")).get_json()
    assert history["mode"] == "adaptive" and history["ceiling"] == 5_000_000
    assert client.post(url, json={"mode": "fixed"}, headers=basic("viewer1")).status_code \
        == 403
    answer = client.post(url, json={"mode": "fixed"}, headers=basic("operator2"))
    assert answer.status_code == 202, answer.get_json()
    assert answer.get_json()["mode"] == "fixed"
    answer = client.post(url, json={"mode": "adaptive", "floor": "1"},
                         headers=basic("operator2"))
    assert answer.status_code == 400 and "floor" in answer.get_json()["error"]
    answer = client.post(url, json={"mode": "adaptive", "floor": 2_000_000},
                         headers=basic("operator2"))
    assert answer.status_code == 202 and answer.get_json()["floor"] == 2_000_000
    actions = [e.action for e in plan_service.audit_entries(store, plan=made["id"])]
    assert actions.count("throttle_mode_switched") == 2
    client.post(f"/api/v1/plans/{made['id']}/cancel", json={}, headers=basic("operator1"))
    for _ in range(3):
        thread.cycle(2e9 + twin.now_seconds)
    assert plan_service.get(store, made["id"]).state == "cancelled"
    thread.stop()


def test_plan_page_executes_and_shows_the_progress_bar(env):
    """The plan page's Execute button and progress bar (pages/plan.py) for an operator."""
    import sys

    import dash

    from backend.services.execution import executor_thread
    from backend.store.workflow import SYSTEM
    from dashboard import ids

    for other in plan_service.list_plans(env["store"], state="executing"):
        plan_service.finish(env["store"], SYSTEM, other.id, "cancelled")
    page = sys.modules[next(p["module"] for p in dash.page_registry.values()
                            if p["path_template"] == "/plans/<plan_id>")]
    plan_id = make_plan(env, "writer", "approved")
    with env["client"].application.test_request_context("/api/v1/x",
                                                        headers=basic("viewer1")):
        answer = page.execution_answer(ids.PV_EXECUTE, plan_id)
        assert answer[0].startswith("Refused: the viewer role may not execute")
        assert answer[5:9] == (True, True, True, True)  # a viewer sees no button
    with env["client"].application.test_request_context("/api/v1/x",
                                                        headers=basic("operator1")):
        assert page.execution_answer(None, plan_id)[5:9] == (False, True, True, True)
        answer = page.execution_answer(ids.PV_EXECUTE, plan_id)
        assert answer[0] == "Done: execute sent." and answer[3] == "executing"
        assert answer[9] is True and answer[10] is False  # no migration; the timer runs
        twin, rt = env["twin"], env["rt"]
        thread = executor_thread(env["store"], ["demo"], rt.gateways.__getitem__,
                                 rt.snapshot_of, holder="page-test")
        for _ in range(3):
            thread.cycle(2e9 + twin.now_seconds)
        answer = page.execution_answer(None, plan_id)
        assert answer[5:9] == (True, False, True, False)  # Pause and Cancel
        bar = answer[2].children[0]
        assert bar.id == ids.PV_PROGRESS_BAR and bar.max == "100"
        answer = page.execution_answer(ids.PV_PAUSE, plan_id)
        assert answer[5:9] == (True, True, False, False)  # Resume and Cancel
        page.execution_answer(ids.PV_CANCEL, plan_id)


def test_plan_page_executes_a_shrink_and_shows_its_stage(env):
    """A shrink's Execute on the plan page: no Pause, the stage with the partitions in it
    and the time to the next one; the API offers the migration only where the cluster
    cannot delete partitions (here it can: the twin implements the KIP)."""
    import sys
    import time

    import dash

    from backend.services.execution import executor_thread
    from backend.store.workflow import SYSTEM
    from dashboard import ids

    store, rt = env["store"], env["rt"]
    for other in plan_service.list_plans(store, state="executing"):
        plan_service.finish(store, SYSTEM, other.id, "cancelled")
    page = sys.modules[next(p["module"] for p in dash.page_registry.values()
                            if p["path_template"] == "/plans/<plan_id>")]
    snap = rt.snapshot_of("demo")
    topic = str(snap.topic_names[1])
    draft = plan_preview.from_shrink(snap, topic, 1, delay_ms=3_600_000)
    plan = plan_service.propose(store, Actor("writer", "admin"), cluster="demo", kind="shrink",
                                content=draft.content, preview=draft.preview, snapshot=snap)
    plan_service.approve(store, Actor("decider", "admin"), plan.id, sha256=plan.sha256,
                         topics_of=rt.topics_of)
    r = env["client"].post(f"/api/v1/plans/{plan.id}/execute", json={"migration": True},
                           headers=basic("operator1"))
    assert r.status_code == 409 and "deletes partitions itself" in r.get_json()["error"]
    with env["client"].application.test_request_context("/api/v1/x",
                                                        headers=basic("operator1")):
        answer = page.execution_answer(ids.PV_EXECUTE, plan.id)
        assert answer[0] == "Done: execute sent." and answer[3] == "executing"
        thread = executor_thread(store, ["demo"], rt.gateways.__getitem__, rt.snapshot_of,
                                 holder="page-test")  # the earlier test's lease holder
        for _ in range(4):  # an earlier test's execution winds down first
            thread.cycle(time.time())
        answer = page.execution_answer(None, plan.id)
        assert answer[5:10] == (True, True, True, False, True)  # Cancel only
        text = str(answer[2])
        assert "stage ReadOnly" in text  # the delay of 1 h, less the seconds this took:
        assert re.search(r"next: None in (1h 0m|59m \d+s) at the earliest", text)
        thread.stop()
    r = env["client"].get(f"/api/v1/plans/{plan.id}", headers=basic("viewer1"))
    shrink = r.get_json()["execution"]["shrink"]
    assert shrink["stage"] == "ReadOnly" and shrink["counts"]["ReadOnly"] == \
        len(draft.content["removed_partitions"])


def test_a_clear_throttles_plan_through_the_api(env):
    client, twin = env["client"], env["twin"]
    etype, name, key, value = LEFTOVER
    answer = client.post("/api/v1/plans", headers=basic("admin1"), json={
        "cluster": "demo", "kind": "clear_throttles", "title": "clear broker 1",
        "configs": [{"entity_type": etype, "name": name, "key": key}]})
    assert answer.status_code == 201, answer.get_json()
    body = answer.get_json()
    assert body["preview"] == {"configs": 1, "brokers": [name], "topics": [],
                               "in_flight": []}
    plan = client.get(f"/api/v1/plans/{body['id']}", headers=basic("viewer1")).get_json()
    assert plan["kind"] == "clear_throttles" and plan["content"] == {"configs": [
        {"entity_type": etype, "name": name, "key": key, "value": value}]}
    refused = client.post("/api/v1/plans", headers=basic("operator1"),
                          json={"cluster": "demo", "kind": "clear_throttles"})
    assert refused.status_code == 403 and "admin" in refused.get_json()["error"]
    bad = client.post("/api/v1/plans", headers=basic("admin1"), json={
        "cluster": "demo", "kind": "clear_throttles",
        "configs": [{"entity_type": "topic", "name": "topic-1", "key": key}]})
    assert bad.status_code == 400 and "not a replication throttle" in bad.get_json()["error"]
    twin.alter_configs(etype, name, {key: "2000"})
    try:
        stale = client.post(f"/api/v1/plans/{body['id']}/approve", headers=basic("approver1"),
                            json={"sha256": body["sha256"]})
        assert stale.status_code == 409
        assert stale.get_json()["error"] == (
            f"cluster demo changed since plan {body['id']} was proposed: broker 1 {key} "
            f"{value} -> 2000: re-propose")
    finally:
        twin.alter_configs(etype, name, {key: value})
    ok = client.post(f"/api/v1/plans/{body['id']}/approve", headers=basic("approver1"),
                     json={"sha256": body["sha256"]})
    assert ok.get_json() == {"id": body["id"], "state": "approved"}


HALF_WAY = {"view": 200, "approve": 200, "reject": 200, "withdraw": 200, "execute": 409}


@pytest.mark.parametrize("whose", ["own", "others"])
@pytest.mark.parametrize("action", list(HALF_WAY))
@pytest.mark.parametrize("role", ROLES)
def test_role_action_matrix_on_a_plan_that_needs_two_approvers(env, role, action, whose):
    """docs/api.md's table on a plan half-way through a two-approver rule: a second
    approval completes it only when it is an admin's (the rule asks for an admin among
    the two), Reject and Withdraw are as on any proposed plan, and Execute waits."""
    cell = doc_table()[role][action]
    allowed = cell == "yes" or (cell == "own plans only" and whose == "own") \
        or (cell == "others' plans only" and whose == "others")
    user = f"{role}1"
    plan_id = half_approved(env, user if whose == "own" else OTHER_AUTHOR)
    answer = act(env, user, action, plan_id)
    counts = action != "approve" or role == "admin"
    expected = HALF_WAY[action] if allowed and counts else 403
    assert answer.status_code == expected, (cell, answer.get_json())
    after = plan_service.get(env["store"], plan_id)
    if expected == 200 and action != "view":
        assert answer.get_json()["state"] == after.state == {
            "approve": "approved", "reject": "rejected", "withdraw": "withdrawn"}[action]
    else:
        assert after.state == "proposed" and after.version == 2  # nothing changed
    if not allowed or not counts:
        assert set(answer.get_json()) == {"error"}
    if not counts and allowed:
        assert "the last approval must be an admin's" in answer.get_json()["error"]


def test_the_api_shows_the_requirement_and_the_approvals_so_far(env):
    client = env["client"]
    plan_id = half_approved(env, OTHER_AUTHOR)
    got = client.get(f"/api/v1/plans/{plan_id}", headers=basic("viewer1")).get_json()
    assert got["approval"] == {"rule": "topic-2 moves", "approvers": 2,
                               "roles": ["approver", "admin"], "admin": True}
    assert got["approval_status"] == {
        "approvers": ["approver2"], "required": 2, "roles": ["approver", "admin"],
        "admin_required": True, "met": False, "still_needed": 1,
        "text": "needs 2 approvers incl. an admin: 1 of 2 so far: approver2"}
    assert [d["role"] for d in got["decisions"]] == ["approver"]
    listed = client.get("/api/v1/plans?state=proposed", headers=basic("viewer1")).get_json()
    mine = next(p for p in listed["plans"] if p["id"] == plan_id)
    assert mine["approval_status"]["approvers"] == ["approver2"]
    again = act(env, "approver2", "approve", plan_id)
    assert again.status_code == 409 and "approver2 already approved" in again.get_json()["error"]
    done = act(env, "admin2", "approve", plan_id)
    assert done.get_json() == {"id": plan_id, "state": "approved"}
    text = client.get(f"/api/v1/plans/{plan_id}", headers=basic("viewer1")) \
        .get_json()["approval_status"]["text"]
    assert text == "needs 2 approvers incl. an admin: 2 of 2 so far: approver2, admin2"


def test_a_refused_action_is_in_the_audit_log_with_its_address(env):
    """A role pressing what it may not (the approver executing, the viewer proposing) was
    answered 403 and left no trace; a wrong password was already a row. Each refusal is
    one row now, changing nothing: who, what on which plan, from where, and the rule."""
    client = env["client"]
    plan_id = make_plan(env, "operator1", "approved")
    answer = client.post(f"/api/v1/plans/{plan_id}/execute", json={},
                         headers=basic("approver1"))
    assert answer.status_code == 403
    assert client.post("/api/v1/plans", headers=basic("viewer1"), json={
        "cluster": "demo", "plan": {"version": 1, "partitions": []}}).status_code == 403
    def refused(query: str) -> list[tuple]:
        rows = client.get(f"/api/v1/audit?{query}", headers=basic("viewer1")).get_json()
        return [(e["user"], e["plan_id"], e["before"], e["after"], e["address"],
                 e["detail"]) for e in rows["entries"] if e["action"] == "refused"]

    assert refused(f"plan={plan_id}") == [
        ("approver1", plan_id, None, None, "127.0.0.1",
         {"attempted": "execute", "reason": answer.get_json()["error"]})]
    newest = refused("user=viewer1&order=newest")[0]  # earlier tests' refusals are older
    assert newest[1:] == (None, None, None, "127.0.0.1", {
        "attempted": "propose", "reason": "the viewer role may not propose: it needs the "
                                          "operator or admin role"})
    assert plan_service.get(env["store"], plan_id).state == "approved"


def test_a_partial_plan_under_its_own_title_still_reads_partial(env):
    """A drain proposed through the API under its own title ("drain broker 9 for
    maintenance") kept 5,144 of broker 9's replicas; the queue and lists show titles only,
    and docs/api.md says a goal not reached is titled partial."""
    client = env["client"]
    answer = client.post("/api/v1/plans", headers=basic("admin1"), json={
        "cluster": "demo", "kind": "reassignment", "title": "drain for maintenance",
        "generate": {"goal": "drain", "brokers": [1, 2, 3, 4]}})
    assert answer.status_code == 201, answer.get_json()
    plan = client.get(answer.headers["Location"], headers=basic("viewer1")).get_json()
    assert plan["preview"]["unresolved"] and plan["title"] == "partial: drain for maintenance"
