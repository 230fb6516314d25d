"""What every monitoring page's callbacks share: the window a view asks for, and live
answers turned into figures and banners (the page's frame is dashboard.shell.page_frame)."""

from __future__ import annotations

import time

import pandas as pd
from dash import dcc, html

from backend.errors import BadInput
from components import banners, charts, timerange


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
           limit: float | None = None, limit_name: str = "limit", events: list | None = None):
    """A time-series figure over the window, or a figure saying why there is none;
    ``events`` (plan events in the window) become vertical markers."""
    if not isinstance(frame_or_error, pd.DataFrame):
        return charts.empty(f"{title} · {w.label}", str(frame_or_error))
    if frame_or_error.empty:
        return charts.empty(f"{title} · {w.label}", f"No samples in {w.label}")
    rows = frame_or_error.assign(time=frame_or_error["time"].dt.tz_convert(None))
    return charts.with_plan_markers(
        charts.time_series(rows, f"{title} · {w.label}", unit, limit=limit,
                           limit_name=limit_name, x_range=(_utc(w.start), _utc(w.end))),
        events or [])


def _utc(t: float) -> str:
    return pd.Timestamp(t, unit="s").strftime("%Y-%m-%d %H:%M:%S")


def metric_note(figure: dict) -> str | None:
    """A card's note when its figure could not be read."""
    return figure["error"]


def data_elsewhere(newest: float | None, cluster: str, path: str, link_id: str) -> list:
    """A banner with a link to the hour that ends at the cluster's newest sample, when all
    its data is older than the window shown (None: nothing to say)."""
    if newest is None:
        return []
    end = time.strftime("%Y-%m-%dT%H:%M", time.gmtime(newest))
    start = time.strftime("%Y-%m-%dT%H:%M", time.gmtime(newest - 3600))
    href = f"{path}?cluster={cluster}&range=abs&from={start}&to={end}"
    return [html.Div([f"No data in this window: cluster {cluster}'s metrics end at "
                      f"{end.replace('T', ' ')} UTC. ",
                      dcc.Link("Show the hour before it", href=href, id=link_id)],
                     className="banner banner-info", role="status")]
