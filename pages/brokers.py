"""/brokers: a sortable grid per broker (rack, replicas, leaders, headroom, bytes in, lag),
and the selected broker's time series over the chosen window."""

from __future__ import annotations

import dash
import dash_ag_grid as dag
from dash import Input, Output, State, dcc, html, no_update

from backend.errors import Unavailable
from backend.services import limits, monitoring
from components import banners, charts, monitor, tables, urlstate
from dashboard import caches, ids, plan_views, runtime, shell

dash.register_page(__name__, path="/brokers", name="Brokers", title="Railyard · Brokers",
                   order=1)

# each as narrow as its header's words and its values allow: all ten fit at 1024 px
COLUMNS = [tables.sized(c) for c in (
    {"field": "broker", "headerName": "broker"}, {"field": "rack", "headerName": "rack"},
    {"field": "up", "headerName": "up"}, tables.number_column("replicas"),
    tables.number_column("leaders"), tables.number_column("headroom"),
    tables.number_column("used_pct", "% of limit"),
    tables.number_column("bytes_in", "bytes in", tables.BYTE_RATE),
    tables.number_column("max_lag", "max lag (messages)"),
    tables.number_column("stored", "stored", tables.BYTES))]
ROW_STYLE = {"styleConditions": [
    {"condition": "params.data.used_pct > 100", "style": {"backgroundColor": "#fdecec"}},
    {"condition": "params.data.used_pct >= 90", "style": {"backgroundColor": "#fff6e0"}},
    {"condition": "params.data.up === 'down'", "style": {"backgroundColor": "#fdecec"}},
]}
GRAPH = {"displayModeBar": False}


def layout(**query) -> html.Div:
    broker = query.get("broker")  # a shared link names the selected broker
    return shell.page_frame("Brokers", ids.BR_BANNERS, query, [
        html.Div(dag.AgGrid(
            id=ids.BR_GRID, rowData=[],
            columnDefs=COLUMNS, defaultColDef=tables.COLUMN_DEFAULTS,
            columnSize="responsiveSizeToFit", style=grid_size(0)[0],
            className="ag-theme-alpine", getRowStyle=ROW_STYLE, getRowId="params.data.broker",
            selectedRows={"ids": [broker]} if broker else [],
            dashGridOptions=grid_size(0)[1]),
            className="panel"),
        html.H3(id=ids.BR_SELECTED),
        html.Div([html.Div(dcc.Graph(id=ids.BR_BYTES, config=GRAPH), className="panel"),
                  html.Div(dcc.Graph(id=ids.BR_LAG, config=GRAPH), className="panel")],
                 className="grid-2"),
        html.Div(dcc.Graph(id=ids.BR_PARTITIONS, config=GRAPH), className="panel"),
    ])


@dash.callback(Output(ids.BR_GRID, "rowData"), Output(ids.BR_BANNERS, "children"),
               Input(ids.VIEW, "data"), Input(ids.REFRESH, "n_intervals"))
def show_grid(state, _tick):
    view = _view(state)
    w = view.window
    notes = [*view.notes, *monitor.data_elsewhere(view.data_end, w.start, view.cluster,
                                                  "/brokers", ids.JUMP_TO_DATA)]
    try:
        g = limits.guard_rails(view.source)
    except Unavailable as e:
        return [], [banners.banner(str(e), "error"), *notes]
    try:
        m = monitoring.broker_figures(view.source, w)
        # the cluster's data ending before the window's end is why, and the banner above
        # says so (as the Overview does): "the brokers do not export it" would send people
        # to their exporters
        notes += [banners.banner(f"Some broker figures are missing: {e}", "info")
                  for e in m["errors"][:1] if view.data_end is None]
    except Unavailable as e:
        m = {"bytes_in": {}, "lag": {}, "up": {}}
        notes.insert(0, banners.banner(str(e), "warning"))
    limit = g["limits"]["max.broker.partitions"]
    rows = []
    for b in g["brokers"]:
        key = str(b["id"])
        up = m["up"].get(key)
        rows.append({
            "broker": key, "rack": b["rack"] or "-",
            "up": "-" if up is None else ("up" if up else "down"),
            "replicas": b["replicas"], "leaders": b["leaders"], "headroom": b["capacity"],
            "used_pct": None if not limit else round(100 * b["replicas"] / limit, 1),
            "bytes_in": _rounded(m["bytes_in"].get(key)),
            "max_lag": _rounded(m["lag"].get(key)),
            "stored": b["bytes"],
        })
    return rows, notes


GRID_OPTIONS = {"animateRows": False, "rowSelection": {
    "mode": "singleRow", "enableClickSelection": True, "checkboxes": False}}
# up to this many brokers the grid is as tall as its rows, all shown (at 360 px it showed
# 7 of 9, broker 9, the one with lag, under an inner scroll); a larger cluster's grid
# scrolls inside LARGE_GRID_PX, about as many rows, so the charts stay within reach
WHOLE_ROWS = 40
LARGE_GRID_PX = 1_800


@dash.callback(Output(ids.BR_GRID, "style"), Output(ids.BR_GRID, "dashGridOptions"),
               Input(ids.BR_GRID, "rowData"), State(ids.BR_GRID, "dashGridOptions"))
def size_grid(rows, options):
    """The grid sized to its rows; nothing sent while the size stays (options sent again
    would be applied again on every refresh)."""
    style, wanted = grid_size(len(rows or []))
    if options == wanted:
        return no_update, no_update
    return style, wanted


def grid_size(brokers: int) -> tuple[dict, dict]:
    """The grid's style and options for ``brokers`` rows: its height its rows' (AG Grid's
    autoHeight) up to WHOLE_ROWS, else LARGE_GRID_PX with an inner scroll."""
    if brokers <= WHOLE_ROWS:
        return {"height": None}, {**GRID_OPTIONS, "domLayout": "autoHeight"}
    return {"height": f"{LARGE_GRID_PX}px"}, {**GRID_OPTIONS, "domLayout": "normal"}


def _view(state: dict, w=None) -> monitor.View:
    """The window asked for (or ``w``, read from it already), the cluster's source, and
    when its data ends if before the window does (monitoring.data_ends_before), as the
    other monitoring pages draw it."""
    notes = []
    if w is None:
        w, notes = monitor.window(state)
    source = runtime.current().source(state["cluster"])
    return monitor.View(state["cluster"], w, source, notes=notes,
                        data_end=monitoring.data_ends_before(source, w))


def _rounded(v: float | None) -> float | None:
    return None if v is None else round(v)


@dash.callback(Output(ids.BR_SELECTED, "children"), Output(ids.BR_BYTES, "figure"),
               Output(ids.BR_LAG, "figure"), Output(ids.BR_PARTITIONS, "figure"),
               Input(ids.BR_GRID, "selectedRows"), Input(ids.VIEW, "data"),
               Input(ids.REFRESH, "n_intervals"))
def show_broker(selected, state, _tick):
    """Not an input of the grid's rows: a range change then draws the charts beside the
    grid instead of after it (the grid's own answer took 80 ms of a 300 ms change at 200k
    partitions). The brokers come from the same kept assignment the grid reads."""
    source = runtime.current().source(state["cluster"])
    try:
        brokers = limits.guard_rails(source)["brokers"]
    except Unavailable:  # the grid's banner says why
        brokers = []
    if not brokers:
        empty = charts.empty("Broker", "No brokers to show")
        return "", empty, empty, empty
    picked = _picked(selected, brokers)
    chosen = picked or max(brokers, key=lambda b: b["replicas"])
    broker = str(chosen["id"])
    w, _ = monitor.window(state)
    title = f"Broker {broker} (rack {chosen['rack'] or '-'})" + (
        "" if picked else ": the fullest broker; select a row to see another")
    # drawn once per broker and window: every refresh triggers this callback again
    return (title, *caches.drawn(f"brokers:{broker}", state, w,
                                 lambda: _broker_charts(_view(state, w), broker)))


def _broker_charts(view: monitor.View, broker: str) -> tuple:
    """The broker's charts; an empty one says why (View.figure: where the cluster's data
    ends, when the window lies after it)."""
    w, source = view.window, view.source
    try:
        s = monitoring.broker_series(source, broker, w)
    except Unavailable as e:
        empty = charts.empty(f"Broker {broker} · {w.label}", str(e))
        return empty, empty, empty
    limit = source.limits.max_broker_partitions
    plans = plan_views.events_in(source.name, w.start, w.end)  # and execution batches
    return (view.figure(s["bytes"], f"Broker {broker}: bytes in", "bytes/s", events=plans),
            view.figure(s["lag"], f"Broker {broker}: replica lag (MaxLag)", "messages",
                        events=plans),
            view.figure(s["partitions"], f"Broker {broker}: partition replicas", "replicas",
                        limit=limit, limit_name="max.broker.partitions", events=plans))


@dash.callback(Output(ids.URL, "search", allow_duplicate=True),
               Input(ids.BR_GRID, "selectedRows"), State(ids.URL, "search"),
               prevent_initial_call=True)
def selection_in_url(selected, search):
    """The clicked broker goes into the URL, so the link shows the same broker."""
    if isinstance(selected, dict):  # the URL's own selection, before the grid resolves it
        return no_update
    broker = str(selected[0]["broker"]) if selected else None
    if broker is None or urlstate.parse(search).get("broker") == broker:
        return no_update
    return urlstate.updated(search, broker=broker)


def _picked(selected, brokers: list[dict]) -> dict | None:
    """The selected broker among the cluster's, if it still has it: the grid's selected
    rows, or until the grid resolves it, a selection from the URL ({"ids": [...]})."""
    if isinstance(selected, dict):
        wanted = [str(i) for i in selected.get("ids", [])]
    else:
        wanted = [str(r["broker"]) for r in selected or []]
    return next((b for b in brokers if wanted and str(b["id"]) == wanted[0]), None)
