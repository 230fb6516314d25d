"""A chart of a line per broker on a 100-broker cluster keeps its plot: its legend is a
box of a few rows that scrolls, its names in id order, instead of plotly's legend taking
half the figure (the plot shrank to 84 of 320 px on /throttles); a chart of 3 brokers is
drawn as before."""

import pandas as pd
import pytest

from components import charts, monitor, timerange

START = 1_796_000_000


def brokers(n: int, prefix: str = "") -> pd.DataFrame:
    """Chart rows of ``n`` brokers over three samples, broker b at b bytes/s."""
    return pd.DataFrame({
        "time": pd.to_datetime([START + 60 * k for b in range(n) for k in range(3)], unit="s"),
        "value": [float(b + 1) for b in range(n) for _ in range(3)],
        "series": [f"{prefix}{b + 1}" for b in range(n) for _ in range(3)]})


def plot_px(layout: dict) -> float:
    return layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]


def test_a_chart_of_100_brokers_has_a_legend_that_scrolls_under_a_plot_of_full_height():
    few = charts.time_series(brokers(3), "Replica lag per broker", "messages")["layout"]
    many = charts.time_series(brokers(100), "Replica lag per broker", "messages")
    layout, legend = many["layout"], many["layout"]["legend"]
    assert len(many["data"]) == 100  # every broker is drawn, none summed away
    assert legend["orientation"] == "h" and legend["yanchor"] == "top"
    assert legend["maxheight"] == charts.SCROLLED_LEGEND_PX  # plotly scrolls past it
    assert legend["title"]["text"] == "100 lines: double-click a name to show it alone"
    # the bottom margin holds the time ticks and the whole box (plotly grows no margin,
    # so the plot does not give way), and the figure grew by what the box adds: the plot
    # is as tall as at 3 brokers
    assert layout["margin"]["b"] >= charts.TIME_TICKS_PX + legend["maxheight"]
    assert plot_px(layout) == plot_px(few)
    assert -legend["y"] * plot_px(layout) == pytest.approx(charts.TIME_TICKS_PX)
    # each line still names its broker on hover
    assert all(t["hovertemplate"].endswith("<extra>%{fullData.name}</extra>")
               for t in many["data"])


def test_a_chart_of_3_brokers_keeps_its_legend_as_it_was():
    layout = charts.time_series(brokers(3), "Replica lag per broker", "messages")["layout"]
    assert layout["height"] == 320
    assert layout["margin"]["b"] == charts.SERIES_BOTTOM_PX
    assert layout["legend"] == {"orientation": "h", "yanchor": "top",
                                "y": -charts.TIME_TICKS_PX / plot_px(layout)}


def test_the_legend_scrolls_past_max_legend_series_lines_only():
    at_most = charts.time_series(brokers(charts.MAX_LEGEND_SERIES), "t", "messages")
    past = charts.time_series(brokers(charts.MAX_LEGEND_SERIES + 1), "t", "messages")
    assert "maxheight" not in at_most["layout"]["legend"]  # the overview's 12 fullest
    assert past["layout"]["legend"]["maxheight"] == charts.SCROLLED_LEGEND_PX


def test_lines_are_named_in_broker_id_order():
    """As strings the legend read 1, 10, 100, 11, ...: broker 57 was nowhere to look."""
    names = [t["name"] for t in charts.time_series(brokers(100), "t", "messages")["data"]]
    assert names == [str(b) for b in range(1, 101)]
    rates = pd.concat([brokers(12, "leader "), brokers(12, "follower ")])
    names = [t["name"] for t in charts.time_series(rates, "t", "bytes/s")["data"]]
    assert names == [f"follower {b}" for b in range(1, 13)] + \
        [f"leader {b}" for b in range(1, 13)]
    assert [charts.by_id(n) < charts.by_id(m) for n, m in (("9", "10"), ("a-2", "a-10"),
                                                           ("tenant", "tenant/2"))] == \
        [True, True, True]
    # a principal's name is what its client chose: any text sorts, digits or not
    assert sorted(["x²", "²", "٣", "app-1", "3"], key=charts.by_id) == \
        ["3", "app-1", "x²", "²", "٣"]


def test_plan_markers_keep_the_scrolling_legend_under_the_ticks():
    """A band row grows the top margin: the legend is placed again for the plot's new
    height and keeps its box."""
    fig = charts.time_series(brokers(100), "t", "bytes/s")
    events = [{"kind": "batch", "plan_id": 7, "at": START + 30, "state": "batch 1 started",
               "title": "drain", "user": "olga"},
              {"kind": "batch", "plan_id": 7, "at": START + 90, "state": "batch 1 done",
               "title": "drain", "user": "olga"}]
    marked = charts.with_plan_markers(fig, events)["layout"]
    assert marked["margin"]["t"] > fig["layout"]["margin"]["t"]  # the band row
    assert marked["legend"]["maxheight"] == charts.SCROLLED_LEGEND_PX
    assert -marked["legend"]["y"] * plot_px(marked) == pytest.approx(charts.TIME_TICKS_PX)


def test_the_monitoring_pages_draw_a_broker_chart_of_100_lines_with_the_scrolling_legend():
    w = timerange.viewable("abs", "2026-11-30T00:00", "2026-11-30T00:10", START + 3600)
    frame = brokers(100).assign(time=lambda f: f["time"].dt.tz_localize("UTC"))
    figure = monitor.figure(frame, "Reassignment bytes in per broker", "bytes/s", w)
    assert figure["layout"]["legend"]["maxheight"] == charts.SCROLLED_LEGEND_PX
    assert [t["name"] for t in figure["data"]][:3] == ["1", "2", "3"]
