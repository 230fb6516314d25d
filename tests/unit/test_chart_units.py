"""Figures people read: byte rates in kB/s, MB/s, GB/s on axes and labels; lines that
would hide one another drawn with different dashes."""

import pandas as pd

from components import charts


def test_rate_text_reads_as_people_say_it():
    assert [charts.rate_text(v) for v in (950, 12_300, 1e6, 5e6, 2.5e9)] == [
        "950 B/s", "12.3 kB/s", "1 MB/s", "5 MB/s", "2.5 GB/s"]


def test_rate_text_never_writes_an_exponent():
    """2,000,000 typed into the reassignments page's MB/s throttle (Kafka's bytes/s habit)
    previewed "at a throttle of 2e+03 GB/s"; 999,600 B/s, rounded to 3 digits, read
    "1e+03 kB/s". Thousands of GB/s are TB/s, and past that whole numbers with commas."""
    assert [charts.rate_text(v) for v in (2e12, 1.234e12, 2e15, 9.2e18)] == [
        "2 TB/s", "1.23 TB/s", "2,000 TB/s", "9,200,000 TB/s"]
    assert [charts.rate_text(v) for v in (999_600, 999.6e6, 999.6e9, 999.6)] == [
        "1 MB/s", "1 GB/s", "1 TB/s", "1 kB/s"]
    for exponent in range(0, 19):
        for mantissa in (1, 1.5, 9.996):
            assert "e" not in charts.rate_text(mantissa * 10**exponent).lower()


def test_byte_rate_axes_carry_si_prefixes_and_the_unit():
    frame = pd.DataFrame({"time": pd.to_datetime([0, 60, 120], unit="s"),
                          "value": [1e6, 2e6, 3e6], "series": ["leader 1"] * 3})
    fig = charts.time_series(frame, "rates", "bytes/s")
    assert fig["layout"]["yaxis"]["tickformat"] == "~s"
    assert fig["layout"]["yaxis"]["ticksuffix"] == "B/s"
    band = charts.safe_band(["1"], [1e6], [9e7], 5e6, [True], "band")
    assert band.layout.yaxis.ticksuffix == "B/s"
    assert band.layout.annotations[0].text == "throttle 5 MB/s"


def test_leader_and_follower_lines_are_told_apart():
    frame = pd.DataFrame({"time": pd.to_datetime([0, 60, 120] * 2, unit="s"),
                          "value": [1e6] * 6, "series": ["leader 3"] * 3 + ["follower 9"] * 3})
    dashes = {t["name"]: t["line"]["dash"] for t in charts.time_series(
        frame, "rates", "bytes/s")["data"]}
    assert dashes == {"follower 9": "dot", "leader 3": "solid"}


def test_equal_sweep_lines_stay_visible():
    rows = pd.DataFrame({"max_broker_partitions": [1, 2, 1, 2], "min_capacity": [0, 0, 0, 0],
                         "add_brokers": [0, 0, 1, 1]})
    fig = charts.sweep_lines(rows, "max_broker_partitions", "min_capacity", "add_brokers",
                             "t", "y")
    assert fig.data[0].line.dash != fig.data[1].line.dash


def _milli_free(axis) -> bool:
    """A linear bytes axis writes ticks closer than 1 B/s without SI prefixes (plotly's
    "~s" reads 0.2 as "200m": millibytes)."""
    stops = [s if isinstance(s, dict) else s.to_plotly_json()
             for s in (axis["tickformatstops"] if isinstance(axis, dict)
                       else axis.tickformatstops) or ()]
    return any(s["dtickrange"][0] is None and s["dtickrange"][1] >= 1
               and "s" not in s["value"] for s in stops)


def test_a_bytes_axis_never_writes_milli_bytes():
    frame = pd.DataFrame({"time": pd.to_datetime([0, 60], unit="s"), "value": [0.0, 0.0],
                          "series": ["leader 1"] * 2})
    assert _milli_free(charts.time_series(frame, "rates", "bytes/s")["layout"]["yaxis"])
    rates = charts.rate_vs_configured(["1"], [0.4], [0], [None], [None], "t")
    assert _milli_free(rates.layout.yaxis)
    assert _milli_free(charts.safe_band(["1"], [0.1], [0.9], 0.5, [True], "band").layout.yaxis)
    # a log axis ticks per decade: its ticks keep their prefixes (1MB/s, not 1000000B/s)
    eta = charts.eta_curve([1e6, 1e7], [3600, 360], 1e6, "eta")
    assert not eta.layout.xaxis.tickformatstops and eta.layout.xaxis.tickformat == "~s"


def test_nothing_throttled_is_said_not_drawn_as_an_empty_axis():
    nothing = charts.rate_vs_configured(["1", "2"], [0, 0], [0, 0], [None, None],
                                        [None, None], "Throttled bytes/s now")
    assert not nothing.data and not nothing.layout.yaxis.visible
    assert [a.text for a in nothing.layout.annotations] == [charts.NOTHING_THROTTLED]
    assert len(charts.NOTHING_THROTTLED) <= charts.EMPTY_LINE_CHARS  # one line
    said = charts.rate_vs_configured([], [], [], [], [], "t", nothing="no throttle set")
    assert [a.text for a in said.layout.annotations] == ["no throttle set"]
    # an idle throttle (configured, nothing moving) is drawn: its configured rate shows
    idle = charts.rate_vs_configured(["1"], [0], [0], [1e6], [None], "t")
    assert idle.data and idle.layout.yaxis.visible is not False


def test_a_lone_series_still_names_its_broker():
    frame = pd.DataFrame({"time": pd.to_datetime([0, 60, 120], unit="s"),
                          "value": [1.0, 2.0, 3.0], "series": ["9"] * 3})
    fig = charts.time_series(frame, "Replica lag per broker", "messages")
    assert [t["name"] for t in fig["data"]] == ["9"]
    assert fig["layout"]["showlegend"] is True  # plotly hides the legend of one trace


def test_configured_leader_and_follower_rates_are_told_apart():
    for follower in ([2e6, 2e6], [1e6, 5e5]):  # one rate each; rates that differ by broker
        fig = charts.rate_vs_configured(["1", "2"], [1e6, 0], [5e5, 0], [1e6, 5e5],
                                        follower, "t")
        ticks = {t.name: t.marker.color for t in fig.data if t.type == "scatter"}
        leader, follower_ = (next(c for n, c in ticks.items() if side in n)
                             for side in ("leader", "follower"))
        assert len(ticks) == 2 and leader != follower_, ticks
    # rates unknown (a past window): no legend entry says "configured ... rate" of nothing
    past = charts.rate_vs_configured(["1"], [1e6], [0], [None], [None], "t")
    assert [t.name for t in past.data] == ["leader throttled B/s", "follower throttled B/s"]


def _hovers(figure) -> list[str]:
    """Every hover label's template and the texts it shows of each point."""
    traces = figure["data"] if isinstance(figure, dict) else [
        t.to_plotly_json() for t in figure.data]
    out = []
    for t in traces:
        out.append(t.get("hovertemplate") or "")
        for d in t.get("customdata") if t.get("customdata") is not None else ():
            out += [str(x) for x in (d if isinstance(d, list | tuple) else [d])]
    return out


def test_a_hover_label_never_writes_milli_units():
    """Plotly's "%{y:,.4~s}" wrote 0.5 B/s as "500mB/s" (read as megabytes), as the
    ticks did before: every hover of a byte rate writes a fraction as a decimal."""
    frame = pd.DataFrame({"time": pd.to_datetime([0, 60, 120], unit="s"),
                          "value": [0.5, float("nan"), 1_159_000.0],
                          "series": ["leader 1"] * 3})
    fig = charts.time_series(frame, "rates", "bytes/s")
    trace = fig["data"][0]  # a time series writes the value whole: 0.5 B/s, 1,159,000 B/s
    assert "%{y:,.4~f} B/s<extra>" in trace["hovertemplate"] and "customdata" not in trace
    lag = charts.time_series(frame.assign(value=[0.25, 2.0, 1234.0]), "lag", "ms")
    assert "%{y:,.4~f} ms<extra>" in lag["data"][0]["hovertemplate"]
    figures = [fig, lag, charts.rate_vs_configured(["1"], [0.4], [0.02], [0.5], [None], "t"),
               charts.safe_band(["1"], [0.1], [0.9], 0.5, [True], "band"),
               charts.eta_curve([0.5, 1e7], [3600, 360], 1e6, "eta")]
    for figure in figures:
        shown = _hovers(figure)
        assert not any("~s" in h or h.endswith("mB/s") or "m B/s" in h for h in shown), shown
    band = _hovers(figures[3])
    assert "0.1 B/s" in band and "0.9 B/s" in band  # the band's ends, not its height
    assert charts.hover_texts([-0.00001, -0.5, 0.0], "bytes/s") == ["0 B/s", "-0.5 B/s",
                                                                      "0 B/s"]


def test_the_lowest_rate_label_keeps_clear_of_the_first_time_label():
    """"0B/s" sits centred on the x axis line and "09:00" just under it: the two touched
    in the chart's lower left corner. The time labels stand off below the axis."""
    frame = pd.DataFrame({"time": pd.to_datetime([0, 60], unit="s"), "value": [0.0, 2e6],
                          "series": ["leader 1"] * 2})
    for x_range in (None, ("1970-01-01 00:00:00", "1970-01-01 00:01:00")):
        xaxis = charts.time_series(frame, "rates", "bytes/s", x_range=x_range)["layout"]["xaxis"]
        assert xaxis["ticklabelstandoff"] >= 6  # half a 12 px label, under the axis line
    assert xaxis["range"] == ["1970-01-01 00:00:00", "1970-01-01 00:01:00"]
