"""The preview of a plan, as the reassignments, shrinks and plan pages all show it:
figure cards, what it breaks and leaves undone in words, replicas per broker before and
after against the limit, the per-partition diff (a virtual grid paged from the server)
and the exports (Kafka's JSON file, the kafka-reassign-partitions command line).

The grid and the JSON download are served by the callbacks at the bottom, registered
once when a page imports this module; they find the plan by the token the page holds
(dashboard.drafts)."""

from __future__ import annotations

import dash
import dash_ag_grid as dag
from dash import Input, Output, State, dcc, html, no_update

from backend.services import plan_preview
from components import banners, charts
from components.help import term
from components.tables import card, duration
from dashboard import drafts, ids

GRAPH = {"displayModeBar": False}
GRID_BLOCK = 200  # rows per request to the server
GRID_COLUMNS = [
    {"field": "partition", "headerName": "partition", "minWidth": 180},
    {"field": "before", "headerName": "replicas before"},
    {"field": "after", "headerName": "replicas after (leader first)"},
    {"field": "added", "headerName": "receives"},
    {"field": "removed", "headerName": "gives up"},
    {"field": "leader", "headerName": "leader change"},
    {"field": "bytes", "headerName": "bytes to copy", "type": "numericColumn",
     "valueFormatter": {"function": "d3.format(',')(params.value)"}},
]


def size(nbytes: float) -> str:
    """Bytes for people: 9.40 GB, 312.5 MB."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(nbytes) >= scale:
            return f"{nbytes / scale:,.2f} {unit}"
    return f"{nbytes:,.0f} B"


def rate(bps: float | None) -> str:
    return "-" if bps is None else f"{bps / 1e6:,.1f} MB/s"


def reassignment_cards(p: dict) -> list[html.Div]:
    band = p.get("safe_band")
    inside = band is not None and band["low"] < p["throttle"] < band["high"]
    headroom = p.get("headroom_after")
    return [
        card("Replica moves", f"{p['replica_moves']:,}", "ok",
             f"{p['partitions']:,} partitions, {p['leader_moves']:,} leader changes"),
        card("Data to move", size(p["bytes_to_move"])),
        card(term("Predicted ETA", "eta"), duration(p["eta_seconds"]),
             "over" if p["eta_seconds"] is None else "ok",
             p.get("diagnosis") or f"at a throttle of {rate(p['throttle'])} "
                                   f"({p['throttle_source'].split(':')[0]})"),
        card(term("Safe band", "safe band"),
             "-" if band is None else f"{rate(band['low'])} .. {rate(band['high'])}",
             "ok" if band is None or inside else "near",
             None if band is None else ("the throttle is inside on every broker that moves"
                                        if inside else
                                        f"throttle {rate(p['throttle'])} is outside on "
                                        f"brokers {p['outside_safe_band']}")),
        _headroom_card(headroom),
    ]


def shrink_cards(p: dict, content: dict) -> list[html.Div]:
    return [
        card("Partitions removed", f"{p['partitions']:,}", "ok",
             f"{content['topic']}: {content['from']} -> {content['to']}"),
        card("Room reclaimed", f"{p['replicas_reclaimed']:,} replicas", "ok",
             size(p["bytes_reclaimed"]) + " of logs"),
        card("Removed after", duration(p["eta_seconds"]), "ok",
             f"delay {duration(content['delay_ms'] / 1000)} + the controller's check"),
        _headroom_card(p.get("headroom_after")),
    ]


def _headroom_card(headroom: int | None) -> html.Div:
    return card(term("Headroom after", "headroom"),
                "unlimited" if headroom is None else f"{headroom:,} replicas",
                "over" if headroom is not None and headroom < 0 else "ok",
                "on the fullest broker, under max.broker.partitions")


def words(p: dict) -> list[html.Div]:
    """Violations (red), unresolved items (amber) and risks (blue), one line each."""
    out = [banners.banner(f"Breaks: {v['message']}", "error") for v in p["violations"]]
    out += [banners.banner(f"Not achieved: {u['message']}", "warning")
            for u in p["unresolved"]]
    out += [banners.banner(f"Risk: {r}", "info") for r in p.get("risks", [])]
    if not out:
        out = [banners.banner("Breaks nothing and achieves everything it was asked: no "
                              "limit exceeded, no rack spread lost.", "info")]
    return out


def bars(p: dict, title: str) -> dcc.Graph:
    b = p["brokers"]
    figure = charts.before_after_bars([str(x["id"]) for x in b], [x["before"] for x in b],
                                      [x["after"] for x in b], b[0]["limit"] if b else None,
                                      title)
    return dcc.Graph(id=ids.PLAN_BARS, figure=figure, config=GRAPH)


def diff_grid(rows: int) -> html.Div:
    """The per-partition diff: a filter box and a virtual grid fetching blocks of rows."""
    return html.Div([
        html.H3(f"Per-partition changes ({rows:,} partitions)"),
        dcc.Input(id=ids.PLAN_FILTER, type="text", debounce=0.4, className="wide",
                  placeholder="filter: partition name contains ..."),
        html.Div(grid(), id=ids.PLAN_GRID_BOX),
    ], className="panel")


def grid() -> dag.AgGrid:
    return dag.AgGrid(
        id=ids.PLAN_GRID, rowModelType="infinite", columnDefs=GRID_COLUMNS,
        defaultColDef={"sortable": True, "resizable": True, "minWidth": 110},
        columnSize="responsiveSizeToFit", className="ag-theme-alpine",
        style={"height": "420px"},
        dashGridOptions={"cacheBlockSize": GRID_BLOCK, "maxBlocksInCache": 20,
                         "infiniteInitialRowCount": GRID_BLOCK, "animateRows": False,
                         "rowBuffer": 10})


def exports(throttle: float | None, filename: str) -> html.Div:
    """Kafka's own JSON to download and the command line that runs it throttled."""
    return html.Div([
        html.H3("Run it with Kafka's tool"),
        html.Div([html.Button("Download plan JSON", id=ids.PLAN_JSON_BUTTON,
                              className="button"),
                  dcc.Download(id=ids.PLAN_JSON_DOWNLOAD)], className="form-row"),
        html.Pre(plan_preview.kafka_command(throttle, filename), id=ids.PLAN_COMMAND,
                 className="command"),
    ], className="panel")


# ---- callbacks shared by every page that shows a preview ----------------------------------

@dash.callback(Output(ids.PLAN_GRID, "getRowsResponse"), Input(ids.PLAN_GRID, "getRowsRequest"),
               State(ids.PLAN_TOKEN, "data"), State(ids.PLAN_FILTER, "value"),
               prevent_initial_call=True)
def grid_rows(request, token, contains):
    """One block of rows, sorted and filtered on the server."""
    table = drafts.grid(token)
    if not request or table is None:
        return {"rowData": [], "rowCount": 0}
    rows, count = table.page(request["startRow"], request["endRow"],
                             request.get("sortModel"), contains)
    return {"rowData": rows, "rowCount": count}


@dash.callback(Output(ids.PLAN_GRID_BOX, "children"), Input(ids.PLAN_FILTER, "value"),
               State(ids.PLAN_TOKEN, "data"), prevent_initial_call=True)
def refilter(_contains, token):
    """A new grid asks for its first block again, now through the filter."""
    return grid() if token else no_update


@dash.callback(Output(ids.PLAN_JSON_DOWNLOAD, "data"), Input(ids.PLAN_JSON_BUTTON, "n_clicks"),
               State(ids.PLAN_TOKEN, "data"), prevent_initial_call=True)
def download(_clicks, token):
    draft = drafts.load(token)
    if draft is None:
        return no_update
    return dcc.send_string(plan_preview.kafka_json_text(draft.content), "plan.json")
