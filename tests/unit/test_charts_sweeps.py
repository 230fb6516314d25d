"""A large What-if sweep stays readable: a 20 x 100 sweep drew a legend entry per line
(100 entries under the chart, wrapping row after row, and lines up to 200 px wide), so
past a few lines the chart reads their value off a colour bar, or names only the worst
lines and says how many it drew; small sweeps are drawn as before."""

from __future__ import annotations

import pandas as pd

from components import charts


def legend_entries(fig) -> list[str]:
    return [t.name for t in fig.data if t.showlegend is not False]


def limits_rows(brokers: int) -> pd.DataFrame:
    """A limits sweep: 20 max.broker.partitions x ``brokers`` add_brokers values."""
    return pd.DataFrame([(1000 + 100 * m, a, 500 + 40 * m - 3 * a)
                         for m in range(20) for a in range(brokers)],
                        columns=["max_broker_partitions", "add_brokers", "min_capacity"])


def test_a_sweep_of_100_numeric_values_reads_them_off_a_colour_bar():
    fig = charts.sweep_figure("limits", limits_rows(100))
    lines = [t for t in fig.data if t.mode == "lines+markers"]
    assert len(lines) == 100  # every scenario still drawn
    assert len(legend_entries(fig)) <= charts.MAX_SWEEP_SERIES  # none, here
    axis = fig.layout.coloraxis
    assert (axis.cmin, axis.cmax) == (0, 99) and "add_brokers" in axis.colorbar.title.text
    assert "100 lines" in axis.colorbar.title.text
    assert all(t.marker.coloraxis == "coloraxis" for t in lines)
    # thin lines of their value's colour, the lowest and highest at the scale's ends
    assert max(t.line.width for t in lines) <= 2
    assert lines[0].line.color != lines[-1].line.color
    assert lines[0].name == "add_brokers=0"  # hover still names each line
    assert fig.layout.margin.r >= 80  # room for the colour bar


def test_a_throttle_sweep_of_many_windows_has_a_bounded_legend():
    rows = pd.DataFrame([{"throttle": t * 1e6, "window_num": w,
                          "batched_eta_seconds": 3600.0 * w / t}
                         for t in range(1, 21) for w in range(1, 31)])
    fig = charts.sweep_figure("throttle", rows)
    assert len(fig.data) == 30 and len(legend_entries(fig)) <= charts.MAX_SWEEP_SERIES
    assert "window_num" in fig.layout.coloraxis.colorbar.title.text


def test_many_principals_name_the_most_rejected_and_say_how_many_are_drawn():
    rows = pd.DataFrame([{"rate": r, "user": f"u{p:03d}", "client_id": "",
                          "rejected": p * r if p >= 90 else 0}
                         for r in range(20) for p in range(100)])
    fig = charts.sweep_figure("quota", rows)
    assert len(fig.data) == 100
    named = legend_entries(fig)
    assert sorted(named) == [f"principal=u{p:03d}" for p in range(90, 100)]
    assert "100 lines" in fig.layout.legend.title.text
    grey = [t for t in fig.data if t.showlegend is False]
    assert len(grey) == 90 and {t.line.color for t in grey} == {charts.GREY}
    assert max(t.line.width for t in fig.data) <= 2
    # the named lines are drawn over the grey ones
    assert all(t.showlegend is False for t in fig.data[:90])


def test_a_small_sweep_keeps_a_legend_entry_per_line():
    fig = charts.sweep_figure("limits", limits_rows(3))
    assert legend_entries(fig) == ["add_brokers=0", "add_brokers=1", "add_brokers=2"]
    assert fig.layout.coloraxis.colorbar.title.text is None
    widths = [t.line.width for t in fig.data]
    assert widths == sorted(widths, reverse=True) and len(set(widths)) == 3
    at_most = charts.sweep_figure("limits", limits_rows(charts.MAX_SWEEP_SERIES))
    assert len(legend_entries(at_most)) == charts.MAX_SWEEP_SERIES
