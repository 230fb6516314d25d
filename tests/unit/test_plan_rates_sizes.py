"""One way to write a rate and a size on a plan's page: plan 5's throttle read "0.2 MB/s"
in its throttle panel and "200 kB/s" in its preview (charts.rate_text: SI kB, no ".0"),
and a shrink's "Room reclaimed per broker" grid showed raw bytes (24,793,471) beside the
card's "49.59 MB" (tables.BYTES, as the diff grid writes sizes)."""

from __future__ import annotations

import dash_ag_grid as dag
from dash import html

from components import tables
from dashboard.plan_views.throttle import figure, throttle_view
from tests.unit.test_plan_pages import app, page, request_context  # noqa: F401 (fixtures)

H = {"mode": "fixed", "floor": None, "ceiling": 200_000, "switched_by": None, "note": None,
     "running": False, "predicted_eta_seconds": 180.0, "started_at": None, "looks": []}


def test_the_throttle_panel_writes_rates_as_the_preview_does():
    assert throttle_view(H, True).lines.children[0].children == \
        "Throttle fixed at the plan's 200 kB/s"
    adaptive = throttle_view({**H, "mode": "adaptive", "floor": 50_000, "started_at": 1.0},
                             True)
    assert adaptive.lines.children[0].children == (
        "Throttle adaptive: between 50 kB/s and the approved 200 kB/s, by each broker's "
        "traffic")
    broker = {"leader": 200_000, "follower": 1_500_000, "sent": 950.0, "received": None}
    looks = [{"at": 30.0, "brokers": {"1": broker}, "eta_seconds": 100.0}]
    fig = figure({**adaptive_h(), "looks": looks})
    hover = {t.name: list(t.customdata) for t in fig.data if t.customdata is not None}
    assert hover["leader rate"] == ["200 kB/s"] and hover["follower rate"] == ["1.5 MB/s"]
    assert hover["replication sent"] == ["950 B/s"]
    assert hover["replication received"] == [None]
    assert [list(t.y) for t in fig.data if t.name == "leader rate"] == [[0.2]]  # MB/s axis


def adaptive_h() -> dict:
    return {**H, "mode": "adaptive", "floor": 50_000, "started_at": 1.0, "running": True}


def grids(component) -> list[dag.AgGrid]:
    found = [component] if isinstance(component, dag.AgGrid) else []
    children = getattr(component, "children", None)
    for child in children if isinstance(children, list | tuple) else [children]:
        if child is not None and not isinstance(child, str | int | float):
            found += grids(child)
    return found


def test_the_shrinks_room_reclaimed_grid_writes_sizes_as_the_cards_do(app):  # noqa: F811
    block = html.Div(page("/shrinks").preview(1, "topic-001", 4, 24, "")[0])
    [room] = [g for g in grids(block) if any(c["field"] == "log bytes reclaimed"
                                             for c in g.columnDefs)]
    cols = {c["field"]: c for c in room.columnDefs}
    assert cols["log bytes reclaimed"]["valueFormatter"] == tables.BYTES
    assert cols["replicas reclaimed"]["valueFormatter"] == tables.THOUSANDS
    assert cols["broker"].get("valueFormatter") is None  # an id, not a count
