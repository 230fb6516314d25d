"""What every page showing a plan preview shares: the preview blocks with this
dashboard's ids, and the callbacks that page the diff grid from the server and send
Kafka's JSON file. Registered once, when the first page imports this module; they find
the plan by the token the page holds (dashboard.drafts)."""

from __future__ import annotations

import json

import dash
import pandas as pd
from dash import Input, Output, State, dcc, html, no_update

from backend.errors import BadInput, Conflict, Forbidden, NotFound, Unavailable
from backend.services import plan_events, plan_preview
from backend.services import plans as plan_service
from backend.services.cluster import cluster_snapshot
from backend.store.store import Plan
from backend.store.workflow import Actor, may
from components import banners, plans, tables
from components.leftovers import config_table
from components.tables import duration
from dashboard import auth, drafts, ids, runtime

REFUSALS = (BadInput, Conflict, Forbidden, NotFound, Unavailable)


def events_in(cluster: str, start: float, end: float) -> list[dict]:
    """Plan events and execution batches to mark on a monitoring chart; none when the
    plan store does not answer (the chart is still worth showing)."""
    try:
        return plan_events.markers(runtime.current().plan_store(), cluster, start, end)
    except Unavailable:
        return []


def propose_row(who: Actor, title: str) -> html.Div:
    """Title and Propose for those who may propose; for others, why there is none."""
    if may(who, "propose") is not None:
        return html.P(f"Signed in as {who.name} ({who.role}): only operators and admins "
                      "propose plans.", className="hint")
    return html.Div([
        html.Div([html.Label([html.Span("Title", className="field-label"),
                              dcc.Input(id=ids.PLAN_TITLE, type="text", value=title,
                                        className="wide")], className="field"),
                  html.Button("Propose", id=ids.PLAN_PROPOSE, className="button primary")],
                 className="form-row"),
        html.P("Proposing freezes exactly this plan (its sha256); someone else with the "
               "approver role approves it before it can run.", className="hint"),
        html.Div(id=ids.PLAN_PROPOSE_ERROR, className="inline-error", role="alert"),
    ], className="panel")


def audit_grid(rows: list[dict], height: int = 420, grid_id: str | None = None):
    """Audit rows as a grid: when, who, what, the state before and after, from where."""
    if not rows:
        return "No entries."
    frame = pd.DataFrame([{"id": r["id"], "at": r["at"].replace("T", " ")[:19] + " UTC",
                           "user": r["user"], "action": r["action"],
                           "plan": r["plan_id"], "before": r["before"] or "",
                           "after": r["after"] or "", "address": r["address"] or "",
                           "detail": "" if r["detail"] is None else json.dumps(r["detail"])}
                          for r in rows])
    return tables.grid(frame, grid_id, height=height)


def reassignment_block(draft: plan_preview.Draft, head: list | None = None) -> list:
    """Cards, words, before/after bars, the diff grid and the exports of a reassignment;
    ``head`` (Propose, or a stored plan's state and decisions) goes first."""
    p = draft.preview
    return [
        *(head or [html.H2(draft.title, className="plan-title")]),
        html.Div(plans.reassignment_cards(p), id=ids.PLAN_CARDS, className="cards"),
        html.Div(plans.words(p), id=ids.PLAN_WORDS),
        html.Div(plans.bars(p, "Replicas per broker before and after the plan", ids.PLAN_BARS),
                 className="panel"),
        plans.diff_grid(len(draft.table) if draft.table is not None else p["partitions"],
                        ids.PLAN_FILTER, ids.PLAN_GRID_BOX, ids.PLAN_GRID),
        plans.exports(p["throttle"], "plan.json", ids.PLAN_JSON_BUTTON, ids.PLAN_JSON_DOWNLOAD,
                      ids.PLAN_COMMAND),
    ]


def shrink_block(draft: plan_preview.Draft, head: list | None = None) -> list:
    """The preview block of a shrink draft or stored shrink plan; ``head`` (Propose, or a
    stored plan's facts and actions) goes first, instead of the title."""
    p, c = draft.preview, draft.content
    reclaimed = pd.DataFrame([{"broker": b["id"], "replicas before": b["before"],
                               "replicas after": b["after"],
                               "replicas reclaimed": b["replicas_reclaimed"],
                               "log bytes reclaimed": b["bytes_reclaimed"]}
                              for b in p["brokers"]])
    return [
        *(head or [html.H2(draft.title, className="plan-title")]),
        html.Div(plans.shrink_cards(p, c), id=ids.PLAN_CARDS, className="cards"),
        html.Div(plans.words(p), id=ids.PLAN_WORDS),
        html.Div([html.H3("Stages"), stages(c["stages"])], className="panel"),
        html.Div(plans.bars(p, "Replicas per broker before and after the shrink",
                            ids.PLAN_BARS),
                 className="panel"),
        html.Div([html.H3("Room reclaimed per broker"), tables.grid(reclaimed, height=260)],
                 className="panel"),
        migration(c["migration"]),
    ]


def clear_block(content: dict, head: list) -> list:
    """A clear-throttles plan: the configs it deletes, at the values approved."""
    n = len(content["configs"])
    return [*head, html.Div([
        html.H3(f"Deletes {n} replication throttle config{'s' * (n != 1)}"),
        html.P("Executing deletes exactly these configs through the cluster's gateway, each "
               "only while it still has the value shown: a config changed since is not "
               "deleted, and the plan fails naming it.", className="hint"),
        config_table(content["configs"], ids.PV_CLEAR_CONFIGS)], className="panel")]


def stages(rows: list[dict]) -> html.Ol:
    return html.Ol([html.Li([html.Strong(s["mode"]), f" at {_when(s)}: {s['effect']}"])
                    for s in rows], className="stages")


def _when(stage: dict) -> str:
    at, latest = stage["at_ms"] / 1000, stage["latest_at_ms"] / 1000
    if at == 0 and latest == 0:
        return "once approved and started"
    if at == latest:
        return f"+{duration(at)}"
    return f"+{duration(at)} (at the latest +{duration(latest)})"


def migration(m: dict) -> html.Div:
    """The shrink any cluster can run today: a new topic, switch, drain, delete."""
    return html.Div([
        html.H3(f"The migration that works on any cluster today: to '{m['new_topic']}'"),
        banners.banner(m["error"], "error") if not m["ok"] else None,
        html.Ol([html.Li(step) for step in m["steps"]]),
        html.P(f"Peak partition replicas in the cluster while both topics exist: "
               f"{m['peak_cluster_partitions']:,}", className="hint"),
        tables.placement(m["assignment"]),
    ], className="panel")


@dash.callback(Output(ids.PLAN_GRID, "getRowsResponse"), Input(ids.PLAN_GRID, "getRowsRequest"),
               State(ids.PLAN_TOKEN, "data"), State(ids.PLAN_FILTER, "value"),
               prevent_initial_call=True)
def grid_rows(request, token, contains):
    """One block of rows, sorted and filtered on the server."""
    table = drafts.grid(token) or _stored_grid(token)
    if not request or table is None:
        return {"rowData": [], "rowCount": 0}
    rows, count = table.page(request["startRow"], request["endRow"],
                             request.get("sortModel"), contains)
    return {"rowData": rows, "rowCount": count}


def _stored_grid(token: str | None) -> plan_preview.DiffTable | None:
    """A stored reassignment's grid, built when the grid first asks for rows: decoding a
    100k-move plan's content and basis is the slow part of its page, so the page paints
    its preview from the stored numbers first. Byte counts come from the cluster as last
    read (none when it cannot be read)."""
    plan_id = drafts.stored_plan(token)
    if plan_id is None:
        return None
    try:
        plan = plan_service.get(runtime.current().plan_store(), plan_id)
    except REFUSALS:
        return None
    if plan.kind != "reassignment":
        return None
    table = stored_table(plan)
    drafts.keep_plan_grid(plan.id, table)
    return table


def stored_table(plan: Plan) -> plan_preview.DiffTable:
    """A stored reassignment's diff grid: its basis against its content, with byte counts
    from the cluster as last read (none when it cannot be read)."""
    try:
        snap = cluster_snapshot(runtime.current().source(plan.cluster))
    except Unavailable:
        snap = None
    return plan_preview.stored_diff_table(plan.content, plan.basis or {}, snap)


@dash.callback(Output(ids.PLAN_GRID_BOX, "children"), Input(ids.PLAN_FILTER, "value"),
               State(ids.PLAN_TOKEN, "data"), prevent_initial_call=True)
def refilter(_contains, token):
    """A new grid asks for its first block again, now through the filter."""
    return plans.grid(ids.PLAN_GRID) if token else no_update


@dash.callback(Output(ids.PLAN_JSON_DOWNLOAD, "data"), Input(ids.PLAN_JSON_BUTTON, "n_clicks"),
               State(ids.PLAN_TOKEN, "data"), prevent_initial_call=True)
def download(clicks, token):
    """Kafka's JSON of the draft, or of the stored plan exactly as stored."""
    if not clicks:
        return no_update
    stored = drafts.stored_plan(token)
    if stored is not None:
        try:
            plan = plan_service.get(runtime.current().plan_store(), stored)
        except REFUSALS:
            return no_update
        return dcc.send_string(plan_preview.kafka_json_text(plan.content),
                               f"plan-{plan.id}.json")
    draft = drafts.load(token)
    if draft is None:
        return no_update
    return dcc.send_string(plan_preview.kafka_json_text(draft.content), "plan.json")


@dash.callback(Output(ids.URL, "href", allow_duplicate=True),
               Output(ids.PLAN_PROPOSE_ERROR, "children"),
               Input(ids.PLAN_PROPOSE, "n_clicks"), State(ids.PLAN_TOKEN, "data"),
               State(ids.PLAN_TITLE, "value"), prevent_initial_call=True)
def propose(_clicks, token, title):
    """Store the previewed draft as proposed and open its own page. Refused when the
    cluster changed since the preview: the plan would be approved for moves computed on
    a cluster that no longer exists."""
    if not _clicks:  # the button appearing with the preview is not a click
        return no_update, no_update
    draft = drafts.load(token)
    if draft is None:
        return no_update, "This preview has expired: preview the plan again."
    rt = runtime.current()
    try:
        snap = rt.snapshot_of(draft.cluster)
        changed = draft.changes(snap)
        if changed:
            more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
            raise Conflict(f"the cluster changed since this preview ({'; '.join(changed[:3])}"
                           f"{more}): preview again")
        throttle = draft.preview.get("throttle")
        plan = plan_service.propose(
            rt.plan_store(), auth.current_actor(), cluster=draft.cluster, kind=draft.kind,
            content=draft.content, preview=draft.preview, snapshot=snap,
            title=title or draft.title,
            throttle=round(throttle) if draft.kind == "reassignment" and throttle else None)
    except REFUSALS as e:
        return no_update, str(e)
    if draft.table is not None:  # the plan's page shows this grid: no need to rebuild it
        drafts.keep_plan_grid(plan.id, draft.table)
    return f"/plans/{plan.id}", ""
