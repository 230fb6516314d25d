"""Plan titles and user names are text in chart labels, never markup (issue 27 item 7):
plotly.js draws <a href> in hover text and annotations as a live link, so a title could put
a phishing link on the Overview, Throttles and Brokers plan markers."""

from __future__ import annotations

import pandas as pd

from components import charts

PHISH = '<a href="https://evil.example/phish" target="_blank">Approve the fix here</a>'


def test_a_title_with_a_link_is_shown_as_written_on_plan_markers():
    frame = pd.DataFrame({"time": pd.to_datetime(["2026-03-01 09:00", "2026-03-01 09:10"]),
                          "value": [1.0, 2.0], "series": ["a", "a"]})
    fig = charts.time_series(frame, "t", "x")
    marked = charts.with_plan_markers(fig, [{"at": 1772355900.0, "plan_id": 7,
                                             "state": "proposed", "user": "<b>mallory</b>",
                                             "title": PHISH}])
    hover = marked["layout"]["annotations"][-1]["hovertext"]
    assert "<" not in hover and ">" not in hover
    assert hover == ('plan 7: &lt;a href="https://evil.example/phish" target="_blank"&gt;'
                     "Approve the fix here&lt;/a&gt; (proposed by &lt;b&gt;mallory&lt;/b&gt;)")


def test_as_text_escapes_what_plotly_reads_as_markup():
    assert charts.as_text("a < b & c > d<br>") == "a &lt; b &amp; c &gt; d&lt;br&gt;"
    assert charts.as_text("drain 3") == "drain 3"
