"""A fleet's forecasts in one Spark job (local[2]), the fleet sweep kind fed with partition
histories: every cluster's rows equal the forecast engine's answer for that cluster alone,
for every grid point; a cluster whose history cannot be fitted is a row saying why, not a
failed job; a spec file with histories runs the same sweep."""

from __future__ import annotations

import json

import numpy as np
import pytest

from backend.engines import forecast as fc
from backend.model.snapshot import Limits
from backend.services import whatif
from backend.spark.session import get_session, settings_from, stop_session
from backend.spark.spec import FleetCluster, FleetHistory, FleetSpec

pytestmark = pytest.mark.integration
DAY = 86_400.0


def history(brokers: int, growth: float, limits: Limits, days: int = 30) -> FleetHistory:
    times = 1_704_067_200 + np.arange(days) * DAY
    d = np.arange(days, dtype=float)
    values = 400 + growth * d[None, :] * (1 + np.arange(brokers)[:, None] / 10)
    return FleetHistory(times, tuple(str(b + 1) for b in range(brokers)), values,
                        values.sum(axis=0), limits.max_broker_partitions, limits.max_partitions)


FLEET = {"east": history(3, 5.0, Limits(1_000, 3_500)),
         "west": history(4, 2.0, Limits(800, None)),
         "tiny": history(2, 1.0, Limits(500, None), days=1)}  # one day: nothing to fit
GRID = {"max.broker.partitions": ["snapshot", 2_000], "max.partitions": ["snapshot"],
        "growth_pct_month": [0.0], "add_brokers": [0, 1], "topic_partitions": [0],
        "topic_rf": [1]}


@pytest.fixture(scope="module")
def spark():
    try:
        get_session(settings_from(master="local[2]"))
        yield settings_from(master="local[2]")
    finally:
        stop_session()


def test_fleet_sweep_rows_are_the_forecast_engines_for_every_scenario(spark):
    spec = FleetSpec(tuple(FleetCluster(n, (), None, h) for n, h in FLEET.items()), GRID, 60.0)
    rows = whatif.run(spec, spark).to_pandas()
    assert sorted(rows["scenario"].dropna().unique()) == [0, 1, 2, 3]
    for scenario_id, (mbp, add) in enumerate([(None, 0), (None, 1), (2_000, 0), (2_000, 1)]):
        scenario = fc.Scenario(add_brokers=add, max_broker_partitions=mbp)
        for name in ("east", "west"):
            h = FLEET[name]
            own = fc.forecast(h.times, list(h.brokers), h.broker_values, h.cluster_values,
                              Limits(h.max_broker_partitions, h.max_partitions), scenario, 60)
            mine = rows[(rows["cluster"] == name) & (rows["scenario"] == scenario_id)]
            mine = mine.sort_values("scope")
            expected = sorted(own["table"], key=lambda r: r["scope"])
            assert mine["scope"].tolist() == [r["scope"] for r in expected]
            assert mine["days"].tolist() == pytest.approx(
                [np.nan if r["days"] is None else r["days"] for r in expected], nan_ok=True)
            assert set(mine["brokers_to_add"]) == {
                own["brokers_to_add"]["likely"]["brokers_to_add"]}
            assert set(mine["max_broker_partitions"]) == {mbp or h.max_broker_partitions}
    tiny = rows[rows["cluster"] == "tiny"]
    assert len(tiny) == 1 and "two days" in tiny["error"].iloc[0]


def test_a_spec_file_with_histories_runs_the_same_fleet_sweep(spark, tmp_path):
    h = FLEET["east"]
    (tmp_path / "east.json").write_text(json.dumps({
        "times": h.times.tolist(), "brokers": list(h.brokers),
        "broker_values": h.broker_values.tolist(), "cluster_values": h.cluster_values.tolist(),
        "limits": {"max.broker.partitions": 1_000, "max.partitions": 3_500}}))
    spec = tmp_path / "fleet.json"
    spec.write_text(json.dumps({"kind": "fleet", "by_days": 60,
                                "clusters": [{"name": "east", "history": "east.json"}],
                                "grid": {"add_brokers": [1]}}))
    from_file = whatif.run(str(spec), spark).to_pandas()
    direct = whatif.run(FleetSpec((FleetCluster("east", (), None, h),),
                                  {**GRID, "max.broker.partitions": ["snapshot"],
                                   "add_brokers": [1]}, 60.0), spark).to_pandas()
    assert from_file.drop(columns="error").equals(direct.drop(columns="error"))
