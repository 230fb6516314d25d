"""/what-if: rehearse a change before making it: limits, throttles, quotas, and sweeps
of many scenarios on Spark (a background job with a progress bar and a cancel button)."""

from __future__ import annotations

import io
import math
import time
import uuid

import dash
import pandas as pd
from dash import Input, Output, State, dcc, html, no_update

from backend.errors import BadInput, Unavailable
from backend.services import (
    capacity,
    fields,
    limits,
    plan_preview,
    quota,
    throttle,
    uploads,
    whatif,
)
from backend.services.cluster import ClusterSource, cluster_snapshot
from backend.services.plan_preview import MAX_THROTTLE
from components import banners, charts, reports, tables, timerange
from components.help import term
from dashboard import ids, jobs, runtime

dash.register_page(__name__, path="/what-if", name="What-if", title="Railyard · What-if",
                   order=4)

DEFAULT_THROTTLE_LOG10 = math.log10(50e6)
SWEEP_DEFAULTS = {
    "limits": "max.broker.partitions=4000,6000,8000; add_brokers=0,1,2",
    "throttle": "throttle=5e6,10e6,20e6,50e6,100e6,200e6; window_num=11",
    "quota": "rate=2,5,10,20; samples=11",
    "fleet": "growth_pct_month=0,10; add_brokers=0,2",
}


def layout(cluster: str | None = None, tab: str | None = None, **_query) -> html.Div:
    rt = runtime.current()
    c = rt.cluster(cluster)
    return html.Div([
        dcc.Store(id=ids.WI_STATE, data={"cluster": c.name}),
        html.H1(["What-if ", html.Small(f"cluster {c.name}")]),
        html.Div(id=ids.WI_BANNERS),
        dcc.Tabs(id=ids.WI_TABS, value=tab or "limits", children=[
            dcc.Tab(label="Partition limits", value="limits", children=_limits_tab(c)),
            dcc.Tab(label="Replication throttle", value="throttle",
                    children=_throttle_tab(c.adaptive_throttle.network_capacity)),
            dcc.Tab(label="Mutation quota", value="quota", children=_quota_tab(c)),
            dcc.Tab(label="Sweeps on Spark", value="sweeps",
                    children=_sweep_tab(_limits_grid(rt.source(c.name)))),
        ]),
    ])


def _limits_tab(c) -> html.Div:
    lim = c.limits
    return html.Div([
        html.P(["Place a new topic, or grow one, as Kafka would, under ",
                term("max.broker.partitions"), " and ", term("max.partitions"),
                ". Leave a limit empty to use the cluster's."], className="explain"),
        html.Div([
            tables.field("Change", dcc.RadioItems(id=ids.WI_LIM_ACTION, value="create", inline=True,
                                            options=[{"label": "create topic", "value": "create"},
                                                     {"label": "add partitions",
                                                      "value": "add"}])),
            tables.field("Topic", dcc.Input(id=ids.WI_LIM_TOPIC, value="orders-v2", type="text")),
            tables.field("Partitions", tables.number_input(ids.WI_LIM_PARTITIONS, 24),
                         "for add partitions: the total after"),
            tables.field("Replication factor", tables.number_input(ids.WI_LIM_RF, 3)),
            tables.field(term("max.broker.partitions"), tables.number_input(
                ids.WI_LIM_MBP, placeholder=str(lim.max_broker_partitions or "cluster's"))),
            tables.field(term("max.partitions"), tables.number_input(
                ids.WI_LIM_MP, placeholder=str(lim.max_partitions or "cluster's"))),
            html.Button("Preview placement", id=ids.WI_LIM_RUN, className="button primary"),
        ], className="form-row"),
        html.Div(id=ids.WI_LIM_ERROR, className="inline-error", role="alert"),
        html.Div(id=ids.WI_LIM_VERDICT),
        dcc.Loading(dcc.Graph(id=ids.WI_LIM_BARS, config={"displayModeBar": False},
                              figure=charts.empty("Replicas per broker",
                                                  "Preview a change to see it here"))),
        html.Div(id=ids.WI_LIM_PLACEMENT),
    ], className="tab-body")


@dash.callback(Output(ids.WI_LIM_VERDICT, "children"), Output(ids.WI_LIM_BARS, "figure"),
               Output(ids.WI_LIM_PLACEMENT, "children"), Output(ids.WI_LIM_ERROR, "children"),
               Output(ids.WI_BANNERS, "children", allow_duplicate=True),
               Input(ids.WI_LIM_RUN, "n_clicks"),
               State(ids.WI_LIM_ACTION, "value"), State(ids.WI_LIM_TOPIC, "value"),
               State(ids.WI_LIM_PARTITIONS, "value"), State(ids.WI_LIM_RF, "value"),
               State(ids.WI_LIM_MBP, "value"), State(ids.WI_LIM_MP, "value"),
               State(ids.WI_STATE, "data"), prevent_initial_call=True)
def preview_limits(_clicks, action, topic, partitions, rf, mbp, mp, state):
    try:
        r = limits.whatif(runtime.current().source(state["cluster"]), action, topic,
                                partitions, rf, mbp, mp)
    except BadInput as e:  # no answer: the last one's chart would pass for this input's
        return None, _no_result("Replicas per broker"), None, str(e), no_update
    except Unavailable as e:
        return (None, _no_result("Replicas per broker"), None, "",
                banners.banner(str(e), "error"))
    t = r["topics"][0]
    verdict = banners.banner(
        f"{'Accepted' if t['ok'] else 'Rejected'}: {t['name']}"
        + ("" if t["ok"] else f": {t['error']}")
        + ("" if not t["ok"] else (" (Kafka's own placement)" if t["kafka_compatible"]
                                   else " (limit-aware placement: Kafka's would break a limit)")),
        "info" if t["ok"] else "error")
    after = [r["broker_partitions_after"][b] for b in r["brokers"]]
    fig = charts.capacity_bars(r["brokers"], r["broker_partitions_before"], after,
                               r["limits"]["max.broker.partitions"],
                               "Replicas per broker after the change")
    return verdict, fig, tables.placement(t["assignment"]), "", []


def _throttle_tab(cluster_capacity: float) -> html.Div:
    marks = {v: charts.rate_text(10 ** v) for v in range(5, 10)}  # 100 kB/s .. 1 GB/s
    return html.Div([
        html.P(["Choose a ", term("throttle", "throttle"), " for a reassignment: the ",
                term("ETA", "eta"), ", the ", term("safe band"), " per broker and the ",
                term("fetch size", "fetch size"), " check. Upload a plan, or rehearse the "
                "balance plan Railyard proposes for this cluster."], className="explain"),
        html.Div([
            # no accept filter (here and below): the browser drops a file it filters out
            # without a word; the server says what is wrong with any file
            dcc.Upload(id=ids.WI_TH_PLAN, children=html.Button("Upload plan JSON",
                                                               className="button")),
            html.Span(id=ids.WI_TH_PLAN_NAME, className="hint"),
            tables.field(term("Network capacity N (MB/s)", "network capacity"),
                         tables.number_input(ids.WI_TH_CAPACITY,
                                             placeholder=f"{cluster_capacity / 1e6:g}",
                                             debounce=True),
                         f"empty: this cluster's, {charts.rate_text(cluster_capacity)}"),
        ], className="form-row"),
        html.Div([
            html.Span("Throttle", className="field-label"),
            html.Div(dcc.Slider(id=ids.WI_TH_RATE, min=5, max=9, step=0.05,
                                value=DEFAULT_THROTTLE_LOG10, marks=marks,
                                updatemode="mouseup", allow_direct_input=False),
                     className="slider"),
            tables.number_input(ids.WI_TH_RATE_EXACT,
                                round(10 ** DEFAULT_THROTTLE_LOG10 / 1e6, 3),
                                debounce=True, className="rate-input"),
            html.Span("MB/s", className="hint"),
        ], className="slider-row"),
        html.Div(id=ids.WI_TH_ERROR, className="inline-error", role="alert"),
        dcc.Loading(html.Div([
            html.Div(id=ids.WI_TH_SUMMARY, className="cards"),
            html.Div([dcc.Graph(id=ids.WI_TH_BAND, config={"displayModeBar": False}),
                      dcc.Graph(id=ids.WI_TH_ETA, config={"displayModeBar": False})],
                     className="two-col"),
        ])),
    ], className="tab-body")


@dash.callback(Output(ids.WI_TH_RATE, "value"), Output(ids.WI_TH_RATE_EXACT, "value"),
               Input(ids.WI_TH_RATE, "value"), Input(ids.WI_TH_RATE_EXACT, "value"),
               prevent_initial_call=True)
def sync_throttle(log_rate, exact_mb):
    """The slider (log scale, for a feel of the range) and the box (exact) move together."""
    if dash.ctx.triggered_id == ids.WI_TH_RATE_EXACT:
        try:
            mb = fields.number(exact_mb, "throttle", above=0)
        except BadInput:
            return no_update, no_update  # the throttle's own callback says what is wrong
        return (no_update if mb is None else math.log10(mb * 1e6)), no_update
    return no_update, round(10 ** log_rate / 1e6, 3)


@dash.callback(Output(ids.WI_TH_SUMMARY, "children"), Output(ids.WI_TH_BAND, "figure"),
               Output(ids.WI_TH_ETA, "figure"),
               Output(ids.WI_TH_PLAN_NAME, "children"), Output(ids.WI_TH_ERROR, "children"),
               Output(ids.WI_BANNERS, "children", allow_duplicate=True),
               Input(ids.WI_TH_RATE_EXACT, "value"), Input(ids.WI_TH_PLAN, "contents"),
               Input(ids.WI_TH_CAPACITY, "value"), State(ids.WI_TH_PLAN, "filename"),
               State(ids.WI_STATE, "data"), prevent_initial_call="initial_duplicate")
def plan_throttle(exact_mb, contents, capacity, filename, state):
    rt = runtime.current()
    source = rt.source(state["cluster"])
    # the brokers' network as the cluster's config says (1 GbE unless it says more), as the
    # reassignments page previews with: the default N, and what raises the unit-slip bound
    configured = rt.cluster(state["cluster"]).adaptive_throttle.network_capacity
    try:
        rate_mb = fields.number(exact_mb, "throttle", above=0, limit=MAX_THROTTLE / 1e6,
                                required=True, unit="MB/s")
        plan_preview.refuse_past_network(rate_mb, configured)
        capacity_mb = fields.number(capacity, "network capacity", above=0,
                                    limit=MAX_THROTTLE / 1e6, unit="MB/s",
                                    empty="this cluster's")
        if capacity_mb is not None:
            plan_preview.refuse_past_network(capacity_mb, configured, "network capacity")
        rate = rate_mb * 1e6
        capacity = configured if capacity_mb is None else capacity_mb * 1e6
        uploaded = uploads.json_object(contents, filename, rt.config.server.max_upload_bytes)
        plan, name = throttle.reassignment_for(source, uploaded, filename)
        r = throttle.whatif(source, plan, rate, capacity)
    except BadInput as e:  # no answer: the last one's charts would pass for this input's
        return None, *_no_throttle(), no_update, str(e), no_update
    except Unavailable as e:
        return None, *_no_throttle(), no_update, "", banners.banner(str(e), "error")
    brokers = r["brokers"]
    band = charts.safe_band([str(b["id"]) for b in brokers],
                            [b["safe_band"]["low"] for b in brokers],
                            [b["safe_band"]["high"] for b in brokers], rate,
                            [b["in_safe_band"] for b in brokers],
                            "KIP-73 safe band per throttled broker")
    eta = charts.eta_curve(r["eta_curve"]["throttle"], r["eta_curve"]["eta_seconds"], rate,
                           "Predicted ETA against the throttle")
    return tables.throttle_cards(r), band, eta, f"plan: {name}", "", []


def _no_throttle() -> tuple:
    return (_no_result("KIP-73 safe band per throttled broker"),
            _no_result("Predicted ETA against the throttle"))


def _quota_tab(c) -> html.Div:
    q = c.quota
    return html.Div([
        html.P(["Replay a workload of CreateTopics / CreatePartitions / DeleteTopics requests "
                "(JSON Lines) through Kafka's ", term("token buckets", "tokens"), " in ",
                term("strict", "strict"), " mode. Without an upload, the example workload ",
                html.Code(quota.EXAMPLE_WORKLOAD), " is replayed."], className="explain"),
        html.Div([
            dcc.Upload(id=ids.WI_QU_REQUESTS, children=html.Button("Upload workload .jsonl",
                                                                   className="button")),
            html.Span(id=ids.WI_QU_REQUESTS_NAME, className="hint"),
            tables.field("Rate (partitions/s)",
                         tables.number_input(ids.WI_QU_RATE, q.controller_mutation_rate or 5)),
            tables.field(term("Samples", "burst"),
                         tables.number_input(ids.WI_QU_SAMPLES, q.window_num)),
            tables.field("Window (s)", tables.number_input(ids.WI_QU_WINDOW, q.window_seconds)),
            html.Button("Replay", id=ids.WI_QU_RUN, className="button primary"),
        ], className="form-row"),
        html.Div(id=ids.WI_QU_ERROR, className="inline-error", role="alert"),
        dcc.Loading(html.Div([
            dcc.Graph(id=ids.WI_QU_BUCKET, config={"displayModeBar": False},
                      figure=charts.empty("Tokens per principal", "Replay a workload")),
            html.Div(id=ids.WI_QU_SUMMARY),
        ])),
    ], className="tab-body")


@dash.callback(Output(ids.WI_QU_BUCKET, "figure"), Output(ids.WI_QU_SUMMARY, "children"),
               Output(ids.WI_QU_REQUESTS_NAME, "children"), Output(ids.WI_QU_ERROR, "children"),
               Input(ids.WI_QU_RUN, "n_clicks"), Input(ids.WI_QU_REQUESTS, "contents"),
               State(ids.WI_QU_REQUESTS, "filename"), State(ids.WI_QU_RATE, "value"),
               State(ids.WI_QU_SAMPLES, "value"), State(ids.WI_QU_WINDOW, "value"),
               prevent_initial_call=True)
def replay_quota(_clicks, contents, filename, rate, samples, window):
    try:
        rt = runtime.current()
        with quota.workload_for_job(contents, filename, rt.work_dir,
                                    rt.config.server.max_upload_bytes) as (path, name):
            r = quota.whatif(path, rate, samples, window)
    except BadInput as e:  # no answer: the last one's chart would pass for this input's
        return _no_result("Tokens per principal"), None, no_update, str(e)
    fig = charts.token_bucket(r["curve"], r["rejected"], r["bursts"],
                              f"Tokens per principal (burst {r['burst']:,.0f} partitions)")
    return fig, tables.principals(r["principals"]), name, ""


def _no_result(title: str):
    """What a form's chart shows when its input is refused: empty, as a failed sweep's."""
    return charts.empty(title, "No result")


def _limits_grid(source: ClusterSource) -> str:
    """A default limits grid around the cluster's own limit (±10%, with 0-2 new brokers)."""
    try:
        limit = cluster_snapshot(source).limits.max_broker_partitions
    except Unavailable:
        limit = None
    if not limit:
        return SWEEP_DEFAULTS["limits"]
    values = sorted({round(limit * f, -2) for f in (0.9, 0.95, 1.0, 1.05, 1.1)})
    return f"max.broker.partitions={','.join(str(int(v)) for v in values)}; add_brokers=0,1,2"


def _sweep_tab(limits_grid: str) -> html.Div:
    return html.Div([
        html.P("Many scenarios at once, on Spark: the same engines, one row per scenario. "
               "Limit sweeps place the workload under each grid point; throttle sweeps use "
               "the Throttle tab's plan; quota sweeps replay the Quota tab's workload; fleet "
               "sweeps forecast every cluster of this dashboard from its last 30 days in "
               "Prometheus (the Capacity page's engine) under each grid point.",
               className="explain"),
        dcc.Store(id=ids.WI_SW_TOKEN, data=uuid.uuid4().hex),
        dcc.Store(id=ids.WI_SW_ROWS),
        html.Div([
            tables.field("Kind", dcc.Dropdown(id=ids.WI_SW_KIND, value="limits", clearable=False,
                                        options=list(whatif.SWEEP_GRID_KEYS),
                                        style={"width": "10rem"})),
            tables.field("Grid", dcc.Input(id=ids.WI_SW_GRID, value=limits_grid, type="text",
                                     style={"width": "30rem"}),
                   "KEY=V1,V2,...; separated by ';'"),
            html.Div(tables.field("Workload (limits)", dcc.Input(
                id=ids.WI_SW_WORKLOAD, type="text", value=whatif.DEFAULT_WORKLOAD,
                style={"width": "18rem"}), "NAME:PARTITIONS:RF, ..."),
                id=ids.WI_SW_WORKLOAD_FIELD),
            html.Div(tables.field("History up to (fleet)", dcc.Input(
                id=ids.WI_SW_END, type="text", placeholder="now", style={"width": "11rem"}),
                "UTC, e.g. 2024-01-30T23:00; 30 days of each cluster's Prometheus"),
                id=ids.WI_SW_END_FIELD, hidden=True),
        ], className="form-row"),
        html.Div([
            html.Button("Run sweep", id=ids.WI_SW_RUN, className="button primary"),
            html.Button("Cancel", id=ids.WI_SW_CANCEL, className="button", disabled=True),
            html.Progress(id=ids.WI_SW_PROGRESS, value="0", max="1"),
            html.Span(id=ids.WI_SW_PROGRESS_TEXT, className="hint"),
            html.Span(id=ids.WI_SW_RESULT, className="hint"),
        ], className="form-row"),
        html.Div(id=ids.WI_SW_ERROR, className="inline-error", role="alert"),
        dcc.Graph(id=ids.WI_SW_CHART, config={"displayModeBar": False},
                  figure=charts.empty("Sweep", "Run a sweep to see it here")),
        html.Button("Download rows (CSV)", id=ids.WI_SW_DOWNLOAD_BUTTON, className="button",
                    disabled=True),
        dcc.Download(id=ids.WI_SW_DOWNLOAD),
        html.Div(id=ids.WI_SW_TABLE),
    ], className="tab-body")


@dash.callback(Output(ids.WI_SW_GRID, "value"), Output(ids.WI_SW_END_FIELD, "hidden"),
               Output(ids.WI_SW_WORKLOAD_FIELD, "hidden"),
               Input(ids.WI_SW_KIND, "value"), State(ids.WI_STATE, "data"),
               prevent_initial_call=True)
def sweep_defaults(kind, state):
    """The kind's default grid, and only the fields that kind reads."""
    if kind == "limits":
        return _limits_grid(runtime.current().source(state["cluster"])), True, False
    return SWEEP_DEFAULTS[kind], kind != "fleet", True


@dash.callback(Output(ids.WI_SW_CHART, "figure"), Output(ids.WI_SW_TABLE, "children"),
               Output(ids.WI_SW_ROWS, "data"), Output(ids.WI_SW_ERROR, "children"),
               Output(ids.WI_SW_DOWNLOAD_BUTTON, "disabled"), Output(ids.WI_SW_RESULT, "children"),
               Input(ids.WI_SW_RUN, "n_clicks"),
               State(ids.WI_SW_KIND, "value"), State(ids.WI_SW_GRID, "value"),
               State(ids.WI_SW_WORKLOAD, "value"), State(ids.WI_SW_END, "value"),
               State(ids.WI_TH_PLAN, "contents"),
               State(ids.WI_TH_PLAN, "filename"), State(ids.WI_QU_REQUESTS, "contents"),
               State(ids.WI_QU_REQUESTS, "filename"), State(ids.WI_SW_TOKEN, "data"),
               State(ids.WI_STATE, "data"),
               background=True, prevent_initial_call=True, interval=500,
               running=[(Output(ids.WI_SW_RUN, "disabled"), True, False),
                        (Output(ids.WI_SW_CANCEL, "disabled"), False, True),
                        (Output(ids.WI_SW_RESULT, "hidden"), True, False)],
               progress=[Output(ids.WI_SW_PROGRESS, "value"), Output(ids.WI_SW_PROGRESS, "max"),
                         Output(ids.WI_SW_PROGRESS_TEXT, "children")],
               progress_default=["0", "1", ""])
def run_sweep(set_progress, clicks, kind, grid, workload, end, plan_contents, plan_name,
              requests_contents, requests_name, token, state):
    rt = runtime.current()
    job = f"{token}-{clicks}"
    cancel = jobs.CancelWatch(rt.config.cache, job)
    started = time.monotonic()

    def progress(done: int, total: int) -> None:
        cancel.poll()
        set_progress([str(done), str(max(total, 1)),
                      f"{done} of {total} Spark tasks, {time.monotonic() - started:.0f} s"
                      if total else "starting Spark job..."])

    left_out = []
    try:
        set_progress(["0", "1", "preparing inputs..."])
        if kind == "fleet":
            spec, left_out = capacity.fleet_sweep(
                [rt.source(c.name) for c in rt.config.clusters], grid,
                end=timerange.parse_time(end, "history up to") if end else None)
            rows = whatif.run_for_page(spec, rt.config.spark, progress, cancel.event)
            return _sweep_answer(kind, rows, started, left_out)
        rows = whatif.sweep_for_page(
            kind, grid, workload, rt.source(state["cluster"]), (plan_contents, plan_name),
            (requests_contents, requests_name), work_dir=rt.work_dir,
            spark_config=rt.config.spark, max_upload_bytes=rt.config.server.max_upload_bytes,
            progress=progress, cancel=cancel.event)
    except (BadInput, Unavailable) as e:
        return _no_result("Sweep"), None, None, str(e), True, ""
    except whatif.SweepCancelled:
        return charts.empty("Sweep", "Cancelled"), None, None, "Sweep cancelled.", True, ""
    return _sweep_answer(kind, rows, started, left_out)


def _sweep_answer(kind: str, rows, started: float, left_out: list[dict]) -> tuple:
    missing = "".join(f"; left out {m['cluster']}: {m['error']}" for m in left_out)
    return (charts.sweep_figure(kind, rows),
            html.Div([tables.sweep_grid(rows), tables.sweep_legend(rows)]),
            rows.to_json(orient="split"), "", False,
            f"{len(rows)} rows in {time.monotonic() - started:.1f} s{missing}")


@dash.callback(Output(ids.WI_SW_PROGRESS_TEXT, "children", allow_duplicate=True),
               Input(ids.WI_SW_CANCEL, "n_clicks"), State(ids.WI_SW_RUN, "n_clicks"),
               State(ids.WI_SW_TOKEN, "data"), prevent_initial_call=True)
def cancel_sweep(_clicks, run_clicks, token):
    jobs.request_cancel(runtime.current().config.cache, f"{token}-{run_clicks}")
    return "cancelling..."


@dash.callback(Output(ids.WI_SW_DOWNLOAD, "data"), Input(ids.WI_SW_DOWNLOAD_BUTTON, "n_clicks"),
               State(ids.WI_SW_ROWS, "data"), State(ids.WI_SW_KIND, "value"),
               prevent_initial_call=True)
def download_rows(_clicks, rows, kind):
    if not rows:
        return no_update
    # pandas 3 reads a bare string as a path: the stored rows are JSON text, not a file
    frame = pd.read_json(io.StringIO(rows), orient="split")
    return dcc.send_data_frame(reports.spreadsheet_safe(tables.lists_as_text(frame)).to_csv,
                               f"railyard-{kind}-sweep.csv", index=False)

