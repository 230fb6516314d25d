"""Exported reports: one self-contained HTML document (plotly.js inlined, so it opens with
no network, attached to a postmortem or a meeting invite) and CSV of its tables. Every
report opens with what it is about: cluster, window, when it was made, from which data."""

from __future__ import annotations

import io
from html import escape
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

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
.figure { page-break-inside: avoid; }
"""


def html_document(title: str, meta: dict[str, str], sections: list[tuple[str, object]]) -> str:
    """The report: a heading, its meta list, then each section's figure, table or text."""
    parts = [f"<h1>{escape(title)}</h1>", '<dl class="meta">']
    parts += [f"<dt>{escape(k)}</dt><dd>{escape(str(v))}</dd>" for k, v in meta.items()]
    parts.append("</dl>")
    for heading, body in sections:
        parts.append(f"<h2>{escape(heading)}</h2>")
        parts.append(_body(body))
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>{escape(title)}</title><style>{STYLE}</style>"
            f"<script>{PLOTLY_JS.read_text()}</script></head><body>"
            + "\n".join(parts) + "</body></html>")


def _body(body: object) -> str:
    if isinstance(body, go.Figure | dict):  # dict: a figure built as its JSON
        return '<div class="figure">' + pio.to_html(
            body, include_plotlyjs=False, full_html=False, validate=False,
            config={"displayModeBar": False, "responsive": True}) + "</div>"
    if isinstance(body, pd.DataFrame):
        if body.empty:
            return '<p class="note">Nothing in this window.</p>'
        return body.to_html(index=False, na_rep="-", classes="report", border=0)
    return f'<p class="note">{escape(str(body))}</p>'


def csv_document(meta: dict[str, str], tables: dict[str, pd.DataFrame]) -> str:
    """The tables as CSV, each after a '# name' line, under '# key: value' meta lines."""
    out = io.StringIO()
    for k, v in meta.items():
        out.write(f"# {k}: {v}\n")
    for name, frame in tables.items():
        out.write(f"# {name}\n")
        frame.to_csv(out, index=False)
    return out.getvalue()
