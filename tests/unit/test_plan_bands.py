"""Batch markers do not bury the charts: one band per plan execution with its batches on
hover (60-600 "#N batch k" labels stacked before), and a marker near the right edge reads
leftwards instead of being cut off ("#1 proposed" was)."""

from __future__ import annotations

from datetime import timedelta

import pandas as pd
import pytest

from components import charts
from tests.plan_helpers import T0

START = T0.timestamp()


def x(at: float) -> str:
    """A time as the chart's x axis writes it."""
    return pd.Timestamp(at, unit="s").strftime("%Y-%m-%d %H:%M:%S")


def series(minutes: int = 60) -> dict:
    frame = pd.DataFrame({"time": pd.to_datetime([T0, T0 + timedelta(minutes=minutes)])
                          .tz_convert(None), "value": [1.0, 2.0], "series": ["a", "a"]})
    return charts.time_series(frame, "t", "x", x_range=(
        x(START), x(START + minutes * 60)))


def batch_events(plan_id: int, batches: int, first: float) -> list[dict]:
    return [{"at": first + 20 * k + (10 if what == "ended" else 0), "plan_id": plan_id,
             "kind": "batch", "state": f"batch {k + 1} {what}", "user": "railyard",
             "title": f"plan {plan_id}'s moves"}
            for k in range(batches) for what in ("started", "ended")]


def test_one_band_per_execution_with_its_batches_on_hover():
    events = batch_events(7, 30, START + 60) + batch_events(8, 5, START + 1800)
    fig = charts.with_plan_markers(series(), events)
    bands = [s for s in fig["layout"]["shapes"] if s["type"] == "rect"]
    assert [(b["x0"], b["x1"]) for b in bands] == [
        (x(START + 60), x(START + 60 + 20 * 29 + 10)),
        (x(START + 1800), x(START + 1800 + 20 * 4 + 10))]
    labels = fig["layout"]["annotations"]
    assert [a["text"] for a in labels] == ["#7: 30 batches", "#8: 5 batches"]
    hover = labels[0]["hovertext"].split("<br>")
    assert hover[0] == "plan 7: plan 7's moves"
    assert hover[1].endswith("batch 1 started") and hover[2].endswith("batch 1 ended")
    assert hover[-1] == f"... and {60 - charts.BATCH_LINES_ON_HOVER} more"
    assert len(fig["layout"]["shapes"]) == 2  # no line per batch event


def test_a_marker_near_the_right_edge_reads_leftwards():
    events = [{"at": START + 60, "plan_id": 1, "state": "approved", "user": "anna",
               "title": "t"},
              {"at": START + 3590, "plan_id": 1, "state": "proposed", "user": "olga",
               "title": "t"}]
    fig = charts.with_plan_markers(series(), events)
    anchors = {a["text"]: a["xanchor"] for a in fig["layout"]["annotations"]}
    assert anchors == {"#1 approved": "left", "#1 proposed": "right"}


def test_labels_of_events_seconds_apart_do_not_sit_on_one_another():
    """A plan proposed, approved and executed within seconds, and another beside it, drew
    six labels on three rows over one another ("#12 proposed" on "#13 proposed"): labels
    on one row now start at least a label's width apart on the narrowest plot, the events
    too close for a label of their own are counted on the one before ("+5 events") and named in
    its hover, and every event keeps its line."""
    states = [(12, "proposed"), (12, "approved"), (12, "executing"), (13, "proposed"),
              (13, "approved"), (12, "completed")]
    events = [{"at": START + 900 + 5 * i, "plan_id": p, "state": s, "user": "anna",
               "title": f"plan {p}"} for i, (p, s) in enumerate(states)]
    events += [{"at": START + 2400 + 30 * i, "plan_id": 14, "state": s, "user": "olga",
                "title": "t"} for i, s in enumerate(("proposed", "approved"))]
    fig = charts.with_plan_markers(series(), events)
    lines = [s for s in fig["layout"]["shapes"] if s["type"] == "line"]
    assert len(lines) == len(events)
    labels = fig["layout"]["annotations"]
    px = charts.NARROWEST_PLOT_PX / 3600  # the hour's pixels per second

    def left_right(a: dict) -> tuple[float, float]:
        at = pd.Timestamp(a["x"]).timestamp() - START
        width = len(a["text"]) * charts.MARKER_CHAR_PX
        return (at * px - width, at * px) if a["xanchor"] == "right" else \
            (at * px, at * px + width)

    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            if a["y"] == b["y"]:
                (_, a1), (b0, _) = sorted([left_right(a), left_right(b)])
                assert a1 <= b0, (a["text"], b["text"])
    assert [a["text"] for a in labels] == ["#12 proposed +5 events", "#14 proposed +1 event"]
    hover = labels[0]["hovertext"].split("<br>")
    assert [h.split(" (")[1] for h in hover] == [f"{s} by anna)" for _, s in states]
    assert hover[3] == "09:15:15 plan 13: plan 13 (proposed by anna)"


def test_marker_labels_sit_above_the_lines_and_the_limit_label():
    """On the overview's replicas chart "#6 proposed +3" was drawn on the
    "max.broker.partitions = 12,500" label and its line, both near the axis's top: the
    axis now rises so the label rows (at the plot's top) lie above every line, the limit
    line and its label; and the count says what it counts."""
    frame = pd.DataFrame({"time": pd.to_datetime([T0, T0 + timedelta(minutes=60)])
                          .tz_convert(None), "value": [12_000.0, 12_100.0],
                          "series": ["1", "1"]})
    plain = charts.time_series(frame, "Partition replicas per broker", "replicas",
                               limit=12_500, limit_name="max.broker.partitions",
                               x_range=(x(START), x(START + 3600)))
    events = [{"at": START + 600 + i, "plan_id": 6, "state": s, "user": "anna",
               "title": "t"} for i, s in enumerate(("proposed", "approved", "executing",
                                                      "completed"))]
    events += [{"at": START + 2400, "plan_id": 7, "state": "proposed", "user": "anna",
                "title": "t"}, *batch_events(6, 2, START + 610)]
    fig = charts.with_plan_markers(plain, events)
    layout = fig["layout"]
    labels = [a for a in layout["annotations"] if a.get("yref") == "paper"
              and a["yanchor"] == "top"]
    assert [a["text"] for a in labels] == ["#6 proposed +3 events", "#7 proposed"]
    low, top = layout["yaxis"]["range"]
    plot_px = layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]

    def px_from_top(value: float) -> float:
        return (top - value) / (top - low) * plot_px

    lowest_label = max((1 - a["y"]) * plot_px for a in labels) + charts.MARKER_ROW_PX
    assert px_from_top(12_500) - charts.LIMIT_LABEL_PX >= lowest_label  # limit and label
    assert px_from_top(12_100) >= lowest_label  # the highest line
    assert all(a["bgcolor"] == charts.LABEL_BACKGROUND for a in labels)
    assert plain["layout"]["yaxis"].get("range") is None  # unmarked: plotly's autorange


def test_a_two_line_title_and_the_legend_keep_clear_of_the_band_row_and_the_date():
    """"Partition health, the most in each 15 s" over "last 15 min, live" lost its top
    line once a band row grew the top margin (plotly draws a multi-line title anchored
    at its top CAP_SHIFT higher); the legend, at -0.2 of the plot's height, sat on the
    date under the first time tick."""
    plain = series()
    plain["layout"]["title"]["text"] = "Partition health, the most in each 15 s<br>last"
    fig = charts.with_plan_markers(plain, batch_events(7, 3, START + 60))
    layout = fig["layout"]
    title_top_px = (1 - layout["title"]["y"]) * layout["height"]
    assert title_top_px == pytest.approx(charts.TITLE_TOP_PX + charts.CAP_SHIFT_EM * 15)
    for figure in (plain, fig):
        lay = figure["layout"]
        plot_px = lay["height"] - lay["margin"]["t"] - lay["margin"]["b"]
        assert lay["legend"]["yanchor"] == "top"
        assert -lay["legend"]["y"] * plot_px == pytest.approx(charts.TIME_TICKS_PX)
        assert lay["margin"]["b"] >= charts.TIME_TICKS_PX + charts.LEGEND_ROW_PX
