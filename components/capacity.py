"""Capacity charts and tables: history of daily peaks, the forecast band, the limits.

Figures take the forecast answer's plain arrays (backend.services.capacity); the page and
the exported reports draw the same figures."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative

from backend.errors import BadInput, Unavailable
from components import charts, reports, tables

PALETTE = qualitative.Plotly
BROKER_LINES = 6  # brokers drawn on the per-broker chart: the most urgent ones
TABLE_COLUMNS = {"scope": "scope", "limit_name": "limit", "limit": "value", "now": "now (trend)",
                 "growth_per_day": "growth / day", "days": "days left", "date": "date",
                 "earliest": "earliest", "latest": "latest"}
# the table's figures and how each reads (components.reports.FORMATS kinds), on the
# page, in the HTML and PDF report and in the CSV: all three take their text (the CSV
# its rounding) from reports' one formatting of these kinds (table_records, report_table;
# the page's grid wrote its own, 12,112.3 where the exports wrote 12,112). The trend's
# level is a count of replicas, read against a limit that is a whole number: whole, as
# the exports had it (a tenth of a replica is not a figure a capacity review acts on);
# growth a day keeps hundredths (a slow broker's 0.04 is not 0.0), days left a tenth.
FIGURES = {"limit": "count", "now": "count", "growth_per_day": "hundredths",
           "days": "decimal"}
SHOWN = "shown"  # a grid row's figures as text: what the page's cells show
REPORT_KINDS = {TABLE_COLUMNS[k]: kind for k, kind in FIGURES.items()}  # by header
CLUSTER_TITLE = "Partition replicas in the cluster"
BROKER_TITLE = "Partition replicas per broker"


def _dates(times: np.ndarray) -> list[str]:
    return pd.to_datetime(np.asarray(times, np.float64), unit="s").strftime("%Y-%m-%d").tolist()


def _ahead(end: float, days: np.ndarray) -> list[str]:
    return _dates(end + np.asarray(days) * 86_400)


def _figure(title: str) -> go.Figure:
    fig = go.Figure()
    fig.update_layout(template="railyard", height=360, title={"text": title, "x": 0,
                                                             "font": {"size": 15}},
                      margin={"l": 60, "r": 20, "t": 44, "b": 44},
                      legend={"orientation": "h", "y": -0.18}, yaxis_title="replicas")
    return fig


def _limit(fig: go.Figure, value: float | None, label: str) -> None:
    if value is None:
        return
    fig.add_hline(y=value, line={"color": charts.OVER, "dash": "dot", "width": 2},
                  annotation_text=f"{label} = {value:,.0f}", annotation_position="top left",
                  annotation_font={"color": charts.OVER})


def _band(fig: go.Figure, x: list[str], low, high, name: str, colour: str) -> None:
    fig.add_scatter(x=x, y=list(high), mode="lines", line={"width": 0}, showlegend=False,
                    hoverinfo="skip", name=f"{name} high")
    fig.add_scatter(x=x, y=list(low), mode="lines", line={"width": 0}, fill="tonexty",
                    fillcolor=colour, name=f"{name}: 95% band", hoverinfo="skip")


def broker_chart(answer: dict) -> go.Figure:
    """The most urgent brokers' daily peaks, their projected lines, the first one's band."""
    h, p = answer["history"], answer["projection"]
    limit = answer["limits"]["max.broker.partitions"]
    fig = _figure(f"{BROKER_TITLE} (the {BROKER_LINES} most urgent), "
                  f"last {answer['window_days']} days and forecast")
    order = _urgent_brokers(answer)[:BROKER_LINES]
    x_hist, x_ahead = _dates(h["times"]), _ahead(h["end"], p["days"])
    for rank, i in enumerate(order):
        colour = PALETTE[rank % len(PALETTE)]
        name = f"broker {h['brokers'][i]}"
        fig.add_scatter(x=x_hist, y=h["broker_values"][i].tolist(), mode="lines+markers",
                        marker={"size": 4}, name=name, legendgroup=name,
                        line={"color": colour})
        if rank == 0:
            _band(fig, x_ahead, p["brokers"]["low"][i], p["brokers"]["high"][i], name,
                  "rgba(214,69,69,0.15)")
        fig.add_scatter(x=x_ahead, y=p["brokers"]["mid"][i].tolist(), mode="lines",
                        line={"dash": "dash", "color": colour},
                        name=f"{name} forecast", legendgroup=name, showlegend=False)
    _limit(fig, limit, "max.broker.partitions")
    return fig


def _urgent_brokers(answer: dict) -> list[int]:
    """Broker positions ordered by days to max.broker.partitions (the table's order)."""
    index = {f"broker {b}": i for i, b in enumerate(answer["history"]["brokers"])}
    ordered = [index[r["scope"]] for r in answer["table"] if r["scope"] in index]
    rest = [i for i in range(len(index)) if i not in ordered]
    return ordered + rest


def cluster_chart(answer: dict) -> go.Figure:
    """The cluster's daily peaks, its forecast band, max.partitions and the brokers' room."""
    h, p = answer["history"], answer["projection"]
    fig = _figure(f"{CLUSTER_TITLE}, last {answer['window_days']} days "
                  "and forecast")
    x_hist, x_ahead = _dates(h["times"]), _ahead(h["end"], p["days"])
    fig.add_scatter(x=x_hist, y=list(h["cluster_values"]), mode="lines+markers",
                    marker={"size": 4}, name="cluster (daily peak)",
                    line={"color": charts.OK})
    _band(fig, x_ahead, p["cluster"]["low"][0], p["cluster"]["high"][0], "cluster",
          "rgba(59,125,216,0.18)")
    fig.add_scatter(x=x_ahead, y=p["cluster"]["mid"][0].tolist(), mode="lines",
                    line={"dash": "dash", "color": charts.OK}, name="cluster forecast")
    _limit(fig, answer["limits"]["max.partitions"], "max.partitions")
    mbp, n = answer["limits"]["max.broker.partitions"], answer["brokers_to_add"]["brokers_now"]
    if mbp is not None:
        fig.add_hline(y=mbp * n, line={"color": charts.NEAR, "dash": "dot", "width": 2},
                      annotation_text=f"max.broker.partitions x {n} brokers = {mbp * n:,.0f}",
                      annotation_position="bottom left", annotation_font={"color": charts.NEAR})
    return fig


def brokers_to_add_text(answer: dict, by_label: str, rows: list[dict]) -> str:
    """The forecast's answer for the date: the replicas projected for it, likely and
    cautious; first, when they pass max.partitions (``answer["cluster_limit"]``), that,
    from when, and that brokers cannot fix it; then brokers to add; and, when the
    cluster's total fits but a broker fills up before the date (``rows``: the
    time-to-limit table, most urgent first), which broker and when."""
    b = answer["brokers_to_add"]
    likely, cautious = b["likely"], b["cautious"]
    figures = (f"By {by_label}: {likely['replicas']:,} replicas likely "
               f"({cautious['replicas']:,} cautious)")
    cluster = _cluster_limit_text(answer.get("cluster_limit"), rows)
    if cluster is None:
        if b["broker_ceiling"] is None:
            return "No max.broker.partitions: brokers are not limited by partition count."
        return _full_broker(b, rows, f"{figures} on {_brokers(b)}.")
    if b["broker_ceiling"] is None:
        return (f"{figures}{cluster} No max.broker.partitions: brokers are not limited by "
                "partition count.")
    return _full_broker(b, rows, f"{figures}{cluster} Per broker (max.broker.partitions), "
                                 f"on {_brokers(b)}.")


BROKERS_HEADING = "Brokers to add"
CLUSTER_LIMIT_HEADING = "Cluster limit (max.partitions)"


def answer_heading(answer: dict) -> str:
    """What brokers_to_add_text's line is about, as the reports head it (the HTML and PDF
    section, the CSV key): the cluster limit when the line leads with max.partitions, which
    no broker added fixes ("Brokers to add" over "Adding brokers cannot fix that" read as a
    contradiction), else brokers to add."""
    return CLUSTER_LIMIT_HEADING if _passes(answer.get("cluster_limit")) else BROKERS_HEADING


def _passes(limit: dict | None) -> bool:
    """Whether the date's replicas pass max.partitions (services.capacity.cluster_limit),
    cautiously at least: then the answer leads with it."""
    return limit is not None and limit["cautious"]["over"]


def _cluster_limit_text(limit: dict | None, rows: list[dict]) -> str | None:
    """What follows the projected replicas when they pass max.partitions by the date,
    likely (or cautious only), with the date the table gives for it (None: not passed).
    KIP-578 counts every broker's partitions together against it and refuses CreateTopics
    and CreatePartitions past it (POLICY_VIOLATION) whatever the broker count: adding
    brokers cannot help."""
    if not _passes(limit):
        return None
    row = next((r for r in rows if r["scope"] == "cluster"
                and r["limit_name"] == "max.partitions"), None)
    mp = f"max.partitions = {limit['limit']:,}"
    if row is not None and row["days"] == 0:
        passed = f", over {mp} already."
    elif limit["likely"]["over"]:
        passed = f", past {mp}" + (f" from {row['date']}." if row and row["date"] else ".")
    else:
        passed = (f": the cautious figure passes {mp}"
                  + (f", from {row['earliest']}." if row and row["earliest"] else "."))
    return (f"{passed} Adding brokers cannot fix that: past max.partitions CreateTopics and "
            "CreatePartitions fail whatever the broker count (KIP-578); raise "
            "max.partitions or remove partitions.")


def _brokers(b: dict) -> str:
    """'9 brokers of 12,500: add 2 brokers (2 to be safe)' (against max.broker.partitions)."""
    add, safe = b["likely"]["brokers_to_add"], b["cautious"]["brokers_to_add"]
    verdict = "no broker to add" if not (add or safe) else \
        f"add {add} broker{'' if add == 1 else 's'} ({safe} to be safe)"
    return f"{b['brokers_now']} brokers of {b['broker_ceiling']:,}: {verdict}"


def _full_broker(b: dict, rows: list[dict], text: str) -> str:
    """``text``, and when no broker is to be added but one fills up before the date, which
    and when."""
    full = next((r for r in rows if r["scope"].startswith("broker ") and r["date"]
                 and r["days"] <= b["days_ahead"]), None)
    if full is None or b["likely"]["brokers_to_add"]:
        return text
    return (f"{text} {full['scope'].capitalize()} reaches {full['limit_name']} first, on "
            f"{full['date']}: new replicas skip it from then (KIP-578), so rebalance before.")


HISTORY = "Partition history"  # what services.capacity.history's Unavailable names


def refusal_kind(error: BadInput | Unavailable) -> str:
    """The banner kind (components.banners) of a refused forecast: a caveat, amber like
    the page's other caveats, for a bad knob or too short a history (it was red, an alarm,
    while the cluster was fine and Prometheus had only scraped it for hours); an error for
    a source that did not answer or failed."""
    short = isinstance(error, Unavailable) and error.not_yet
    return "warning" if isinstance(error, BadInput) or short else "error"


def export_refusal(cluster: str, error: BadInput | Unavailable) -> str:
    """Why the page shows its exports disabled (their tooltip): the forecast the page asked
    for was refused, and an export takes the same query, so the server would refuse it
    too (it still does, on its own: dashboard.reports)."""
    if isinstance(error, Unavailable) and error.what == HISTORY:
        return (f"No history for cluster {cluster} yet: exports need a forecast, and a "
                f"forecast needs its daily partition peaks ({error.detail})")
    return f"Nothing to export for cluster {cluster}: {error}"


def export_links(refusal: str | None, links: int = 3) -> list:
    """(title, aria-disabled) of each export link: disabled with the reason as its
    tooltip when the page knows the export would be refused, else enabled, untitled.
    assets/exports.js ignores a click on a disabled link (an <a> has no disabled
    attribute: https://www.w3.org/TR/wai-aria-1.2/#aria-disabled)."""
    return [refusal, "true" if refusal else "false"] * links


def table_records(frame: pd.DataFrame) -> list[dict]:
    """The page's rows: the table's values (the grid sorts and colours by them) and, under
    SHOWN, each figure as the reports write it ("-" for none, as they do)."""
    table = frame[list(TABLE_COLUMNS)]
    rows = table.to_dict(orient="records")
    shown = reports.readable(table[list(FIGURES)], FIGURES).to_dict(orient="records")
    for row, text in zip(rows, shown, strict=True):
        row[SHOWN] = {k: "-" if v is None or pd.isna(v) else v for k, v in text.items()}
    return rows


def figure_column(field: str, header: str) -> dict:
    """The page's column of a figure: a number column showing the row's text of it."""
    return {**tables.number_column(field, header),
            "valueFormatter": {"function": f"params.data.{SHOWN}.{field}"}}


def report_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The table under its headers, as the reports give it (the kinds of its figures by
    header: REPORT_KINDS)."""
    return frame[list(TABLE_COLUMNS)].rename(columns=TABLE_COLUMNS)
