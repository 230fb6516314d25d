"""What every monitoring page's callbacks share: the window a view asks for, and live
answers turned into figures and banners (the page's frame is dashboard.shell.page_frame,
the callback's skeleton dashboard.monitoring_view.monitored)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from dash import dcc, html

from backend.errors import BadInput
from components import banners, charts, timerange


def window(state: dict) -> tuple[timerange.Window, list]:
    """The window the view asks for, and a banner when an absolute range is unusable
    (the page then shows the live window rather than nothing)."""
    now = time.time()
    try:
        return timerange.viewable(state["range"], state.get("from"), state.get("to"), now), []
    except BadInput as e:
        return timerange.window(timerange.DEFAULT, None, None, now), [
            banners.banner(f"Time range: {e}; showing live instead", "warning")]


@dataclass
class View:
    """One drawing of a monitoring page: the cluster and window asked for, the source read,
    the banners so far (a page's draw adds its own), and when the cluster's data ends if
    it ends before the window does (then that is why the figures at its end are empty,
    and every figure when it all lies before the window)."""

    cluster: str
    window: timerange.Window
    source: Any  # backend.services.cluster.ClusterSource
    notes: list = field(default_factory=list)
    data_end: float | None = None

    @property
    def when(self) -> str:
        """'now', or when a past window ends: the moment a "now" figure shows."""
        return "now" if self.window.refreshing else f"at {self.window.end_label}"

    @property
    def before(self) -> bool:
        """All the cluster's data lies before the window."""
        return self.data_end is not None and self.data_end < self.window.start

    def missing(self, error: object, at_end: bool = False) -> str:
        """Why a figure could not be drawn: where the cluster's data ends, when the window
        (or, for a figure ``at_end``, its end) lies after it: the metric's own error would
        guess at exporters. Else the error."""
        if self.before:
            return f"no data in this window: the cluster's metrics end at {_iso(self.data_end)}"
        if at_end and self.data_end is not None:
            return (f"no data at the window's end: the cluster's metrics end at "
                    f"{_iso(self.data_end)}")
        return str(error)

    def note(self, figure: dict) -> str | None:
        """A card's note (a figure at the window's end) when it could not be read (None
        when it was)."""
        return None if figure["error"] is None else self.missing(figure["error"], at_end=True)

    def figure(self, frame_or_error, title: str, unit: str, **options) -> Any:
        """``figure`` over this view's window, saying the real reason when it is empty."""
        if not isinstance(frame_or_error, pd.DataFrame):
            frame_or_error = self.missing(frame_or_error)
        return figure(frame_or_error, title, unit, self.window, **options)


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(t))


def figure(frame_or_error, title: str, unit: str, w: timerange.Window,
           limit: float | None = None, limit_name: str = "limit", events: list | None = None):
    """A time-series figure over the window, or a figure saying why there is none;
    ``events`` (plan events in the window) become vertical markers."""
    titled = charts.titled(title, w.label)
    if not isinstance(frame_or_error, pd.DataFrame):
        return charts.empty(titled, str(frame_or_error))
    if frame_or_error.empty:
        return charts.empty(titled, f"No samples in {w.label}")
    rows = frame_or_error.assign(time=frame_or_error["time"].dt.tz_convert(None))
    return charts.with_plan_markers(
        charts.time_series(rows, titled, unit, limit=limit,
                           limit_name=limit_name, x_range=(_utc(w.start), _utc(w.end))),
        events or [])


def _utc(t: float) -> str:
    return pd.Timestamp(t, unit="s").strftime("%Y-%m-%d %H:%M:%S")


def data_elsewhere(newest: float | None, window_start: float, cluster: str, path: str,
                   link_id: str) -> list:
    """A banner with a link to the hour that ends at the cluster's newest sample, when its
    data ends before the window shown does (None: nothing to say)."""
    if newest is None:
        return []
    end = time.strftime("%Y-%m-%dT%H:%M", time.gmtime(newest))
    start = time.strftime("%Y-%m-%dT%H:%M", time.gmtime(newest - 3600))
    href = f"{path}?cluster={cluster}&range=abs&from={start}&to={end}"
    ends = f"cluster {cluster}'s metrics end at {end.replace('T', ' ')} UTC"
    said = f"No data in this window: {ends}. " if newest < window_start else \
        f"No data at this window's end: {ends}. "
    return [html.Div([said, dcc.Link("Show the hour before it", href=href, id=link_id)],
                     className="banner banner-info", role="status")]
