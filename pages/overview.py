"""/ Overview: every partition guard rail of a cluster at a glance; near or over stands out."""

from __future__ import annotations

import dash
from dash import Input, Output, dcc, html

from backend.services import views
from backend.services.views import Unavailable
from components import banners, charts, monitor
from components.help import term
from components.tables import card
from dashboard import ids, runtime

dash.register_page(__name__, path="/", name="Overview", title="Railyard · Overview", order=0)


def layout(**query) -> html.Div:
    return monitor.frame("Overview", ids.OV_STATE, ids.OV_BANNERS, query, [
        html.Div(id=ids.OV_CARDS, className="cards"),
        html.Div(dcc.Graph(id=ids.OV_BROKER_BARS, config={"displayModeBar": False}),
                 className="panel"),
    ])


@dash.callback(Output(ids.OV_CARDS, "children"), Output(ids.OV_BROKER_BARS, "figure"),
               Output(ids.OV_BANNERS, "children"),
               Input(ids.OV_STATE, "data"), Input(ids.REFRESH, "n_intervals"))
def show(state, _tick):
    notes = monitor.source_banners(state)
    try:
        g = views.guard_rails(runtime.current().source(state["cluster"]))
    except Unavailable as e:
        return [], charts.empty("Partitions per broker", "No assignment to show"), \
            [banners.banner(str(e), "error"), *notes]
    limit = g["limits"]["max.broker.partitions"]
    brokers = g["brokers"]
    fig = charts.limit_bars([str(b["id"]) for b in brokers], [b["replicas"] for b in brokers],
                            limit, "Partition replicas per broker against max.broker.partitions")
    if g["over"]:
        notes.insert(0, banners.banner(f"Brokers {g['over']} are over max.broker.partitions "
                                       f"({limit:,}): new partitions cannot go there", "error"))
    elif g["near"]:
        notes.insert(0, banners.banner(f"Brokers {g['near']} are within 10% of "
                                       f"max.broker.partitions ({limit:,})", "warning"))
    return _cards(g), fig, notes


def _cards(g: dict) -> list:
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
