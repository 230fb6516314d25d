"""Exported reports: one self-contained HTML document (plotly.js inlined, so it opens with
no network, attached to a postmortem or a meeting invite) and CSV of its tables. Every
report opens with what it is about: cluster, window, when it was made, from which data."""

from __future__ import annotations

import io
import re
from html import escape, unescape
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

from components.charts import rate_text

PLOTLY_JS = Path(__file__).resolve().parent.parent / "assets" / "vendor" / "plotly-basic.min.js"
STYLE = """
body { font-family: -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2933;
       margin: 24px auto; max-width: 1100px; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 17px; margin-top: 28px; }
dl.meta { display: grid; grid-template-columns: max-content auto; gap: 2px 12px;
          font-size: 13px; color: #52606d; }
dl.meta dt { font-weight: 600; }
table.report { border-collapse: collapse; font-size: 12px; width: 100%; }
table.report th, table.report td { border-bottom: 1px solid #d9e2ec; padding: 3px 6px;
                                   text-align: left; }
p.note { font-size: 13px; }
section.keep { break-inside: avoid; page-break-inside: avoid; }
h2 { break-after: avoid; page-break-after: avoid; }
span.date { white-space: nowrap; }
"""
RATE_UNIT = " (B/s)"  # a byte-rate column's header; its readable values carry the unit


def html_document(title: str, meta: dict[str, str], sections: list[tuple[str, object]]) -> str:
    """The report: a heading, its meta list, then each section's figure, table or text.
    A figure is drawn without its own title: its section's heading says what it shows
    (the chart repeated the heading just under it; figure_section makes the one from the
    other)."""
    parts = [f"<h1>{escape(title)}</h1>", '<dl class="meta">']
    parts += [f"<dt>{escape(k)}</dt><dd>{escape(str(v))}</dd>" for k, v in meta.items()]
    parts.append("</dl>")
    for heading, body in sections:
        # a heading stays on the page of its figure or note when printed (a table may
        # run over pages: its heading only keeps to its first rows)
        keep = "" if isinstance(body, pd.DataFrame) else ' class="keep"'
        parts.append(f"<section{keep}><h2>{escape(heading)}</h2>{_body(body)}</section>")
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>{escape(title)}</title><style>{STYLE}</style>"
            f"<script>{PLOTLY_JS.read_text()}</script></head><body>"
            + "\n".join(parts) + "</body></html>")


UNTITLED_TOP_PX = 24  # a figure's top margin without its title: room for a limit's label


def figure_title(figure: go.Figure | dict) -> str:
    """A figure's title as text (its line break a space, plotly's entities read)."""
    layout = figure.to_plotly_json()["layout"] if isinstance(figure, go.Figure) \
        else figure.get("layout", {})
    title = layout.get("title") or {}
    text = title.get("text") if isinstance(title, dict) else title
    return unescape((text or "").replace("<br>", " "))


def figure_section(figure: go.Figure | dict) -> tuple[str, go.Figure | dict]:
    """A report section of a figure, headed by the figure's own title."""
    return figure_title(figure), figure


def untitled(figure: go.Figure | dict) -> dict:
    """The figure (as its JSON) without its title, the height its title took given back
    to the page: the plot keeps its size."""
    fig = figure.to_plotly_json() if isinstance(figure, go.Figure) else figure
    layout = fig.get("layout", {})
    margin = layout.get("margin", {})
    freed = max(0, margin.get("t", 100) - UNTITLED_TOP_PX)  # 100: plotly's default
    out = {**layout, "title": {"text": ""}, "margin": {**margin, "t": UNTITLED_TOP_PX}}
    if layout.get("height"):
        out["height"] = layout["height"] - freed
    return {**fig, "layout": out}


def _body(body: object) -> str:
    if isinstance(body, go.Figure | dict):  # dict: a figure built as its JSON
        return '<div class="figure">' + pio.to_html(
            untitled(body), include_plotlyjs=False, full_html=False, validate=False,
            config={"displayModeBar": False, "responsive": True}) + "</div>"
    if isinstance(body, pd.DataFrame):
        if body.empty:
            return '<p class="note">Nothing in this window.</p>'
        # "-" for every missing cell (na_rep misses a column holding only None)
        shown = body.astype(object).where(body.notna(), "-")
        return unbroken_dates(shown.to_html(index=False, classes="report", border=0))
    return f'<p class="note">{escape(str(body))}</p>'


DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")  # 2026-11-29, alone or before a time
CELL = re.compile(r"<td>([^<]*)</td>")  # a table cell as pandas writes it (text escaped)


def unbroken_dates(table: str) -> str:
    """A table's HTML with each date in its cells kept on one line (span.date, nowrap):
    a narrow column broke 2026-11-29 at its hyphens, "2026-11-" over "29" in the PDF. A
    date and time may still break at the space between them. Only digits and hyphens
    go in a span: the cell's text stays as pandas escaped it."""
    return CELL.sub(lambda cell: "<td>" + DATE.sub(r'<span class="date">\g<0></span>',
                                                   cell[1]) + "</td>", table)


def csv_document(meta: dict[str, str], tables: dict[str, pd.DataFrame]) -> str:
    """The tables as CSV, each after a '# name' line, under '# key: value' meta lines."""
    out = io.StringIO()
    for k, v in meta.items():
        out.write(f"# {k}: {v}\n")
    for name, frame in tables.items():
        out.write(f"# {name}\n")
        spreadsheet_safe(frame).to_csv(out, index=False)
    return out.getvalue()


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet runs as a formula


def spreadsheet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with every text cell a spreadsheet would run as a formula prefixed with
    ' (OWASP's CSV injection advice): a Kafka client picks its own client.id, and
    =HYPERLINK(...) in one must open as text. Numbers stay numbers."""
    text = frame.select_dtypes(include=["object", "string"]).columns
    if not len(text):
        return frame
    out = frame.copy()
    for column in text:
        out[column] = out[column].map(
            lambda v: "'" + v if isinstance(v, str) and v.startswith(FORMULA_STARTS) else v)
    return out


# how a report's table columns read: a count 12,500, a byte rate 1.1 MB/s, a share 96.7%,
# milliseconds 1,250 ms, one decimal 6.5, two decimals 0.04, a flag yes/no
FORMATS = {"count": lambda v: f"{v:,.0f}", "rate": rate_text, "percent": lambda v: f"{v:.1f}%",
           "ms": lambda v: f"{v:,.0f} ms", "decimal": lambda v: f"{v:,.1f}",
           "hundredths": lambda v: f"{v:,.2f}", "flag": lambda v: "yes" if v else "no"}
# the decimals a CSV keeps of each kind the readable form writes with decimals
CSV_DECIMALS = {"percent": 1, "decimal": 1, "hundredths": 2}


def readable(frame: pd.DataFrame, kinds: dict[str, str]) -> pd.DataFrame:
    """The table as people read it (HTML and PDF): each column in ``kinds`` formatted by
    its kind (FORMATS), a byte rate's header without its unit (the values carry it)."""
    out = frame.copy()
    for column, kind in kinds.items():
        if column in out:
            out[column] = [None if _missing(v) else FORMATS[kind](v) for v in out[column]]
    return out.rename(columns={c: c.removesuffix(RATE_UNIT) for c, k in kinds.items()
                               if k == "rate"})


def plain(frame: pd.DataFrame, kinds: dict[str, str]) -> pd.DataFrame:
    """The table for a spreadsheet (CSV): counts, rates and milliseconds as whole numbers,
    shares and decimals with the decimals their readable form shows, flags yes/no; the
    units stay in the headers."""
    out = frame.copy()
    for column, kind in kinds.items():
        if column not in out:
            continue
        if kind == "flag":
            out[column] = [None if _missing(v) else FORMATS[kind](v) for v in out[column]]
        elif kind in CSV_DECIMALS:
            out[column] = out[column].astype(float).round(CSV_DECIMALS[kind])
        else:
            out[column] = out[column].astype(float).round().astype("Int64")
    return out


def _missing(v) -> bool:
    return v is None or bool(pd.isna(v))
