"""Who is signed in, shown in the frame of every page, with a sign-out button."""

from __future__ import annotations

import flask
from dash import dcc, html

from backend.errors import Unavailable
from dashboard import auth, ids


def _identity() -> auth.Identity | None:
    """Who is signed in; None outside a request (layout validation) and while the plan
    store, which keeps the sessions, does not answer: Dash draws the frame at a worker's
    first request before the sign-in check answers it 503, and a badge raising there made
    it a 500."""
    if not flask.has_request_context():
        return None
    try:
        return auth.current_identity()
    except Unavailable:
        return None


def badge() -> html.Div:
    """The signed-in user and role (empty when nobody can be named: _identity)."""
    who = _identity()
    if who is None:
        return html.Div(id=ids.ACCOUNT, className="account")
    parts = [html.Span(who.name, id=ids.ACCOUNT_USER, className="account-user"),
             html.Span(who.role, id=ids.ACCOUNT_ROLE, className="account-role")]
    if who.mode == "users":
        parts.append(html.Form([
            dcc.Input(type="hidden", name=auth.CSRF_FIELD, value=auth.csrf_token()),
            html.Button("Sign out", type="submit", id=ids.ACCOUNT_SIGN_OUT,
                        className="button account-sign-out"),
        ], method="POST", action="/logout", className="account-form"))
    elif who.mode == "trusted_header":
        parts.append(html.Span("signed in by the proxy", className="account-note"))
    return html.Div(parts, id=ids.ACCOUNT, className="account", title="Signed in as")


def banner() -> html.Div | None:
    """Under auth: none, every page says that nobody signs in."""
    who = _identity()
    if who is None or who.mode != "none":
        return None
    return html.Div("Authentication is off (auth: none): anyone who can reach this address "
                    "on this machine acts as the local admin. Configure auth users or a "
                    "trusted_header before sharing this dashboard.",
                    id=ids.AUTH_BANNER, className="banner banner-warning")
