"""The frame around every page: title, navigation, cluster picker, and the page itself."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import dash
from dash import Input, Output, State, ctx, dcc, html, no_update

from backend.errors import BadInput
from components import timerange, urlstate
from dashboard import ids
from dashboard.config import DashboardConfig

NAV_ITEMS = (("/", "Overview"), ("/brokers", "Brokers"), ("/throttles", "Throttles"),
             ("/quotas", "Quotas"), ("/what-if", "What-if"))


def layout(config: DashboardConfig) -> html.Div:
    names = [c.name for c in config.clusters]
    picker = dcc.Dropdown(id=ids.CLUSTER_PICKER, options=names, value=names[0],
                          clearable=False, className="cluster-picker",
                          style={} if len(names) > 1 else {"display": "none"})
    return html.Div([
        dcc.Location(id=ids.URL, refresh="callback-nav"),
        html.Header([
            html.Div([html.Span("Railyard", className="brand"),
                      html.Span("Kafka guard rails", className="tagline")]),
            html.Nav([dcc.Link(label, href=path, className="nav-link", id=f"nav-{label.lower()}")
                      for path, label in NAV_ITEMS], id=ids.NAV),
            html.Div([html.Label("Cluster", htmlFor=ids.CLUSTER_PICKER,
                                 hidden=len(names) < 2), picker], className="picker-box"),
        ], className="topbar"),
        html.Div(id="app-error", className="banner banner-error", hidden=True),
        html.Main(dash.page_container, className="page"),
    ])


def register(app: dash.Dash) -> None:
    """Shell callbacks: cluster picker and time control write the URL; nav keeps it."""

    @app.callback(Output(ids.URL, "search", allow_duplicate=True),
                  Output(ids.CLUSTER_PICKER, "value"),
                  Input(ids.CLUSTER_PICKER, "value"), Input(ids.URL, "search"),
                  prevent_initial_call="initial_duplicate")
    def cluster_in_url(picked: str, search: str):
        if ctx.triggered_id == ids.CLUSTER_PICKER:
            return urlstate.updated(search, cluster=picked), no_update
        named = urlstate.parse(search).get("cluster")
        return no_update, named if named else no_update

    @app.callback([Output(f"nav-{label.lower()}", "href") for _, label in NAV_ITEMS],
                  Input(ids.URL, "search"))
    def nav_keeps_view(search: str):
        kept = urlstate.shared(search)
        return [path + kept for path, _ in NAV_ITEMS]

    @app.callback(Output(ids.URL, "search", allow_duplicate=True),
                  Output(ids.RANGE_ERROR, "children"),
                  Input(ids.RANGE, "value"), Input(ids.RANGE_APPLY, "n_clicks"),
                  State(ids.RANGE_FROM, "value"), State(ids.RANGE_TO, "value"),
                  State(ids.URL, "search"), prevent_initial_call=True)
    def range_in_url(key: str, _clicks, start: str, end: str, search: str):
        if key != "abs":
            return urlstate.updated(search, range=key, **{"from": None, "to": None}), ""
        if ctx.triggered_id == ids.RANGE:  # switching to absolute: start from the last hour
            now = time.time()
            start, end = (datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M")
                          for t in (now - 3600, now))
        try:
            timerange.window("abs", start, end, time.time())
        except BadInput as e:
            return no_update, str(e)
        return urlstate.updated(search, range="abs", **{"from": start, "to": end}), ""
