"""Sign-in, sessions, logout and CSRF refusals (Dash callbacks included), the trusted
header only from the proxy's address, auth: none only on loopback, `auth hash-password`."""

from __future__ import annotations

import base64
import io
import json
import logging
import os
import stat

import pytest
from werkzeug.security import check_password_hash, generate_password_hash

from backend.cli import main as cli
from backend.errors import BadInput
from dashboard import auth
from dashboard.config import parse_config
from dashboard.sign_in_failures import FAILURE_WINDOW, FAILURES_ALLOWED, PRUNE_FROM, FailedSignIns
from tests.unit.helpers import login_token

PORT = 8050  # the config's default: cookie names carry it
CSRF_COOKIE = auth.csrf_cookie_name(PORT)
CLUSTER = {"name": "a", "gateway": {"type": "twin", "url": "http://127.0.0.1:9"}}
PASSWORDS = {"olivia": "o-secret", "adam": "a-secret", "vera": "v-secret"}
ROLES = {"olivia": "operator", "adam": "approver", "vera": "viewer"}
USERS = [{"name": n, "role": ROLES[n], "password_hash": generate_password_hash(p)}
         for n, p in PASSWORDS.items()]
# a real Dash callback of the shell: the cluster picker follows the URL
CALLBACK = {"output": "cluster-picker.value",
            "outputs": {"id": "cluster-picker", "property": "value"},
            "inputs": [{"id": "url", "property": "search", "value": "?cluster=a"}],
            "changedPropIds": ["url.search"], "state": []}


def make_app(tmp_path, auth_doc, host="127.0.0.1"):
    from dashboard.app import create_app

    doc = {"clusters": [CLUSTER], "cache": {"background_dir": str(tmp_path / "cache")},
           "server": {"host": host}, "store": {"url": f"sqlite:///{tmp_path / 'plans.db'}"}}
    if auth_doc is not None:
        doc["auth"] = auth_doc
    return create_app(parse_config(doc, "cfg"))


@pytest.fixture
def users_app(tmp_path):
    return make_app(tmp_path, {"users": USERS, "secret_key_file": str(tmp_path / "key")})


def cookie(client, name):
    found = client.get_cookie(name)
    return found.value if found else None


def sign_in(client, name, password=None, token=None):
    token = login_token(client) if token is None else token
    return client.post("/login", data={"username": name, "csrf_token": token, "next": "/",
                                       "password": PASSWORDS[name] if password is None
                                       else password})


def dash_post(client, token=None):
    headers = {auth.CSRF_HEADER: token} if token else {}
    return client.post("/_dash-update-component", json=CALLBACK, headers=headers)


def test_private_pages_need_sign_in(users_app):
    client = users_app.server.test_client()
    page = client.get("/brokers?cluster=a")
    assert page.status_code == 302
    assert page.headers["Location"] == "/login?next=/brokers?cluster%3Da"
    assert client.get("/_dash-layout").status_code == 401
    assert client.get("/_dash-layout").get_json() == {
        "error": "Not signed in (the session ended): reload the page to sign in."}
    assert client.get("/login").status_code == 200
    assert client.get("/assets/railyard.css").status_code == 200
    # the folder itself is the pages' catch-all: it answered the skeleton (with the
    # server's Python and Dash versions) to anyone
    folder = client.get("/assets/")
    assert folder.status_code == 302 and folder.headers["Location"].startswith("/login")


def test_sign_in_names_the_user_and_sign_out_ends_the_session(users_app):
    client = users_app.server.test_client()
    wrong = sign_in(client, "olivia", "guess")
    assert wrong.status_code == 401 and "Wrong user name or password" in wrong.get_data(True)
    # the name typed stays in its field (it was emptied), escaped; the cursor in the password
    assert 'value="olivia">' in wrong.get_data(True)
    assert 'autocomplete="current-password" required autofocus' in wrong.get_data(True)
    odd = sign_in(client, '"><script>x', "x").get_data(True)
    assert "<script>x" not in odd and 'value="&quot;&gt;&lt;script&gt;x"' in odd
    assert sign_in(client, "nobody", "x").status_code == 401
    assert client.get("/_dash-layout").status_code == 401
    before = cookie(client, auth.session_cookie_name(PORT))

    ok = sign_in(client, "olivia")
    assert ok.status_code == 302 and ok.headers["Location"] == "/"
    assert cookie(client, auth.session_cookie_name(PORT)) != before
    layout = client.get("/_dash-layout")
    assert layout.status_code == 200
    text = layout.get_data(as_text=True)
    assert '"olivia"' in text and '"operator"' in text and "Sign out" in text

    token = cookie(client, CSRF_COOKIE)
    assert client.post("/logout").status_code == 403  # no token: a forged sign-out
    assert client.get("/_dash-layout").status_code == 200
    out = client.post("/logout", data={"csrf_token": token})
    assert out.status_code == 302 and out.headers["Location"] == "/login"
    assert cookie(client, CSRF_COOKIE) is None
    assert client.get("/_dash-layout").status_code == 401
    assert cookie(client, CSRF_COOKIE) != token  # a new session, a new token


def test_sign_in_form_needs_its_csrf_token(users_app):
    client = users_app.server.test_client()
    login_token(client)
    refused = sign_in(client, "olivia", token="forged")
    assert refused.status_code == 403
    assert client.get("/_dash-layout").status_code == 401


def test_csrf_token_rotates_on_sign_in(users_app):
    client = users_app.server.test_client()
    planted = login_token(client)
    sign_in(client, "olivia", token=planted)
    assert cookie(client, CSRF_COOKIE) not in (None, planted)


def test_dash_callbacks_need_the_csrf_token(users_app):
    client = users_app.server.test_client()
    client.get("/login")
    assert dash_post(client).status_code == 403  # before sign-in: refused outright
    sign_in(client, "olivia")
    token = cookie(client, CSRF_COOKIE)
    refused = dash_post(client)
    assert refused.status_code == 403
    assert "CSRF token" in refused.get_json()["error"]
    assert dash_post(client, "not-the-token").status_code == 403
    ok = dash_post(client, token)
    assert ok.status_code == 200
    assert ok.get_json()["response"]["cluster-picker"]["value"] == "a"


def test_another_session_token_is_refused(users_app):
    one, two = users_app.server.test_client(), users_app.server.test_client()
    sign_in(one, "olivia")
    sign_in(two, "adam")
    assert dash_post(two, cookie(one, CSRF_COOKIE)).status_code == 403


def test_next_never_leaves_the_server(users_app):
    client = users_app.server.test_client()
    for target in ("//evil.example/x", "https://evil.example/", "javascript:alert(1)"):
        token = login_token(client)
        answer = client.post("/login", data={"username": "adam", "password": "a-secret",
                                             "csrf_token": token, "next": target})
        assert answer.headers["Location"] == "/"


def test_trusted_header_only_from_the_proxy(tmp_path):
    app = make_app(tmp_path, {"trusted_header": {"from": ["127.0.0.1"]},
                              "secret_key_file": str(tmp_path / "key")})
    client = app.server.test_client()
    sso = {"X-Forwarded-User": "sam", "X-Forwarded-Role": "approver"}
    layout = client.get("/_dash-layout", headers=sso)
    assert layout.status_code == 200 and '"sam"' in layout.get_data(as_text=True)
    elsewhere = {"REMOTE_ADDR": "10.1.2.3"}
    assert client.get("/_dash-layout", headers=sso, environ_base=elsewhere).status_code == 401
    assert client.get("/", headers=sso, environ_base=elsewhere).status_code == 401
    assert client.get("/_dash-layout", headers={**sso, "X-Forwarded-Role": "root"}) \
        .status_code == 401
    assert client.get("/_dash-layout").status_code == 401  # the proxy named nobody
    client.get("/", headers=sso)  # the session's CSRF token, as the browser gets it
    assert dash_post(client).status_code == 403  # CSRF is checked behind the proxy too
    unnamed = dash_post(client, cookie(client, CSRF_COOKIE))
    assert unnamed.status_code == 401  # the POST itself does not name the user: refused
    headers = {**sso, auth.CSRF_HEADER: cookie(client, CSRF_COOKIE)}
    assert client.post("/_dash-update-component", json=CALLBACK, headers=headers) \
        .status_code == 200


def test_password_guessing_waits(users_app):
    client = users_app.server.test_client()
    for _ in range(FAILURES_ALLOWED):
        assert sign_in(client, "olivia", "guess").status_code == 401
    refused = sign_in(client, "olivia")  # the right password waits too, now
    assert refused.status_code == 429
    assert "Too many failed sign-ins from your address" in refused.get_data(as_text=True)
    assert 0 < int(refused.headers["Retry-After"]) <= FAILURE_WINDOW + 1
    token = base64.b64encode(b"olivia:o-secret").decode()
    api = client.get("/api/v1/plans", headers={"Authorization": f"Basic {token}"})
    assert api.status_code == 429 and api.get_json()["error"].startswith(
        "too many failed sign-ins from your address")


def test_sign_ins_sign_outs_and_wrong_passwords_are_in_the_audit_log(users_app, caplog):
    """Who signed in, from where and when, is what an incident review asks first: each
    sign-in, sign-out and wrong password is an audit row (a wrong password's name only
    when a user has it: a password typed into the name field is not kept), and the one
    failure that makes the address wait says so. Nothing of a password is written."""
    from sqlalchemy import select

    from backend.store.schema import audit
    from dashboard import runtime

    client = users_app.server.test_client()
    caplog.set_level(logging.WARNING, logger="dashboard.auth")
    sign_in(client, "olivia", "guess")
    sign_in(client, "o-secret-typed-as-a-name", "x")
    sign_in(client, "olivia")
    client.post("/logout", data={"csrf_token": cookie(client, CSRF_COOKIE)})
    wrong = base64.b64encode(b"adam:nope").decode()
    for _ in range(FAILURES_ALLOWED - 2):
        client.get("/api/v1/plans", headers={"Authorization": f"Basic {wrong}"})
    with runtime.current().plan_store().read() as conn:
        rows = [(r.user, r.action, r.address, r.detail) for r in conn.execute(
            select(audit.c.user, audit.c.action, audit.c.address, audit.c.detail)
            .order_by(audit.c.id))]
    page = {"via": "sign-in page", "locked_out": False}
    api = {"via": "api", "locked_out": False}
    assert rows == [("olivia", "sign_in_failed", "127.0.0.1", page),
                    (auth.UNKNOWN_USER, "sign_in_failed", "127.0.0.1", page),
                    ("olivia", "sign_in", "127.0.0.1", None),
                    ("olivia", "sign_out", "127.0.0.1", None),
                    *[("adam", "sign_in_failed", "127.0.0.1", api)] * 7,
                    ("adam", "sign_in_failed", "127.0.0.1", {**api, "locked_out": True})]
    assert "o-secret" not in str(rows) + caplog.text and "nope" not in caplog.text
    assert "failed sign-in as adam from 127.0.0.1 via api: it waits now" in caplog.text


def test_no_page_can_be_framed_by_another_site(users_app):
    """Clickjacking: a decoy page framing Railyard's Approve button. Every answer, the
    sign-in page, the app, assets, refusals and the API alike, forbids framing."""
    client = users_app.server.test_client()
    for answer in (client.get("/login"), client.get("/"), client.get("/assets/railyard.css"),
                   client.get("/_dash-layout"), client.get("/api/v1/plans")):
        assert answer.headers["Content-Security-Policy"] == "frame-ancestors 'none'"
        assert answer.headers["X-Frame-Options"] == "DENY"
        assert answer.headers["X-Content-Type-Options"] == "nosniff"
        assert answer.headers["Referrer-Policy"] == "same-origin"


def test_pages_and_answers_are_not_kept_by_the_browser(users_app):
    """Back after sign-out showed the audit page from the browser's cache, as the user who
    had signed out. Pages, callback answers and the API say no-store; assets keep theirs."""
    client = users_app.server.test_client()
    assert sign_in(client, "olivia").status_code == 302
    token = cookie(client, users_app.server.config["RAILYARD_CSRF_COOKIE"])
    for answer in (client.get("/login"), client.get("/audit"), client.get("/_dash-layout"),
                   dash_post(client, token), client.get("/api/v1/plans")):
        assert answer.headers["Cache-Control"] == "no-store", answer.request.path
    assert "no-store" not in client.get("/assets/railyard.css").headers["Cache-Control"]


def test_addresses_whose_failures_aged_out_are_dropped():
    """Guesses from ever new addresses (IPv6 gives an attacker plenty) once grew the map
    for good: aged-out addresses go whenever it doubles."""
    now = [0.0]
    failures = FailedSignIns(clock=lambda: now[0])
    for i in range(10 * PRUNE_FROM):
        failures.failed(f"2001:db8::{i:x}")
        now[0] += FAILURE_WINDOW / PRUNE_FROM  # a window holds PRUNE_FROM of them
    assert len(failures) <= 2 * PRUNE_FROM + 1
    assert failures.wait("2001:db8::0") == 0


def test_failed_sign_ins_age_out_per_address():
    now = [1000.0]
    failures = FailedSignIns(clock=lambda: now[0])
    for _ in range(FAILURES_ALLOWED):
        assert failures.wait("10.0.0.1") == 0
        failures.failed("10.0.0.1")
        now[0] += 1
    assert failures.wait("10.0.0.1") == FAILURE_WINDOW - FAILURES_ALLOWED
    assert failures.wait("10.0.0.2") == 0  # another address is not held up
    now[0] = 1000.0 + FAILURE_WINDOW  # the oldest failure ages out
    assert failures.wait("10.0.0.1") == 0


def test_the_api_never_takes_the_browser_session(users_app):
    client = users_app.server.test_client()
    sign_in(client, "olivia")
    token = cookie(client, CSRF_COOKIE)
    assert client.get("/api/v1/plans").status_code == 401
    assert client.post("/api/v1/plans", json={}, headers={auth.CSRF_HEADER: token}) \
        .status_code == 401


def test_the_api_trusts_the_proxy_only_from_its_address(tmp_path):
    app = make_app(tmp_path, {"trusted_header": {"from": ["127.0.0.0/8"]},
                              "secret_key_file": str(tmp_path / "key")})
    client = app.server.test_client()
    sso = {"X-Forwarded-User": "sam", "X-Forwarded-Role": "viewer"}
    assert client.get("/api/v1/plans", headers=sso).get_json() == {"plans": []}
    elsewhere = client.get("/api/v1/plans", headers=sso, environ_base={"REMOTE_ADDR": "10.1.2.3"})
    assert elsewhere.status_code == 401 and "WWW-Authenticate" not in elsewhere.headers
    assert client.get("/api/v1/plans").status_code == 401


def test_auth_none_only_on_loopback(tmp_path):
    with pytest.raises(BadInput) as e:
        make_app(tmp_path, "none", host="0.0.0.0")
    assert str(e.value) == ("cfg: auth: none is allowed only when server.host is 127.0.0.1 "
                            "(got 0.0.0.0); list users or a trusted_header")
    with pytest.raises(BadInput, match="auth: none is allowed only"):
        make_app(tmp_path, None, host="10.0.0.1")  # no auth key means none
    app = make_app(tmp_path, None)
    layout = app.server.test_client().get("/_dash-layout").get_data(as_text=True)
    assert "Authentication is off (auth: none)" in layout and '"local"' in layout
    assert app.server.test_client().get("/api/v1/plans").get_json() == {"plans": []}
    assert not (tmp_path / "key").exists()


def test_auth_none_answers_only_requests_addressed_to_loopback(tmp_path, caplog):
    """DNS rebinding: a page at evil.example, its name re-pointed at 127.0.0.1, reaches
    the server in its own origin (the CSRF cookie and the API's JSON rule are then its
    own too); under auth: none everyone is admin, so the Host must be loopback's."""
    client = make_app(tmp_path, None).server.test_client()
    for host in ("127.0.0.1:8050", "localhost:8050", "[::1]:8050", "localhost"):
        assert client.get("/api/v1/plans", headers={"Host": host}).status_code == 200, host
    caplog.set_level(logging.WARNING, logger="dashboard.auth")
    for path in ("/api/v1/plans", "/_dash-layout", "/"):
        refused = client.get(path, headers={"Host": "evil.example:8050"})
        assert refused.status_code == 403, path
    assert refused.get_data(as_text=True).count("Refused: with auth: none Railyard answers "
                                                "only requests addressed to 127.0.0.1") == 1
    posted = client.post("/api/v1/plans", json={}, headers={"Host": "evil.example"})
    assert posted.status_code == 403 and posted.get_json() == {
        "error": "Refused: with auth: none Railyard answers only requests addressed to "
                 "127.0.0.1 or localhost."}
    assert "Host 'evil.example' is no loopback name (auth: none)" in caplog.text


@pytest.mark.parametrize(("doc", "message"), [
    ({"users": [{"name": "a", "role": "operator", "password_hash": "hunter2"}]},
     "cfg: auth.users[0].password_hash: expected a hash from `railyard auth hash-password`"),
    ({"users": [{"name": "a", "role": "root", "password_hash": USERS[0]["password_hash"]}]},
     "cfg: auth.users[0].role: expected one of viewer, operator, approver, admin, got 'root'"),
    ({"users": [USERS[0], USERS[0]]}, "cfg: auth.users: the name 'olivia' is used twice"),
    ({"users": [{**USERS[0], "name": "a:b"}]}, "cfg: auth.users[0].name: no colons"),
    ({"users": USERS, "trusted_header": {}}, "cfg: auth.users: give either users or"),
    ({"trusted_header": {"from": ["proxy"]}},
     "cfg: auth.trusted_header.from: 'proxy' is not an IP address or network"),
    ({"user": []}, "cfg: auth.user: unknown key"),
])
def test_auth_config_errors_are_one_line(doc, message):
    with pytest.raises(BadInput) as e:
        parse_config({"clusters": [CLUSTER], "auth": doc}, "cfg")
    assert str(e.value).startswith(message)


def test_secret_key_is_created_private_kept_and_never_logged(tmp_path, caplog, monkeypatch):
    monkeypatch.delenv(auth.SECRET_ENV, raising=False)
    settings = parse_config({"clusters": [CLUSTER], "auth": {
        "users": USERS, "secret_key_file": str(tmp_path / "var" / "key")}}, "cfg").auth
    with caplog.at_level(logging.DEBUG):
        key = auth.secret_key(settings)
    path = tmp_path / "var" / "key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and len(key) == 64
    assert auth.secret_key(settings) == key
    assert key not in caplog.text
    monkeypatch.setenv(auth.SECRET_ENV, "from-the-environment")
    assert auth.secret_key(settings) == "from-the-environment"


def test_hash_password_cli(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO("correct horse\n"))
    assert cli(["auth", "hash-password"]) == 0
    digest = json.loads(capsys.readouterr().out)["password_hash"]
    assert digest.startswith("scrypt:") and check_password_hash(digest, "correct horse")
    assert "correct horse" not in digest
    monkeypatch.setattr("sys.stdin", io.StringIO("\n"))
    assert cli(["auth", "hash-password"]) == 2
    assert capsys.readouterr().err == ("railyard auth: error: stdin: empty password (give one "
                                       "line with the password)\n")


@pytest.mark.parametrize("errors", ["surrogateescape", "strict"])
def test_hash_password_refuses_bytes_that_are_not_utf8(monkeypatch, capsys, errors):
    """Non-UTF-8 bytes on stdin were a UnicodeEncodeError traceback."""
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"\xff\xfepassword\n"),
                                                      encoding="utf-8", errors=errors))
    assert cli(["auth", "hash-password"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == ("railyard auth: error: stdin: the password is not UTF-8 "
                                 "text (give one line with the password)\n")


def test_hash_password_refuses_a_password_shorter_than_8_characters(monkeypatch, capsys):
    """A 1-character password was hashed; 8 characters is the least (NIST SP 800-63B)."""
    for short, n in (("a", "1 character"), ("seven77", "7 characters")):
        monkeypatch.setattr("sys.stdin", io.StringIO(f"{short}\n"))
        assert cli(["auth", "hash-password"]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err == (f"railyard auth: error: stdin: the password has {n}, "
                                     f"fewer than the 8 required\n")
    monkeypatch.setattr("sys.stdin", io.StringIO("éight888\n"))  # characters, not bytes
    assert cli(["auth", "hash-password"]) == 0
    digest = json.loads(capsys.readouterr().out)["password_hash"]
    assert check_password_hash(digest, "éight888")


def test_demo_users_are_generated_once_and_private(tmp_path):
    from dashboard.demo_stack import DEMO_USERS, demo_users

    users = demo_users(tmp_path)
    assert [(n, r) for n, (r, _) in users.items()] == list(DEMO_USERS)
    assert {r for r, _ in users.values()} == {"operator", "approver", "admin"}
    assert demo_users(tmp_path) == users
    assert stat.S_IMODE(os.stat(tmp_path / "demo-users.json").st_mode) == 0o600
    # a home from before the admin existed keeps its users and gains the admin
    older = {n: v for n, v in users.items() if v[0] != "admin"}
    (tmp_path / "demo-users.json").write_text(json.dumps(older))
    again = demo_users(tmp_path)
    assert {n: v for n, v in again.items() if n in older} == older
    assert [r for r, _ in again.values()].count("admin") == 1


def test_verified_passwords_are_remembered_briefly_and_not_past_a_new_password(monkeypatch):
    """Basic credentials on every API request pay the password hash once, not per
    request; past VERIFIED_SECONDS, or once the config holds a new hash, it is checked
    again (and the old password is refused)."""
    from dashboard.config import AuthSettings, User

    checks = []
    real = auth.check_password_hash
    monkeypatch.setattr(auth, "check_password_hash",
                        lambda h, p: checks.append(p) or real(h, p))
    old = User("tess", "approver", generate_password_hash("first", "pbkdf2:sha256:1000"))
    settings = AuthSettings("users", (old,))
    assert [auth.check_password(settings, "tess", "first") for _ in range(3)] == \
        ["approver"] * 3
    assert len(checks) == 1
    assert auth.check_password(settings, "tess", "wrong") is None and len(checks) == 2
    monkeypatch.setattr(auth, "VERIFIED_SECONDS", 0.0)
    assert auth.check_password(settings, "tess", "first") == "approver" and len(checks) == 3
    monkeypatch.undo()
    monkeypatch.setattr(auth, "check_password_hash",
                        lambda h, p: checks.append(p) or real(h, p))
    renewed = AuthSettings("users", (User("tess", "approver", generate_password_hash(
        "second", "pbkdf2:sha256:1000")),))
    assert auth.check_password(renewed, "tess", "first") is None
    assert auth.check_password(renewed, "tess", "second") == "approver"
