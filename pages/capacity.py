"""/capacity: when each KIP-578 limit is reached and how many brokers to add by when, for
a capacity review. Charts of daily peaks with the forecast band and the limits, the
time-to-limit table (most urgent first), the scenario knobs; the URL holds the knobs, so
a link shows a colleague the same scenario, and the exports take the same query."""

from __future__ import annotations

import dash
import dash_ag_grid as dag
from dash import Input, Output, State, dcc, html

from backend.errors import BadInput, Unavailable
from backend.services import capacity, capacity_view
from components import banners, charts, tables
from components import capacity as cap
from components.help import term
from dashboard import ids, reports, runtime

dash.register_page(__name__, path="/capacity", name="Capacity", title="Railyard · Capacity",
                   order=7)

GRAPH = {"displayModeBar": False}
# "cluster over 12 brokers" and "max.broker.partitions x 12" (services.capacity.table_frame)
# whole, not "max.broker.p..."
WIDE = {"scope": 170, "limit_name": 230}
KNOB_IDS = {"window": ids.CAP_WINDOW, "growth": ids.CAP_GROWTH, "add": ids.CAP_ADD,
            "mbp": ids.CAP_MBP, "mp": ids.CAP_MP, "topic": ids.CAP_TOPIC, "by": ids.CAP_BY}
ROW_STYLE = {"styleConditions": [
    {"condition": "params.data.days !== null && params.data.days < 30",
     "style": {"backgroundColor": "#fdecec"}},
    {"condition": "params.data.days !== null && params.data.days < 90",
     "style": {"backgroundColor": "#fff6e0"}},
]}


def layout(**query) -> html.Div:
    rt = runtime.current()
    c = rt.cluster(query.get("cluster"))
    notes = []
    try:
        state = capacity_view.parse_view({**query, "cluster": c.name})
    except BadInput as e:
        notes.append(banners.banner(f"{e}; showing the defaults instead", "warning"))
        state = capacity_view.parse_view({"cluster": c.name, "end": ""})
    return html.Div([
        dcc.Store(id=ids.CAP_STATE, data={"cluster": c.name, "end": state["end"]}),
        html.H1(["Capacity", html.Small(f"cluster {c.name}")]),
        _knobs(state),
        html.Div([html.Div([_export("HTML report", ids.CAP_EXPORT_HTML),
                            _export("PDF", ids.CAP_EXPORT_PDF), _export("CSV", ids.CAP_EXPORT_CSV)],
                           className="exports"),
                  html.Div(id=ids.CAP_EXPORT_STATUS, className="export-status", role="status")],
                 className="export-group"),
        html.Div(notes, id=ids.CAP_BANNERS),
        html.P(id=ids.CAP_ANSWER, className="answer"),
        html.Div(dag.AgGrid(
            id=ids.CAP_TABLE, rowData=[],
            # text, not inferred: a grid that infers "dateString" from 2027-07-16 draws
            # "after 2126" (a limit a century off) as an empty cell
            columnDefs=[cap.figure_column(k, v) if k in cap.FIGURES
                        else {"field": k, "headerName": v, "cellDataType": "text",
                              "minWidth": WIDE.get(k, 80), "tooltipField": k}
                        for k, v in cap.TABLE_COLUMNS.items()],
            defaultColDef={**tables.COLUMN_DEFAULTS, "filter": False, "minWidth": 80},
            columnSize="responsiveSizeToFit", style={"height": "300px"},
            className="ag-theme-alpine", getRowStyle=ROW_STYLE), className="panel"),
        html.Div(dcc.Graph(id=ids.CAP_CLUSTER_CHART, config=GRAPH), className="panel"),
        html.Div(dcc.Graph(id=ids.CAP_BROKER_CHART, config=GRAPH), className="panel"),
    ])


def _export(label: str, id_: str) -> html.A:
    """A report download; assets/exports.js fetches it, so a failure says why on the page."""
    return html.A(label, id=id_, className="button-link export-link")


def _knobs(state: dict) -> html.Div:
    def field(label, control) -> html.Label:
        return html.Label([html.Span(label, className="control-label"), control],
                          className="knob")
    def number(knob: str, placeholder: str) -> dcc.Input:
        return tables.number_input(KNOB_IDS[knob], state[knob], placeholder, debounce=True,
                                   className="knob-input")
    return html.Div([
        field("History", dcc.RadioItems(
            id=ids.CAP_WINDOW, value=state["window"], inline=True,
            options=[{"label": f"{d} d", "value": d} for d in capacity.WINDOWS])),
        field(term("Growth +% / month", "growth"), number("growth", "0")),
        field("Add brokers", number("add", "0")),
        field("max.broker.partitions", number("mbp", "current")),
        field("max.partitions", number("mp", "current")),
        field("Planned topic (P:RF)", dcc.Input(
            id=ids.CAP_TOPIC, type="text", value=state["topic"], placeholder="e.g. 100:3",
            debounce=True, className="knob-input")),
        field("Brokers by (YYYY-MM-DD)", dcc.Input(
            id=ids.CAP_BY, type="text", value=state["by"], placeholder="in 90 days",
            debounce=True, className="knob-input")),
    ], className="knobs")


_KNOB_INPUTS = [Input(i, "value") for i in KNOB_IDS.values()]
EXPORT_IDS = (ids.CAP_EXPORT_HTML, ids.CAP_EXPORT_PDF, ids.CAP_EXPORT_CSV)
# each export link's tooltip and disabled state (components.capacity.export_links)
_EXPORT_STATE = [Output(i, p) for i in EXPORT_IDS for p in ("title", "aria-disabled")]


@dash.callback(Output(ids.CAP_BANNERS, "children"), Output(ids.CAP_ANSWER, "children"),
               Output(ids.CAP_TABLE, "rowData"), Output(ids.CAP_CLUSTER_CHART, "figure"),
               Output(ids.CAP_BROKER_CHART, "figure"), *_EXPORT_STATE,
               *_KNOB_INPUTS, State(ids.CAP_STATE, "data"))
def draw(window, growth, add, mbp, mp, topic, by, view):
    """The forecast of the knobs' scenario; when it is refused (no history yet, Prometheus
    not answering, a bad knob), the banner says why and the exports, which take the same
    query, are shown disabled with the same reason."""
    values = dict(zip(KNOB_IDS, (window, growth, add, mbp, mp, topic, by), strict=True))
    try:
        # typed into the page's fields: a refusal names the field as labelled here
        state = capacity_view.parse_view({**values, **view}, capacity_view.KNOB_NAMES)
        answer, label = reports.capacity_answer(state)
    except (BadInput, Unavailable) as e:
        return ([banners.banner(str(e), cap.refusal_kind(e))], "", [], *_no_charts(),
                *cap.export_links(cap.export_refusal(view["cluster"], e), len(EXPORT_IDS)))
    notes = [banners.banner(f"The forecast ran without the cluster: {answer['warning']}.",
                            "warning")] if answer.get("warning") else []
    verdict = answer["planned_topic"]
    if verdict and not verdict["accepted_today"]:
        notes.append(banners.banner(f"The planned topic would be refused today: "
                                    f"{verdict['error']}", "warning"))
    rows = cap.table_records(capacity.table_frame(answer))
    return (notes, cap.brokers_to_add_text(answer, label, rows), rows, cap.cluster_chart(answer),
            cap.broker_chart(answer), *cap.export_links(None, len(EXPORT_IDS)))


def _no_charts() -> tuple:
    """The two charts' places, each titled with what it would show (the banner says why
    there is no forecast)."""
    why = "No forecast: the banner above says why"
    return (charts.empty(cap.CLUSTER_TITLE, why), charts.empty(cap.BROKER_TITLE, why))


# the knobs write the URL and the export links in the browser (no server round trip)
dash.clientside_callback(
    """
    function(window_, growth, add, mbp, mp, topic, by, view) {
        const params = new URLSearchParams();
        const zero = (v) => v === null || v === undefined || Number(v) === 0 && v !== "";
        const knobs = {cluster: view.cluster, window: window_ === 30 ? null : window_,
                       growth: zero(growth) ? null : growth, add: zero(add) ? null : add, mbp: mbp,
                       mp: mp, topic: topic, by: by, end: view.end};
        for (const [k, v] of Object.entries(knobs)) {
            if (v !== null && v !== undefined && v !== "") { params.set(k, v); }
        }
        const q = params.toString() ? "?" + params.toString() : "";
        if (window.location.search !== q) {
            window.history.replaceState({}, "", window.location.pathname + q);
        }
        return ["/reports/capacity.html" + q, "/reports/capacity.pdf" + q,
                "/reports/capacity.csv" + q];
    }""",
    Output(ids.CAP_EXPORT_HTML, "href"), Output(ids.CAP_EXPORT_PDF, "href"),
    Output(ids.CAP_EXPORT_CSV, "href"), *_KNOB_INPUTS, State(ids.CAP_STATE, "data"))
