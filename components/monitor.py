"""The frame of every monitoring page: title, time control, banners, view state.

The view state (cluster, time range) comes from the URL query string and is stored on
the page, so the page's callbacks read one store instead of parsing the URL again.
"""

from __future__ import annotations

import time

from dash import dcc, html

from backend.errors import BadInput
from backend.services import views
from backend.services.views import Unavailable
from components import banners, timerange
from dashboard import runtime


def frame(title: str, state_id: str, banner_id: str, query: dict, body: list) -> html.Div:
    rt = runtime.current()
    c = rt.cluster(query.get("cluster"))
    key, start, end = query.get("range"), query.get("from"), query.get("to")
    state = {"cluster": c.name, "range": key or timerange.DEFAULT, "from": start, "to": end}
    return html.Div([
        dcc.Store(id=state_id, data=state),
        html.H1([title, html.Small(f"cluster {c.name}")]),
        timerange.control(key, start, end, rt.config.server.refresh_seconds),
        html.Div(id=banner_id),
        *body,
    ])


def window(state: dict) -> timerange.Window:
    """The window the page's URL asks for (a bad absolute range falls back to live)."""
    try:
        return timerange.window(state["range"], state["from"], state["to"], time.time())
    except BadInput:
        return timerange.window(timerange.DEFAULT, None, None, time.time())


def source_banners(state: dict) -> list:
    """Banners for the sources this cluster's monitoring needs and cannot reach."""
    source = runtime.current().source(state["cluster"])
    try:
        views.prometheus_status(source.prometheus_url)
    except Unavailable as e:
        return [banners.banner(str(e), "warning")]
    return []
