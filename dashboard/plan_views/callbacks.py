"""The callbacks every page showing a plan preview shares: page the diff grid from the
server, refilter it, send Kafka's JSON file, and propose the previewed draft. Registered
once, when the first page imports dashboard.plan_views; they find the plan by what the
page holds: a draft's token (dashboard.drafts) or a stored plan's reference
(dashboard/plan_views/grids.py)."""

from __future__ import annotations

import dash
from dash import Input, Output, State, dcc, no_update

from backend.errors import Conflict
from backend.services import fields, plan_kinds, plan_preview
from backend.services import plans as plan_service
from dashboard import auth, drafts, ids, runtime
from dashboard.plan_views import preview
from dashboard.plan_views.grids import keep_plan_grid, plan_grid, stored_plan, stored_table
from dashboard.plan_views.shared import REFUSALS


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


def _stored_grid(ref: object) -> plan_preview.DiffTable | None:
    """A stored reassignment's grid, kept or built when the grid first asks for rows:
    decoding a 100k-move plan's content and basis is the slow part of its page, so the
    page paints its preview from the stored numbers first."""
    plan_id = stored_plan(ref)
    if plan_id is None:
        return None
    kept = plan_grid(plan_id)
    if kept is not None:
        return kept
    try:
        plan = plan_service.get(runtime.current().plan_store(), plan_id)
    except REFUSALS:
        return None
    if not plan_kinds.kind_of(plan.kind).large:  # only a reassignment has a grid
        return None
    table = stored_table(plan)
    keep_plan_grid(plan.id, table)
    return table


@dash.callback(Output(ids.PLAN_GRID_BOX, "children"), Input(ids.PLAN_FILTER, "value"),
               State(ids.PLAN_TOKEN, "data"), prevent_initial_call=True)
def refilter(_contains, token):
    """A new grid asks for its first block again, now through the filter."""
    return preview.grid(ids.PLAN_GRID) if token else no_update


@dash.callback(Output(ids.PLAN_JSON_DOWNLOAD, "data"), Input(ids.PLAN_JSON_BUTTON, "n_clicks"),
               State(ids.PLAN_TOKEN, "data"), prevent_initial_call=True)
def download(clicks, token):
    """Kafka's JSON of the draft, or of the stored plan exactly as stored."""
    if not clicks:
        return no_update
    stored = stored_plan(token)
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


def throttle_mode(adaptive: list | None, floor_mb: object,
                  ceiling: float | None = None) -> dict | None:
    """The propose form's adaptive box and floor (MB/s, as typed) as plans.propose's
    throttle_mode, the floor at most the plan's throttle ``ceiling`` (bytes/s), said in
    MB/s as the form asks it (the service's refusal counts bytes/s: "at most the throttle
    112379246, got 99999000000" for 99999 typed)."""
    if not adaptive:
        return None
    floor = fields.number(floor_mb, "adaptive throttle's floor", above=0,
                          high=None if ceiling is None else ceiling / 1e6,
                          limit=plan_preview.MAX_THROTTLE / 1e6, required=True, unit="MB/s")
    return {"mode": "adaptive", "floor": max(round(floor * 1e6), 1)}


@dash.callback(Output(ids.URL, "href", allow_duplicate=True),
               Output(ids.PLAN_PROPOSE_ERROR, "children"),
               Input(ids.PLAN_PROPOSE, "n_clicks"), State(ids.PLAN_TOKEN, "data"),
               State(ids.PLAN_TITLE, "value"), State(ids.PLAN_ADAPTIVE, "value"),
               State(ids.PLAN_FLOOR, "value"), State(ids.PLAN_NOT_BEFORE, "value"),
               State(ids.PLAN_OUTSIDE_WINDOWS, "value"), prevent_initial_call=True)
def propose(_clicks, token, title, adaptive=None, floor_mb=None, not_before=None,
            outside=None):
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
            throttle=plan_kinds.previewed_throttle(draft),
            throttle_mode=throttle_mode(adaptive, floor_mb, throttle),
            not_before=(not_before or "").strip() or None,
            outside_windows="outside" in (outside or []))
    except REFUSALS as e:
        return no_update, str(e)
    if draft.table is not None:  # the plan's page shows this grid: no need to rebuild it
        keep_plan_grid(plan.id, draft.table)
    return f"/plans/{plan.id}", ""
