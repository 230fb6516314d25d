"""A reassignment's throttle over time (services.execution.throttle_history): its mode
(fixed or adaptive, between which floor and the approved ceiling), a chart per broker of
the rates the adaptive controller set beside the replication measured, the time left as
it evolved against the time left the approval's ETA gives at that moment (a burn-down
from the execution's start: like with like, never a whole plan's duration against what
is left of it), and the controller's last note (say, Prometheus not answering). Takes its
data and ids as arguments."""

from __future__ import annotations

from typing import NamedTuple

import plotly.graph_objects as go
from dash import dcc, html, no_update
from plotly.subplots import make_subplots

from components import charts
from dashboard import ids

MOST_BROKERS = 12  # charts drawn; the rest are in the API's answer
MB = 1e6
# one colour per series, the same in every broker's chart (the legend is the first's)
SERIES = (("leader", "leader rate", "#1f77b4", None),
          ("follower", "follower rate", "#ff7f0e", "dot"),
          ("sent", "replication sent", "#2ca02c", "dash"),
          ("received", "replication received", "#9467bd", "dashdot"))


class Switch(NamedTuple):
    """The fixed/adaptive button: its label, the mode a click asks for (the one its label
    showed) and whether it is hidden. The page keeps it out of what the timer draws again,
    so a click during a refresh is never replaced by a button that was not clicked."""

    label: str
    mode: str
    hidden: bool


NO_SWITCH = Switch("", "", True)
SWITCH_UNCHANGED = Switch(no_update, no_update, no_update)  # a refresh leaves it as it is


class ThrottleView(NamedTuple):
    """The panel's lines, its chart and its switch, each with a place of its own."""

    lines: html.Ul
    chart: object
    switch: Switch

    def outputs(self) -> tuple:
        return (self.lines, self.chart, *self.switch)

    @classmethod
    def unchanged(cls) -> tuple:
        return (no_update,) * (len(cls._fields) - 1 + len(Switch._fields))


def throttle_view(h: dict, may_switch: bool) -> ThrottleView:
    """The panel; the switch shown only to who may execute, while it runs."""
    mode = h["mode"]
    # before it runs, the plan may not be approved yet: its rate is the plan's
    whose = "the approved" if h["started_at"] is not None else "the plan's"
    # rates as the preview and the charts write them (charts.rate_text): plan 5's page
    # read "0.2 MB/s" here, "200.0 KB/s" in its progress and "200 kB/s" in its preview
    words = (f"adaptive: between {charts.rate_text(h['floor'])} and {whose} "
             f"{charts.rate_text(h['ceiling'])}, by each broker's traffic"
             if mode == "adaptive" else
             f"fixed at {whose} {charts.rate_text(h['ceiling'])}" if h["ceiling"]
             else "no throttle")
    lines = [f"Throttle {words}" + (f" (switched by {h['switched_by']})"
                                    if h["switched_by"] else "")]
    if h["note"]:
        lines.append(h["note"])
    looks = h["looks"]
    eta = [lk for lk in looks if lk["eta_seconds"] is not None]
    if eta:
        last = eta[-1]
        planned = _planned_left(h, last["at"])
        lines.append(f"Time left: {last['eta_seconds'] / 60:,.1f} min at the rates set"
                     + ("" if planned is None else
                        f"; {planned / 60:,.1f} min by the ETA predicted at approval "
                        f"({h['predicted_eta_seconds'] / 60:,.1f} min in all)"))
    target = "fixed" if mode == "adaptive" else "adaptive"
    return ThrottleView(
        html.Ul([html.Li(line) for line in lines]),
        dcc.Graph(id=ids.PV_THROTTLE_CHART, figure=figure(h),
                  config={"displayModeBar": False}) if looks else
        html.P(_no_chart(h), className="hint"),
        Switch(f"Switch to {target}", target,
               not (may_switch and h["running"] and h["ceiling"])))


def _no_chart(h: dict) -> str:
    """Why the panel has no chart yet: only the adaptive controller looks at the traffic,
    so a fixed throttle (or none) is never charted."""
    if h["mode"] == "adaptive":
        return "No adaptive look yet: the chart fills in as the controller looks at the traffic."
    if not h["ceiling"]:
        return "No chart: the plan moves its data without a throttle."
    if h["running"]:
        return ("No chart while the throttle is fixed: switched to adaptive, the controller "
                "charts the rates it sets against each broker's traffic.")
    if h["started_at"] is None:
        return ("No chart: the plan has not run. While it runs, its fixed throttle can be "
                "switched to adaptive, and the controller charts the rates it sets.")
    return "No chart: the throttle stayed fixed."


def switch_button(switch: Switch) -> html.Button:
    return html.Button(switch.label, id=ids.PV_THROTTLE_SWITCH, value=switch.mode,
                       hidden=switch.hidden, className="button")


def figure(h: dict) -> go.Figure:
    """One row per broker (the first MOST_BROKERS by id), and the ETA's row last."""
    looks = h["looks"]
    brokers = sorted({b for lk in looks for b in lk["brokers"]}, key=int)[:MOST_BROKERS]
    rows = len(brokers) + 1
    fig = make_subplots(rows=rows, cols=1, shared_xaxes=True, vertical_spacing=0.03,
                        subplot_titles=[f"broker {b}" for b in brokers] + ["ETA (min)"])
    at = [lk["at"] * 1000 for lk in looks]
    for i, b in enumerate(brokers, start=1):
        for key, name, colour, dash in SERIES:
            rates = [(lk["brokers"].get(b) or {}).get(key) for lk in looks]
            fig.add_trace(go.Scatter(x=at, y=[_mb(v) for v in rates], name=name,
                                     legendgroup=name, showlegend=i == 1,
                                     line={"dash": dash, "color": colour},
                                     customdata=charts.hover_texts(rates, "bytes/s"),
                                     hovertemplate=f"broker {b} {name}: %{{customdata}}"
                                                   "<extra></extra>"),
                          row=i, col=1)
        fig.update_yaxes(title_text="MB/s", row=i, col=1)
    eta = [None if lk["eta_seconds"] is None else lk["eta_seconds"] / 60 for lk in looks]
    fig.add_trace(go.Scatter(x=at, y=eta, name="time left at the rates set",
                             line={"color": "#d62728"}), row=rows, col=1)
    planned = [_planned_left(h, lk["at"]) for lk in looks]
    if any(p is not None for p in planned):
        fig.add_trace(go.Scatter(x=at, y=[None if p is None else p / 60 for p in planned],
                                 name="time left by the ETA at approval",
                                 line={"dash": "dot", "color": "#7f7f7f"}),
                      row=rows, col=1)
    fig.update_xaxes(type="date")
    fig.update_layout(height=160 * rows + 80, margin={"l": 50, "r": 10, "t": 30, "b": 30})
    return fig


def _planned_left(h: dict, at: float) -> float | None:
    """Seconds left at ``at`` had the plan kept to the ETA predicted at approval."""
    if h["predicted_eta_seconds"] is None or h.get("started_at") is None:
        return None
    return max(h["predicted_eta_seconds"] - (at - h["started_at"]), 0.0)


def _mb(v: float | None) -> float | None:
    return None if v is None else v / MB
