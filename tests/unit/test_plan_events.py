"""Plan events for the monitoring charts: the cluster's plan transitions in a window, as
dotted vertical markers on a time series."""

from __future__ import annotations

from datetime import timedelta

import pandas as pd

from backend.services import incident, plan_events, plans
from backend.store.store import open_store
from components import charts
from tests.plan_helpers import APPROVER, OPERATOR, T0, moves, orders_cluster


def test_events_in_a_window_for_one_cluster(tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 'p.db'}")
    snap = orders_cluster()
    mine = plans.propose(store, OPERATOR, cluster="c1", kind="reassignment",
                         content=moves(("orders", 0, [1, 3])), preview={}, snapshot=snap,
                         title="move orders-0", now=T0)
    plans.approve(store, APPROVER, mine.id, sha256=mine.sha256, topics_of=lambda *_: snap,
                  now=T0 + timedelta(minutes=5))
    plans.propose(store, OPERATOR, cluster="c2", kind="reassignment",
                  content=moves(("orders", 1, [2, 4])), preview={}, snapshot=snap,
                  now=T0 + timedelta(minutes=1))
    start = T0.timestamp()
    got = plan_events.events(store, "c1", start - 60, start + 3600)
    assert [(e["at"] - start, e["plan_id"], e["state"], e["user"]) for e in got] == [
        (0.0, mine.id, "proposed", "olga"), (300.0, mine.id, "approved", "anna")]
    assert got[0]["title"] == "move orders-0"
    # the window bounds both ends
    assert [e["state"] for e in plan_events.events(store, "c1", start + 60, start + 3600)] \
        == ["approved"]
    assert plan_events.events(store, "c1", start - 600, start - 60) == []
    store.engine.dispose()


def test_a_window_long_past_is_read_whole(tmp_path):
    """An incident reviewed weeks later: the window's events are found however many audit
    rows came after them (reading the newest 1,000 rows since the window's start and
    filtering afterwards lost them all), and the incident report's table has them too."""
    store = open_store(f"sqlite:///{tmp_path / 'p.db'}")
    snap = orders_cluster()
    mine = plans.propose(store, OPERATOR, cluster="c1", kind="reassignment",
                         content=moves(("orders", 0, [1, 3])), preview={}, snapshot=snap,
                         title="move orders-0", now=T0)
    later = T0 + timedelta(days=1)
    for i in range(1_200):  # audit rows after the window, on this cluster's plan
        plans.record(store, OPERATOR, mine.id, "note", detail={"i": i}, now=later)
    start = T0.timestamp()
    got = plan_events.events(store, "c1", start - 60, start + 3600)
    assert [(e["plan_id"], e["state"]) for e in got] == [(mine.id, "proposed")]
    table = incident.plan_events(store, "c1", start - 60, start + 3600)
    assert table[["plan", "action"]].values.tolist() == [[mine.id, "propose"]]
    store.engine.dispose()


def test_markers_on_a_time_series():
    frame = pd.DataFrame({"time": pd.to_datetime([T0, T0 + timedelta(minutes=10)]).tz_convert(
        None), "value": [1.0, 2.0], "series": ["a", "a"]})
    fig = charts.time_series(frame, "t", "x", limit=5)
    marked = charts.with_plan_markers(fig, [{"at": T0.timestamp() + 300, "plan_id": 7,
                                             "state": "approved", "user": "anna",
                                             "title": "move"}])
    line = marked["layout"]["shapes"][-1]
    assert (line["x0"], line["yref"], line["line"]["dash"]) == ("2026-03-01 09:05:00", "paper",
                                                                 "dot")
    assert marked["layout"]["annotations"][-1]["text"] == "#7 approved"
    assert len(marked["layout"]["shapes"]) == len(fig["layout"]["shapes"]) + 1  # limit kept
    assert charts.with_plan_markers(fig, []) is fig
    batch = charts.with_plan_markers(fig, [{"at": T0.timestamp() + 60, "plan_id": 7,
                                            "state": "batch 2 started", "kind": "batch",
                                            "user": "railyard", "title": "move"}])
    assert batch["layout"]["shapes"][-1]["line"]["dash"] == "dash"
    assert batch["layout"]["annotations"][-1]["text"] == "#7 batch 2 started"
