"""Who is signed in, shown in the frame of every page, with a sign-out button."""

from __future__ import annotations

import flask
from dash import dcc, html

from dashboard import auth, ids


def badge() -> html.Div:
    """The signed-in user and role (empty outside a request, e.g. layout validation)."""
    who = auth.current_identity() if flask.has_request_context() else None
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
    who = auth.current_identity() if flask.has_request_context() else None
    if who is None or who.mode != "none":
        return None
    return html.Div("Authentication is off (auth: none): anyone who can reach this address "
                    "on this machine acts as the local admin. Configure auth users or a "
                    "trusted_header before sharing this dashboard.",
                    id=ids.AUTH_BANNER, className="banner banner-warning")
