"""GET /api/v1/plans?cluster=*&needs_approval_by=me: the fleet's queue over the API.
Every role reads it (viewers too), ``me`` is whoever the request authenticates as, bad
values are 400 naming the parameter, and without the two parameters the list answers as
it always did."""

from __future__ import annotations

import base64

import pytest
from werkzeug.security import generate_password_hash

from backend.services import plan_kinds
from backend.services import plans as plan_service
from backend.store.workflow import Actor
from backend.twin.cluster import TwinCluster
from backend.twin.gateway import TwinGateway
from backend.twin.generate import generate_snapshot
from dashboard.config import parse_config

USERS = {"vera": "viewer", "otto": "operator", "anna": "approver", "bert": "approver",
         "ada": "admin"}
CLUSTERS = ("east", "west")


def basic(name: str) -> dict:
    token = base64.b64encode(f"{name}:pw-{name}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """Two twin clusters; otto proposed one plan on each, ada one on west, and anna
    approved otto's on west."""
    from dashboard import runtime
    from dashboard.app import create_app

    tmp = tmp_path_factory.mktemp("queue-api")
    twins = {name: TwinCluster(generate_snapshot(6, 3, 3, 30, 3, seed=7, cluster=name))
             for name in CLUSTERS}
    users = [{"name": n, "role": r, "password_hash": generate_password_hash(
        f"pw-{n}", method="pbkdf2:sha256:1000")} for n, r in USERS.items()]
    doc = {"clusters": [{"name": n, "gateway": {"type": "twin", "url": "http://127.0.0.1:9"}}
                        for n in CLUSTERS],
           "cache": {"background_dir": str(tmp / "cache")},
           "store": {"url": f"sqlite:///{tmp / 'railyard.db'}"},
           "auth": {"users": users, "secret_key_file": str(tmp / "key")}}
    app = create_app(parse_config(doc, "cfg"),
                     gateways={n: TwinGateway(t) for n, t in twins.items()})
    rt = runtime.current()
    store = rt.plan_store()

    def propose(cluster: str, author: Actor) -> int:
        snap = rt.snapshot_of(cluster)
        topic = str(snap.topic_names[0])
        replicas = snap.replicas_of(snap.partition_row(topic, 0))
        spare = [b for b in map(int, snap.broker_ids) if b not in replicas]
        draft = plan_kinds.draft_from_request(snap, {
            "cluster": cluster, "kind": "reassignment", "plan": {"version": 1, "partitions": [
                {"topic": topic, "partition": 0, "replicas": spare[:len(replicas)]}]}})
        return plan_service.propose(store, author, cluster=cluster, kind=draft.kind,
                                    content=draft.content, preview=draft.preview,
                                    snapshot=snap).id

    otto, ada = Actor("otto", "operator"), Actor("ada", "admin")
    plans = {"east": propose("east", otto), "west": propose("west", otto),
             "ada": propose("west", ada)}
    approved = plan_service.get(store, plans["west"])
    plan_service.approve(store, Actor("anna", "approver"), approved.id,
                         sha256=approved.sha256, topics_of=rt.topics_of)
    return {"client": app.server.test_client(), "plans": plans}


def get(env, user: str, query: str):
    return env["client"].get(f"/api/v1/plans?{query}", headers=basic(user))


def test_every_role_reads_the_fleet_queue(env):
    p = env["plans"]
    for user in USERS:
        answer = get(env, user, "cluster=*")
        assert answer.status_code == 200, (user, answer.json)
        rows = answer.json["plans"]
        assert [r["id"] for r in rows] == [p["ada"], p["west"], p["east"]]
        assert {r["cluster"] for r in rows} == set(CLUSTERS)
    west = next(r for r in get(env, "vera", "cluster=*").json["plans"] if r["id"] == p["west"])
    assert (west["state"], west["approvers"], west["approvals"], west["still_needed"]) \
        == ("approved", ["anna"], "1 of 1", 0)
    assert west["bytes_to_move"] > 0 and west["schedule"] == "—"


def test_me_is_the_signed_in_user(env):
    p = env["plans"]

    def waiting(user, query="cluster=*&needs_approval_by=me"):
        answer = get(env, user, query)
        assert answer.status_code == 200, answer.json
        assert all(r["for_you"] for r in answer.json["plans"])
        return [r["id"] for r in answer.json["plans"]]

    assert waiting("anna") == waiting("bert") == [p["ada"], p["east"]]
    assert waiting("ada") == [p["east"]]  # not her own
    assert waiting("vera") == [] and waiting("otto") == []
    assert waiting("anna", "cluster=west&needs_approval_by=me") == [p["ada"]]
    assert waiting("anna", "needs_approval_by=me&sort=id") == [p["east"], p["ada"]]
    # for_you on the whole queue, for whoever asks
    rows = get(env, "ada", "cluster=*").json["plans"]
    assert [r["id"] for r in rows if r["for_you"]] == [p["east"]]


def test_bad_values_are_400_naming_the_parameter(env):
    for query, named in (("cluster=*&needs_approval_by=anna", "needs_approval_by: expected me"),
                         ("cluster=north&needs_approval_by=me", "cluster: expected"),
                         ("cluster=*&state=waiting", "state: expected"),
                         ("cluster=*&sort=secret", "sort: expected")):
        answer = get(env, "anna", query)
        assert answer.status_code == 400 and answer.json["error"].startswith(named), query


def test_without_them_the_list_answers_as_before(env):
    answer = get(env, "vera", "cluster=east")
    assert answer.status_code == 200
    [plan] = answer.json["plans"]
    assert plan["id"] == env["plans"]["east"] and "content" in plan and "for_you" not in plan
    assert get(env, "vera", "cluster=north").status_code == 400
    assert env["client"].get("/api/v1/plans?cluster=*").status_code == 401
