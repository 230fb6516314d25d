"""A fleet's forecasts in one Spark job (local[2]): every cluster's rows equal the forecast
engine's answer for that cluster alone, the fleet's most urgent first; a cluster whose
history cannot be fitted is a row saying why, not a failed job."""

from __future__ import annotations

import numpy as np
import pytest

from backend.engines import forecast as fc
from backend.model.snapshot import Limits
from backend.spark.capacity import fleet_forecast
from backend.spark.session import get_session, settings_from, stop_session

pytestmark = pytest.mark.integration
DAY = 86_400.0


def cluster(name: str, brokers: int, growth: float, limits: Limits, days: int = 30) -> dict:
    times = 1_704_067_200 + np.arange(days) * DAY
    d = np.arange(days, dtype=float)
    values = 400 + growth * d[None, :] * (1 + np.arange(brokers)[:, None] / 10)
    return {"cluster": name, "times": times, "brokers": [str(b + 1) for b in range(brokers)],
            "broker_values": values, "cluster_values": values.sum(axis=0), "limits": limits}


@pytest.fixture(scope="module")
def spark():
    try:
        yield get_session(settings_from(master="local[2]"))
    finally:
        stop_session()


def test_fleet_rows_are_the_engines_and_most_urgent_first(spark):
    fleet = [cluster("east", 3, 5.0, Limits(1_000, 3_500)),
             cluster("west", 4, 2.0, Limits(800, None)),
             cluster("tiny", 2, 1.0, Limits(500, None), days=1)]  # one day: nothing to fit
    scenario = fc.Scenario(add_brokers=1)
    rows = fleet_forecast(spark, fleet, scenario, by_days=60)
    assert rows["days"].dropna().is_monotonic_increasing
    for h in fleet[:2]:
        own = fc.forecast(h["times"], h["brokers"], h["broker_values"], h["cluster_values"],
                          h["limits"], scenario, 60)
        mine = rows[rows["cluster"] == h["cluster"]].sort_values("scope")
        expected = sorted(own["table"], key=lambda r: r["scope"])
        assert mine["scope"].tolist() == [r["scope"] for r in expected]
        assert mine["days"].tolist() == pytest.approx(
            [np.nan if r["days"] is None else r["days"] for r in expected], nan_ok=True)
        assert set(mine["brokers_to_add"]) == {own["brokers_to_add"]["likely"]["brokers_to_add"]}
    [tiny] = rows[rows["cluster"] == "tiny"].to_dict(orient="records")
    assert "two days" in tiny["error"]
