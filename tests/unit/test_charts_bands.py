"""A batch band's label sits above the plot, in a row of the top margin made for it: at
the plot's foot it was drawn on whatever series ran low there (an idle rate at 0 B/s)."""

from __future__ import annotations

from components import charts
from tests.unit.test_plan_bands import START, batch_events, series


def test_band_labels_sit_above_the_plot_not_on_its_lines():
    plain = series()
    fig = charts.with_plan_markers(plain, batch_events(7, 30, START + 60)
                                   + batch_events(8, 5, START + 3300))
    labels = [a for a in fig["layout"]["annotations"] if "batches" in a["text"]]
    assert [a["text"] for a in labels] == ["#7: 30 batches", "#8: 5 batches"]
    for a in labels:  # paper coordinates: 1 is the plot's top edge, the label rests on it
        assert a["yref"] == "paper" and a["y"] >= 1 and a["yanchor"] == "bottom", a
    assert labels[1]["xanchor"] == "right"  # near the right edge it still reads leftwards
    # the top margin grew by a row for them, and the title stays at the figure's top
    margin, title = fig["layout"]["margin"], fig["layout"]["title"]
    assert margin["t"] == plain["layout"]["margin"]["t"] + charts.BAND_ROW_PX
    assert title["yanchor"] == "top" and title["text"] == plain["layout"]["title"]["text"]
    assert fig["layout"]["height"] == plain["layout"]["height"]


def test_a_chart_without_bands_keeps_its_margin_and_title():
    plain = series()
    marked = charts.with_plan_markers(plain, [{"at": START + 60, "plan_id": 1,
                                               "state": "approved", "user": "anna",
                                               "title": "t"}])
    assert marked["layout"]["margin"] == plain["layout"]["margin"]
    assert marked["layout"]["title"] == plain["layout"]["title"]
