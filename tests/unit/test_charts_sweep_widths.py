"""A medium What-if sweep stays followable: a limits sweep of 40 max.broker.partitions
values (100..4000) by add_brokers 0..7 (8 lines, 320 rows) drew each earlier line 2 px
wider (up to 16 px) with markers 5 px larger (up to 42 px), a thick band of overlapping
markers; widths and marker sizes are now bounded, and lines of many points carry none."""

from __future__ import annotations

import pandas as pd

from components import charts


def limits_rows(limits: list[int], brokers: int) -> pd.DataFrame:
    return pd.DataFrame([(m, a, m - 60 - 3 * a) for m in limits for a in range(brokers)],
                        columns=["max_broker_partitions", "add_brokers", "min_capacity"])


def test_8_lines_of_40_points_are_thin_and_unmarked():
    rows = limits_rows(list(range(100, 4001, 100)), 8)
    assert len(rows) == 320
    fig = charts.sweep_figure("limits", rows)
    assert len(fig.data) == 8
    assert [t.name for t in fig.data] == [f"add_brokers={a}" for a in range(8)]
    widths = [t.line.width for t in fig.data]
    assert max(widths) <= charts.WIDEST_PLAIN_LINE_PX <= 6
    # a line under another still shows: each earlier line is wider than the next
    assert widths == sorted(widths, reverse=True) and len(set(widths)) == 8
    assert all(t.mode == "lines" for t in fig.data)  # no band of 320 markers
    assert len({t.line.dash for t in fig.data}) > 1


def test_many_lines_of_few_points_keep_bounded_markers():
    fig = charts.sweep_figure("limits", limits_rows([1000, 2000, 3000, 4000, 5000], 8))
    assert all(t.mode == "lines+markers" for t in fig.data)
    sizes = [t.marker.size for t in fig.data]
    widths = [t.line.width for t in fig.data]
    assert max(sizes) <= charts.LARGEST_MARKER_PX <= 20 and min(sizes) >= 7
    assert max(widths) <= charts.WIDEST_LINE_PX <= 8
    assert sizes == sorted(sizes, reverse=True) and len(set(sizes)) == 8
    assert widths == sorted(widths, reverse=True) and len(set(widths)) == 8


def test_three_lines_of_five_points_are_drawn_as_before():
    """The what-if page's usual sweep (the browser test's 5 x 3) keeps its look."""
    fig = charts.sweep_figure("limits", limits_rows([1000, 2000, 3000, 4000, 5000], 3))
    assert [t.line.width for t in fig.data] == [6, 4, 2]
    assert [t.marker.size for t in fig.data] == [17, 12, 7]
    assert all(t.mode == "lines+markers" for t in fig.data)
