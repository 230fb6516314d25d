"""Findings of a security review: secrets in URLs stay out of messages, whatever order
their parts come in; auth: none answers only this machine's browser, never a proxy; a
store that does not answer is named in the log, not to the browser; no user, configured
or named by the proxy, takes a name the audit log keeps for Railyard itself."""

from __future__ import annotations

import json
import logging
from types import SimpleNamespace

import pyarrow as pa
import pytest

from backend.errors import BadInput, shown_url
from dashboard.config import normal_name, parse_config
from tests.unit.helpers import login_token
from tests.unit.test_auth import CLUSTER
from tests.unit.test_auth import make_app as make_auth_app


@pytest.mark.parametrize(("url", "shown"), [
    ("postgresql+psycopg://railyard:s3cr;et@db:5432/railyard",
     "postgresql+psycopg://railyard:***@db:5432/railyard"),
    ("redis://:hunter2;x@redis:6379/0", "redis://:***@redis:6379/0"),
    ("sc://spark:15002/;token=SparkT0ken;user_id=a", "sc://spark:15002/;..."),
    ("sc://u:pw@spark:15002/;token=SparkT0ken", "sc://u:***@spark:15002/;..."),
])
def test_a_password_holding_a_semicolon_is_masked_whole(url, shown):
    """shown_url cut the URL at ';' before it masked the user part, so a password with
    ';' in it was shown up to there ('railyard:s3cr;...')."""
    assert shown_url(url) == shown


def test_the_sweep_answer_names_spark_without_its_token(monkeypatch):
    """`railyard whatif sweep` printed the Connect URL as given, ;token=... and all."""
    from backend.services import whatif
    from backend.spark.session import settings_from

    monkeypatch.setattr(whatif, "load_spec", lambda path: SimpleNamespace(kind="limits"))
    monkeypatch.setattr(whatif, "count_scenarios", lambda spec: 1)
    monkeypatch.setattr(whatif, "run", lambda *args: pa.table({"x": [1]}))
    settings = settings_from(remote="sc://spark:15002/;token=SparkT0ken", env={})
    answer = whatif.sweep("sweep.yaml", settings)
    assert answer["spark"] == "sc://spark:15002/;..."
    assert "SparkT0ken" not in json.dumps(answer)


def test_a_spark_master_url_is_shown_without_its_password(monkeypatch):
    from backend.spark import session

    with pytest.raises(BadInput) as e:
        session.settings_from(master="mesos://u:S3cret@mesos:5050", env={})
    assert "S3cret" not in str(e.value) and "'mesos://u:***@mesos:5050'" in str(e.value)

    def no_jvm(conf, log_path):
        raise RuntimeError("Java gateway process exited")

    monkeypatch.setattr(session, "java_executable", lambda: "/usr/bin/java")
    monkeypatch.setattr(session, "_launch_jvm", no_jvm)
    settings = session.settings_from(master="k8s://u:S3cret@k8s.example:6443", env={})
    with pytest.raises(BadInput) as e:
        session.build_session(settings)
    assert "S3cret" not in str(e.value)
    assert str(e.value).startswith("Spark (k8s://u:***@k8s.example:6443) did not start")


@pytest.mark.parametrize(("header", "value"), [
    ("X-Forwarded-For", "203.0.113.9"), ("Forwarded", "for=203.0.113.9"),
    ("X-Forwarded-Host", "railyard.example.com"), ("X-Forwarded-Proto", "https"),
    ("X-Real-IP", "203.0.113.9"), ("Via", "1.1 nginx")])
def test_auth_none_refuses_what_a_local_proxy_relays(tmp_path, caplog, header, value):
    """nginx on this host connects from 127.0.0.1 and passes Host: 127.0.0.1:8050 on, so
    under auth: none a remote client behind it was the local admin."""
    client = make_auth_app(tmp_path, None).server.test_client()
    local = {"Host": "127.0.0.1:8050"}
    assert client.get("/api/v1/plans", headers=local).status_code == 200
    caplog.set_level(logging.WARNING, logger="railyard.auth")
    for path in ("/api/v1/plans", "/_dash-layout", "/"):
        refused = client.get(path, headers={**local, header: value})
        assert refused.status_code == 403, path
    assert client.get("/api/v1/plans", headers={**local, header: value}).get_json() == {
        "error": f"Refused: auth: none serves only this machine's browser, and this request "
                 f"came through a proxy ({header}); configure auth users or trusted_header "
                 f"to serve through one."}
    posted = client.post("/api/v1/plans", json={}, headers={**local, header: value})
    assert posted.status_code == 403
    assert f"it carries {header}, so a proxy relayed it (auth: none)" in caplog.text


def test_a_store_that_does_not_answer_is_not_named_to_the_browser(tmp_path, caplog):
    """With the plan store down, any 43-character session cookie got a 503 naming the
    database's host, port, user and name to someone not signed in; the sign-in page named
    them too, and logged nothing."""
    from tests.unit.test_sessions import config_doc, replay
    from tests.unit.test_sessions import make_app as make_sessions_app

    doc = config_doc(tmp_path)
    doc["store"] = {"url": "postgresql+psycopg://railyard:Sup3rSecret@127.0.0.1:1/ledger"}
    app = make_sessions_app(doc)
    caplog.set_level(logging.WARNING, logger="railyard.auth")
    client = app.server.test_client()
    signing_in = client.post("/login", data={"username": "olivia", "password": "o-secret",
                                             "next": "/", "csrf_token": login_token(client)})
    assert signing_in.status_code == 503
    page = signing_in.get_data(as_text=True)
    assert "Cannot sign in now: Plan store is not answering; try again shortly." in page
    assert "127.0.0.1:1" not in page and "ledger" not in page
    assert "olivia could not sign in: Plan store: postgresql+psycopg://railyard:***@" \
        in caplog.text
    caplog.clear()
    answer = replay(app, "A" * 43).get("/_dash-layout")
    assert answer.status_code == 503
    assert answer.get_json() == {"error": "Cannot check your session: Plan store is not "
                                          "answering; try again shortly."}
    detail = [r.getMessage() for r in caplog.records if "127.0.0.1:1/ledger" in r.getMessage()]
    assert len(detail) == 1 and "railyard:***@" in detail[0]
    assert "Sup3rSecret" not in caplog.text


@pytest.mark.parametrize(("name", "message"), [
    ("railyard", "'railyard' is reserved (the audit log's name for the executor and plan "
                 "expiry), got 'railyard'"),
    ("Local", "'local' is reserved (the audit log's name for everyone under auth: none), "
              "got 'Local'"),
    ("(Unknown User)", "'(unknown user)' is reserved (the audit log's name for failed "
                       "sign-ins under a name no user has), got '(Unknown User)'"),
    ("sam\nsigned in as adam", "a user name has no control or invisible characters, "
                               "got 'sam\\nsigned in as adam'"),
])
def test_config_users_may_not_take_the_audit_logs_own_names(name, message):
    """A config user called railyard or local acted, in the audit log, as the executor
    or as everyone under auth: none."""
    user = {"name": name, "role": "admin", "password_hash": "scrypt:x"}
    with pytest.raises(BadInput) as e:
        parse_config({"clusters": [CLUSTER], "auth": {"users": [user]}}, "cfg")
    assert str(e.value) == f"cfg: auth.users[0].name: {message}"


@pytest.mark.parametrize(("name", "why"), [
    ("railyard", "'railyard' is reserved (the audit log's name for the executor and plan "
                 "expiry)"),
    (" LOCAL", "'local' is reserved (the audit log's name for everyone under auth: none)"),
    ("cli:root", "a user name has no colons (the audit log's cli:USER is the command line)"),
    ("sam\x1b[2Kadam", "a user name has no control or invisible characters"),
    ("rail\u200byard", "a user name has no control or invisible characters"),
])
def test_the_proxy_may_not_name_a_user_as_the_audit_log_names_railyard(tmp_path, caplog,
                                                                       name, why):
    """The trusted header's name was taken as it came (normalised): 'railyard', 'local',
    'cli:root' or a name with control characters acted as one of Railyard's own actors."""
    app = make_auth_app(tmp_path, {"trusted_header": {"from": ["127.0.0.1"]},
                                   "secret_key_file": str(tmp_path / "key")})
    client = app.server.test_client()
    caplog.set_level(logging.WARNING, logger="railyard.auth")
    sso = {"X-Forwarded-User": name, "X-Forwarded-Role": "admin"}
    answer = client.get("/api/v1/plans", headers=sso)
    assert answer.status_code == 403
    assert answer.get_json() == {"error": f"Refused: the single-sign-on proxy named a user "
                                          f"Railyard does not take: {why}."}
    for path in ("/_dash-layout", "/"):
        assert client.get(path, headers=sso).status_code == 403, path
    assert f"the proxy named the user {normal_name(name)!r}: {why}" in caplog.text
    assert client.get("/api/v1/plans", headers={**sso, "X-Forwarded-User": "Sam"}) \
        .get_json() == {"plans": []}


def test_a_first_request_with_a_cookie_while_the_store_is_down_is_a_503(tmp_path):
    """A worker's first request draws the page frame (Dash's first-request setup) before
    the sign-in check answers: the account badge asked the store who was signed in and the
    request ended in a 500, where every later one is the 503 above."""
    from tests.unit.test_sessions import config_doc, replay
    from tests.unit.test_sessions import make_app as make_sessions_app

    doc = config_doc(tmp_path)
    doc["store"] = {"url": "postgresql+psycopg://railyard:Sup3rSecret@127.0.0.1:1/ledger"}
    app = make_sessions_app(doc)
    first = replay(app, "A" * 43).get("/")
    assert first.status_code == 503, first.get_data(as_text=True)[:300]
    assert "Sup3rSecret" not in first.get_data(as_text=True)
