"""Throttle configs as a table: the Overview's leftover throttles (with when Railyard
first saw each and the clear plan that names it) and a clear-throttles plan's configs."""

from __future__ import annotations

from datetime import UTC, datetime

from dash import dcc, html

from components.charts import rate_text

SHOWN_CHARS = 120  # a long replica list is cut here; its full value is in the title
SHOWN_ROWS = 500  # rows drawn at most (a browser table of thousands is slow to draw)


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


def config_table(rows: list[dict], table_id: str | None = None) -> html.Table:
    """One row per config: where, key, value, and (when the rows carry them) when
    Railyard first saw it and the open clear plan naming it."""
    seen = bool(rows) and "first_seen" in rows[0]
    heads = ["where", "config", "value"] + (["first seen by Railyard", "clear plan"]
                                            if seen else [])
    body = []
    for r in rows[:SHOWN_ROWS]:
        cells = [html.Td(where(r["entity_type"], r["name"])), html.Td(html.Code(r["key"])),
                 html.Td(shown_value(r["key"], r["value"]), title=r["value"],
                         className="config-value")]
        if seen:
            at = datetime.fromtimestamp(r["first_seen"], UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
            plan = r.get("clear_plan")
            cells += [html.Td(at),
                      html.Td(dcc.Link(f"#{plan}", href=f"/plans/{plan}") if plan else "-")]
        body.append(html.Tr(cells))
    if len(rows) > SHOWN_ROWS:
        body.append(html.Tr(html.Td(f"... and {len(rows) - SHOWN_ROWS:,} more (the first "
                                    f"{SHOWN_ROWS:,} are shown)", colSpan=len(heads))))
    extra = {"id": table_id} if table_id else {}
    return html.Div(html.Table([html.Thead(html.Tr([html.Th(h) for h in heads])),
                                html.Tbody(body)], className="plans configs", **extra),
                    className="configs-box")
