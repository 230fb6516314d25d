"""Charts operators look at instead of reading: every figure the pages draw.

Figures take plain lists or tidy frames (never queries); colours say the state:
blue fine, amber near a limit, red over it.
"""

from __future__ import annotations

import html
import re
import textwrap
from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
from plotly.colors import sample_colorscale

from backend.model.rates import rate_text
from backend.model.snapshot import NEAR_LIMIT_RATIO, is_near

OK, NEAR, OVER, GREY, LINE = "#3b7dd8", "#e8a317", "#d64545", "#9aa5b1", "#1f2933"
MAX_LABELLED_BARS = 24


def state_colour(value: float, limit: float | None, near: float = NEAR_LIMIT_RATIO) -> str:
    """Over the limit, near it (from ``near`` of it: the config's near_limit_ratio), or ok."""
    if limit is not None and limit > 0 and value > limit:
        return OVER
    return NEAR if is_near(value, limit, near) else OK


def limit_label(name: str, value: float) -> str:
    """What a limit line says: its name and its value ("max.broker.partitions = 4,000")."""
    return f"{name} = {value:,.0f}"


def _limit_line(fig: go.Figure, limit: float, name: str, values: Sequence[float]) -> None:
    """The limit as a dashed red line, labelled with its value in the legend: a label on
    the line would sit on the value labels of the bars nearest the limit, the very bars
    an operator reads. The axis is tall enough to show the line above the tallest bar."""
    line = {"color": OVER, "dash": "dash", "width": 2}
    fig.add_hline(y=limit, line=line)
    fig.add_scatter(x=[None], y=[None], mode="lines", line=line, hoverinfo="skip",
                    name=limit_label(name, limit))
    fig.update_yaxes(range=[0, max([limit, *values]) * 1.15])


def _light_template() -> go.layout.Template:
    """plotly_white's 2-D part only: the same look, but a tenth of the time to build a
    figure and of the bytes each figure carries to the browser (no polar, 3-D, map parts)."""
    white = pio.templates["plotly_white"].layout
    keep = ("autotypenumbers", "colorway", "font", "hovermode", "hoverlabel", "paper_bgcolor",
            "plot_bgcolor", "xaxis", "yaxis", "shapedefaults", "annotationdefaults", "title")
    layout = {k: white[k].to_plotly_json() if hasattr(white[k], "to_plotly_json") else white[k]
              for k in keep}
    for axis in ("xaxis", "yaxis"):  # fixed margins (set per figure): automargin makes the
        layout[axis]["automargin"] = False  # browser lay every chart out twice
    return go.layout.Template(layout=layout)


pio.templates["railyard"] = _light_template()
_TEMPLATE_JSON = pio.templates["railyard"].to_plotly_json()


def _base_layout(title: str, height: int = 320) -> dict:
    lines = title.count("<br>")  # a second title line (titled) takes room from the plot
    return {"title": {"text": title, "x": 0, "font": {"size": 15}}, "height": height,
            "margin": {"l": 60, "r": 20, "t": 44 + TITLE_LINE_PX * lines, "b": 44},
            "legend": {"orientation": "h", "y": -0.2}}


TITLE_CHARS = 52  # a half-width panel at 1024 px holds about this many 15 px characters
TITLE_LINE_PX = 18


def titled(title: str, window: str) -> str:
    """A chart's title and its window ("last 15 min, live"): on one line when a half-width
    panel holds it, else the window on a line of its own (the end was cut off)."""
    whole = f"{title} · {window}"
    return whole if len(whole) <= TITLE_CHARS else f"{title}<br>{window}"


def _base(title: str, height: int = 320, **layout) -> go.Figure:
    fig = go.Figure()
    fig.update_layout(**_base_layout(title, height), template="railyard", **layout)
    return fig


EMPTY_LINE_CHARS = 56  # a half-width panel holds about this many 14 px characters


def empty(title: str, message: str) -> go.Figure:
    """A figure that says why it has nothing to show, instead of blank axes; the message
    wrapped to lines a half-width panel holds (one long line was cut off at both ends)."""
    fig = _base(title, height=220)
    lines = textwrap.wrap(message, EMPTY_LINE_CHARS, break_on_hyphens=False) or [""]
    fig.add_annotation(text="<br>".join(html.escape(line) for line in lines),
                       showarrow=False, x=0.5, y=0.5, xref="paper",
                       yref="paper", font={"size": 14, "color": GREY})
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return fig


def limit_bars(labels: Sequence[str], values: Sequence[float], limit: float | None,
               title: str, value_name: str = "replicas",
               limit_name: str = "max.broker.partitions",
               near: float = NEAR_LIMIT_RATIO) -> go.Figure:
    """One bar per broker against a limit line; near and over the limit stand out."""
    fig = _base(title)
    colours = [state_colour(v, limit, near) for v in values]
    # a label on every bar while they are few; with many, only on those near or over the
    # limit (a hundred labels are unreadable, and laying them out costs the browser seconds)
    labelled = [len(values) <= MAX_LABELLED_BARS or c != OK for c in colours]
    text = [f"{v:,.0f}" + ("" if limit is None else f" ({v / limit:.0%})") if show else ""
            for v, show in zip(values, labelled, strict=True)]
    # labels of bars near or over the limit go inside the bar, halfway up: above the bar
    # the limit line would strike through them
    fig.add_bar(x=list(labels), y=list(values), marker_color=colours, name=value_name,
                text=text, textposition=["outside" if c == OK else "inside" for c in colours],
                insidetextanchor="middle", cliponaxis=False,
                hovertemplate="%{x}: %{y:,.0f} " + value_name + "<extra></extra>")
    if limit is not None:
        _limit_line(fig, limit, limit_name, values)
    fig.update_xaxes(type="category", title="broker")
    fig.update_yaxes(title=value_name)
    return fig


def capacity_bars(labels: Sequence[str], before: Sequence[float], after: Sequence[float],
                  limit: float | None, title: str,
                  near: float = NEAR_LIMIT_RATIO) -> go.Figure:
    """Replicas per broker now and after a change, stacked, against the limit."""
    fig = _base(title)
    added = [a - b for a, b in zip(after, before, strict=True)]
    fig.add_bar(x=list(labels), y=list(before), name="now", marker_color=GREY)
    fig.add_bar(x=list(labels), y=added, name="added",
                marker_color=[state_colour(a, limit, near) for a in after],
                text=[f"+{d:,.0f}" if d else "" for d in added], textposition="outside")
    fig.update_layout(barmode="stack")
    if limit is not None:
        _limit_line(fig, limit, "max.broker.partitions", after)
    fig.update_xaxes(type="category", title="broker")
    fig.update_yaxes(title="replicas")
    return fig


def before_after_bars(labels: Sequence[str], before: Sequence[float], after: Sequence[float],
                      limit: float | None, title: str, value_name: str = "replicas",
                      near: float = NEAR_LIMIT_RATIO) -> go.Figure:
    """Replicas per broker before and after a plan, side by side, against the limit line;
    the after bar takes the state colour (near or over the limit stands out)."""
    fig = _base(title)
    fig.add_bar(x=list(labels), y=list(before), name="before", marker_color=GREY,
                hovertemplate="broker %{x}: %{y:,.0f} " + value_name + " before<extra></extra>")
    fig.add_bar(x=list(labels), y=list(after), name="after",
                marker_color=[state_colour(a, limit, near) for a in after],
                hovertemplate="broker %{x}: %{y:,.0f} " + value_name + " after<extra></extra>")
    fig.update_layout(barmode="group", bargap=0.25)
    if limit is not None:
        _limit_line(fig, limit, "max.broker.partitions", [*before, *after])
    fig.update_xaxes(type="category", title="broker")
    fig.update_yaxes(title=value_name)
    return fig


# 500kB/s, 1MB/s, 2GB/s: the ticks carry the unit, so the axis needs no title (which the
# longer tick labels would run into)
BYTE_RATE_TICKS = {"tickformat": "~s", "ticksuffix": "B/s", "title": {"text": ""}}
# every linear bytes axis: ticks closer than 1 B/s are written as decimals (0.2B/s), never
# with SI's milli (an idle 0-1 axis read "200mB/s", millibytes); a log axis keeps
# BYTE_RATE_TICKS, its dtick being decades
BYTE_RATE_AXIS = {**BYTE_RATE_TICKS,
                  "tickformatstops": [{"dtickrange": [None, 1], "value": ",.2~f"}]}
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")


SI_STEPS = np.array([1e3, 1e6, 1e9, 1e12])
SI_PREFIXES = np.array(["", "k", "M", "G", "T"])


def hover_texts(values: Sequence[float | None] | np.ndarray, unit: str) -> list[str | None]:
    """Each value as its hover label writes it, to 4 significant digits with k, M, G, T
    from 1,000 up ("1.159 MB/s", "1.2k messages"), and as a decimal below 1 ("0.5 B/s",
    "0.25 ms"): plotly's SI format wrote 0.5 B/s as "500mB/s", read as megabytes. A byte
    rate reads as the tick labels do (B/s, kB/s, MB/s); a missing value gives None.
    Formatted here, once per point, since no d3 format both prefixes thousands and
    leaves fractions alone."""
    v = np.array([np.nan if x is None else x for x in values] if isinstance(values, list)
                 else values, dtype=float)
    size = np.abs(v)
    step = np.searchsorted(SI_STEPS, np.nan_to_num(size), side="right")
    scaled = (v / np.concatenate([[1.0], SI_STEPS])[step]).tolist()
    # 1.2 MB/s as the ticks write it; 1.2k messages as plotly's ",.4~s" did
    gap, suffix = (" ", "B/s") if unit == "bytes/s" else ("", " " + unit)
    return [None if x != x else  # NaN: a gap in the line
            f"{_decimal(x) if small else f'{x:.4g}'}{gap}{prefix}{suffix}"
            for x, small, prefix in zip(scaled, (size < 1).tolist(),
                                        SI_PREFIXES[step].tolist(), strict=True)]


def _decimal(x: float) -> str:
    """A number under 1 with up to 4 decimals, trailing zeros dropped (0.5, 0.0125, 0)."""
    text = f"{x:.4f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


# the time ticks' labels sit this far below the axis: the y axis's lowest label ("0B/s"),
# centred on the axis line, touched the first time label ("09:00") in the corner
CORNER_STANDOFF_PX = 8
# a time axis writes two lines under the plot ("03:28" and, under the first tick, "Nov 30,
# 2026"), ending about 40 px below it: the legend starts under them, and the bottom margin
# holds both (a legend at a share of the plot's height, -0.2, sat on the date)
TIME_TICKS_PX = 46
LEGEND_ROW_PX = 30
SERIES_BOTTOM_PX = TIME_TICKS_PX + LEGEND_ROW_PX + 4


def _plot_px(layout: dict) -> float:
    """The plot's height in pixels: the figure's less its top and bottom margins."""
    margin = layout.get("margin", {})
    return max(layout.get("height", 320) - margin.get("t", 44) - margin.get("b", 44), 1)


def _legend_under_ticks(layout: dict) -> dict:
    """The layout with its legend TIME_TICKS_PX under the plot, below the time ticks and
    their date line; plotly places a legend in shares of the plot's height, so this is
    recomputed whenever a margin changes the plot's height. A legend of several rows
    still grows the bottom margin (plotly's automargin), the plot giving way."""
    return {**layout, "legend": {**layout.get("legend", {}), "orientation": "h",
                                 "yanchor": "top", "y": -TIME_TICKS_PX / _plot_px(layout)}}


# up to this many lines, each has its legend entry in rows under the chart (the overview's
# 12 fullest brokers take two rows of a half-width panel); past it, a cluster's 100 brokers
# took up to half the figure (plotly's maxheight for a horizontal legend), the plot giving
# way to 84 of 320 px, and the legend's rows sat on the time ticks the plot's shrinking
# moved up: the legend is then a box of SCROLLED_LEGEND_PX that scrolls
MAX_LEGEND_SERIES = 12
SCROLLED_LEGEND_PX = 84  # its title's row and three rows of names
LEGEND_TITLE_FONT = {"size": 11, "color": LINE}


def series_legend(layout: dict, count: int) -> dict:
    """The layout of a chart of ``count`` lines (a line per broker, per principal) with
    its legend under the time ticks. Up to MAX_LEGEND_SERIES lines, every name shows, as
    it always did. Past it, the legend is at most SCROLLED_LEGEND_PX tall and scrolls, its
    title counting the lines and saying how to pick one out (a click hides a line, a
    double-click shows it alone; hovering a line names it), and the figure grows by that
    box less the one row it held, so the plot keeps the height it has at 3 brokers. Every
    line is drawn, none summed into "other brokers": the charts that use it show byte
    rates and lag, but also partition counts and tokens, which no sum reads honestly."""
    margin = layout.get("margin", {})
    if count <= MAX_LEGEND_SERIES:
        return _legend_under_ticks({**layout, "margin": {**margin, "b": SERIES_BOTTOM_PX}})
    grown = SCROLLED_LEGEND_PX - LEGEND_ROW_PX
    return _legend_under_ticks({
        **layout, "height": layout.get("height", 320) + grown,
        "margin": {**margin, "b": SERIES_BOTTOM_PX + grown},
        "legend": {**layout.get("legend", {}), "maxheight": SCROLLED_LEGEND_PX,
                   "title": {"text": f"{counted(count, 'line')}: double-click a name to "
                                     "show it alone", "side": "top",
                             "font": LEGEND_TITLE_FONT}}})


def by_id(name: object) -> tuple:
    """A series' name as it sorts for people: its numbers as numbers ("leader 2" before
    "leader 10", broker 9 before broker 10), so a broker is found in a long legend where
    its id says (as strings the legend read 1, 10, 100, 11, ...)."""
    parts = re.split(r"([0-9]+)", str(name))  # text, number, text, ..., text
    return tuple((0, int(part)) if i % 2 else (1, part) for i, part in enumerate(parts))


def time_series(frame: pd.DataFrame, title: str, unit: str, series: str = "series",
                limit: float | None = None, limit_name: str = "limit",
                x_range: tuple | None = None) -> dict:
    """One line per series over time (frame columns: time, value, ``series``), built as
    the figure's JSON directly: every range change draws these, and a validated Figure
    cost ~30 ms each where this costs about one."""
    traces = []
    hover_unit = "B/s" if unit == "bytes/s" else unit
    parts = sorted(frame.groupby(series, sort=False), key=lambda group: by_id(group[0]))
    for name, part in parts:
        values = part["value"].to_numpy(dtype=float)
        traces.append({
            "type": "scatter", "name": as_text(name),  # a Kafka client picks its id
            "x": np.datetime_as_string(part["time"].to_numpy(), unit="s").tolist(),
            "y": [None if np.isnan(v) else v for v in values.tolist()],
            "mode": "lines" if len(part) > 2 else "lines+markers",  # a lone sample shows
            # follower rates dotted, so a follower line under a leader line still shows
            "line": {"dash": "dot" if str(name).startswith("follower") else "solid"},
            # the (escaped) name by reference: a '%{' in it is no template of plotly's
            # the value as a decimal, thousands separated ("1,159,000 B/s", "0.5 B/s"):
            # plotly's SI format wrote 0.5 B/s as "500mB/s", read as megabytes; a label
            # formatted per point (hover_texts) doubled the points sent and drawn on each
            # range change (p95 292 -> 411 ms on /brokers at 200k partitions)
            "hovertemplate": f"%{{x}}<br>%{{y:,.4~f}} {hover_unit}"
                             f"<extra>%{{fullData.name}}</extra>"})
    axis = BYTE_RATE_AXIS if unit == "bytes/s" else {}
    # the legend names the series even when there is one (plotly hides a lone trace's:
    # "Replica lag per broker" showed a line of no broker)
    base = series_legend(_base_layout(title), len(traces))
    layout = {**base, "template": _TEMPLATE_JSON, "showlegend": True,
              "yaxis": {"title": {"text": unit}, "rangemode": "tozero", **axis},
              "xaxis": {"ticklabelstandoff": CORNER_STANDOFF_PX,
                        **({} if x_range is None else {"range": list(x_range)})}}
    if limit is not None:  # what add_hline(annotation_position="top left") draws
        layout["shapes"] = [{"type": "line", "xref": "x domain", "x0": 0, "x1": 1, "yref": "y",
                             "y0": limit, "y1": limit, "line": {"color": OVER, "dash": "dash"}}]
        layout["annotations"] = [{"text": limit_label(limit_name, limit), "showarrow": False,
                                  "xref": "x domain",
                                  "x": 0, "xanchor": "left", "yref": "y", "y": limit,
                                  "yanchor": "bottom"}]
    return {"data": traces, "layout": layout}


BATCH_COLOUR = "#8fa8c8"
MARKER_COLOURS = {"proposed": GREY, "approved": OK, "executing": NEAR, "completed": OK,
                  "failed": OVER, "cancelled": OVER}


BATCH_LINES_ON_HOVER = 24  # batch events a band's hover lists at most
RIGHT_SHARE = 0.8  # a label past this share of the x range reads leftwards, inside the chart


def as_text(value: object) -> str:
    """``value`` shown as written in a label: plotly reads <a href>, <b>, <br> in hover
    text and annotations as markup, so a plan title could draw a link to anywhere."""
    return html.escape(str(value), quote=False)


def with_plan_markers(figure: dict | go.Figure, events: Sequence[dict]) -> dict | go.Figure:
    """A time-series figure with a dotted vertical line per plan event ("#12 approved")
    and one shaded band per plan's execution batches in the window, its batches listed on
    hovering its label (a plan of 300 batches drew 600 stacked labels); band labels sit in
    a row above the plot, off the lines. Events too close
    for labels of their own share one ("#12 proposed +2 events", each named on hovering
    it), and labels take three rows in turn, at the plot's top, the y axis raised so they
    sit above every line and limit. A label near the right edge reads leftwards, so it is
    not cut off. Figures without a time axis (a chart that says why it is empty) are
    returned as they are."""
    if not events or not isinstance(figure, dict):
        return figure
    layout = figure["layout"]
    shapes, notes = list(layout.get("shapes", [])), list(layout.get("annotations", []))
    near_right = _right_edge_test(layout.get("xaxis", {}).get("range"))
    plan_events = sorted((e for e in events if e.get("kind") != "batch"),
                         key=lambda e: e["at"])
    for e in plan_events:  # every event keeps its line
        x = _x(e["at"])
        shapes.append({"type": "line", "xref": "x", "x0": x, "x1": x, "yref": "paper",
                       "y0": 0, "y1": 1, "line": {"color": MARKER_COLOURS.get(e["state"], GREY),
                                                  "width": 1, "dash": "dot"}})
    groups = _label_groups(plan_events, _seconds_per_px(figure, plan_events)) \
        if plan_events else []
    batches: dict[int, list[dict]] = {}
    for e in events:
        if e.get("kind") == "batch":
            batches.setdefault(e["plan_id"], []).append(e)
    if batches:
        layout = _band_label_room(layout)
    plot_px = _plot_px(layout)
    for i, group in enumerate(groups):
        first = group[0]
        colour = MARKER_COLOURS.get(first["state"], GREY)
        notes.append({"text": _marker_label(group), "showarrow": False, "xref": "x",
                      "x": _x(first["at"]), "yref": "paper",
                      "y": 1 - MARKER_ROW_PX * (i % MARKER_ROWS) / plot_px,
                      "yanchor": "top",
                      "xanchor": "right" if near_right(first["at"]) else "left",
                      "font": {"size": MARKER_FONT_PX, "color": colour},
                      # the group's later lines run under its label: it stays readable
                      "bgcolor": LABEL_BACKGROUND,
                      "hovertext": "<br>".join(_marker_hover(e, len(group) > 1)
                                               for e in group)})
    for marks in batches.values():
        start, end = min(m["at"] for m in marks), max(m["at"] for m in marks)
        shapes.append({"type": "rect", "xref": "x", "x0": _x(start), "x1": _x(end),
                       "yref": "paper", "y0": 0, "y1": 1, "layer": "below",
                       "fillcolor": BATCH_COLOUR, "opacity": 0.15,
                       "line": {"color": BATCH_COLOUR, "width": 1, "dash": "dash"}})
    seconds_per_px = _seconds_per_px(figure, list(events)) if batches else 1.0
    for group in _band_groups(batches, seconds_per_px, near_right):
        # above the plot, in the top margin made for it: inside the plot (at its foot)
        # the label sat on whatever line ran low there, an idle rate at 0 B/s
        start = min(m["at"] for m in group[0][1])
        notes.append({"text": _band_group_label(group), "showarrow": False, "xref": "x",
                      "x": _x(start), "yref": "paper", "y": 1, "yanchor": "bottom",
                      "yshift": BAND_LABEL_SHIFT_PX,
                      "xanchor": "right" if near_right(start) else "left",
                      "font": {"size": BAND_FONT_PX, "color": BATCH_COLOUR},
                      "hovertext": "<br>".join(_band_hover(plan_id, marks)
                                               for plan_id, marks in group)})
    if groups:
        layout = _room_for_marker_labels(figure.get("data", []), layout, shapes,
                                         min(len(groups), MARKER_ROWS))
    return {**figure, "layout": {**layout, "shapes": shapes, "annotations": notes}}


LABEL_BACKGROUND = "rgba(255, 255, 255, 0.85)"
MARKER_ROWS = 3  # rows the plan markers' labels take in turn, from the plot's top down
MARKER_ROW_PX = 14  # a 10 px label with the gap to the next row
LIMIT_LABEL_PX = 18  # a limit line's label, over the line ("max.broker.partitions = 4,000")
HEADROOM = 1.05  # over the highest line, as plotly's own autorange leaves a little


def _room_for_marker_labels(data: list[dict], layout: dict, shapes: list[dict],
                            rows: int) -> dict:
    """The layout with a y axis tall enough that the plan markers' label rows, at the top
    of the plot, sit above every line, a limit line and that line's label: "#6 proposed
    +3 events" was drawn on "max.broker.partitions = 12,500" and its line. An axis given
    a range or a log type is left as it is."""
    yaxis = layout.get("yaxis", {})
    if yaxis.get("range") or yaxis.get("type") == "log":
        return layout
    values = np.array([v for trace in data for v in (trace.get("y") or ())],
                      dtype=float)  # None: a gap, NaN here
    values = values[np.isfinite(values)]
    limits = [s["y0"] for s in shapes if s.get("yref") == "y" and s.get("y0") is not None]
    low = min(0.0, float(values.min())) if values.size else 0.0
    plot_px = _plot_px(layout)
    labels_px = rows * MARKER_ROW_PX + 4
    if plot_px <= labels_px + LIMIT_LABEL_PX:  # no room to make: leave plotly's range
        return layout
    high = max(float(values.max()) if values.size else 0.0, 0.0) * HEADROOM or 1.0
    top = low + (high - low) * plot_px / (plot_px - labels_px)
    for limit in limits:
        top = max(top, low + (limit - low) * plot_px / (plot_px - labels_px - LIMIT_LABEL_PX))
    return {**layout, "yaxis": {**yaxis, "range": [low, top]}}


BAND_FONT_PX = 10
BAND_LABEL_SHIFT_PX = 2  # off the plot's top edge, where a line at the axis's top runs
BAND_ROW_PX = 16  # a 10 px label above the plot, with its shift and a gap under the title
TITLE_TOP_PX = 10  # the title's top, from the figure's top, once the margin has grown
CAP_SHIFT_EM = 0.7  # plotly.js's alignment CAP_SHIFT: a line's cap height, in ems


def _band_label_room(layout: dict) -> dict:
    """The layout with a row for the band labels between the title and the plot: a top
    margin BAND_ROW_PX taller, the plot a row shorter, and the title held at the top (its
    default, 'auto', centres it in the top margin, where it would sink onto the labels:
    https://plotly.com/python/reference/layout/#layout-title-y)."""
    margin = layout.get("margin", {})
    height = layout.get("height", 320)
    title = layout.get("title", {})
    if not isinstance(title, dict):
        title = {"text": title}
    # a title of two lines anchored at its top is drawn CAP_SHIFT of a line higher than
    # one of one line (plotly drops the shift its lines' own offsets replace): its first
    # line was cut off at the figure's top ("Partition health, the most in each 15 s")
    size = (title.get("font") or {}).get("size", 15)
    top = TITLE_TOP_PX + (CAP_SHIFT_EM * size if "<br>" in (title.get("text") or "") else 0)
    grown = {**layout, "margin": {**margin, "t": margin.get("t", 44) + BAND_ROW_PX},
             "title": {**title, "y": 1 - top / height, "yanchor": "top"}}
    return _legend_under_ticks(grown) if "legend" in layout else grown


MARKER_FONT_PX = 10
MARKER_CHAR_PX = 6.5  # the widest a 10 px label's character runs, on average
MARKER_GAP_PX = 8  # between one label's end and the next label's start
NARROWEST_PLOT_PX = 390  # a half-width panel's plot at 1,001 px (one column below that)


def _marker_label(group: list[dict]) -> str:
    """'#12 approved' for one event; '#12 approved +2 events' when two more follow too
    close to have labels of their own (their lines stay, their hover names them): a bare
    '+2' read as two of something the chart shows, partitions or replicas."""
    first = group[0]
    more = f" +{counted(len(group) - 1, 'event')}" if len(group) > 1 else ""
    return f"#{first['plan_id']} {first['state']}{more}"


def _marker_hover(e: dict, timed: bool) -> str:
    when = f"{pd.Timestamp(e['at'], unit='s'):%H:%M:%S} " if timed else ""
    return (f"{when}plan {e['plan_id']}: {as_text(e['title'])} "
            f"({e['state']} by {as_text(e['user'])})")


def _label_groups(events: list[dict], seconds_per_px: float) -> list[list[dict]]:
    """Events (in time order) gathered under one label while they fall within the
    width of the label that starts the group: labels of events seconds apart were drawn
    on one another. Consecutive labels then start at least a label apart, and the three
    rows they take in turn keep a label that reads leftwards (near the right edge) off
    its neighbour's."""
    groups: list[list[dict]] = []
    for e in events:
        if groups:
            start = groups[-1][0]
            width = (len(_marker_label([*groups[-1], e])) * MARKER_CHAR_PX + MARKER_GAP_PX)
            if (e["at"] - start["at"]) < width * seconds_per_px:
                groups[-1].append(e)
                continue
        groups.append([e])
    return groups


def _seconds_per_px(figure: dict, events: list[dict]) -> float:
    """How many seconds a pixel of the x axis covers on the narrowest plot the pages draw
    (the x range's, else the data's and events' span): labels are spaced for it."""
    x_range = figure["layout"].get("xaxis", {}).get("range")
    if x_range:
        lo, hi = (pd.Timestamp(x).timestamp() for x in x_range)
    else:
        ends = [pd.Timestamp(t["x"][k]).timestamp() for t in figure.get("data", [])
                if len(t.get("x") or ()) for k in (0, -1)]
        times = [*ends, *(e["at"] for e in events)]
        lo, hi = min(times), max(times)
    return max(hi - lo, 1.0) / NARROWEST_PLOT_PX


def _x(at: float) -> str:
    return pd.Timestamp(at, unit="s").strftime("%Y-%m-%d %H:%M:%S")


def _right_edge_test(x_range: list | None):
    """Whether a time (epoch s) lies in the right part of the x range, where a label
    reading rightwards would run off the chart."""
    if not x_range:
        return lambda at: False
    lo, hi = (pd.Timestamp(x).timestamp() for x in x_range)
    return lambda at: at > lo + RIGHT_SHARE * (hi - lo)


def counted(n: int, noun: str, nouns: str | None = None) -> str:
    """``n`` and its noun, singular for one: "1 batch", "4 batches", "2,000 partitions"
    ("1 batches" and "1 partitions" were written on charts and cards)."""
    if nouns is None:
        nouns = noun + ("es" if noun.endswith(("s", "sh", "ch", "x", "z")) else "s")
    return f"{n:,} {noun if n == 1 else nouns}"


def _band_label(plan_id: int, marks: list[dict]) -> str:
    """'#7 batch 2 started' for one batch event, '#7: 30 batches' (those started in the
    window, or else those ended) for more; a shrink's migration counts its steps ('#4: 4
    steps': its markers' ``unit``, services.execution.batch_markers)."""
    if len(marks) == 1:
        return f"#{plan_id} {marks[0]['state']}"
    started = sum(m["state"].endswith("started") for m in marks)
    return f"#{plan_id}: {counted(started or len(marks), marks[0].get('unit', 'batch'))}"


def _band_group_label(group: list[tuple[int, list[dict]]]) -> str:
    """The first band's label, '+1' for each band too close to have a label of its own
    (named in the hover)."""
    more = f" +{len(group) - 1}" if len(group) > 1 else ""
    return _band_label(*group[0]) + more


def _label_span(at: float, text: str, leftwards: bool, seconds_per_px: float
                ) -> tuple[float, float]:
    """Where a label starting (or, read leftwards, ending) at ``at`` lies, in seconds."""
    width = len(text) * MARKER_CHAR_PX * seconds_per_px
    return (at - width, at) if leftwards else (at, at + width)


def _band_groups(batches: dict[int, list[dict]], seconds_per_px: float, near_right
                 ) -> list[list[tuple[int, list[dict]]]]:
    """The bands (plan id, its batch events) in order of their start, gathered under one
    label while a band's own label would overlap the label before it on the narrowest
    plot ("#4: 4 batches#5: 1 batch" at 1,024 px): all band labels share one row."""
    gap = MARKER_GAP_PX * seconds_per_px

    def span(group: list) -> tuple[float, float]:
        at = min(m["at"] for m in group[0][1])
        return _label_span(at, _band_group_label(group), near_right(at), seconds_per_px)

    def touch(a: tuple[float, float], b: tuple[float, float]) -> bool:
        return a[0] < b[1] + gap and b[0] < a[1] + gap

    groups: list[list[tuple[int, list[dict]]]] = []
    for band in sorted(batches.items(), key=lambda b: min(m["at"] for m in b[1])):
        # the latest label its own would touch, were that label to count it ("+1")
        near = [g for g in groups if touch(span([band]), span([*g, band]))]
        if near:
            near[-1].append(band)
        else:
            groups.append([band])
    return groups


def _band_hover(plan_id: int, marks: list[dict]) -> str:
    title = marks[0]["title"]
    lines = [f"{pd.Timestamp(m['at'], unit='s'):%H:%M:%S} {m['state']}"
             for m in marks[:BATCH_LINES_ON_HOVER]]
    more = len(marks) - BATCH_LINES_ON_HOVER
    return "<br>".join([f"plan {plan_id}: {as_text(title)}", *lines,
                        *([f"... and {more} more"] if more > 0 else [])])


# the configured rates' ticks: leader red like every limit, follower a darker red (both
# were the same red, told apart only by hovering)
CONFIGURED_COLOURS = {"leader": OVER, "follower": "#7a1f1f"}
NOTHING_THROTTLED = "No broker moves throttled replication bytes"


def rate_vs_configured(labels: Sequence[str], leader: Sequence[float],
                       follower: Sequence[float], leader_rate: Sequence[float | None],
                       follower_rate: Sequence[float | None], title: str,
                       nothing: str = NOTHING_THROTTLED) -> go.Figure:
    """Throttled leader and follower byte rates per broker, each against its configured
    rate (leader.replication.throttled.rate, follower.replication.throttled.rate); when no
    broker moves throttled bytes and none has a rate configured, a chart saying
    ``nothing`` (an empty 0-1 axis said nothing)."""
    if not any([*leader, *follower]) and all(r is None for r in [*leader_rate,
                                                                  *follower_rate]):
        return empty(title, nothing)
    fig = _base(title)
    for side, rates, colour in (("leader", leader, OK), ("follower", follower, "#7fb3f0")):
        fig.add_bar(x=list(labels), y=list(rates), name=f"{side} throttled B/s",
                    marker_color=colour, offsetgroup=side,
                    customdata=hover_texts(list(rates), "bytes/s"),
                    hovertemplate="%{x}: %{customdata}<extra>%{fullData.name}</extra>")
    for side, rates in (("leader", list(leader_rate)), ("follower", list(follower_rate))):
        values = {r for r in rates if r is not None}
        if not values:  # no rate known (a past window): no legend entry for nothing drawn
            continue
        # one rate on every throttled broker (the usual case): the legend says it; rates
        # that differ by broker: each tick carries its own
        one = len(values) == 1
        colour = CONFIGURED_COLOURS[side]
        fig.add_scatter(x=list(labels), y=rates, mode="markers" if one else "markers+text",
                        offsetgroup=side, cliponaxis=False,
                        name=f"{side}.replication.throttled.rate = {rate_text(values.pop())}"
                        if one else f"configured {side} rate",
                        text=None if one else [None if r is None else rate_text(r)
                                               for r in rates],
                        textposition="top center", textfont={"size": 10, "color": colour},
                        marker={"symbol": "line-ew-open", "size": 18, "color": colour,
                                "line": {"width": 3}},
                        customdata=hover_texts(rates, "bytes/s"),
                        hovertemplate="%{x}: %{customdata}<extra>configured " + side +
                                      " rate</extra>")
    fig.update_layout(barmode="group", scattermode="group")
    fig.update_xaxes(type="category", title="broker")
    fig.update_yaxes(rangemode="tozero", **BYTE_RATE_AXIS)
    return fig


def safe_band(labels: Sequence[str], low: Sequence[float], high: Sequence[float],
              throttle: float, in_band: Sequence[bool], title: str) -> go.Figure:
    """KIP-73's safe band per broker (BytesIn .. N - BytesIn/R) with the chosen throttle."""
    fig = _base(title)
    fig.add_bar(x=list(labels), y=[h - lo for lo, h in zip(low, high, strict=True)],
                base=list(low), name="safe band",
                marker_color=[OK if ok else OVER for ok in in_band], opacity=0.45,
                customdata=list(zip(hover_texts(list(low), "bytes/s"),
                                    hover_texts(list(high), "bytes/s"), strict=True)),
                hovertemplate="%{x}: %{customdata[0]} .. %{customdata[1]}"
                              "<extra>safe band</extra>")
    fig.add_hline(y=throttle, line={"color": LINE, "width": 2},
                  annotation_text=f"throttle {rate_text(throttle)}",
                  annotation_position="top left")
    fig.update_xaxes(type="category", title="broker")
    fig.update_yaxes(rangemode="tozero", **BYTE_RATE_AXIS)
    return fig


def eta_curve(throttles: Sequence[float], etas: Sequence[float | None], chosen: float,
              title: str) -> go.Figure:
    """Predicted ETA against the throttle; where it never finishes the curve stops."""
    fig = _base(title)
    hours = [None if e is None else e / 3600 for e in etas]
    fig.add_scatter(x=list(throttles), y=hours, mode="lines+markers", name="ETA",
                    line={"color": OK}, connectgaps=False,
                    customdata=hover_texts(list(throttles), "bytes/s"),
                    hovertemplate="%{customdata}: %{y:,.2f} h<extra></extra>")
    never = [t for t, e in zip(throttles, etas, strict=True) if e is None]
    if never:
        fig.add_vrect(x0=min(throttles), x1=max(never), fillcolor=OVER, opacity=0.12,
                      line_width=0, annotation_text="never finishes",
                      annotation_position="top left")
    fig.add_vline(x=chosen, line={"color": LINE, "dash": "dot"})
    # an annotation on a log axis is placed by the log of its x (add_vline's would not be)
    fig.add_annotation(x=float(np.log10(chosen)), xref="x", y=1, yref="paper",
                       text=f"chosen {rate_text(chosen)}", showarrow=False,
                       xanchor="left", yanchor="top")
    # a tick per power of ten: the in-between ticks of a log axis drop the unit ("2M")
    fig.update_xaxes(type="log", dtick=1, **{**BYTE_RATE_TICKS, "title": {"text": "throttle"}})
    fig.update_yaxes(title="hours", rangemode="tozero")
    return fig


ZERO_TOKENS = "0 tokens: below it, requests are throttled"


def _zero_tokens_line(fig: go.Figure) -> None:
    """KIP-599's line: a principal below 0 tokens is throttled; the line says so."""
    fig.add_hline(y=0, line={"color": OVER, "width": 1}, annotation_text=ZERO_TOKENS,
                  annotation_position="bottom right", annotation_font={"color": OVER})


def token_bucket(curve: pd.DataFrame, rejected: pd.DataFrame,
                 burst_by_principal: dict[str, float | None], title: str) -> go.Figure:
    """Tokens per principal over time against its burst; rejections marked in red.

    curve and rejected columns: t, principal, tokens (curve: points joined by straight
    lines, services.quota.whatif). Principals sharing a burst share one line and one
    label ("burst 55: alice, bob"), so labels never sit on each other.
    """
    fig = _base(title, height=360)
    for name, part in curve.groupby("principal", sort=True):
        fig.add_scatter(x=part["t"], y=part["tokens"], mode="lines", name=as_text(name))
        refused = rejected[rejected["principal"] == name]
        if len(refused):
            fig.add_scatter(x=refused["t"], y=refused["tokens"], mode="markers",
                            name=f"{as_text(name)}: rejected", marker={"color": OVER, "size": 7,
                                                              "symbol": "x"})
    shown = sorted(set(curve["principal"].astype(str)))
    by_burst: dict[float, list[str]] = {}
    for name in shown:
        if burst_by_principal.get(name) is not None:
            by_burst.setdefault(burst_by_principal[name], []).append(name)
    for burst, names in sorted(by_burst.items()):
        fig.add_hline(y=burst, line={"color": LINE, "dash": "dash"},
                      annotation_text=f"burst {burst:,.0f}: "
                                      f"{', '.join(as_text(n) for n in names)}",
                      annotation_position="top left")
    _zero_tokens_line(fig)
    fig.update_xaxes(title="seconds")
    fig.update_yaxes(title="tokens (partitions)")
    return fig


def tokens_vs_burst(principals: Sequence[str], tokens: Sequence[float],
                    burst: Sequence[float | None], title: str) -> go.Figure:
    """Tokens left per principal now, as a share of its burst; negative = throttled.
    Each principal's burst is a labelled tick above its bar ("burst 55")."""
    fig = _base(title)
    colours = [OVER if t < 0 else (NEAR if b and t < (1 - NEAR_LIMIT_RATIO) * b else OK)
               for t, b in zip(tokens, burst, strict=True)]
    principals = [as_text(p) for p in principals]  # tick labels are markup too
    fig.add_bar(x=principals, y=list(tokens), marker_color=colours, name="tokens")
    fig.add_scatter(x=principals, y=list(burst), mode="markers+text", name="burst",
                    text=[None if b is None else f"burst {b:,.0f}" for b in burst],
                    textposition="top center", textfont={"color": LINE},
                    marker={"symbol": "line-ew-open", "size": 36, "color": LINE,
                            "line": {"width": 3}})
    # room above the tallest burst for its label, and below 0 for the 0-tokens label
    top = max([1, *tokens, *(b for b in burst if b is not None)]) * 1.25
    fig.update_yaxes(range=[min(0, *tokens) * 1.15 - 0.15 * top, top])
    _zero_tokens_line(fig)
    fig.update_xaxes(type="category", title="principal")
    fig.update_yaxes(title="tokens (partitions)")
    return fig


NOTE_LINE_PX = 18  # one line of a 12 px note, with its spacing
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "cross", "x")
# a sweep draws a legend entry per line up to this many lines (plotly's colorway holds 10
# colours; past them colours repeat and the legend wraps row after row under the chart: a
# 20 x 100 sweep drew 100 entries that buried it)
MAX_SWEEP_SERIES = 10
SWEEP_SCALE = "Viridis"  # perceptually uniform, readable in grey and by the colour-blind
SWEEP_COLOURBAR_PX = 90  # room on the right for the colour bar, its ticks and its title
# a few lines told apart (_told_apart_lines): the top line THINNEST_LINE_PX wide with
# SMALLEST_MARKER_PX markers, each line under it a step wider, the steps shrinking so the
# bottom line stays within WIDEST_LINE_PX (WIDEST_PLAIN_LINE_PX without markers) and its
# markers within LARGEST_MARKER_PX; markers only up to MARKED_POINTS x values
THINNEST_LINE_PX, LINE_STEP_PX, WIDEST_LINE_PX, WIDEST_PLAIN_LINE_PX = 2, 2, 8, 5
SMALLEST_MARKER_PX, MARKER_STEP_PX, LARGEST_MARKER_PX = 7, 5, 19
MARKED_POINTS = 20


def sweep_lines(frame: pd.DataFrame, x: str, y: str, colour: str | None, title: str,
                y_title: str, note: str | None = None) -> go.Figure:
    """A sweep's answer per scenario: ``y`` against ``x``, one line per ``colour`` value.

    Equal answers overlap (add_brokers=0 and 1 both at 96): each line is drawn thinner,
    with smaller markers of another shape, than the one before it, so a line under
    another still shows around it. ``note`` is a sentence under the chart.

    Past MAX_SWEEP_SERIES lines a legend entry each would bury the chart: numeric values
    (add_brokers, window_num) colour their lines on a continuous scale read off a colour
    bar; other values (principals) name the MAX_SWEEP_SERIES lines of the highest ``y`` in
    the legend, draw the rest grey, and the legend's title says how many are drawn. Every
    line still names its value on hover.
    """
    fig = _base(title, height=340)
    groups = list(frame.groupby(colour, sort=True, dropna=False) if colour else [(None, frame)])
    if len(groups) > MAX_SWEEP_SERIES and pd.api.types.is_numeric_dtype(frame[colour]):
        _scaled_lines(fig, groups, x, y, colour)
    elif len(groups) > MAX_SWEEP_SERIES:
        _named_and_grey_lines(fig, groups, x, y, colour)
    else:
        _told_apart_lines(fig, groups, x, y, colour)
    fig.update_xaxes(title=x)
    fig.update_yaxes(title=y_title)
    if note:  # between the title and the plot, where nothing else is drawn
        height = 340 + NOTE_LINE_PX * (note.count("<br>") + 1)
        fig.add_annotation(text=note, showarrow=False, xref="paper", yref="paper", x=0, y=1,
                           xanchor="left", yanchor="bottom", yshift=8, align="left",
                           font={"size": 12, "color": LINE})
        fig.update_layout(height=height, margin={"t": 44 + NOTE_LINE_PX * (
            note.count("<br>") + 1)}, title={"y": 1 - 12 / height, "yanchor": "top"})
    return fig


def _line_name(colour: str | None, value: object, y: str) -> str:
    return y if value is None else f"{colour}={value}"


def _told_apart_lines(fig: go.Figure, groups: list, x: str, y: str,
                      colour: str | None) -> None:
    """A few lines, each thinner and with smaller markers of another shape than the one
    before it, so a line under another still shows around it. The widest line and the
    largest marker are bounded (WIDEST_LINE_PX, LARGEST_MARKER_PX: the steps shrink as the
    lines grow in number), and past MARKED_POINTS x values the lines carry no markers: 8
    lines of 40 points drew a band of markers up to 42 px wide that buried the chart."""
    points = max((len(part) for _, part in groups), default=0)
    marked = points <= MARKED_POINTS
    widest = WIDEST_LINE_PX if marked else WIDEST_PLAIN_LINE_PX
    over = max(len(groups) - 1, 1)
    width_step = min(LINE_STEP_PX, (widest - THINNEST_LINE_PX) / over)
    marker_step = min(MARKER_STEP_PX, (LARGEST_MARKER_PX - SMALLEST_MARKER_PX) / over)
    for i, (name, part) in enumerate(groups):
        part = part.sort_values(x)
        under = len(groups) - 1 - i  # how many lines are drawn over this one
        fig.add_scatter(x=part[x], y=part[y], mode="lines+markers" if marked else "lines",
                        line={"dash": DASHES[i % len(DASHES)],
                              "width": round(THINNEST_LINE_PX + width_step * under, 2)},
                        marker={"symbol": SYMBOLS[i % len(SYMBOLS)],
                                "size": round(SMALLEST_MARKER_PX + marker_step * under, 2)},
                        name=_line_name(colour, name, y))


def _scaled_lines(fig: go.Figure, groups: list, x: str, y: str, colour: str) -> None:
    """One thin line per numeric ``colour`` value, coloured on SWEEP_SCALE, its markers on
    one shared colour axis whose colour bar reads the value: no legend entries
    (https://plotly.com/python/colorscales/#share-color-axis)."""
    values = [float(v) for v, _ in groups if pd.notna(v)]
    lo, hi = min(values), max(values)
    for value, part in groups:
        part = part.sort_values(x)
        known = pd.notna(value)
        share = (float(value) - lo) / (hi - lo) if known and hi > lo else 0.0
        line = sample_colorscale(SWEEP_SCALE, [share])[0] if known else GREY
        fig.add_scatter(x=part[x], y=part[y], mode="lines+markers", showlegend=False,
                        line={"color": line, "width": 1.5},
                        marker={"size": 5, **({"color": [float(value)] * len(part),
                                               "coloraxis": "coloraxis"}
                                              if known else {"color": GREY})},
                        name=_line_name(colour, value, y))
    fig.update_layout(
        coloraxis={"colorscale": SWEEP_SCALE, "cmin": lo, "cmax": hi,
                   "colorbar": {"title": {"text": f"{colour}<br>({len(groups)} lines)"},
                                "thickness": 14}},
        margin={"r": SWEEP_COLOURBAR_PX})


def _named_and_grey_lines(fig: go.Figure, groups: list, x: str, y: str, colour: str) -> None:
    """The MAX_SWEEP_SERIES lines of the highest ``y`` (the worst: most rejected) in
    colour, named in the legend; the rest thin and grey beneath them, named on hover."""
    peak = [part[y].max() for _, part in groups]
    order = sorted(range(len(groups)), key=lambda i: (pd.isna(peak[i]),
                                                      -(0 if pd.isna(peak[i]) else peak[i])))
    named = set(order[:MAX_SWEEP_SERIES])
    for i, (value, part) in enumerate(groups):
        if i not in named:
            part = part.sort_values(x)
            fig.add_scatter(x=part[x], y=part[y], mode="lines", showlegend=False,
                            line={"color": GREY, "width": 1}, opacity=0.6,
                            name=_line_name(colour, value, y))
    for k, i in enumerate(sorted(named)):  # one width each: ten widening lines hid the chart
        value, part = groups[i]
        part = part.sort_values(x)
        fig.add_scatter(x=part[x], y=part[y], mode="lines+markers",
                        line={"dash": DASHES[k % len(DASHES)], "width": 2},
                        marker={"symbol": SYMBOLS[k % len(SYMBOLS)], "size": 7},
                        name=_line_name(colour, value, y))
    fig.update_layout(legend={"title": {"side": "top",
                                        "text": f"{len(groups)} lines, one per {colour}; "
                                                f"named: the {MAX_SWEEP_SERIES} of the most "
                                                f"{y}, the rest grey"}})


FLEET_KNOBS = ("growth_pct_month", "add_brokers", "max_broker_partitions", "max_partitions",
               "topic_partitions", "topic_rf")


def fleet_days_figure(rows: pd.DataFrame) -> go.Figure:
    """Days until each cluster's first limit, one bar per scenario (named by the knobs
    that vary); clusters that reach no limit are named in the title."""
    frame = rows.dropna(subset=["scenario"])
    first = frame.groupby(["scenario", "cluster"], sort=False)["days"].min().reset_index()
    knobs = [k for k in FLEET_KNOBS if frame[k].nunique(dropna=False) > 1]
    labels = frame.drop_duplicates("scenario").set_index("scenario")[knobs]
    never = sorted(set(first.loc[first["days"].isna(), "cluster"]))
    title = "Days until each cluster's first limit" + (
        f" (never, at this growth: {', '.join(never)})" if never else "")
    fig = _base(title)
    for scenario, part in first.dropna(subset=["days"]).groupby("scenario", sort=True):
        name = ", ".join(f"{k}={labels.at[scenario, k]}" for k in knobs) or "as is"
        fig.add_bar(x=part["cluster"], y=part["days"], name=name,
                    text=[f"{d:,.0f} d" for d in part["days"]], textposition="outside")
    fig.update_layout(barmode="group")
    fig.update_yaxes(title="days")
    return fig


SWEEP_AXES = {  # kind -> (x, y, colour, y title, title)
    "limits": ("max_broker_partitions", "min_capacity", "add_brokers", "replicas",
               "least room left on any broker"),
    "throttle": ("throttle", "eta_hours", "window_num", "hours",
                 "ETA as Railyard runs the plan, batch after batch"),
    "quota": ("rate", "rejected", "principal", "requests", "requests rejected"),
}
ROOM_NOTE = ("Less room with more brokers is how Kafka places replicas, not a fault. Each "
             "partition keeps one replica per rack, so a rack without a new broker takes as "
             "many new replicas as before,<br>and Kafka's round-robin over racks of unequal "
             "size (from a start that depends on the broker count) spreads them unevenly: "
             "the fullest broker can get more of them.<br>At {limit:,}: {before:,} left with "
             "add_brokers={few}, {after:,} with add_brokers={many}. The cluster's total room "
             "still grows.")


def room_drop_note(rows: pd.DataFrame) -> str | None:
    """The limits sweep's explanation when adding brokers lowered the least room at some
    limit (the largest such drop), None when it never did."""
    worst = None
    for limit, part in rows.dropna(subset=["min_capacity"]).groupby("max_broker_partitions"):
        part = part.sort_values("add_brokers")
        room, brokers = part["min_capacity"].to_numpy(), part["add_brokers"].to_numpy()
        for i in range(1, len(part)):
            drop = int(room[:i].max() - room[i])
            if drop > 0 and (worst is None or drop > worst[0]):
                j = int(room[:i].argmax())
                worst = (drop, limit, int(room[j]), int(room[i]), brokers[j], brokers[i])
    if worst is None:
        return None
    _, limit, before, after, few, many = worst
    return ROOM_NOTE.format(limit=int(limit), before=before, after=after, few=few, many=many)


def sweep_figure(kind: str, rows: pd.DataFrame) -> go.Figure:
    """The sweep's headline answer per scenario, one line per secondary grid value; the
    chart's title names the answer, so the y axis only needs its unit (a long axis title
    runs into the chart's title)."""
    if kind == "fleet":
        return fleet_days_figure(rows)
    x, y, colour, y_title, answer = SWEEP_AXES[kind]
    frame = rows.copy()
    if kind == "throttle":  # the executor's batches, not every move at once (issue 26)
        frame["eta_hours"] = frame["batched_eta_seconds"] / 3600
    if kind == "quota":
        frame["principal"] = frame["user"].where(
            frame["client_id"] == "", frame["user"] + "/" + frame["client_id"]).map(as_text)
    if frame[colour].nunique(dropna=False) <= 1:
        colour = None
    note = room_drop_note(frame) if kind == "limits" else None
    return sweep_lines(frame, x, y, colour, f"{kind} sweep, {answer}: {len(frame)} rows",
                       y_title, note)
