"""/ Overview: every guard rail of a cluster at a glance; near or over a limit stands out.

Two callbacks, so the limit bars (from the assignment) never wait for Prometheus: the
assignment's figures, and the health figures and series over the chosen window."""

from __future__ import annotations

import dash
from dash import Input, Output, State, dcc, html

from backend.errors import Unavailable
from backend.services import limits, monitoring
from backend.services.cluster import assignment_note
from components import banners, charts, monitor
from components.help import term
from components.tables import card
from dashboard import caches, ids, runtime, shell

dash.register_page(__name__, path="/", name="Overview", title="Railyard · Overview", order=0)

GRAPH = {"displayModeBar": False}


def layout(**query) -> html.Div:
    cards, bars, notes = assignment_view(runtime.current().cluster(query.get("cluster")).name)
    return shell.page_frame("Overview", ids.OV_BANNERS, query, [
        html.Div(id=ids.OV_HEALTH, className="cards"),
        html.Div(cards, id=ids.OV_CARDS, className="cards"),
        html.Div(dcc.Graph(id=ids.OV_BROKER_BARS, figure=bars, config=GRAPH),
                 className="panel"),
        html.Div([html.Div(dcc.Graph(id=ids.OV_HEALTH_SERIES, config=GRAPH), className="panel"),
                  html.Div(dcc.Graph(id=ids.OV_PARTITIONS_SERIES, config=GRAPH),
                           className="panel")], className="grid-2"),
    ], banner_slots=[html.Div(notes, id=ids.OV_LIMIT_BANNERS),
                     html.Div(id=ids.OV_METRIC_BANNERS)])


@dash.callback(Output(ids.OV_CARDS, "children"), Output(ids.OV_BROKER_BARS, "figure"),
               Output(ids.OV_LIMIT_BANNERS, "children"),
               Input(ids.REFRESH, "n_intervals"), State(ids.VIEW, "data"),
               prevent_initial_call=True)
def refresh_assignment(_tick, state):
    """The assignment has no history: drawn with the page, refreshed on the clock only."""
    return assignment_view(state["cluster"])


def assignment_view(cluster: str):
    source = runtime.current().source(cluster)
    try:
        g = limits.guard_rails(source)
    except Unavailable as e:
        return [], charts.empty("Partitions per broker", "No assignment to show"), \
            [banners.banner(str(e), "error")]
    limit = g["limits"]["max.broker.partitions"]
    brokers = g["brokers"]
    fig = charts.limit_bars([str(b["id"]) for b in brokers], [b["replicas"] for b in brokers],
                            limit, "Partition replicas per broker in the assignment, "
                                   "against max.broker.partitions")
    notes = [banners.banner(n, "warning") for n in [assignment_note(source)] if n]
    if g["over"]:
        notes.append(banners.banner(f"Brokers {g['over']} are over max.broker.partitions "
                                    f"({limit:,}): new partitions cannot go there", "error"))
    elif g["near"]:
        notes.append(banners.banner(f"Brokers {g['near']} are within 10% of "
                                    f"max.broker.partitions ({limit:,})", "warning"))
    return _assignment_cards(g), fig, notes


@dash.callback(Output(ids.OV_HEALTH, "children"), Output(ids.OV_HEALTH_SERIES, "figure"),
               Output(ids.OV_PARTITIONS_SERIES, "figure"),
               Output(ids.OV_METRIC_BANNERS, "children"),
               Input(ids.VIEW, "data"), Input(ids.REFRESH, "n_intervals"))
def show_health(state, _tick):
    w, notes = monitor.window(state)
    return caches.drawn("overview", state, w, lambda: _health(state, w, notes))


def _health(state, w, notes):
    source = runtime.current().source(state["cluster"])
    try:
        h = monitoring.health(source, w)
    except Unavailable as e:
        why = str(e)
        return [], charts.empty("Partition health", why), \
            charts.empty("Partitions per broker over time", why), \
            [banners.banner(why, "warning"), *notes]
    limit = source.limits.max_broker_partitions
    return (_health_cards(h["figures"], w),
            monitor.figure(h["health_series"], "Partition health", "partitions", w),
            monitor.figure(h["partitions_series"], "Partition replicas per broker" + (
                f" ({h['partitions_shown']})" if h["partitions_shown"] else ""), "replicas",
                           w, limit=limit, limit_name=f"max.broker.partitions = {limit:,}"
                           if limit else "limit"),
            notes)


def _health_cards(f: dict, w) -> list:
    at = "at the end of the window" if not w.refreshing else "now"

    def count(label, key, bad="over", detail_name="brokers", when=at):
        fig = f[key]
        value = fig["value"]
        state = "ok" if not value else bad
        detail = fig["detail"]
        note = monitor.metric_note(fig) or (
            f"{detail_name} {', '.join(map(str, detail[:8]))}{' ...' if len(detail) > 8 else ''}"
            if detail else when)
        return card(label, "-" if value is None else f"{value:,.0f}", state, note)

    throttles = f["throttles"]
    return [
        count(term("Under-replicated", "under-replicated"), "under_replicated"),
        count(term("Under min ISR", "under-min-isr"), "under_min_isr"),
        count(term("Offline", "offline"), "offline"),
        count("Reassigning", "reassigning", bad="near"),
        count("Brokers down", "brokers_down"),
        count(term("Throttles in force", "throttle"), "throttles", bad="near",
              detail_name="configured on brokers" if throttles.get("basis") == "configured"
              else "throttled traffic on brokers"),
        count(term("Throttled principals", "tokens"), "throttled_principals",
              detail_name=f"throttled in {w.label}:", when=f"none in {w.label}"),
    ]


def _assignment_cards(g: dict) -> list:
    cluster_limit = g["limits"]["max.partitions"]
    used = g["cluster_partitions"]
    headroom = [b["capacity"] for b in g["brokers"] if b["capacity"] is not None]
    return [
        card(term("Cluster replicas", "max.partitions"),
             f"{used:,}" + (f" / {cluster_limit:,}" if cluster_limit else ""),
             charts_state(used, cluster_limit),
             None if cluster_limit is None else f"{g['cluster_capacity']:,} left"),
        card(term("Brokers near the limit", "max.broker.partitions"), str(len(g["near"])),
             "near" if g["near"] else "ok", ", ".join(map(str, g["near"])) or None),
        card("Brokers over the limit", str(len(g["over"])), "over" if g["over"] else "ok",
             ", ".join(map(str, g["over"])) or None),
        card(term("Least headroom", "headroom"),
             "unlimited" if not headroom else f"{min(headroom):,}",
             note="replicas before the fullest broker is at its limit"),
        card("Topics / partitions", f"{g['topics']:,} / {g['partitions']:,}",
             note=f"{len(g['brokers'])} brokers in {len(g['racks'])} racks"),
    ]


def charts_state(value: float, limit: float | None) -> str:
    colour = charts.state_colour(value, limit)
    return {charts.OVER: "over", charts.NEAR: "near"}.get(colour, "ok")
