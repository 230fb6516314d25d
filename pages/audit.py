"""/audit: the append-only log of every plan action (who, when, what, the state before
and after, from where), filterable by plan, user and time, page by page so every row
can be reached (a plan's trail opens at its proposal; the executor's config changes of
each batch fold into one row); and the plans themselves, newest first, each linking to
its own page."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from itertools import groupby

import dash
from dash import ClientsideFunction, Input, Output, State, dcc, html

from backend.errors import BadInput, Unavailable
from backend.services import fields
from backend.services import plans as plan_service
from components import banners, tables, timerange, urlstate
from dashboard import ids, runtime
from dashboard.config import normal_name
from dashboard.plan_views.shared import plans_table

dash.register_page(__name__, path="/audit", name="Audit", title="Railyard · Audit", order=7)

PLANS_LISTED = 50


def layout(plan: str | None = None, user: str | None = None, since: str | None = None,
           **_query) -> html.Div:
    return html.Div([
        html.H1("Plans and audit log"),
        html.Div(id=ids.AU_PLANS),
        html.H3("Audit log"),
        html.P("Every change, newest first, as written (the executor's rows count batches "
               "from 0 in their detail: \"batch\": 0 is the plan page's batch 1). Each "
               "batch's config changes fold into one row that opens to list them.",
               className="hint"),
        html.Div([
            tables.field("Plan", tables.number_input(ids.AU_PLAN, plan)),
            tables.field("User", dcc.Input(id=ids.AU_USER, type="text", value=user)),
            tables.field("Since (UTC)", dcc.Input(id=ids.AU_SINCE, type="text", value=since,
                                            placeholder="2024-05-01T02:00")),
            html.Button("Show", id=ids.AU_APPLY, className="button primary"),
            html.A("Link to this view", id=ids.AU_LINK, className="report-link",
                   href="/audit" + urlstate.build({"plan": plan, "user": user,
                                                   "since": since})),
        ], className="form-row"),
        html.Div(id=ids.AU_ERROR, className="inline-error", role="alert"),
        html.P(id=ids.AU_COUNT, className="hint"),
        html.Div(id=ids.AU_GRID),
        html.Button("Next page", id=ids.AU_NEXT, className="button", hidden=True),
        dcc.Store(id=ids.AU_PAGE),
    ])


@dash.callback(Output(ids.AU_GRID, "children"), Output(ids.AU_ERROR, "children"),
               Output(ids.AU_PLANS, "children"), Output(ids.AU_COUNT, "children"),
               Output(ids.AU_NEXT, "hidden"), Output(ids.AU_PAGE, "data"),
               Input(ids.AU_APPLY, "n_clicks"), Input(ids.AU_NEXT, "n_clicks"),
               State(ids.AU_PLAN, "value"), State(ids.AU_USER, "value"),
               State(ids.AU_SINCE, "value"), State(ids.AU_PAGE, "data"))
def show(_clicks, _next, plan, user, since, page):
    """Show (the first page of what the filters match) or Next page (the same filters,
    on from where the last page ended)."""
    try:
        if dash.ctx.triggered_id == ids.AU_NEXT and page:
            query = page["query"]
        else:
            query, page = _query(plan, user, since), {"shown": 0, "next": None}
        store = runtime.current().plan_store()
        got = plan_service.audit_page(
            store, plan=query["plan"], user=query["user"],
            since=parse_since(query["since"]), after=page["next"],
            newest_first=query["plan"] is None)
        listed = plan_service.list_plans(store, limit=PLANS_LISTED)
    except BadInput as e:  # the error alone: the last result's rows and count would
        return "", str(e), dash.no_update, "", True, None  # pass for this filter's
    except Unavailable as e:
        return "", "", banners.banner(str(e), "error"), "", True, None
    first = page["shown"] + 1
    shown = page["shown"] + len(got.entries)
    order = "newest first" if query["plan"] is None else "oldest first, from the proposal"
    count = f"Rows {first:,} to {shown:,} of {got.total:,} ({order})" if got.entries \
        else ""
    return (audit_table([e.to_dict() for e in got.entries]), "", plans_table(listed), count,
            got.next is None, {"query": query, "shown": shown, "next": got.next})


dash.clientside_callback(  # assets/railyard.js: the filters shown into the address bar
    ClientsideFunction("railyard", "auditUrl"),
    Output(ids.AU_LINK, "href"), Input(ids.AU_PAGE, "data"), prevent_initial_call=True)


def _query(plan, user, since) -> dict:
    """The filters as given, checked (BadInput naming the field)."""
    parse_since(since)
    plan = fields.number(plan, "plan", low=1, limit=plan_service.MAX_PLAN_ID, whole=True)
    return {"plan": plan,  # the user as sign-in records names: 'ADAM ' is adam
            "user": normal_name(user or "") or None, "since": (since or "").strip() or None}


CONFIG_ACTIONS = ("config_set", "config_restored", "config_cleared")
COLUMNS = ("id", "at (UTC)", "user", "action", "plan", "state", "address", "detail")


def audit_table(rows: list[dict]) -> html.Div | str:
    """Audit rows as a table; each run of config changes of one plan's batch is one
    row that opens to list them all."""
    if not rows:
        return "No entries."
    batch_of = _batches(rows)

    def run_of(r: dict) -> tuple:  # config rows of one plan's batch share a key
        return (r["plan_id"], batch_of.get(r["id"])) if r["action"] in CONFIG_ACTIONS \
            else ("row", r["id"])

    body = []
    for key, run in groupby(rows, run_of):
        run = list(run)
        body.append(_row(run[0]) if key[0] == "row" else _config_group(run, key[1]))
    head = html.Tr([html.Th(h) for h in COLUMNS])
    return html.Table([html.Thead(head), html.Tbody(body)], className="plans audit-log")


def _batches(rows: list[dict]) -> dict[int, str]:
    """Row id -> the batch (counted from 1, as the plan page counts) its config change
    was for, as far as the rows given show: a change written while a batch runs is that
    batch's; one written before a batch_started (the executor sets a batch's throttles,
    then starts it) is that next batch's, and one after the plan's last batch ended
    (the configs put back at its end) is "after batch N"."""
    running: dict[int | None, int] = {}  # plan -> the batch in flight
    ended: dict[int | None, int] = {}  # plan -> the batch that ended last
    waiting: dict[int | None, list[int]] = {}  # plan -> changes before its next batch
    out = {}
    for r in sorted(rows, key=lambda r: r["id"]):
        plan, detail = r["plan_id"], r["detail"]
        number = detail.get("batch") if isinstance(detail, dict) else None
        if r["action"] == "batch_started" and isinstance(number, int):
            running[plan] = number + 1
            out.update(dict.fromkeys(waiting.pop(plan, []), f"batch {number + 1}"))
        elif r["action"] == "batch_finished" and plan in running:
            ended[plan] = running.pop(plan)
        elif r["action"] in CONFIG_ACTIONS:
            if plan in running:
                out[r["id"]] = f"batch {running[plan]}"
            else:
                waiting.setdefault(plan, []).append(r["id"])
    for plan, left in waiting.items():
        if plan in ended:
            out.update(dict.fromkeys(left, f"after batch {ended[plan]}"))
    return out


def _row(r: dict) -> html.Tr:
    state = f"{r['before'] or ''} -> {r['after']}" if r["after"] else ""
    return html.Tr([
        html.Td(r["id"]),
        html.Td(r["at"].replace("T", " ")[:19], style={"whiteSpace": "nowrap"}),
        html.Td(r["user"]), html.Td(r["action"]),
        html.Td(dcc.Link(f"#{r['plan_id']}", href=f"/plans/{r['plan_id']}")
                if r["plan_id"] else ""),
        html.Td(state), html.Td(r["address"] or ""),
        html.Td("" if r["detail"] is None else json.dumps(r["detail"]),
                style={"overflowWrap": "anywhere"})])


def _config_group(run: list[dict], batch: str | None) -> html.Tr:
    """One table row standing for a run of config changes; it opens to list each."""
    ids_ = sorted(r["id"] for r in run)
    label = (f"{batch}: " if batch else "") + \
        f"{len(run):,} config change{'s' if len(run) > 1 else ''} (rows {ids_[0]} to " \
        f"{ids_[-1]}), " + ", ".join(sorted({r["action"] for r in run}))
    inner = html.Table(html.Tbody([_row(r) for r in run]), className="plans")
    return html.Tr(html.Td(html.Details([html.Summary(label), inner],
                                        className="config-group"), colSpan=len(COLUMNS)))


def parse_since(text: str | None) -> datetime | None:
    """'2024-05-01T02:00' (UTC unless zoned) -> an aware datetime, read as the time
    control reads a time (timerange.parse_time: 1970 to 9999 UTC, so a year-1 time with a
    +14:00 zone is refused, not an OverflowError); BadInput otherwise."""
    text = (text or "").strip()
    return datetime.fromtimestamp(timerange.parse_time(text, "since"), UTC) if text else None
