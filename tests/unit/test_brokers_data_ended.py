"""The Brokers page of a cluster whose metrics end before the window (the demo's incident
cluster, its data ending 2024-01-01 01:00, viewed live) said both "No data in this
window: cluster incident's metrics end at 2024-01-01 01:00 UTC" and "Some broker figures
are missing: no data yet for produce bytes/s per broker (all topics): the brokers do not
export it, or Prometheus has not scraped them yet", and every chart repeated the second.
It now words this case as the Overview and Throttles do (components.monitor.View): the
banner linking to the data, and charts saying where the data ends; the exporters' guess
stays for a cluster scraped at the window's end."""

from __future__ import annotations

import dash
import pytest

from backend.metrics.client import MetricMissing
from backend.services import monitoring
from tests.unit.test_monitoring_view import said
from tests.unit.test_plan_view import app, as_user, page, text_of  # noqa: F401 (a fixture)

END = 1_704_070_800.0  # 2024-01-01 01:00 UTC
EXPORTERS = ("no data yet for produce bytes/s per broker (all topics): the brokers do not "
             "export it, or Prometheus has not scraped them yet")
LIVE = {"cluster": "demo", "range": "live", "from": None, "to": None}
ENDED = "no data in this window: the cluster's metrics end at 2024-01-01 01:00 UTC"


@pytest.fixture
def brokers(app, monkeypatch):  # noqa: F811
    """The Brokers page on a cluster whose Prometheus answers nothing at the window's end."""
    module = page("/brokers")
    monkeypatch.setattr(monitoring, "broker_figures", lambda source, w: {
        "bytes_in": {}, "lag": {}, "up": {}, "errors": [EXPORTERS]})
    monkeypatch.setattr(monitoring, "broker_series", lambda source, broker, w: {
        "bytes": MetricMissing(EXPORTERS), "lag": MetricMissing(EXPORTERS),
        "partitions": MetricMissing(EXPORTERS)})
    monkeypatch.setattr(module.caches, "drawn", lambda page, state, w, build: build())
    ctx = as_user(app, "olga")
    yield module
    ctx.pop()


def test_data_ending_before_the_window_is_said_once_not_guessed_at(brokers, monkeypatch):
    monkeypatch.setattr(monitoring, "data_ends_before", lambda source, w: END)
    rows, notes = brokers.show_grid(LIVE, 0)
    banners = text_of(notes)
    assert rows and "No data in this window: cluster demo's metrics end at 2024-01-01 " \
        "01:00 UTC." in banners and "Show the hour before it" in banners
    assert "Some broker figures are missing" not in banners, banners
    assert "do not export it" not in banners
    _, *figures = brokers.show_broker(None, LIVE, 0)
    assert [said(f) for f in figures] == [ENDED] * 3


def test_a_cluster_scraped_at_the_windows_end_keeps_the_metrics_own_reason(brokers,
                                                                          monkeypatch):
    monkeypatch.setattr(monitoring, "data_ends_before", lambda source, w: None)
    _, notes = brokers.show_grid(LIVE, 0)
    assert text_of(notes) == f"Some broker figures are missing: {EXPORTERS}"
    _, *figures = brokers.show_broker(None, LIVE, 0)
    assert [said(f) for f in figures] == [EXPORTERS] * 3


def test_the_broker_grid_shows_every_row_of_a_few_dozen_brokers(brokers):
    """At 360 px the grid showed 7 of the demo's 9 brokers, broker 9 (the one with lag)
    under an inner scroll: up to WHOLE_ROWS brokers it is as tall as its rows."""
    style, options = brokers.grid_size(9)
    assert options["domLayout"] == "autoHeight" and style["height"] is None
    assert options["rowSelection"]["mode"] == "singleRow"
    assert brokers.grid_size(brokers.WHOLE_ROWS)[1]["domLayout"] == "autoHeight"
    style, options = brokers.grid_size(brokers.WHOLE_ROWS + 1)
    assert options["domLayout"] == "normal" and style["height"] == \
        f"{brokers.LARGE_GRID_PX}px"
    assert brokers.size_grid([{}] * 9, brokers.grid_size(9)[1]) == (dash.no_update,
                                                                   dash.no_update)
