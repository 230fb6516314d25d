"""The preview of a plan, as the reassignments, shrinks and plan pages all show it:
figure cards, what it breaks and leaves undone in words, replicas per broker before and
after against the limit, the per-partition diff (a virtual grid paged from the server)
and the exports (Kafka's JSON file, the kafka-reassign-partitions command line).

Builders take the data and the component ids; the callbacks that page the grid and send
the JSON file are in dashboard/plan_views/callbacks.py."""

from __future__ import annotations

import dash_ag_grid as dag
from dash import dcc, html

from backend.services import plan_preview
from components import banners, charts
from components.help import term
from components.tables import BYTES, card, duration, number_column

GRAPH = {"displayModeBar": False}
GRID_BLOCK = 200  # rows per request to the server
GRID_COLUMNS = [
    {"field": "partition", "headerName": "partition", "minWidth": 180},
    {"field": "before", "headerName": "replicas before"},
    {"field": "after", "headerName": "replicas after (leader first)"},
    {"field": "added", "headerName": "receives"},
    {"field": "removed", "headerName": "gives up"},
    {"field": "leader", "headerName": "leader change"},
    number_column("bytes", "bytes to copy", BYTES),  # 5.18 MB, as the cards say sizes
]


def size(nbytes: float) -> str:
    """Bytes for people: 9.40 GB, 312.5 MB."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(nbytes) >= scale:
            return f"{nbytes / scale:,.2f} {unit}"
    return f"{nbytes:,.0f} B"


def rate(bps: float | None) -> str:
    """A byte rate as the charts write it: a safe band's low end of 67 kB/s read "0.0
    MB/s" when every rate was written in MB/s."""
    return "-" if bps is None else charts.rate_text(bps)


def reassignment_cards(p: dict) -> list[html.Div]:
    band = p.get("safe_band")
    inside = band is not None and band["low"] < p["throttle"] < band["high"]
    headroom = p.get("headroom_after")
    return [
        card("Replica moves", f"{p['replica_moves']:,}", "ok",
             f"{charts.counted(p['partitions'], 'partition')}, "
             f"{charts.counted(p['leader_moves'], 'leader change')}"),
        card("Data to move", size(p["bytes_to_move"])),
        card(term("Predicted ETA", "eta"), duration(eta := plan_preview.predicted_eta(p)),
             "over" if eta is None else "ok",
             p.get("diagnosis") or f"at a throttle of {rate(p['throttle'])} "
                                   f"({p['throttle_source'].split(':')[0]}), batch after "
                                   f"batch as the executor runs it"),
        card(term("Safe band", "safe band"),
             "-" if band is None else f"{rate(band['low'])} .. {rate(band['high'])}",
             "ok" if band is None or inside else "near",
             None if band is None else ("the throttle is inside on every broker that moves"
                                        if inside else
                                        f"throttle {rate(p['throttle'])} is outside on "
                                        f"brokers {', '.join(map(str, p['outside_safe_band']))}")
             + _capacity_note(p)),
        _headroom_card(headroom),
    ]


def _capacity_note(p: dict) -> str:
    """The network capacity the band's top assumes, as the preview was made (a stored
    plan's page says it too: its throttle was suggested for that network). Plans proposed
    before the preview kept it say nothing."""
    capacity = p.get("network_capacity")
    return "" if capacity is None else f"; brokers of {rate(capacity)} each way"


def shrink_cards(p: dict, content: dict) -> list[html.Div]:
    return [
        card("Partitions removed", f"{p['partitions']:,}", "ok",
             f"{content['topic']}: {content['from']} -> {content['to']}"),
        card("Room reclaimed", f"{p['replicas_reclaimed']:,} replicas", "ok",
             size(p["bytes_reclaimed"]) + " of logs"),
        card("Removed after", duration(p["eta_seconds"]), "ok",
             f"delay {duration(content['delay_ms'] / 1000)} + the controller's check"),
        _headroom_card(p.get("headroom_after")),
    ]


def _headroom_card(headroom: int | None) -> html.Div:
    """Over the limit: red; at it (no room for one more replica, KIP-578 refuses the next
    one): amber."""
    state = "ok" if headroom is None or headroom > 0 else "near" if headroom == 0 else "over"
    return card(term("Headroom after", "headroom"),
                "unlimited" if headroom is None else f"{headroom:,} replicas", state,
                "on the fullest broker, under max.broker.partitions"
                + ("; at the limit, it takes no new replica" if headroom == 0 else ""))


WORDS_PER_KIND = 8  # lines of one kind before the rest are counted, not listed


def words(p: dict) -> list[html.Div]:
    """Violations (red), unresolved items (amber) and risks (blue), one line each; past
    WORDS_PER_KIND lines of one kind, the rest as a count (the grid lists every change)."""
    out = []
    for items, prefix, kind in ((p["violations"], "Breaks", "error"),
                                (p["unresolved"], "Not achieved", "warning"),
                                ([{"message": r} for r in p.get("risks", [])], "Risk", "info")):
        out += [banners.banner(f"{prefix}: {i['message']}", kind)
                for i in items[:WORDS_PER_KIND]]
        if len(items) > WORDS_PER_KIND:
            out.append(banners.banner(f"{prefix}: and {len(items) - WORDS_PER_KIND:,} more "
                                      "like these", kind))
    if not out:
        out = [banners.banner("Breaks nothing and achieves everything it was asked: no "
                              "limit exceeded, no rack spread lost.", "info")]
    return out + leaders_note(p) + left_out(p)


def leaders_note(p: dict) -> list[html.Div]:
    """A reassignment changes the preferred leader (the first replica), not the leader:
    Kafka moves leadership when its controller next balances leaders, and Railyard's
    executor elects none itself."""
    moves = p.get("leader_moves") or 0
    if not moves:
        return []
    return [banners.banner(
        f"{moves:,} preferred-leader change{'s' if moves != 1 else ''}: the new leaders "
        "lead once Kafka's controller next balances leaders (auto.leader.rebalance.enable, "
        "within leader.imbalance.check.interval.seconds, 300 s by default; "
        "QuorumController) or at once with kafka-leader-election --election-type "
        "PREFERRED. Railyard's executor elects no leader itself.", "info")]


def left_out(p: dict) -> list[html.Div]:
    """What the plan leaves alone: the brokers a completed plan drained, kept empty, and
    the partitions already being reassigned (KIP-455: Kafka lists a moving partition's
    target and removing replicas together)."""
    out = [banners.banner(
        f"Kept empty: broker {k['broker']}, drained by plan {k['plan']} (completed "
        f"{k['completed_at'][:16].replace('T', ' ')} UTC). To use it again, choose the add "
        f"goal with broker {k['broker']}.", "info") for k in p.get("kept_empty", [])]
    moving = p.get("in_flight") or []
    if not moving:
        return out
    shown = "; ".join(f"{m['partition']} {','.join(map(str, m['replicas']))} -> "
                      f"{','.join(map(str, m['target']))}" for m in moving[:WORDS_PER_KIND])
    rest = p.get("in_flight_partitions", len(moving)) - min(len(moving), WORDS_PER_KIND)
    return [*out, banners.banner(
        f"Left out, already moving: {p.get('in_flight_partitions', len(moving)):,} "
        f"partitions, counted at their targets: {shown}"
        + (f"; and {rest:,} more" if rest > 0 else ""), "info")]


def bars(p: dict, title: str, graph_id: str) -> dcc.Graph:
    b = p["brokers"]
    figure = charts.before_after_bars([str(x["id"]) for x in b], [x["before"] for x in b],
                                      [x["after"] for x in b], b[0]["limit"] if b else None,
                                      title)
    return dcc.Graph(id=graph_id, figure=figure, config=GRAPH)


def diff_grid(rows: int, filter_id: str, box_id: str, grid_id: str,
              sizes_now: bool = False) -> html.Div:
    """The per-partition diff: a filter box and a virtual grid fetching blocks of rows.
    ``sizes_now``: its bytes are the cluster's now, not the preview's (a stored plan's
    grid rebuilt later), said so that an approver does not add them up against Data to
    move, which is as the plan was proposed."""
    return html.Div([
        html.H3(f"Per-partition changes ({rows:,} partitions)"),
        *([html.P("Bytes to copy are the partitions' sizes as the cluster is now; Data to "
                  "move above is as they were when the plan was proposed.", className="hint")]
          if sizes_now else []),
        dcc.Input(id=filter_id, type="text", debounce=0.4, className="wide",
                  placeholder="filter: partition name contains ..."),
        html.Div(grid(grid_id), id=box_id),
    ], className="panel")


def grid(grid_id: str) -> dag.AgGrid:
    """A grid with the infinite row model: it asks the server for blocks as it scrolls."""
    return dag.AgGrid(
        id=grid_id, rowModelType="infinite", columnDefs=GRID_COLUMNS,
        defaultColDef={"sortable": True, "resizable": True, "minWidth": 110},
        columnSize="responsiveSizeToFit", className="ag-theme-alpine",
        style={"height": "420px"},
        dashGridOptions={"cacheBlockSize": GRID_BLOCK, "maxBlocksInCache": 20,
                         "infiniteInitialRowCount": GRID_BLOCK, "animateRows": False,
                         "rowBuffer": 10})


def exports(throttle: float | None, filename: str, button_id: str, download_id: str,
            command_id: str) -> html.Div:
    """Kafka's own JSON to download and the command line that runs it throttled."""
    return html.Div([
        html.H3("Run it with Kafka's tool"),
        html.Div([html.Button("Download plan JSON", id=button_id, className="button"),
                  dcc.Download(id=download_id)], className="form-row"),
        html.Pre(plan_preview.kafka_command(throttle, filename), id=command_id,
                 className="command"),
    ], className="panel")
