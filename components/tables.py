"""Tables and figure cards: placement previews, principals, sweep rows, throttle figures."""

from __future__ import annotations

import re

import dash_ag_grid as dag
import pandas as pd
from dash import dcc, html

from components.charts import counted
from components.help import TERMS, term

# headers wrap onto a second line instead of being cut off ("bytes in (B/s)" in 90 px),
# between words only (assets/railyard.css; AG Grid broke "replic|as" mid-word)
COLUMN_DEFAULTS = {"sortable": True, "filter": True, "resizable": True, "minWidth": 90,
                   "wrapHeaderText": True, "autoHeaderHeight": True}
# counts as people read them ("12,500"); the cell keeps its number, so sorting and
# filtering stay numeric (assets/railyard.js: dashAgGridFunctions)
THOUSANDS = {"function": "thousands(params.value)"}
BYTE_RATE = {"function": "byteRate(params.value)"}
BYTES = {"function": "bytes(params.value)"}  # 1.61 GB, as the plan page writes sizes
NAMES = frozenset({"id", "scenario", "partition", "broker", "plan", "version"})  # not counts

# A column is never narrower than its longest header word beside the header's filter
# button, nor than the widest value its formatter writes ("99.9 MB/s" was cut to
# "4.21 ..." at 1024 px). Widths as 14 px DejaVu Sans draws them (Debian's sans, the
# widest of the usual ones), so other fonts fit too; CELL_PAD_PX is railyard.css's
# --ag-cell-horizontal-padding on both sides. A sorted column's arrow goes under its
# header when the column is this narrow (railyard.css), rather than cut the word.
CELL_PAD_PX = 16
FILTER_BUTTON_PX = 16
NARROW_CHARS = frozenset(" ,.:;'!|()[]/-ijlIJfrt")  # 6 px or less
WIDE_CHARS = frozenset("mwMW%#@")  # up to 14 px
WIDEST_VALUES = {THOUSANDS["function"]: "1,234,567", BYTE_RATE["function"]: "99.9 MB/s",
                 BYTES["function"]: "1.61 GB",
                 "percent(params.value)": "100.5%", "duration(params.value)": "99 min"}


def text_px(text: str) -> int:
    """How wide 14 px text is drawn, at most (DejaVu Sans: "headroom" 71 px, here 74)."""
    return sum(6 if c in NARROW_CHARS else 14 if c in WIDE_CHARS else 11 if c.isupper()
               else 9 for c in text)


def header_text(col: dict) -> str:
    """What a column's header says: its headerName, else AG Grid's title of its field."""
    return col.get("headerName") or col["field"].replace("_", " ").title()


def sized(col: dict, filterable: bool = True) -> dict:
    """``col`` with a minWidth that shows its header's longest word and its formatter's
    widest value whole (and a fixed width at least that)."""
    words = header_text(col).split() or [""]
    need = CELL_PAD_PX + (FILTER_BUTTON_PX if filterable else 0) + max(map(text_px, words))
    widest = WIDEST_VALUES.get((col.get("valueFormatter") or {}).get("function"))
    if widest:
        need = max(need, CELL_PAD_PX + text_px(widest))
    need = max(need, col.get("minWidth", 0))
    out = {**col, "minWidth": need}
    if "width" in col:
        out["width"] = max(col["width"], need)
    return out


def number_column(field: str, header: str | None = None, formatter: dict = THOUSANDS) -> dict:
    """A numeric column shown with thousands separators (or as a byte rate)."""
    return {"field": field, "headerName": header or field.replace("_", " "),
            "valueFormatter": formatter, "type": "numericColumn"}


def column(frame: pd.DataFrame, c: str) -> dict:
    """A frame's column: counts formatted, identifiers (broker 1001) left as they are; a
    name is an identifier's by its words ("broker id"), so "partitions" is a count."""
    counts = pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(
        frame[c]) and not NAMES.intersection(re.split(r"[\W_]+", c.lower()))
    return number_column(c) if counts else {"field": c, "headerName": c.replace("_", " ")}


def grid(frame: pd.DataFrame, grid_id: str | None = None, height: int = 320,
         formats: dict[str, dict] | None = None, **options) -> dag.AgGrid:
    """A sortable, filterable grid of a frame (dash-ag-grid); ``formats`` gives a column
    another formatter than its count's (BYTES: 24.8 MB, as the cards write sizes)."""
    extra = {"id": grid_id} if grid_id else {}
    formats = formats or {}
    return dag.AgGrid(
        rowData=frame.to_dict("records"),
        columnDefs=[sized(number_column(c, formatter=formats[c]) if c in formats
                          else column(frame, c)) for c in frame.columns],
        defaultColDef=COLUMN_DEFAULTS,
        columnSize="responsiveSizeToFit", style={"height": f"{height}px"},
        className="ag-theme-alpine", dashGridOptions={"animateRows": False}, **options,
        **extra)


def placement(assignment: dict | None) -> html.Div | None:
    """Partition -> replica brokers (leader first) of a placement preview."""
    if not assignment:
        return None
    frame = pd.DataFrame({"partition": [int(p) for p in assignment],
                          "replicas (leader first)": [", ".join(map(str, r))
                                                      for r in assignment.values()]})
    return html.Div([html.H3("Placement"), grid(frame, height=260)])


def card(label, value: str, state: str = "ok", note: str | None = None) -> html.Div:
    return html.Div([html.Div(label, className="card-label"),
                     html.Div(value, className="card-value"),
                     html.Div(note, className="card-note") if note else None],
                    className=f"card card-{state}")


def field(label, control, hint: str | None = None) -> html.Label:
    """A form field: its label, the control, and an optional hint under it."""
    return html.Label([html.Span(label, className="field-label"), control,
                       html.Small(hint, className="hint") if hint else None], className="field")


def number_input(id_: str, value: float | None = None, placeholder: str | None = None,
                 **extra) -> dcc.Input:
    """A number field as text: the server reads it (backend/services/fields) and says
    what is wrong with it. A browser's number field sends nothing at all for a value
    outside its min, max or step, which the server cannot tell from "left empty"."""
    return dcc.Input(id=id_, type="text", inputMode="decimal", value=value,
                     placeholder=placeholder, autoComplete="off", **extra)


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "never"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def brokers_text(ids: list[int]) -> str:
    """Broker ids in words, runs of consecutive ids as ranges: "broker 4", "brokers 1-9",
    "brokers 1-3, 5, 7" (a what-if card wrote Python's "[1, 2, 3, 4, 5, 6, 7, 8, 9]")."""
    ids = sorted(set(ids))
    runs: list[list[int]] = []
    for b in ids:
        if runs and b == runs[-1][1] + 1:
            runs[-1][1] = b
        else:
            runs.append([b, b])
    parts = [str(a) if a == z else f"{a}, {z}" if z == a + 1 else f"{a}-{z}" for a, z in runs]
    return f"broker{'' if len(ids) == 1 else 's'} {', '.join(parts)}"


def _mb_text(bytes_per_second: float) -> str:
    """A rate in MB/s, the unit the throttle field takes: 10.0 MB/s, 0.001 MB/s."""
    mb = bytes_per_second / 1e6
    return f"{mb:,.1f} MB/s" if mb >= 0.1 else f"{mb:.3g} MB/s"


def throttle_cards(r: dict) -> list[html.Div]:
    outside = [b["id"] for b in r["brokers"] if not b["in_safe_band"]]
    capped = "replication_rate" in r and r["replication_rate"] < r["throttle"]
    network = (f"the throttle {_mb_text(r['throttle'])} is more than the network carries "
               f"({_mb_text(r['network_capacity'])}): each broker copies at most "
               f"{_mb_text(r['network_capacity'])}; " if capped else "")
    return [
        card(term("Predicted ETA", "eta"), duration(r["eta_seconds"]),
             "over" if r["eta_seconds"] is None else "near" if capped else "ok",
             network + (r["diagnosis"] or "per broker: its bytes to copy over (throttle - "
                                          "the writes into its own moving partitions)")),
        card("KIP-73 move time", duration(r["kip73_move_time_seconds"]),
             "over" if r["kip73_move_time_seconds"] is None else "ok",
             "KIP-73's cluster-wide estimate: the move ratio x all replica bytes over "
             "(throttle - the busiest broker's bytes in), as if one broker copied it all; "
             "the Predicted ETA has every broker copy its own share at the same time"
             + (f"; {r['kip73_diagnosis']}, while the Predicted ETA counts only the writes "
                "into the moving partitions, so it can finish"
                if r["kip73_move_time_seconds"] is None and r["eta_seconds"] is not None
                else "")),
        card("Moving", counted(r["moved_partitions"], "partition"),
             note=f"{r['bytes_to_move'] / 1e9:,.2f} GB to copy"),
        card(term("Safe band", "safe band"),
             "all brokers inside" if not outside else f"outside on {brokers_text(outside)}",
             "ok" if not outside else "near"),
        card(term("Fetch size", "fetch size"),
             "fits" if r["fetch_response_ok"] else "too large",
             "ok" if r["fetch_response_ok"] else "over",
             f"replica.fetch.response.max.bytes {r['fetch_response_max_bytes']:,} vs "
             f"{r['max_fetch_response_bytes']:,} per window"),
        card("Suggested throttle",
             "-" if r["suggested_throttle"] is None
             else _mb_text(r["suggested_throttle"]),
             note="kafka-kit autothrottle headroom"),
    ]


def principals(rows: list[dict]) -> html.Div:
    frame = pd.DataFrame(rows)[["user", "client_id", "quota_entity", "rate", "burst",
                                "requests", "admitted", "rejected", "partitions_admitted",
                                "max_throttle_ms"]]
    return html.Div([html.H3("Per principal"), grid(frame, height=260)])


# what a sweep column holds where its name left it open: "brokers at limit" held a count
# beside "brokers over limit" holding ids, and "ok" beside brokers over the limit read as
# a contradiction (it is KIP-578: see help.TERMS). The CSV keeps the rows' own names.
SWEEP_HEADERS = {"brokers_at_limit": "brokers at limit (count)",
                 "brokers_over_limit": "brokers over limit (ids)",
                 "brokers_outside_safe_band": "brokers outside safe band (ids)",
                 "accepted": "accepted (topics)", "rejected": "rejected (topics)"}
SWEEP_TERMS = {"ok": "sweep ok", "brokers_at_limit": "at limit",
               "brokers_over_limit": "over limit",
               "brokers_outside_safe_band": "outside safe band"}


def sweep_grid(rows: pd.DataFrame) -> dag.AgGrid:
    """A sweep's rows, headers saying counts from ids and explaining ok and over-limit."""
    out = grid(lists_as_text(rows), height=360)
    out.columnDefs = [sized({**c, "headerName": SWEEP_HEADERS.get(c["field"],
                                                                 c["headerName"]),
                             **({"headerTooltip": TERMS[SWEEP_TERMS[c["field"]]]}
                                if c["field"] in SWEEP_TERMS else {})})
                      for c in out.columnDefs]
    return out


def sweep_legend(rows: pd.DataFrame) -> html.P | None:
    """The words under a limit sweep's table: what ok and over the limit mean."""
    if "brokers_over_limit" not in rows.columns:
        return None
    return html.P([term("ok", "sweep ok"), ": every topic of the workload created. ",
                   term("brokers over limit (ids)", "over limit"),
                   ": brokers that already held more than max.broker.partitions; they "
                   "keep their partitions and take no new one (KIP-578), so a row can be "
                   "ok with brokers over the limit. ",
                   term("brokers at limit (count)", "at limit"),
                   ": how many brokers are left with no room, those over the limit among "
                   "them."], className="explain")


def lists_as_text(rows: pd.DataFrame) -> pd.DataFrame:
    """Array cells (rejected topics, brokers outside the band) as "a, b": the grid and the
    CSV show names, not Python's "['orders']"."""
    shown = rows.copy()
    for c in shown.columns:
        if shown[c].map(lambda v: isinstance(v, list | tuple) or hasattr(v, "tolist")).any():
            shown[c] = shown[c].map(lambda v: ", ".join(map(str, list(v)))
                                    if v is not None else "")
    return shown
