"""Forecast engine: exact Theil-Sen, steps that do not fool it, dates with intervals, and
brokers to add answered by the planner's own pre-check."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import theilslopes

from backend.engines import forecast as fc
from backend.engines.planner import Goal, plan
from backend.errors import BadInput
from backend.model.snapshot import Limits
from backend.twin.generate import generate_snapshot

HOUR, DAY = 3600.0, 86_400.0
T0 = 1_704_067_200.0


def hourly(daily: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Samples every hour holding each day's value (the day's maximum is that value)."""
    daily = np.atleast_2d(daily)
    times = T0 + np.arange(daily.shape[1] * 24) * HOUR
    return times, np.repeat(daily, 24, axis=1)


def test_theil_sen_is_scipys_on_every_row_with_ties_and_gaps():
    rng = np.random.default_rng(3)
    y = np.round(100 + 4 * np.arange(30) + rng.normal(0, 6, (8, 30)))  # integers: ties
    y[2, [4, 5, 17]] = np.nan
    x = np.arange(30, dtype=float) - 29
    slope, low, high, intercept = fc.theil_sen(x, y)
    for r in range(len(y)):
        keep = ~np.isnan(y[r])
        ref = theilslopes(y[r, keep], x[keep], 0.95, method="joint")
        assert (slope[r], low[r], high[r], intercept[r]) == pytest.approx(
            (ref.slope, ref.low_slope, ref.high_slope, ref.intercept), abs=1e-12)


def test_known_linear_growth_is_fitted_exactly_from_five_minute_samples():
    days = 90
    times = T0 + np.arange(days * 288) * 300.0
    values = 2_000 + 7.5 * (times - T0) / DAY  # 7.5 replicas a day, sampled every 5 minutes
    g = fc.fit_growth(times, values[None, :])
    assert g.days == days
    assert g.slope[0] == pytest.approx(7.5)
    assert g.level[0] == pytest.approx(values.max())  # today's line is today's maximum
    assert g.steps[0] == 0


def test_a_big_topic_and_a_broker_added_do_not_fool_it():
    d = np.arange(60, dtype=float)
    grow = 1_000 + 5 * d
    topic = grow + np.where(d >= 30, 900, 0)  # a 300 x 3 topic on day 30
    rebalanced = grow - np.where(d >= 30, 400, 0)  # a broker added on day 30 took 400
    times, values = hourly(np.vstack([topic, rebalanced]))
    g = fc.fit_growth(times, values)
    assert g.slope == pytest.approx([5, 5])
    assert g.level == pytest.approx([topic[-1], rebalanced[-1]])  # the steps stay in the level
    assert g.steps.tolist() == [1, 1]
    naive = fc.theil_sen(d - d[-1], np.vstack([topic, rebalanced]))[0]
    assert naive[0] > 15 and naive[1] < 0  # what the steps do to a plain fit


def test_frequent_lumps_are_growth_not_steps():
    d = np.arange(60)
    lumpy = 500.0 + 36 * (d // 3)  # a 12 x 3 topic every third day
    g = fc.fit_growth(*hourly(lumpy))
    assert g.steps[0] == 0 and g.slope[0] == pytest.approx(12, rel=0.05)


def test_intervals_cover_the_true_date_on_noisy_series():
    rng = np.random.default_rng(11)
    n, days, limit = 60, 90, 4_000
    true_slope = rng.uniform(5, 20, n)
    d = np.arange(days, dtype=float)
    truth = 1_000 + true_slope[:, None] * d
    noisy = np.round(truth + rng.normal(0, 15, (n, days)))
    g = fc.fit_growth(*hourly(noisy))
    mid = fc.days_to_limit(g.level, g.slope, limit)
    early = fc.days_to_limit(g.level_high, g.slope_high, limit)
    late = fc.days_to_limit(g.level_low, g.slope_low, limit)
    true_days = (limit - truth[:, -1]) / true_slope
    assert (early <= mid).all() and (mid <= late).all()
    covered = (early <= true_days) & (true_days <= late)
    assert covered.mean() >= 0.9  # 95% intervals: most, not necessarily all


def test_days_to_limit_edges():
    level = np.array([100.0, 120.0, 80.0, np.nan])
    slope = np.array([10.0, 10.0, 0.0, 1.0])
    out = fc.days_to_limit(level, slope, 110)
    assert out[0] == 1 and out[1] == 0 and np.isinf(out[2]) and np.isnan(out[3])
    assert np.isnan(fc.days_to_limit(level, slope, None)).all()


def flat_growth(level: float, slope: float, n: int = 1, days: int = 30) -> fc.Growth:
    return fc.fit_growth(*hourly(np.full((n, 1), level) + slope * (np.arange(days) - days + 1)))


def test_brokers_to_add_is_the_planners_answer_on_the_projected_cluster():
    snap = generate_snapshot(6, 0, 5, 200, 3, seed=0)  # 600 replicas on 6 brokers
    limits = Limits(90, None)
    cluster = flat_growth(600, 0.0)
    brokers = flat_growth(100, 0.0, n=6)
    o = fc.outlook(brokers, cluster, limits, fc.Scenario())
    [expected] = plan(snap, Goal("limits"), limits).unresolved
    answer = fc.brokers_to_add(o, days_ahead=30)
    assert answer["likely"]["brokers_to_add"] == expected["brokers_to_add"] == 1
    assert answer["likely"]["replicas"] == expected["replicas"]
    # growing 10 replicas a day: 900 in 30 days needs 900/90 = 10 brokers, 4 more
    grown = fc.outlook(brokers, flat_growth(600, 10.0), limits, fc.Scenario())
    assert fc.brokers_to_add(grown, 30)["likely"]["brokers_to_add"] == 4


def test_scenario_knobs_move_the_dates():
    limits = Limits(200, 1_500)
    brokers, cluster = flat_growth(100, 2.0, n=6), flat_growth(600, 12.0)
    base = fc.time_to_limits(fc.outlook(brokers, cluster, limits, fc.Scenario()),
                             [str(b) for b in range(6)])
    by_scope = {r["scope"]: r for r in base}
    assert by_scope["broker 0"]["days"] == pytest.approx(50)  # (200 - 100) / 2
    assert by_scope["cluster"]["days"] == pytest.approx(75)  # (1500 - 600) / 12
    assert base[0]["days"] <= base[-1]["days"]  # most urgent first

    def days(scenario: fc.Scenario, scope: str) -> float:
        o = fc.outlook(brokers, cluster, limits, scenario)
        return {r["scope"]: r for r in fc.time_to_limits(o, [str(b) for b in range(6)])}[scope]
    assert days(fc.Scenario(max_broker_partitions=300), "broker 0")["days"] == pytest.approx(100)
    assert days(fc.Scenario(growth_pct_month=100), "cluster")["days"] < 75
    added = days(fc.Scenario(add_brokers=2), "broker 0")  # 600 over 8 brokers, 12/8 a day
    assert added["now"] == pytest.approx(75) and added["days"] == pytest.approx(125 / 1.5, abs=0.05)
    topic = days(fc.Scenario(topic_partitions=100, topic_rf=3), "cluster")
    assert topic["now"] == pytest.approx(900) and topic["days"] == pytest.approx(50)


def test_bad_knobs_are_one_line_errors():
    with pytest.raises(BadInput, match="add brokers"):
        fc.Scenario(add_brokers=-1).validate()
    with pytest.raises(BadInput, match="replication factor"):
        fc.planned_topic_per_broker(3, fc.Scenario(topic_partitions=4, topic_rf=5))
    with pytest.raises(BadInput, match="two days"):
        fc.fit_growth(np.array([T0, T0 + 60]), np.array([[1.0, 2.0]]))
