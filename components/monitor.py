"""The frame of every monitoring page (title, time control, banners, view state) and the
helpers its callbacks share to turn live answers into figures and banners.

The view state (cluster, time range) comes from the URL when the page is opened and lives
in the page's ``ids.VIEW`` store afterwards: the time control updates the store and the
URL in the browser (a clientside callback), and the page's charts follow the store, so a
range change redraws charts in place instead of re-rendering the page.
"""

from __future__ import annotations

import json
import time

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
from dash import dcc, html

from backend.errors import BadInput
from components import banners, charts, timerange
from dashboard import ids, runtime


def frame(title: str, banner_id: str, query: dict, body: list,
          banner_slots: list | None = None) -> html.Div:
    rt = runtime.current()
    c = rt.cluster(query.get("cluster"))
    key, start, end = query.get("range"), query.get("from"), query.get("to")
    state = {"cluster": c.name, "range": key if key in timerange.LABELS else timerange.DEFAULT,
             "from": start, "to": end}
    return html.Div([
        dcc.Store(id=ids.VIEW, data=state),
        html.H1([title, html.Small(f"cluster {c.name}")]),
        timerange.control(key, start, end, rt.config.server.refresh_seconds),
        html.Div(banner_slots, id=banner_id),
        *body,
    ])


def window(state: dict) -> tuple[timerange.Window, list]:
    """The window the view asks for, and a banner when an absolute range is unusable
    (the page then shows the live window rather than nothing)."""
    now = time.time()
    try:
        return timerange.window(state["range"], state.get("from"), state.get("to"), now), []
    except BadInput as e:
        return timerange.window(timerange.DEFAULT, None, None, now), [
            banners.banner(f"Time range: {e}; showing live instead", "warning")]


def figure(frame_or_error, title: str, unit: str, w: timerange.Window,
           limit: float | None = None, limit_name: str = "limit"):
    """A time-series figure over the window, or a figure saying why there is none."""
    if not isinstance(frame_or_error, pd.DataFrame):
        return charts.empty(f"{title} · {w.label}", short(str(frame_or_error)))
    if frame_or_error.empty:
        return charts.empty(f"{title} · {w.label}", f"No samples in {w.label}")
    rows = frame_or_error.assign(time=frame_or_error["time"].dt.tz_convert(None))
    return charts.time_series(rows, f"{title} · {w.label}", unit, limit=limit,
                              limit_name=limit_name, x_range=(_utc(w.start), _utc(w.end)))


def _utc(t: float) -> str:
    return pd.Timestamp(t, unit="s").strftime("%Y-%m-%d %H:%M:%S")


def short(message: str) -> str:
    """An error message short enough for a chart's note (the PromQL is in the log)."""
    return message.split(" (", 1)[0] if "no series" in message else message


def metric_note(figure: dict) -> str | None:
    """A card's note when its figure could not be read."""
    return None if figure["error"] is None else short(figure["error"])


def cached(page: str, state: dict, w: timerange.Window, draw):
    """A page's drawn answer for one window, kept for the cache TTL (dashboard config):
    flipping back to a range, or a refresh within the same step, redraws nothing."""
    rt = runtime.current()
    key = f"{page}|{state['cluster']}|{w.key}|{w.start}|{w.end}|{w.step}"
    hit = rt.cache.get(key)
    if hit is not None:
        return hit
    answer = tuple(_plain(part) for part in draw())
    rt.cache.set(key, answer, timeout=rt.config.cache.default_timeout)
    return answer


def _plain(part):
    """Figures as the JSON they are sent as: a cache hit then unpickles plain lists (under
    a millisecond) instead of rebuilding and re-validating a plotly Figure (tens of ms)."""
    if isinstance(part, go.Figure):
        return json.loads(pio.to_json(part, validate=False))
    return part
