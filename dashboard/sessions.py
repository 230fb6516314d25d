"""Browser sessions: the cookie carries a random id and nothing else.

Before sign-in the id only keys the CSRF token (an HMAC of the id under the server's
secret key, so every worker process derives the same token and nothing is stored).
Signing in issues a new id and a row in the store (backend/store/sessions.py); every
request looks that row up, so sign-out, a password change (the row remembers which
password_hash it signed in with) or `railyard auth revoke` ends the session on every
worker at once. A session also ends ``auth.idle_minutes`` after its last use and
``auth.session_hours`` after sign-in.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from dataclasses import replace

import flask
from flask import Flask, request
from flask.sessions import SessionInterface, SessionMixin

from backend.store import sessions as stored
from dashboard import proxy, runtime
from dashboard.config import AuthSettings, User

ID_PATTERN = re.compile(r"[A-Za-z0-9_-]{43}")  # secrets.token_urlsafe(32)
TOUCH_SECONDS = 60.0  # a session's last use is written at most this often
clock = time.time  # epoch seconds (tests move it)


class BrowserSession(dict, SessionMixin):
    """The request's session: its id, whether the browser must be sent the cookie, and
    the signed-in user once looked up (``looked_up``)."""

    def __init__(self, session_id: str | None = None) -> None:
        super().__init__()
        self.fresh = session_id is None
        self.session_id = session_id or secrets.token_urlsafe(32)
        self.user: User | None = None
        self.looked_up = self.fresh  # a new id has no row to look up

    def renew(self) -> None:
        """A new id for this browser (at sign-in and sign-out: nothing carries over)."""
        self.session_id, self.fresh = secrets.token_urlsafe(32), True
        self.user, self.looked_up = None, True


class ServerSessions(SessionInterface):
    """Flask's session interface over BrowserSession. The API authenticates every request
    itself and never reads nor sets the cookie."""

    def __init__(self, is_api) -> None:
        self.is_api = is_api

    def open_session(self, app: Flask, request: flask.Request) -> BrowserSession:
        sent = request.cookies.get(self.get_cookie_name(app), "")
        return BrowserSession(sent if ID_PATTERN.fullmatch(sent) else None)

    def save_session(self, app: Flask, session: BrowserSession,
                     response: flask.Response) -> None:
        if not session.fresh or self.is_api(request.path):
            return
        auth: AuthSettings = app.extensions["railyard.auth"]
        response.set_cookie(self.get_cookie_name(app), session.session_id,
                            max_age=int(auth.session_hours * 3600), path="/",
                            httponly=True, samesite="Lax", secure=cookie_secure(auth))


def cookie_secure(auth: AuthSettings) -> bool:
    """auth.cookie_secure: true, false, or auto (when the browser came over https)."""
    if auth.cookie_secure == "auto":
        return proxy.is_https(auth)
    return bool(auth.cookie_secure)


def csrf_token() -> str:
    """The session's CSRF token: an HMAC of its id, the same in every worker process."""
    key = flask.current_app.secret_key.encode()
    return hmac.new(key, b"csrf\0" + _session().session_id.encode(),
                    hashlib.sha256).hexdigest()


def signed_in(auth: AuthSettings) -> User | None:
    """The user this browser's session is signed in as (None: nobody), ending the session
    when it went idle, outlived session_hours, or its user's password or name changed."""
    session = _session()
    if not session.looked_up:  # a lookup the store failed (Unavailable) is asked again:
        # kept as "nobody", it sent the request on to the sign-in page instead of a 503
        session.user, session.looked_up = _look_up(auth, session.session_id), True
    return session.user


def _look_up(auth: AuthSettings, session_id: str) -> User | None:
    lookups, now = _lookups(), clock()
    row = lookups.lookup(session_id)
    if row is not None and _idle(auth, row, now):  # kept here: another process used it since?
        row = lookups.lookup(session_id, fresh=True)
    if row is None:
        return None
    user = auth.user(row.user)
    if user is None or row.password_mark != password_mark(user) or _idle(auth, row, now) \
            or now - row.created_at > auth.session_hours * 3600:
        stored.end(lookups.store, session_id)
        return None
    if now - row.seen_at > TOUCH_SECONDS:
        stored.touch(lookups.store, session_id, now)
        lookups.touched(session_id, replace(row, seen_at=now))
    return user


def _idle(auth: AuthSettings, row: stored.SessionRow, now: float) -> bool:
    return now - row.seen_at > auth.idle_minutes * 60


def _lookups() -> stored.Lookups:
    """This process's kept session rows, for the store it uses now."""
    store, extensions = runtime.current().plan_store(), flask.current_app.extensions
    kept = extensions.get("railyard.sessions")
    if kept is None or kept.store is not store:
        kept = extensions["railyard.sessions"] = stored.Lookups(store)
    return kept


def sign_in(auth: AuthSettings, user: User) -> None:
    """A new session, signed in as ``user`` (a fresh id: none planted before survives)."""
    session = _session()
    session.renew()
    stored.create(runtime.current().plan_store(), session.session_id, user.name,
                  password_mark(user), proxy.client_address(auth), clock(),
                  auth.idle_minutes * 60)
    session.user = user


def sign_out(auth: AuthSettings) -> None:
    """End this browser's session on the server, audited; it continues on a new,
    anonymous id."""
    session = _session()
    if not session.fresh:
        stored.sign_out(runtime.current().plan_store(), session.session_id,
                        proxy.client_address(auth), clock())
    session.renew()


def sign_in_failed(auth: AuthSettings, user: str, *, via: str, locked_out: bool) -> None:
    """A wrong password from this request's address, in the audit log."""
    stored.sign_in_failed(runtime.current().plan_store(), user, proxy.client_address(auth),
                          clock(), via=via, locked_out=locked_out)


def password_mark(user: User) -> str:
    """Which password a session signed in with (a digest of its password_hash): a new
    password_hash in the config ends the sessions signed in with the old one."""
    return hashlib.sha256(user.password_hash.encode()).hexdigest()


def _session() -> BrowserSession:
    return flask.session._get_current_object()  # type: ignore[attr-defined]
