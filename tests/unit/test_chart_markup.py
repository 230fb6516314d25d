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


def test_a_kafka_client_id_is_text_in_every_chart_that_names_principals():
    """A Kafka client picks its own client.id, and the quota charts, the incident report
    and the quota sweep name principals by it: a legend entry, a hover label, a tick or a
    burst label reading <a href> drew a live link on Railyard's own page."""
    principal = f"tenant/{PHISH}"
    escaped = charts.as_text(principal)
    frame = pd.DataFrame({"time": pd.to_datetime(["2026-03-01 09:00", "2026-03-01 09:10"]),
                          "value": [1.0, 2.0], "series": [principal] * 2})
    trace = charts.time_series(frame, "t", "x")["data"][0]
    assert trace["name"] == escaped
    assert trace["hovertemplate"] == "%{x}<br>%{y:,.4~f} x<extra>%{fullData.name}</extra>"
    curve = pd.DataFrame({"t": [0.0, 1.0], "principal": [principal] * 2, "tokens": [5.0, -1.0]})
    bucket = charts.token_bucket(curve, curve.iloc[1:], {principal: 10.0}, "t")
    assert [t.name for t in bucket.data] == [escaped, f"{escaped}: rejected"]
    assert bucket.layout.annotations[0].text == f"burst 10: {escaped}"
    bars = charts.tokens_vs_burst([principal], [-1.0], [10.0], "t")
    assert list(bars.data[0].x) == [escaped] and list(bars.data[1].x) == [escaped]
    rows = pd.DataFrame({"rate": [1.0, 2.0], "rejected": [0, 3], "user": ["tenant"] * 2,
                         "client_id": [PHISH] * 2})
    sweep = charts.sweep_figure("quota", rows)
    shown = " ".join(str(t.name) + str(t.hovertemplate) for t in sweep.data)
    assert "<a " not in shown
    for figure in (bucket, bars, sweep):
        assert "<a href" not in figure.to_json()


def test_a_long_title_puts_its_window_on_a_second_line():
    """"Tokens per principal, the fewest in each 15 s · last 15 min, live" was cut off at
    "li" in a half-width panel at 1024 px; the window goes on a line of its own there."""
    short = charts.titled("Mutation rate", "last 15 min, live")
    assert short == "Mutation rate · last 15 min, live"
    long = charts.titled("Tokens per principal, the fewest in each 15 s", "last 15 min, live")
    assert long == "Tokens per principal, the fewest in each 15 s<br>last 15 min, live"
    one, two = (charts.empty(t, "nothing") for t in (short, long))
    assert two.layout.margin.t == one.layout.margin.t + charts.TITLE_LINE_PX
