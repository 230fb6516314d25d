"""Behind a proxy and around the edges of the routes (issue 27 items 4, 9, 10): the audit
address is the entry the trusted proxy added, bounded; user names are compared
normalised in both modes; the session cookie is Secure over https; and only exact public
paths load without sign-in."""

from __future__ import annotations

import base64

import pytest

from backend.errors import BadInput
from backend.store.workflow import Actor
from dashboard import auth
from dashboard.config import normal_name, parse_config
from tests.unit.helpers import login_token
from tests.unit.test_sessions import PASSWORDS, config_doc, make_app, propose, sign_in

CLUSTER = {"name": "a", "gateway": {"type": "twin", "url": "http://127.0.0.1:9"}}
SSO = {"X-Forwarded-User": "sam", "X-Forwarded-Role": "approver"}
SESSION_COOKIE = auth.session_cookie_name(8050)
CSRF_COOKIE = auth.csrf_cookie_name(8050)


def header_app(tmp_path, **auth_keys):
    doc = config_doc(tmp_path)
    doc["auth"] = {"trusted_header": {"from": ["127.0.0.1"]},
                   "secret_key_file": str(tmp_path / "key"), **auth_keys}
    return make_app(doc)


def identity(app, headers, remote="127.0.0.1"):
    with app.server.test_request_context("/", headers=headers,
                                         environ_base={"REMOTE_ADDR": remote}):
        return auth.current_identity()


def test_the_audit_address_is_the_one_the_trusted_proxy_added(tmp_path):
    app = header_app(tmp_path)
    # the client sent "6.6.6.6" itself; the proxy appended the address it saw
    spoofed = {**SSO, "X-Forwarded-For": "6.6.6.6, 203.0.113.9"}
    assert identity(app, spoofed).address == "203.0.113.9"
    assert identity(app, {**SSO, "X-Forwarded-For": "2001:db8::7"}).address == "2001:db8::7"
    # no header, or not an address: the proxy's own address
    assert identity(app, SSO).address == "127.0.0.1"
    assert identity(app, {**SSO, "X-Forwarded-For": "not-an-ip"}).address == "127.0.0.1"
    long = {**SSO, "X-Forwarded-For": "1.2.3.4, " + "9" * 318}
    assert identity(app, long).address == "127.0.0.1"


def test_two_trusted_hops_take_the_second_entry_from_the_right(tmp_path):
    app = header_app(tmp_path, trusted_hops=2)
    chain = {**SSO, "X-Forwarded-For": "6.6.6.6, 198.51.100.4, 10.0.0.2"}
    assert identity(app, chain).address == "198.51.100.4"
    assert identity(app, {**SSO, "X-Forwarded-For": "10.0.0.2"}).address == "127.0.0.1"


def test_forwarded_headers_from_elsewhere_are_not_believed(tmp_path):
    doc = config_doc(tmp_path)
    app = make_app(doc)
    with app.server.test_request_context("/api/v1/plans", headers={
            "X-Forwarded-For": "203.0.113.9", "Authorization": "Basic " + base64.b64encode(
                b"olivia:o-secret").decode()}, environ_base={"REMOTE_ADDR": "10.9.9.9"}):
        assert auth.current_identity().address == "10.9.9.9"


def test_no_proxy_believes_no_forwarded_header(tmp_path):
    """By default loopback is a trusted proxy (one on the same host, the usual set-up), so
    a client that reaches Railyard over loopback without it (an SSH tunnel, kubectl
    port-forward) could name any address, the audit's and the sign-in lockout's. With no
    proxy in front, `trusted_proxies: []` says so (an empty list was refused)."""
    doc = config_doc(tmp_path)
    headers = {"X-Forwarded-For": "203.0.113.9", "Authorization": "Basic " +
               base64.b64encode(b"olivia:o-secret").decode()}
    for proxies, seen in ((None, "203.0.113.9"), ([], "127.0.0.1")):
        if proxies is not None:
            doc["auth"]["trusted_proxies"] = proxies
        app = make_app(doc)
        with app.server.test_request_context("/api/v1/plans", headers=headers,
                                             environ_base={"REMOTE_ADDR": "127.0.0.1"}):
            assert auth.current_identity().address == seen
    assert parse_config(doc, "cfg").auth.trusted_proxies == ()
    bad = {**doc, "auth": {**doc["auth"], "trusted_proxies": "nope"}}
    with pytest.raises(BadInput, match="'nope' is not an IP address or network"):
        parse_config(bad, "cfg")


def test_the_approval_audit_row_keeps_a_bounded_address(tmp_path):
    """318 characters of X-Forwarded-For once reached the audit row (PostgreSQL refused
    more than 100 with a 500)."""
    from dashboard import runtime

    app = header_app(tmp_path)
    plan = propose(app)
    answer = app.server.test_client().post(
        f"/api/v1/plans/{plan.id}/approve", json={"sha256": plan.sha256},
        headers={**SSO, "X-Forwarded-For": "x" * 318})
    assert answer.status_code == 200, answer.get_json()
    rows = runtime.current().plan_store()
    from backend.store.store import query_audit

    with rows.read() as conn:
        approved = [r for r in query_audit(conn, plan=plan.id) if r.action == "approve"]
    assert [r.address for r in approved] == ["127.0.0.1"]


@pytest.mark.parametrize("spelling", ["Olivia", " OLIVIA ", "ｏｌｉｖｉａ", "Ｏｌｉｖｉａ"])
def test_a_name_in_another_spelling_cannot_approve_its_own_plan(tmp_path, spelling):
    app = header_app(tmp_path)
    plan = propose(app)  # by olivia
    answer = app.server.test_client().post(
        f"/api/v1/plans/{plan.id}/approve", json={"sha256": plan.sha256},
        headers={"X-Forwarded-User": spelling, "X-Forwarded-Role": "approver"})
    assert answer.status_code == 403, answer.get_json()
    assert "two people must agree" in answer.get_json()["error"]


def test_user_names_are_normalised_in_users_mode_too(tmp_path):
    app = make_app(config_doc(tmp_path))
    client = app.server.test_client()
    sign_in(client, "olivia")
    answer = client.post("/login", data={"username": " OLIVIA", "password": PASSWORDS["olivia"],
                                         "next": "/", "csrf_token": login_token(client)})
    assert answer.status_code == 302
    assert '"olivia"' in client.get("/_dash-layout").get_data(True)
    basic = base64.b64encode(f"Olivia:{PASSWORDS['olivia']}".encode()).decode()
    with app.server.test_request_context("/api/v1/plans",
                                         headers={"Authorization": f"Basic {basic}"},
                                         environ_base={"REMOTE_ADDR": "127.0.0.1"}):
        assert auth.current_actor() == Actor("olivia", "operator", "127.0.0.1")


def test_config_names_are_normalised_and_compared_so():
    assert normal_name(" Ｏlivia\u00a0") == "olivia"
    users = [{"name": n, "role": "viewer", "password_hash": "scrypt:x"} for n in ("Ann", "ann")]
    doc = {"clusters": [CLUSTER], "auth": {"users": users}}
    with pytest.raises(BadInput, match="the name 'ann' is used twice"):
        parse_config(doc, "cfg")


def secure_flags(app, headers=None, remote="127.0.0.1", https=False) -> dict[str, bool]:
    client = app.server.test_client()
    base = "https://localhost" if https else "http://localhost"
    client.get("/login", headers=headers or {}, base_url=base,
               environ_base={"REMOTE_ADDR": remote})
    token = client.get_cookie(CSRF_COOKIE).value
    answer = client.post("/login", data={"username": "olivia", "password": "o-secret",
                                         "next": "/", "csrf_token": token},
                         headers=headers or {}, base_url=base,
                         environ_base={"REMOTE_ADDR": remote})
    assert answer.status_code == 302
    cookies = answer.headers.getlist("Set-Cookie")
    return {name: any(c.startswith(name + "=") and "; Secure" in c for c in cookies)
            for name in (SESSION_COOKIE, CSRF_COOKIE)}


def test_cookies_are_secure_behind_a_tls_proxy(tmp_path):
    app = make_app(config_doc(tmp_path))
    https = {"X-Forwarded-Proto": "https"}
    assert secure_flags(app, https) == {SESSION_COOKIE: True, CSRF_COOKIE: True}
    assert secure_flags(app, https=True) == {SESSION_COOKIE: True, CSRF_COOKIE: True}
    assert secure_flags(app) == {SESSION_COOKIE: False, CSRF_COOKIE: False}
    # the header from a client that is not the proxy is not believed
    assert secure_flags(app, https, remote="10.9.9.9") == {SESSION_COOKIE: False,
                                                          CSRF_COOKIE: False}


@pytest.mark.parametrize("setting, expected", [(True, True), (False, False)])
def test_cookie_secure_setting(tmp_path, setting, expected):
    app = make_app(config_doc(tmp_path, cookie_secure=setting))
    assert secure_flags(app) == {SESSION_COOKIE: expected, CSRF_COOKIE: expected}
    assert secure_flags(app, {"X-Forwarded-Proto": "https"}) == \
        {SESSION_COOKIE: expected, CSRF_COOKIE: expected}


def test_cookie_secure_is_checked():
    doc = {"clusters": [CLUSTER],
           "auth": {"users": [{"name": "a", "role": "viewer", "password_hash": "scrypt:x"}],
                    "cookie_secure": "yes"}}
    with pytest.raises(BadInput, match=r"auth.cookie_secure: expected auto, true or false"):
        parse_config(doc, "cfg")


@pytest.mark.parametrize("path", ["/api/x", "/api/", "/api", "/api/v1x", "/api/v2/plans",
                                  "/loginx", "/login;x", "/login/x", "/_favicon.icox",
                                  "/assets", "/assetsx/y"])
def test_only_exact_public_paths_load_without_sign_in(tmp_path, path):
    app = make_app(config_doc(tmp_path))
    answer = app.server.test_client().get(path)
    assert answer.status_code in (302, 401), answer.status_code
    assert "dash-renderer" not in answer.get_data(True)
    assert "plotly" not in answer.get_data(True).lower()
