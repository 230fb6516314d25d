"""/audit: the append-only log of every plan action (who, when, what, the state before
and after, from where), filterable by plan, user and time; and the plans themselves,
newest first, each linking to its own page."""

from __future__ import annotations

from datetime import UTC, datetime

import dash
from dash import Input, Output, State, dcc, html

from backend.errors import BadInput, Unavailable
from backend.services import plans as plan_service
from components import banners, tables
from dashboard import ids, plan_views, runtime

dash.register_page(__name__, path="/audit", name="Audit", title="Railyard · Audit", order=7)

PLANS_LISTED = 50


def layout(plan: str | None = None, user: str | None = None, since: str | None = None,
           **_query) -> html.Div:
    return html.Div([
        html.H1("Plans and audit log"),
        html.Div(id=ids.AU_PLANS),
        html.H3("Audit log"),
        html.Div([
            tables.field("Plan", dcc.Input(id=ids.AU_PLAN, type="number", min=1, value=plan)),
            tables.field("User", dcc.Input(id=ids.AU_USER, type="text", value=user)),
            tables.field("Since (UTC)", dcc.Input(id=ids.AU_SINCE, type="text", value=since,
                                            placeholder="2024-05-01T02:00")),
            html.Button("Show", id=ids.AU_APPLY, className="button primary"),
        ], className="form-row"),
        html.Div(id=ids.AU_ERROR, className="inline-error", role="alert"),
        html.Div(id=ids.AU_GRID),
    ])


@dash.callback(Output(ids.AU_GRID, "children"), Output(ids.AU_ERROR, "children"),
               Output(ids.AU_PLANS, "children"),
               Input(ids.AU_APPLY, "n_clicks"), State(ids.AU_PLAN, "value"),
               State(ids.AU_USER, "value"), State(ids.AU_SINCE, "value"))
def show(_clicks, plan, user, since):
    try:
        when = parse_since(since)
        if plan not in (None, "") and (not float(plan).is_integer() or int(plan) < 1):
            raise BadInput(f"plan: give a plan number, got {plan}")
        store = runtime.current().plan_store()
        entries = plan_service.audit_entries(store, plan=None if plan in (None, "")
                                             else int(plan), user=(user or "").strip() or None,
                                             since=when)
        listed = plan_service.list_plans(store, limit=PLANS_LISTED)
    except BadInput as e:
        return dash.no_update, str(e), dash.no_update
    except Unavailable as e:
        return "", "", banners.banner(str(e), "error")
    return (plan_views.audit_grid([e.to_dict() for e in entries], grid_id=None), "",
            plans_table(listed))


def plans_table(listed: list) -> html.Div:
    """The newest plans with their state, each a link to its page."""
    if not listed:
        return html.P("No plans yet: preview one on Reassignments or Shrinks and propose "
                      "it.", className="hint")
    head = html.Tr([html.Th(h) for h in ("plan", "kind", "cluster", "title", "author",
                                         "state", "proposed")])
    rows = [html.Tr([html.Td(dcc.Link(f"#{p.id}", href=f"/plans/{p.id}")), html.Td(p.kind),
                     html.Td(p.cluster), html.Td(p.title), html.Td(p.author),
                     html.Td(html.Span(p.state, className=f"state state-{p.state}")),
                     html.Td(p.created_at.strftime("%Y-%m-%d %H:%M UTC"))]) for p in listed]
    return html.Div([html.H3(f"Plans (newest {len(listed)})"),
                     html.Table([html.Thead(head), html.Tbody(rows)], className="plans")],
                    className="panel")


def parse_since(text: str | None) -> datetime | None:
    """'2024-05-01T02:00' (UTC unless zoned) -> an aware datetime; BadInput otherwise."""
    text = (text or "").strip()
    if not text:
        return None
    try:
        t = datetime.fromisoformat(text.replace(" ", "T").replace("Z", "+00:00"))
    except ValueError:
        raise BadInput(f"since: give a date and time like 2024-05-01T02:00, got '{text}'") \
            from None
    return t.replace(tzinfo=UTC) if t.tzinfo is None else t.astimezone(UTC)
