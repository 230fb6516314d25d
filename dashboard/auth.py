"""Who is asking, on every request: sign-in, sessions, logout, and CSRF protection.

Three modes (config ``auth:``): ``users`` (a sign-in page and sessions kept on the server
for the browser, dashboard/sessions.py; HTTP Basic for the API), ``trusted_header`` (a
single-sign-on proxy names the user and role, believed only from its listed addresses),
``none`` (loopback only and never through a proxy, everyone is the local admin, and
every page says so). User names are compared as ``config.normal_name`` makes them, in
every mode.

CSRF: every state-changing browser request (the sign-in form, logout, and Dash's callback
POSTs to /_dash-update-component) must carry the session's token. dash-renderer already
sends a cookie (``_csrf_token_<port>`` here) back as the ``X-CSRFToken`` header on its
requests, so the server sets that cookie and compares the header with the token derived
from the session's id (another site can neither read the cookie nor know the id). The
API (/api/v1) is authenticated per request, never by cookie, and takes JSON bodies only.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import ipaddress
import logging
import os
import secrets
import threading
import time
from dataclasses import dataclass
from html import escape
from pathlib import Path
from urllib.parse import urlsplit

import flask
from flask import Flask, g, request
from werkzeug.security import check_password_hash, generate_password_hash

from backend.errors import Unavailable
from backend.store.workflow import Actor
from dashboard import proxy, sessions
from dashboard.config import (
    LOCAL_USER,
    MAX_NAME,
    ROLES,
    UNKNOWN_USER,
    AuthSettings,
    name_refusal,
    normal_name,
)
from dashboard.sign_in_failures import Failures

log = logging.getLogger("railyard.auth")

CSRF_HEADER = "X-CSRFToken"  # what dash-renderer sends the CSRF cookie's value in
CSRF_FIELD = "csrf_token"  # in HTML forms (sign-in, sign-out)
API_ROOT = "/api/v1"  # the API blueprint (dashboard/api.py): it authenticates itself
PUBLIC_PATHS = frozenset({"/login", "/_favicon.ico"})  # exactly these paths, and ...
ASSETS = "/assets/"  # ... the static files under this folder (a missing one is a 404)
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
SECRET_ENV = "RAILYARD_SECRET_KEY"
# headers a reverse proxy adds to what it relays: under auth: none, which makes everyone
# admin, a relayed request may come from anywhere (nginx passes Host: 127.0.0.1 upstream)
PROXY_HEADERS = ("Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto",
                 "X-Real-IP", "Via")
# the API's answer to HTTP Basic credentials checked and wrong, as the sign-in page says it
# (neither the name nor the password is said back: a password typed as the name is kept
# out of answers as out of the audit log); none given stays "credentials required"
WRONG_CREDENTIALS = "wrong user name or password"
BASIC_CHALLENGE = 'Basic realm="Railyard", charset="UTF-8"'
# what a browser is told when the store that keeps the sessions does not answer: its
# error names the database's host, port, user and name, for the server's log only (the
# asker may not be signed in at all)
STORE_DOWN = "Plan store is not answering; try again shortly."
# checked when the user name is unknown, so a wrong name costs as long as a wrong password
_DUMMY_HASH = generate_password_hash(secrets.token_hex(8))
VERIFIED_MAX = 1024  # verified (user, password) pairs remembered, oldest dropped first
VERIFIED_SECONDS = 300.0  # ... and for this long at most: then scrypt checks them again
_VERIFIED_KEY = secrets.token_bytes(32)
# HMAC of the pair -> (the password_hash it matched, when)
_verified: dict[bytes, tuple[str, float]] = {}
_verified_lock = threading.Lock()


def retry_after() -> int:
    """Whole seconds the requesting address must wait before trying a password again."""
    wait = flask.current_app.extensions["railyard.failures"].wait(
        proxy.client_address(settings()))
    return int(wait) + 1 if wait > 0 else 0


def _failed_password(name: str, via: str) -> None:
    """Count a wrong password against the address, and audit it under the user's name
    when a user has it (else UNKNOWN_USER: a password typed into the name field must not
    be kept). A store that does not answer costs the audit row, not the refusal."""
    auth = settings()
    address = proxy.client_address(auth)
    failures = flask.current_app.extensions["railyard.failures"]
    failures.failed(address)
    locked_out = failures.wait(address) > 0
    user = auth.user(name)
    who = user.name if user else UNKNOWN_USER
    log.warning("failed sign-in as %s from %s via %s%s", who, address, via,
                ": it waits now" if locked_out else "")
    try:
        sessions.sign_in_failed(auth, who, via=via, locked_out=locked_out)
    except Unavailable as e:
        log.warning("the failed sign-in is not in the audit log: %s", e)


@dataclass(frozen=True)
class Identity:
    """A signed-in user as the server sees them: name, role and where they connect from."""

    name: str
    role: str
    address: str
    mode: str  # users | trusted_header | none


def settings() -> AuthSettings:
    return flask.current_app.extensions["railyard.auth"]


def session_cookie_name(port: int) -> str:
    """Cookies are per host, not per port: two dashboards on one host keep theirs apart."""
    return f"railyard_session_{port}"


def csrf_cookie_name(port: int) -> str:
    """The cookie dash-renderer reads the CSRF token from (Dash's csrf_token_name)."""
    return f"_csrf_token_{port}"


def is_api(path: str) -> bool:
    """Exactly the API's routes (/api/v1 and below), not every path that starts alike."""
    return path == API_ROOT or path.startswith(API_ROOT + "/")


def is_public(path: str) -> bool:
    """Routes anyone may load: the sign-in page, the favicon and the static assets (a
    file's name after /assets/: the folder itself is Dash's catch-all page, whose
    skeleton names the server's Python and Dash versions)."""
    return path in PUBLIC_PATHS or (path.startswith(ASSETS) and len(path) > len(ASSETS))


def install(server: Flask, auth: AuthSettings, port: int, failures: Failures) -> None:
    """Put sign-in, sessions and CSRF checks in front of every route of ``server``;
    ``failures`` counts wrong passwords per address (sign_in_failures.counter)."""
    server.secret_key = secret_key(auth)
    server.config.update(SESSION_COOKIE_NAME=session_cookie_name(port),
                         RAILYARD_CSRF_COOKIE=csrf_cookie_name(port))
    server.extensions["railyard.auth"] = auth
    server.extensions["railyard.failures"] = failures
    server.session_interface = sessions.ServerSessions(is_api)
    server.before_request(_gate)
    server.after_request(_csrf_cookie)
    server.after_request(_security_headers)
    server.add_url_rule("/login", "login", _login, methods=["GET", "POST"])
    server.add_url_rule("/logout", "logout", _logout, methods=["POST"])


def secret_key(auth: AuthSettings) -> str:
    """RAILYARD_SECRET_KEY, else the key file, created (mode 0600) on first start. It keys
    the CSRF tokens (sessions themselves live on the server); under auth: none, which
    keeps no sessions, a key per process does."""
    if os.environ.get(SECRET_ENV):
        return os.environ[SECRET_ENV]
    if auth.mode == "none":
        return secrets.token_hex(32)
    path = Path(auth.secret_key_file)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text(encoding="utf-8").strip()
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(secrets.token_hex(32))
    log.info("created a CSRF signing key in %s", path)
    return path.read_text(encoding="utf-8").strip()


def current_identity() -> Identity | None:
    """Who sent the current request (None: nobody signed in)."""
    if "identity" not in g:
        g.identity = identify_api() if is_api(request.path) else _identify_browser()
    return g.identity


def require_identity() -> Identity:
    """The signed-in user; PermissionError when nobody is (a callback after sign-out)."""
    who = current_identity()
    if who is None:
        raise PermissionError("sign in first")
    return who


def current_actor() -> Actor:
    """Who is asking, as the plan services take it (PermissionError when nobody is)."""
    who = require_identity()
    return Actor(who.name, who.role, who.address)


def csrf_token() -> str:
    """The session's CSRF token (it changes with the session's id)."""
    return sessions.csrf_token()


def check_password(auth: AuthSettings, name: str, password: str) -> str | None:
    """The user's role if the password matches, else None (same cost for unknown names).
    A pair once verified is remembered by an HMAC under a per-process key (never the
    password) for VERIFIED_SECONDS, so API clients sending Basic credentials on every
    request pay scrypt once in a while, not per request (at 20 clients, scrypt per request
    would be the whole latency). A changed password_hash in the config (a new password)
    no longer matches what was remembered."""
    user = auth.user(name)
    mark = hmac.new(_VERIFIED_KEY, f"{name}\0{password}".encode(), "sha256").digest()
    now = time.monotonic()
    seen = _verified.get(mark)
    if user is not None and seen is not None and now - seen[1] < VERIFIED_SECONDS \
            and hmac.compare_digest(seen[0], user.password_hash):
        return user.role
    ok = check_password_hash(user.password_hash if user else _DUMMY_HASH, password)
    if not (ok and user):
        return None
    with _verified_lock:
        _verified.pop(mark, None)  # re-inserted newest, so the oldest go first
        if len(_verified) >= VERIFIED_MAX:
            _verified.pop(next(iter(_verified)))
        _verified[mark] = (user.password_hash, now)
    return user.role


def identify_api() -> Identity | None:
    """The API's caller: HTTP Basic (users), the proxy's headers, or the local admin."""
    auth = settings()
    if auth.mode != "users":
        return _identify_without_password(auth)
    header = request.headers.get("Authorization", "")
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        name, sep, password = base64.b64decode(encoded, validate=True).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    if not sep or retry_after():
        return None
    role = check_password(auth, name, password)
    if role is None:
        _failed_password(name, "api")
        g.credentials_wrong = True  # the gate says so (_wrong_credentials)
        return None
    return Identity(normal_name(name), role, proxy.client_address(auth), "users")


def _identify_browser() -> Identity | None:
    auth = settings()
    if auth.mode != "users":
        return _identify_without_password(auth)
    user = sessions.signed_in(auth)  # None too for a user removed from the config
    return Identity(user.name, user.role, proxy.client_address(auth), "users") \
        if user else None


def _identify_without_password(auth: AuthSettings) -> Identity | None:
    if auth.mode == "none":
        return Identity(LOCAL_USER, "admin", request.remote_addr or "", "none")
    header = auth.trusted_header
    if not proxy.in_networks(request.remote_addr or "", header.trusted_from):
        return None
    name = normal_name(request.headers.get(header.user, ""))
    role = request.headers.get(header.role, "").strip().lower()
    if not name or len(name) > MAX_NAME or role not in ROLES:
        return None
    refused = name_refusal(name)
    if refused is not None:
        log.warning("refused %s %s from %s: the proxy named the user %r: %s", request.method,
                    request.path, request.remote_addr, name, refused)
        g.name_refused = refused  # the gate answers 403 saying so (_refused_name)
        return None
    return Identity(name, role, proxy.client_address(auth), "trusted_header")


def _gate() -> flask.Response | tuple | None:
    """Before every request: CSRF on state changes, then sign-in for everything private
    (503 when the store that keeps the sessions does not answer: the cause in the log)."""
    try:
        return _gate_request(request.path)
    except Unavailable as e:
        log.warning("refused %s %s: %s", request.method, request.path, e)
        return _refusal(503, f"Cannot check your session: {STORE_DOWN}")


def _gate_request(path: str) -> flask.Response | tuple | None:
    if settings().mode == "none":
        refused = _not_local(path)
        if refused is not None:
            return refused
    if is_api(path):
        # the API authenticates each request itself (dashboard/api.py: "credentials
        # required" when none came); credentials given and wrong are answered here
        return _wrong_credentials() or _refused_name()
    if request.method in UNSAFE_METHODS and not _csrf_ok():
        log.warning("refused %s %s from %s: missing or wrong CSRF token", request.method,
                    path, request.remote_addr)
        return _refusal(403, "Refused: the request did not carry this session's CSRF token. "
                             "Reload the page and try again.")
    if is_public(path) or current_identity() is not None:
        return None
    refused = _refused_name()
    if refused is not None:
        return refused
    if request.method == "GET" and not path.startswith("/_dash"):
        if settings().mode == "trusted_header":
            return _refusal(401, "Not signed in: this dashboard is signed into through the "
                                 "single-sign-on proxy in front of it.")
        return flask.redirect(flask.url_for("login", next=request.full_path.rstrip("?")))
    return _refusal(401, "Not signed in (the session ended): reload the page to sign in.")


def _not_local(path: str) -> tuple | None:
    """Under auth: none, which makes everyone admin, the 403 for a request that did not
    come straight from this machine's browser; None for one that did."""
    if not _addressed_to_loopback(request.host):
        # DNS rebinding: a page on another site, its name re-pointed at 127.0.0.1, would
        # otherwise reach a server that makes everyone admin, in its own origin
        log.warning("refused %s %s from %s: Host %r is no loopback name (auth: none)",
                    request.method, path, request.remote_addr, request.host)
        return _refusal(403, "Refused: with auth: none Railyard answers only requests "
                             "addressed to 127.0.0.1 or localhost.")
    relayed = next((h for h in PROXY_HEADERS if h in request.headers), None)
    if relayed is not None:
        # a proxy on this machine connects from loopback and (nginx's default) passes
        # Host: 127.0.0.1 on: the client behind it may be anywhere
        log.warning("refused %s %s from %s: it carries %s, so a proxy relayed it "
                    "(auth: none)", request.method, path, request.remote_addr, relayed)
        return _refusal(403, f"Refused: auth: none serves only this machine's browser, and "
                             f"this request came through a proxy ({relayed}); configure "
                             f"auth users or trusted_header to serve through one.")
    return None


def _wrong_credentials() -> tuple | None:
    """The API's 401 for HTTP Basic credentials that were checked and are wrong; None for
    any other request, and when this failure made the address wait (the API says how
    long, 429)."""
    if settings().mode != "users" or current_identity() is not None \
            or not g.get("credentials_wrong") or retry_after():
        return None
    return flask.jsonify(error=WRONG_CREDENTIALS), 401, {"WWW-Authenticate": BASIC_CHALLENGE}


def _refused_name() -> tuple | None:
    """The 403 for a user the single-sign-on proxy named but Railyard does not take
    (config.name_refusal says why); None for any other request."""
    why = g.get("name_refused") if current_identity() is None else None
    if why is None:
        return None
    return _refusal(403, f"Refused: the single-sign-on proxy named a user Railyard does "
                         f"not take: {why}.")


def _addressed_to_loopback(host: str) -> bool:
    """The request's Host (port aside) is localhost or a loopback address."""
    if host.startswith("["):  # [::1]:8050
        name = host[1:].partition("]")[0]
    elif host.count(":") == 1:  # 127.0.0.1:8050, localhost:8050
        name = host.rpartition(":")[0]
    else:  # no port, or a bare IPv6 address
        name = host
    if name.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _csrf_ok() -> bool:
    sent = request.headers.get(CSRF_HEADER) or request.form.get(CSRF_FIELD, "")
    return bool(sent) and hmac.compare_digest(str(sent), csrf_token())


def _csrf_cookie(response: flask.Response) -> flask.Response:
    """Hand the session's token to dash-renderer, which sends it back as X-CSRFToken."""
    if is_api(request.path) or request.endpoint == "logout":
        return response
    token, name = csrf_token(), flask.current_app.config["RAILYARD_CSRF_COOKIE"]
    if request.cookies.get(name) != token:
        response.set_cookie(name, token, samesite="Strict", httponly=False,
                            secure=sessions.cookie_secure(settings()))
    return response


# no page of Railyard inside another site's frame (clickjacking an Approve under a decoy),
# no content sniffed as another type, no Railyard URL sent to another site as a referrer
SECURITY_HEADERS = {"Content-Security-Policy": "frame-ancestors 'none'",
                    "X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff",
                    "Referrer-Policy": "same-origin"}


def _security_headers(response: flask.Response) -> flask.Response:
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    # pages, callback answers and the API are not kept by the browser: Back after sign-out
    # showed the last signed-in page from its cache. Assets keep the caching they were sent
    # with (Dash's fingerprinted bundles for a year, /assets revalidated)
    response.headers.setdefault("Cache-Control", "no-store")
    return response


def _refusal(status: int, message: str) -> tuple:
    if request.accept_mimetypes.best == "text/html":
        return _page("Railyard", f'<p class="banner banner-error">{escape(message)}</p>'), status
    return flask.jsonify(error=message), status


def _safe_next(target: str | None) -> str:
    """Only a path on this server (never //elsewhere or a full URL)."""
    if not target:
        return "/"
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//"):
        return "/"
    return target


def _login():
    auth = settings()
    if auth.mode != "users":
        return flask.redirect("/")
    target = _safe_next(request.values.get("next"))
    if request.method == "GET":
        return _login_page(target, "")
    wait = retry_after()
    if wait:
        return _login_page(target, f"Too many failed sign-ins from your address: try again "
                                   f"in {wait} s."), 429, {"Retry-After": str(wait)}
    name, password = request.form.get("username", ""), request.form.get("password", "")
    role = check_password(auth, name, password)
    if role is None:
        _failed_password(name, "sign-in page")
        return _login_page(target, "Wrong user name or password.", name), 401
    user = auth.user(name)
    try:
        sessions.sign_in(auth, user)  # a new session id: none planted before sign-in survives
    except Unavailable as e:
        log.warning("%s could not sign in: %s", user.name, e)
        return _login_page(target, f"Cannot sign in now: {STORE_DOWN}"), 503
    log.info("%s (%s) signed in from %s", user.name, role, proxy.client_address(auth))
    return flask.redirect(target)


def _logout():
    who = current_identity()
    if settings().mode == "users":
        sessions.sign_out(settings())
    if who is not None:
        log.info("%s signed out", who.name)
    response = flask.redirect(flask.url_for("login") if settings().mode == "users" else "/")
    response.delete_cookie(flask.current_app.config["RAILYARD_CSRF_COOKIE"])
    return response


def _login_page(target: str, error: str, name: str = "") -> str:
    """The sign-in form; after a wrong password it keeps the name typed (the page is not
    cached: Cache-Control no-store) and puts the cursor in the password."""
    message = f'<p class="banner banner-error" id="login-error">{escape(error)}</p>' \
        if error else ""
    name = name[:MAX_NAME]
    return _page("Railyard · sign in", f"""
<form method="post" action="/login" class="login-box" id="login-form">
  <h1>Sign in to Railyard</h1>{message}
  <input type="hidden" name="{CSRF_FIELD}" value="{escape(csrf_token())}">
  <input type="hidden" name="next" value="{escape(target)}">
  <label class="field-label" for="login-user">User name</label>
  <input id="login-user" name="username" autocomplete="username" required
         value="{escape(name)}"{"" if name else " autofocus"}>
  <label class="field-label" for="login-password">Password</label>
  <input id="login-password" name="password" type="password"
         autocomplete="current-password" required{" autofocus" if name else ""}>
  <button class="button primary" type="submit" id="login-submit">Sign in</button>
</form>""")


def _page(title: str, body: str) -> str:
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}'
            f'</title><link rel="icon" href="/_favicon.ico">'
            f'<link rel="stylesheet" href="/assets/railyard.css"></head><body>'
            f'<header class="topbar"><span class="brand">Railyard</span></header>'
            f'<main class="page">{body}</main></body></html>')
