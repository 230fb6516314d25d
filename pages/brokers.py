"""/brokers: a sortable grid per broker: rack, replicas, leaders, headroom, stored bytes."""

from __future__ import annotations

import dash
import pandas as pd
from dash import Input, Output, html

from backend.services import views
from backend.services.views import Unavailable
from components import banners, monitor, tables
from dashboard import ids, runtime

dash.register_page(__name__, path="/brokers", name="Brokers", title="Railyard · Brokers",
                   order=1)


def layout(**query) -> html.Div:
    return monitor.frame("Brokers", ids.BR_STATE, ids.BR_BANNERS, query, [
        html.Div(id=ids.BR_GRID, className="panel"),
    ])


@dash.callback(Output(ids.BR_GRID, "children"), Output(ids.BR_BANNERS, "children"),
               Input(ids.BR_STATE, "data"), Input(ids.REFRESH, "n_intervals"))
def show(state, _tick):
    notes = monitor.source_banners(state)
    try:
        g = views.guard_rails(runtime.current().source(state["cluster"]))
    except Unavailable as e:
        return None, [banners.banner(str(e), "error"), *notes]
    limit = g["limits"]["max.broker.partitions"]
    frame = pd.DataFrame([{
        "broker": b["id"], "rack": b["rack"] or "-", "replicas": b["replicas"],
        "leaders": b["leaders"], "headroom": b["capacity"],
        "used_pct": None if not limit else round(100 * b["replicas"] / limit, 1),
        "stored_gb": round(b["bytes"] / 1e9, 2),
    } for b in g["brokers"]])
    style = {"styleConditions": [
        {"condition": "params.data.used_pct > 100", "style": {"backgroundColor": "#fdecec"}},
        {"condition": "params.data.used_pct >= 90", "style": {"backgroundColor": "#fff6e0"}},
    ]}
    return tables.grid(frame, ids.BR_GRID + "-table", height=420, getRowStyle=style), notes
