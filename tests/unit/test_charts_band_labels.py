"""Plan annotations read as English and do not run into each other: a band of one batch
said "#5: 1 batches", a shrink's migration of 4 steps "#4: 4 batches", and two plans run
minutes apart drew "#4: 4 batches#5: 1 batches" at 1,024 px (both labels on the row
above the plot); the later one is now counted on the first ("+1") and named in its
hover, as events too close for labels of their own are."""

from __future__ import annotations

from itertools import pairwise

import pandas as pd

from components import charts
from tests.unit.test_plan_bands import START, batch_events, series


def band_labels(fig: dict) -> list[dict]:
    return [a for a in fig["layout"]["annotations"] if a["yanchor"] == "bottom"]


def test_counted_says_one_in_the_singular():
    assert charts.counted(1, "batch") == "1 batch"
    assert charts.counted(4, "batch") == "4 batches"
    assert charts.counted(0, "step") == "0 steps"
    assert charts.counted(2_000, "partition") == "2,000 partitions"
    assert charts.counted(1, "leader change") == "1 leader change"
    assert charts.counted(3, "leader change") == "3 leader changes"


def test_a_band_of_one_batch_says_batch():
    fig = charts.with_plan_markers(series(), batch_events(5, 1, START + 600))
    assert [a["text"] for a in band_labels(fig)] == ["#5: 1 batch"]


def test_two_plans_minutes_apart_share_one_label_on_a_6_hour_chart():
    """Plan 4's four batches, then plan 5's one two minutes later, on a 6 h window: a
    6 h plot 390 px wide (a half-width panel at 1,024 px) covers 55 s a pixel, so the
    second label began 2 px after the first, which is 13 characters long."""
    events = batch_events(4, 4, START + 3600) + batch_events(5, 1, START + 3720)
    fig = charts.with_plan_markers(series(minutes=360), events)
    [label] = band_labels(fig)
    assert label["text"] == "#4: 4 batches +1"
    hover = label["hovertext"].split("<br>")
    assert hover[0] == "plan 4: plan 4's moves" and "plan 5: plan 5's moves" in hover
    assert hover[-1].endswith("batch 1 ended")  # plan 5's, after plan 4's 8 lines
    assert len([s for s in fig["layout"]["shapes"] if s["type"] == "rect"]) == 2  # both bands
    # far apart on the same chart, each keeps a label of its own
    apart = batch_events(4, 4, START + 3600) + batch_events(5, 1, START + 3600 * 3)
    assert [a["text"] for a in band_labels(charts.with_plan_markers(
        series(minutes=360), apart))] == ["#4: 4 batches", "#5: 1 batch"]


def test_band_labels_never_overlap_on_the_narrowest_plot():
    """Bands every few minutes over 6 h, some near the right edge (their labels read
    leftwards): no two labels on the row overlap at NARROWEST_PLOT_PX."""
    events = []
    for k, minute in enumerate((10, 12, 40, 41, 47, 120, 200, 330, 333, 355)):
        events += batch_events(10 + k, 1 + k % 3, START + minute * 60)
    fig = charts.with_plan_markers(series(minutes=360), events)
    px = charts.NARROWEST_PLOT_PX / (360 * 60)
    spans = []
    for a in band_labels(fig):
        at = (pd.Timestamp(a["x"]).timestamp() - START) * px
        width = len(a["text"]) * charts.MARKER_CHAR_PX
        spans.append((at - width, at) if a["xanchor"] == "right" else (at, at + width))
    spans.sort()
    for (_, end), (begin, _) in pairwise(spans):
        assert end <= begin, spans
    named = "".join(a["hovertext"] for a in band_labels(fig))
    assert all(f"plan {10 + k}:" in named for k in range(10))  # every plan still named


def test_a_shrink_migration_counts_steps_not_batches():
    """The migration's checklist is stored as batch rows (backend/executor/migration.py);
    its markers say "step" (services.execution.batch_markers, tested on a running
    migration in test_shrink_execution) and its band "#4: 4 steps"."""
    def marks(plan_id: int, n: int, first: float, unit: str) -> list[dict]:
        return [{**m, "user": "railyard", "unit": unit,
                 "state": m["state"].replace("batch", unit)}
                for m in batch_events(plan_id, n, first)]
    shown = marks(4, 4, START + 60, "step") + marks(7, 1, START + 1800, "batch")
    fig = charts.with_plan_markers(series(), sorted(shown, key=lambda m: m["at"]))
    assert [a["text"] for a in band_labels(fig)] == ["#4: 4 steps", "#7: 1 batch"]
