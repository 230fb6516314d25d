"""/queue: one queue of every plan of every configured cluster (what is proposed,
approved, running and done), filtered by cluster, state and "needs my approval", sorted
by any column; the view is the URL (/queue?cluster=payments&state=proposed&mine=1&
sort=-bytes_to_move), so a link shows a colleague the same rows. It refreshes live: rows
keep their ids, so the grid redraws only the rows that changed, and a refresh that
changed nothing sends nothing."""

from __future__ import annotations

import json
import zlib

import dash
import dash_ag_grid as dag
from dash import ClientsideFunction, Input, Output, State, dcc, html, no_update

from backend.errors import BadInput, Unavailable
from backend.services import plan_actions, plan_kinds, plan_queue
from components import banners, tables, urlstate
from dashboard import auth, ids, runtime

dash.register_page(__name__, path="/queue", name="Queue", title="Railyard · Queue", order=8)

ALL = plan_queue.ALL
PERCENT = {"function": "percent(params.value)"}
DURATION = {"function": "duration(params.value)"}
# fourteen columns, each as narrow as its header's words and its values allow ("pause
# reason" ran off the grid's right edge, "reassignment" was cut); free text (title, window,
# run) wraps onto more lines in its row, between words ("Move 300 replicas from broke...",
# "not befo...", "waitin..." were cut off), pause reason is cut when long; all are whole on
# hover
WRAPPED = {"wrapText": True, "autoHeight": True}
# the window column holds "not before" over the date over the time ("not before
# 2026-11-30 04:00 UTC"), the run column "waiting for" over "window"
SCHEDULE_PX = tables.CELL_PAD_PX + max(map(tables.text_px, ("not before", "2026-11-30",
                                                            "04:00 UTC")))
RUN_PX = tables.CELL_PAD_PX + max(map(tables.text_px, ("waiting for", "cancelling")))
KIND_PX = tables.CELL_PAD_PX + max(map(tables.text_px, plan_kinds.KINDS))
STATE_PX = tables.CELL_PAD_PX + max(map(tables.text_px, plan_actions.PLAN_STATES))
COLUMNS = [tables.sized(c, filterable=False) for c in (
    {"field": "id", "headerName": "plan", "cellRenderer": "PlanLink", "width": 80},
    {"field": "cluster", "width": 85}, {"field": "state", "width": STATE_PX},
    {"field": "kind", "width": KIND_PX},
    # its tooltip: TITLE_TOOLTIP; a plan Approve would refuse as stale says so first
    {"field": "title", "flex": 2, "minWidth": 120, **WRAPPED, "valueFormatter": {
        "function": f'(params.data.stale ? "{plan_queue.STALE}: " : "") + params.value'}},
    {"field": "author", "width": 85},
    {"field": "approvals", "headerName": "approvals", "tooltipField": "approval_text",
     "width": 90},
    {**tables.number_column("still_needed", "still needed"), "width": 80},
    {**tables.number_column("bytes_to_move", "bytes to move", tables.BYTES), "width": 85},
    {"field": "schedule", "headerName": "window", "width": SCHEDULE_PX, **WRAPPED,
     "tooltipField": "schedule"},
    {"field": "execution", "headerName": "run", "width": RUN_PX, **WRAPPED,
     "tooltipField": "execution"},
    {**tables.number_column("progress", "progress", PERCENT), "width": 85},
    {**tables.number_column("eta_seconds", "ETA", DURATION), "width": 75},
    {"field": "pause_reason", "headerName": "pause reason", "flex": 1, "minWidth": 110,
     "tooltipField": "pause_reason"},
)]
# They need 1305 px: a 1024 px window has a 938 px grid, which scrolled sideways. The
# columns an operator decides by (plan, cluster, state, title, author, approvals) show at
# any width; the others give way one by one, the least needed first, where the grid has no
# room for them beside a title of TITLE_ROOM_PX, and the title's tooltip then lists their
# values (the plan's page shows them all): at 1024 px the grid keeps bytes to move,
# progress and run, at 1366 px all but still needed and pause reason (approvals and run say
# most of what they do), at 1400 px all but pause reason
OPTIONAL = ("bytes_to_move", "progress", "execution", "eta_seconds", "kind", "schedule",
            "still_needed", "pause_reason")  # the most needed first
TITLE_ROOM_PX = 170  # a long title wraps (it was cut off), so it takes less than 200
GRID_EXTRA_PX = 20  # the grid's borders and its vertical scrollbar, when rows overflow


def shown_from() -> dict[str, int]:
    """Each optional column: the grid width (px) from which it shows."""
    room = {c["field"]: c.get("width") or c["minWidth"] for c in COLUMNS}
    need = GRID_EXTRA_PX + TITLE_ROOM_PX + sum(
        px for field, px in room.items() if field not in (*OPTIONAL, "title"))
    out = {}
    for field in OPTIONAL:
        need += room[field]
        out[field] = need
    return out


def _value_js(col: dict) -> str:
    """A JS expression of a row's value in ``col`` as its cell writes it."""
    formatter = (col.get("valueFormatter") or {}).get("function")
    if formatter:
        return formatter.replace("params.value", f"params.data.{col['field']}")
    return f'(params.data.{col["field"]} || "\u2014")'


def _label(col: dict) -> str:
    """A column's name in the tooltip: its header, "kind" rather than AG Grid's "Kind"."""
    return col.get("headerName") or col["field"].replace("_", " ")


def _title_tooltip() -> dict:
    """The whole title, what the queue says of its basis when not that it holds (Approve's
    refusal of a stale plan, or why it was not checked), then each hidden column's header
    and value, a line each (railyard.css keeps the lines)."""
    by_field = {c["field"]: c for c in COLUMNS}
    basis = f'(params.data.basis_note ? {json.dumps(chr(10))} + params.data.basis_note : "")'
    lines = [f'(params.api.getColumn("{field}").isVisible() ? "" : '
             f'{json.dumps(chr(10) + _label(by_field[field]) + ": ")} + '
             f'{_value_js(by_field[field])})' for field in OPTIONAL]
    return {"function": " + ".join(["params.data.title", basis, *lines])}


TITLE_TOOLTIP = _title_tooltip()


# what the grid reads of a queue row: its columns, the row id, the tooltips, the flags
SHOWN = ("key", *(c["field"] for c in COLUMNS), "approval_text", "basis_note", "stale",
         "for_you")
# the filters above the grid filter; the grid sorts
COLUMN_DEFAULTS = {**tables.COLUMN_DEFAULTS, "filter": False, "minWidth": 70}
ROW_STYLE = {"styleConditions": [
    {"condition": "params.data.for_you", "style": {"backgroundColor": "#eef5ff"}},
    {"condition": "params.data.stale", "style": {"backgroundColor": "#fff4e5"}}]}


def layout(cluster: str | None = None, state: str | None = None, mine: str | None = None,
           sort: str | None = None, **_query) -> html.Div:
    rt = runtime.current()
    names = [c.name for c in rt.config.clusters]
    lost = rt.unknown_cluster(cluster) if cluster != ALL else None
    unknown = [banners.banner(text, "info") for text in (
        lost and f"{lost}: showing all clusters.",
        urlstate.unknown("state", state, plan_actions.PLAN_STATES, "all states"),
        urlstate.unknown("sort", sort and sort.lstrip("-"), plan_queue.SORTS,
                         "newest first")) if text]
    cluster = cluster if cluster in names else ALL
    state = state if state in plan_actions.PLAN_STATES else None
    sort = sort if sort and sort.lstrip("-") in plan_queue.SORTS else plan_queue.DEFAULT_SORT
    mine = mine == "1"
    return html.Div([
        html.H1(["Queue", html.Small("every plan of every cluster")]),
        html.P("What is proposed, approved, running and done across the fleet. Filter it, "
               "sort it by any column, and share the link: it shows the same view. A plan "
               "whose cluster changed since it was proposed is marked stale (Approve would "
               "refuse it: re-propose; its title's tooltip says what changed). In a narrow "
               "window some columns give way: a title's tooltip shows their values.",
               className="hint"),
        *unknown,
        html.Div([
            tables.field("Cluster", dcc.Dropdown(
                id=ids.QU_CLUSTER, value=cluster, clearable=False,
                options=[{"label": "all clusters", "value": ALL}, *names])),
            tables.field("State", dcc.Dropdown(
                id=ids.QU_STATE, value=state or "", clearable=False,
                options=[{"label": "all states", "value": ""}, *plan_actions.PLAN_STATES])),
            dcc.Checklist(id=ids.QU_MINE, value=["mine"] if mine else [],
                          options=[{"label": " needs my approval", "value": "mine"}]),
            html.A("Link to this view", id=ids.QU_LINK, href=_href(cluster, state, mine, sort),
                   className="report-link"),
        ], className="form-row"),
        html.Div(id=ids.QU_ERROR),
        html.P(id=ids.QU_COUNT, className="hint"),
        dcc.Store(id=ids.QU_SHOWN),
        dcc.Store(id=ids.QU_FIT, data=shown_from()),
        dcc.Interval(id=ids.QU_REFRESH, interval=rt.config.server.refresh_seconds * 1000),
        html.Div(dag.AgGrid(
            id=ids.QU_GRID, rowData=[], columnDefs=_columns(sort),
            getRowId="params.data.key", getRowStyle=ROW_STYLE,
            defaultColDef=COLUMN_DEFAULTS, style={"height": "560px"},
            className="ag-theme-alpine queue-grid",
            dashGridOptions={"animateRows": False, "tooltipShowDelay": 300}),
            className="panel"),
    ])


@dash.callback(Output(ids.QU_GRID, "rowData"), Output(ids.QU_GRID, "rowTransaction"),
               Output(ids.QU_COUNT, "children"), Output(ids.QU_SHOWN, "data"),
               Output(ids.QU_ERROR, "children"),
               Input(ids.QU_CLUSTER, "value"), Input(ids.QU_STATE, "value"),
               Input(ids.QU_MINE, "value"), Input(ids.QU_REFRESH, "n_intervals"),
               State(ids.QU_SHOWN, "data"))
def refresh(cluster, state, mine, _tick, shown):
    """The page shown or a filter changed: the rows asked for. The refresh tick: only the
    rows added, changed or gone since (a transaction the grid applies by plan id, so the
    other rows stay as drawn), and nothing at all when none changed."""
    rows, error = _rows(cluster or ALL, state or None, bool(mine))
    if error is not None:  # the store did not answer: the rows stay as they were
        return no_update, no_update, no_update, no_update, error
    now = _digests(rows)
    if dash.ctx.triggered_id != ids.QU_REFRESH or not isinstance(shown, dict):
        return rows, no_update, _count(rows), now, None
    if now == shown:
        return no_update, no_update, no_update, no_update, None
    change = {"add": [r for r in rows if r["key"] not in shown],
              "update": [r for r in rows if r["key"] in shown and shown[r["key"]] != now[r["key"]]],
              "remove": [{"key": k} for k in shown if k not in now]}
    return no_update, change, _count(rows), now, None


dash.clientside_callback(  # assets/railyard.js: the optional columns follow the grid's width
    ClientsideFunction("railyard", "fitColumns"),
    Output(ids.QU_FIT, "data"), Input(ids.QU_GRID, "rowData"), State(ids.QU_GRID, "id"),
    State(ids.QU_FIT, "data"))


dash.clientside_callback(  # assets/railyard.js: the view into the address bar and the link
    ClientsideFunction("railyard", "queueUrl"),
    Output(ids.QU_LINK, "href"), Input(ids.QU_CLUSTER, "value"),
    Input(ids.QU_STATE, "value"), Input(ids.QU_MINE, "value"),
    Input(ids.QU_GRID, "columnState"), prevent_initial_call=True)


def _rows(cluster: str, state: str | None, mine: bool) -> tuple[list[dict], object]:
    """The queue as the filters ask, for the signed-in user, newest first (the grid sorts
    it as the view asks), open plans checked against each cluster's cached snapshot
    (plan_queue.seen: "needs my approval" leaves out those Approve would refuse as
    stale); an error banner instead when the store does not answer."""
    rt = runtime.current()
    who = auth.current_actor()
    try:
        rows = plan_queue.queue(rt.plan_store(), [c.name for c in rt.config.clusters],
                                cluster=cluster, state=state, viewer=who,
                                needs_approval_by=who if mine else None,
                                snapshot_of=plan_queue.cached_snapshots(rt.known_source))
        return [{k: r[k] for k in SHOWN} for r in rows], None
    except (BadInput, Unavailable) as e:
        return [], banners.banner(str(e), "error")


def _columns(sort: str) -> list[dict]:
    """The grid's columns, the one the view is sorted by marked so, the title's tooltip."""
    field, order = sort.lstrip("-"), "desc" if sort.startswith("-") else "asc"
    tip = {"tooltipValueGetter": TITLE_TOOLTIP}
    return [{**c, **(tip if c["field"] == "title" else {}),
             **({"sort": order} if c["field"] == field else {})} for c in COLUMNS]


def _href(cluster: str, state: str | None, mine: bool, sort: str) -> str:
    """The view's URL as the clientside callback writes it (defaults left out)."""
    return "/queue" + urlstate.build({
        "cluster": None if cluster == ALL else cluster, "state": state,
        "mine": "1" if mine else None,
        "sort": None if sort == plan_queue.DEFAULT_SORT else sort})


def _count(rows: list[dict]) -> str:
    """"3 plans; 1 needs your approval; 1 stale (re-propose)": how many rows, how many
    wait for the viewer, how many Approve would refuse as stale."""
    waiting = sum(r["for_you"] for r in rows)
    stale = sum(r["stale"] is not None for r in rows)
    return (f"{len(rows):,} plan{'s' if len(rows) != 1 else ''}"
            + (f"; {waiting:,} need{'s' if waiting == 1 else ''} your approval"
               if waiting else "")
            + (f"; {stale:,} stale (re-propose)" if stale else ""))


def _digests(rows: list[dict]) -> dict[str, int]:
    """Each row's checksum by plan id: what the grid shows, to send only what changed."""
    return {r["key"]: zlib.crc32(repr(tuple(r.values())).encode()) for r in rows}
