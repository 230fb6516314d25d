"""Throttle configs as a table: the Overview's leftover throttles (with when Railyard
first saw each and the clear plan that names it) and a clear-throttles plan's configs."""

from __future__ import annotations

from datetime import UTC, datetime

import dash_ag_grid as dag
from dash import html

from components.charts import rate_text
from components.tables import COLUMN_DEFAULTS

SHOWN_CHARS = 120  # a long replica list is cut here; its whole value is in the tooltip
SHOWN_ROWS = 500  # rows drawn at most (every one is drawn: see config_table)


def where(entity_type: str, name: str) -> str:
    if entity_type == "broker":
        return "every broker (default)" if name == "<default>" else f"broker {name}"
    return f"topic {name}"


def shown_value(key: str, value: str) -> str:
    """A config's value as set, and a KIP-73 rate (bytes/s) also as people read it; a long
    replica list cut at SHOWN_CHARS."""
    if key.endswith(".rate"):
        try:
            return f"{value} ({rate_text(float(value))})"
        except ValueError:
            return value
    return value if len(value) <= SHOWN_CHARS else value[:SHOWN_CHARS] + " ..."


def config_table(rows: list[dict], table_id: str | None = None) -> html.Div:
    """One row per config: where, key, value (a long one whole in its tooltip), and (when
    the rows carry them) when Railyard first saw it and the open clear plan naming it.
    One grid, not a table of cells: every Dash component on a page is re-checked on each
    callback answer, so 500 rows as HTML cells (~3,500 components) slowed every chart on
    the page; the grid is one."""
    seen = bool(rows) and "first_seen" in rows[0]
    columns = [{"field": "where", "headerName": "where", "flex": 2},
               {"field": "config", "headerName": "config", "flex": 4},
               {"field": "value", "headerName": "value", "flex": 5, "tooltipField": "whole"}]
    if seen:
        columns += [{"field": "first_seen", "headerName": "first seen by Railyard", "flex": 3},
                    {"field": "clear_plan", "headerName": "clear plan", "flex": 1,
                     "cellRenderer": "PlanLink"}]
    data = [_grid_row(r, seen) for r in rows[:SHOWN_ROWS]]
    more = (html.P(f"... and {len(rows) - SHOWN_ROWS:,} more (the first {SHOWN_ROWS:,} are "
                   "shown)", className="hint") if len(rows) > SHOWN_ROWS else None)
    extra = {"id": table_id} if table_id else {}
    return html.Div([dag.AgGrid(
        rowData=data, columnDefs=columns, className="ag-theme-alpine configs",
        defaultColDef={**COLUMN_DEFAULTS, "wrapText": True, "autoHeight": True},
        # every row drawn (no virtual rows: a scrolled-to row's text is already there), in
        # a box that scrolls past 28rem (assets/railyard.css: .configs-box)
        dashGridOptions={"animateRows": False, "domLayout": "autoHeight",
                         "tooltipShowDelay": 300}, **extra), more], className="configs-box")


def _grid_row(r: dict, seen: bool) -> dict:
    row = {"where": where(r["entity_type"], r["name"]), "config": r["key"],
           "value": shown_value(r["key"], r["value"]), "whole": r["value"]}
    if seen:
        row["first_seen"] = datetime.fromtimestamp(r["first_seen"], UTC).strftime(
            "%Y-%m-%d %H:%M:%S UTC")
        row["clear_plan"] = r.get("clear_plan")
    return row
