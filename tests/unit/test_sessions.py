"""Sessions kept on the server (issue 27 item 1): a cookie replayed after sign-out, a
password change or an admin's revoke loads nothing and approves nothing, on any worker;
idle sessions end; the cookie carries only an opaque id."""

from __future__ import annotations

import base64
import json

import pytest
import yaml
from werkzeug.security import generate_password_hash

from backend.services import plans as plan_service
from backend.services.plan_kinds import draft_from_request
from backend.store.workflow import Actor
from backend.twin.cluster import TwinCluster
from backend.twin.gateway import TwinGateway
from backend.twin.generate import generate_snapshot
from dashboard import auth, ids
from dashboard import sessions as browser_sessions
from dashboard.config import parse_config
from tests.unit.helpers import login_token, run_cli

PORT = 8050
SESSION_COOKIE = auth.session_cookie_name(PORT)
CSRF_COOKIE = auth.csrf_cookie_name(PORT)
PASSWORDS = {"olivia": "o-secret", "adam": "a-secret"}
ROLES = {"olivia": "operator", "adam": "approver"}


def config_doc(tmp_path, **auth_keys) -> dict:
    users = [{"name": n, "role": ROLES[n], "password_hash": generate_password_hash(
        p, method="pbkdf2:sha256:1000")} for n, p in PASSWORDS.items()]
    return {"clusters": [{"name": "demo", "gateway": {"type": "twin",
                                                      "url": "http://127.0.0.1:9"}}],
            "cache": {"background_dir": str(tmp_path / "cache")},
            "store": {"url": f"sqlite:///{tmp_path / 'plans.db'}"},
            "auth": {"users": users, "secret_key_file": str(tmp_path / "key"), **auth_keys}}


def make_app(doc: dict, twin: TwinCluster | None = None):
    """One server process's app (several on one store play several workers)."""
    from dashboard.app import create_app

    twin = twin or TwinCluster(generate_snapshot(6, 3, 3, 30, 3, seed=7, cluster="demo"))
    return create_app(parse_config(doc, "cfg"), gateways={"demo": TwinGateway(twin)})


@pytest.fixture
def doc(tmp_path):
    return config_doc(tmp_path)


@pytest.fixture
def app(doc):
    return make_app(doc)


def sign_in(client, name: str, password: str | None = None):
    answer = client.post("/login", data={
        "username": name, "password": password or PASSWORDS[name], "next": "/",
        "csrf_token": login_token(client)})
    assert answer.status_code == 302, answer.get_data(True)
    return client.get_cookie(SESSION_COOKIE).value


def replay(app, session_id: str):
    """A new client holding only a copied session cookie, as an attacker replays it."""
    client = app.server.test_client()
    client.set_cookie(SESSION_COOKIE, session_id)
    return client


def propose(twin_app) -> plan_service.Plan:
    from dashboard import runtime

    rt = runtime.current()
    snap = rt.snapshot_of("demo")
    topic = str(snap.topic_names[0])
    replicas = snap.replicas_of(snap.partition_row(topic, 0))
    spare = [b for b in map(int, snap.broker_ids) if b not in replicas]
    draft = draft_from_request(snap, {
        "cluster": "demo", "kind": "reassignment", "plan": {"version": 1, "partitions": [
            {"topic": topic, "partition": 0, "replicas": spare[:len(replicas)]}]}})
    return plan_service.propose(rt.plan_store(), Actor("olivia", "operator"), cluster="demo",
                                kind=draft.kind, content=draft.content,
                                preview=draft.preview, snapshot=snap)


def approve_click(app, client, plan, csrf: str):
    """The plan page's Approve button, as dash-renderer posts its click."""
    key = next(k for k in app.callback_map if f"{ids.PV_APPROVE}.hidden" in k)
    spec = app.callback_map[key]
    body = {"output": key,
            "outputs": [{"id": o.split(".")[0], "property": o.split(".")[1]}
                        for o in key.strip(".").split("...")],
            "inputs": [{**i, "value": 1 if i["id"] == ids.PV_APPROVE else None}
                       for i in spec["inputs"]],
            "state": [{**s, "value": {"id": plan.id, "sha256": plan.sha256}
                       if s["id"] == ids.PV_PLAN else ""} for s in spec["state"]],
            "changedPropIds": [f"{ids.PV_APPROVE}.n_clicks"]}
    return client.post("/_dash-update-component", data=json.dumps(body),
                       content_type="application/json", headers={auth.CSRF_HEADER: csrf})


def state_of(plan_id: int) -> str:
    from dashboard import runtime

    return plan_service.get(runtime.current().plan_store(), plan_id).state


def test_a_cookie_replayed_after_sign_out_loads_nothing_and_approves_nothing(app):
    first, second = propose(app), propose(app)
    browser = app.server.test_client()
    session_id = sign_in(browser, "adam")
    csrf = browser.get_cookie(CSRF_COOKIE).value  # what the signed cookie's payload held
    # signed in, the same click approves (the replay below is refused for the session alone)
    done = approve_click(app, browser, first, csrf)
    assert done.status_code == 200 and "is approved" in done.get_data(True)
    assert state_of(first.id) == "approved"

    assert browser.post("/logout", data={"csrf_token": csrf}).status_code == 302

    attacker = replay(app, session_id)
    assert attacker.get("/_dash-layout").status_code == 401
    refused = approve_click(app, attacker, second, csrf)
    assert refused.status_code in (401, 403)
    assert state_of(second.id) == "proposed"


def test_the_session_cookie_is_an_opaque_id(app):
    browser = app.server.test_client()
    session_id = sign_in(browser, "adam")
    csrf = browser.get_cookie(CSRF_COOKIE).value
    # no name, role or token inside, however it is decoded (a signed cookie's payload is
    # the base64 before its first dot)
    payload = session_id.split(".")[0]
    decoded = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
    assert b"adam" not in decoded and b"approver" not in decoded
    assert csrf.encode() not in decoded and csrf not in session_id
    assert browser_sessions.ID_PATTERN.fullmatch(session_id)


def test_sign_out_on_one_worker_ends_the_session_on_every_worker(doc):
    one = make_app(doc)
    two = make_app(doc)  # a second worker process: same store, same key
    browser = one.server.test_client()
    session_id = sign_in(browser, "olivia")
    assert replay(two, session_id).get("/_dash-layout").status_code == 200
    browser.post("/logout", data={"csrf_token": browser.get_cookie(CSRF_COOKIE).value})
    assert replay(two, session_id).get("/_dash-layout").status_code == 401
    assert replay(one, session_id).get("/_dash-layout").status_code == 401


def test_a_new_password_ends_the_sessions_signed_in_with_the_old_one(doc):
    old = make_app(doc)
    olivia = sign_in(old.server.test_client(), "olivia")
    adam = sign_in(old.server.test_client(), "adam")
    users = [{**u, "password_hash": generate_password_hash("new-secret")}
             if u["name"] == "olivia" else u for u in doc["auth"]["users"]]
    renewed = make_app({**doc, "auth": {**doc["auth"], "users": users}})
    assert replay(renewed, olivia).get("/_dash-layout").status_code == 401
    assert replay(renewed, adam).get("/_dash-layout").status_code == 200
    # the old password's session stays ended even where the old config still runs
    assert replay(old, olivia).get("/_dash-layout").status_code == 401


def test_an_admin_revokes_a_users_sessions_with_an_audit_row(tmp_path, doc, app, capsys):
    olivia = sign_in(app.server.test_client(), "olivia")
    adam = sign_in(app.server.test_client(), "adam")
    assert replay(app, olivia).get("/_dash-layout").status_code == 200  # kept by the server
    config = tmp_path / "railyard.yaml"
    config.write_text(yaml.safe_dump(doc))
    code, out, _ = run_cli(capsys, "auth", "sessions", "--config", str(config))
    assert code == 0
    assert [s["user"] for s in json.loads(out)["sessions"]] == ["adam", "olivia"]
    code, out, _ = run_cli(capsys, "auth", "revoke", "--config", str(config), "--user",
                           "Olivia", "--reason", "laptop lost")
    assert code == 0 and json.loads(out)["ended"] == 1
    assert replay(app, olivia).get("/_dash-layout").status_code == 401
    assert replay(app, adam).get("/_dash-layout").status_code == 200
    from dashboard import runtime

    row = runtime.current().plan_store().verify_audit()
    assert row["intact"]
    with runtime.current().plan_store().read() as conn:
        from sqlalchemy import select

        from backend.store.schema import audit
        last = conn.execute(select(audit).order_by(audit.c.id.desc())).first()
    assert last.action == "revoke_sessions"
    assert last.detail == {"of": "olivia", "sessions": 1, "reason": "laptop lost"}
    assert last.user.startswith("cli:")


def test_revoking_a_name_nobody_has_is_refused(tmp_path, doc, app, capsys):
    """`auth revoke --user nobody` said {"ended": 0} with exit 0, and wrote an audit row: a
    mistyped name looked like success. A name the config lists, or one that still holds a
    session (a user taken out of the config), is revoked as before."""
    config = tmp_path / "railyard.yaml"
    config.write_text(yaml.safe_dump(doc))
    from dashboard import runtime

    store = runtime.current().plan_store()
    rows = store.verify_audit()["rows"]
    code, out, err = run_cli(capsys, "auth", "revoke", "--config", str(config), "--user",
                             "olivai")
    assert (code, out) == (2, "")
    assert err == (f"railyard auth: error: --user olivai: no such user in {config} "
                   f"and no session of theirs: nothing ended (check the name)\n")
    assert store.verify_audit()["rows"] == rows  # nothing written
    sign_in(app.server.test_client(), "adam")
    gone = {**doc, "auth": {**doc["auth"], "users": [
        u for u in doc["auth"]["users"] if u["name"] != "adam"]}}
    config.write_text(yaml.safe_dump(gone))
    code, out, _ = run_cli(capsys, "auth", "revoke", "--config", str(config), "--user", "adam")
    assert code == 0 and json.loads(out)["ended"] == 1


def test_an_idle_session_ends(tmp_path, monkeypatch):
    app = make_app(config_doc(tmp_path, idle_minutes=30))
    clock = [1_000_000.0]
    monkeypatch.setattr(browser_sessions, "clock", lambda: clock[0])
    session_id = sign_in(app.server.test_client(), "olivia")
    clock[0] += 29 * 60  # used within the idle time: it goes on, from now
    assert replay(app, session_id).get("/_dash-layout").status_code == 200
    clock[0] += 29 * 60
    assert replay(app, session_id).get("/_dash-layout").status_code == 200
    clock[0] += 31 * 60  # unused for longer than idle_minutes
    assert replay(app, session_id).get("/_dash-layout").status_code == 401
    clock[0] -= 31 * 60  # gone for good, not merely out of time
    assert replay(app, session_id).get("/_dash-layout").status_code == 401


def test_a_session_ends_session_hours_after_sign_in_however_busy(tmp_path, monkeypatch):
    app = make_app(config_doc(tmp_path, session_hours=1))
    clock = [1_000_000.0]
    monkeypatch.setattr(browser_sessions, "clock", lambda: clock[0])
    session_id = sign_in(app.server.test_client(), "olivia")
    for _ in range(5):
        clock[0] += 10 * 60
        assert replay(app, session_id).get("/_dash-layout").status_code == 200
    clock[0] += 11 * 60
    assert replay(app, session_id).get("/_dash-layout").status_code == 401


def test_a_session_id_never_reaches_the_store(app):
    from sqlalchemy import select

    from backend.store.schema import sessions
    from dashboard import runtime

    session_id = sign_in(app.server.test_client(), "olivia")
    with runtime.current().plan_store().read() as conn:
        stored = conn.execute(select(sessions)).all()
    assert len(stored) == 1 and session_id not in repr(stored)


def test_a_store_that_does_not_answer_is_named_not_a_500(tmp_path):
    doc = config_doc(tmp_path)
    doc["store"] = {"url": "postgresql+psycopg://railyard@127.0.0.1:9/railyard"}
    app = make_app(doc)
    client = app.server.test_client()
    answer = client.post("/login", data={"username": "olivia", "password": "o-secret",
                                         "next": "/", "csrf_token": login_token(client)})
    assert answer.status_code == 503 and "Cannot sign in now: Plan store" in answer.get_data(True)
    replayed = replay(app, "a" * 43).get("/_dash-layout")
    assert replayed.status_code == 503
    assert replayed.get_json()["error"].startswith("Cannot check your session: Plan store")


def test_a_process_keeps_the_rows_it_looked_up_until_a_session_ends(app, monkeypatch):
    from backend.store import sessions as stored

    reads = []
    real = stored.lookup
    monkeypatch.setattr(stored, "lookup", lambda store, sid: reads.append(sid) or real(store, sid))
    olivia = sign_in(app.server.test_client(), "olivia")
    adam = app.server.test_client()
    sign_in(adam, "adam")
    for _ in range(3):
        assert replay(app, olivia).get("/_dash-layout").status_code == 200
    assert reads == [olivia]  # one read of the store, then the row this process kept
    adam.post("/logout", data={"csrf_token": adam.get_cookie(CSRF_COOKIE).value})
    assert replay(app, olivia).get("/_dash-layout").status_code == 200
    assert reads.count(olivia) == 2  # a session ended: the kept rows were read again


def test_use_on_another_worker_keeps_a_session_from_going_idle(tmp_path, monkeypatch):
    doc = config_doc(tmp_path, idle_minutes=30)
    one, two = make_app(doc), make_app(doc)
    clock = [1_000_000.0]
    monkeypatch.setattr(browser_sessions, "clock", lambda: clock[0])
    session_id = sign_in(one.server.test_client(), "olivia")
    clock[0] += 30
    assert replay(one, session_id).get("/_dash-layout").status_code == 200  # one keeps it
    clock[0] += 29 * 60
    assert replay(two, session_id).get("/_dash-layout").status_code == 200  # used on two
    clock[0] += 16 * 60  # idle by what one kept, not by the store
    assert replay(one, session_id).get("/_dash-layout").status_code == 200


def test_cli_revoke_signs_with_the_configs_audit_key_file(tmp_path, monkeypatch, capsys):
    """`auth revoke --config` opened the store without the config's store.audit_key_file:
    it made var/audit_keys in the current folder, signed its row with that key, and
    `audit verify --config` then found the row signed with a key the config lacks."""
    doc = config_doc(tmp_path)
    doc["store"].update(audit_key_file=str(tmp_path / "keys"),
                        audit_checkpoints=str(tmp_path / "checkpoints.jsonl"))
    config = tmp_path / "railyard.yaml"
    config.write_text(yaml.safe_dump(doc))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.delenv("RAILYARD_AUDIT_KEYS", raising=False)
    code, out, _ = run_cli(capsys, "auth", "revoke", "--config", config, "--user", "olivia")
    assert code == 0 and json.loads(out)["ended"] == 0
    assert run_cli(capsys, "auth", "sessions", "--config", config)[0] == 0
    assert list(elsewhere.iterdir()) == []  # no var/audit_keys of its own
    code, out, _ = run_cli(capsys, "audit", "verify", "--config", config)
    answer = json.loads(out)
    assert code == 0 and answer["intact"], answer
    assert answer["rows"] == 1 and answer["checkpoints"] == 1
