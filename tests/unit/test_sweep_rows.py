"""Sweep rows that no longer contradict themselves (issue 26 item 10), on the demo cluster
and the engines the rows map (Spark only distributes them: tests/integration/
test_spark_sweeps.py checks the same rows on three Sparks).

- a limits sweep at max.broker.partitions=11,200, where brokers 2 and 3 already hold more,
  said ok, rejected [], brokers_to_add 0 and nothing else: KIP-578 accepts the workload on
  the other brokers, and the row now names the brokers over the limit;
- its "cluster partitions after" column held replicas: it is cluster_replicas_after;
- a throttle sweep showed eta_seconds 459 beside kip73_move_time_seconds 13,768 and
  plotted the optimistic one: each ETA is named for what it assumes, and the chart plots
  the plan as Railyard's executor runs it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from backend.engines import planner
from backend.engines import throttle as throttle_engine
from backend.engines.batches import execution_batches
from backend.spark.spec import LimitsSpec, ThrottleSpec, Topic
from backend.spark.sweeps import LIMITS_COLUMNS, limits_row, throttle_row
from backend.twin.examples import demo_snapshot
from components import charts

WORKLOAD = (Topic("orders-v2", 300, 3), Topic("clicks", 600, 3))  # the what-if page's


@pytest.fixture(scope="module")
def demo():
    return demo_snapshot()


def test_brokers_already_over_the_limit_show_in_the_row(demo):
    counts = dict(zip(demo.broker_ids.tolist(), demo.broker_replica_counts().tolist(),
                      strict=True))
    assert counts[2] > 11_200 and counts[3] > 11_200  # 11,735 and 12,104
    row = limits_row(demo, LimitsSpec("demo", WORKLOAD, {}),
                     {"max_broker_partitions": 11_200, "max_partitions": None,
                      "add_brokers": 0})
    # KIP-578: they keep their partitions and take no new one; the others take the workload
    assert row["ok"] and row["rejected"] == [] and row["brokers_to_add"] == 0
    assert row["brokers_over_limit"] == [2, 3]
    assert row["cluster_replicas_after"] == sum(counts.values()) + 900 * 3
    assert "cluster_partitions_after" not in row and "cluster_partitions_after" not in \
        LIMITS_COLUMNS
    unlimited = limits_row(demo, LimitsSpec("demo", WORKLOAD, {}),
                           {"max_broker_partitions": None, "max_partitions": None,
                            "add_brokers": 0})
    assert unlimited["brokers_over_limit"] == []


def test_the_throttle_chart_plots_the_eta_of_the_plan_as_railyard_runs_it(demo):
    plan = planner.plan(demo, planner.Goal("drain", (9,))).reassignment
    spec = ThrottleSpec("demo", "plan.json", {})
    rows = [throttle_row(demo, plan, spec, {"throttle": t, "window_num": 11})
            for t in (5e6, 50e6)]
    batched = [throttle_engine.batched_eta_seconds(demo, plan, execution_batches(demo, plan),
                                                   t) for t in (5e6, 50e6)]
    assert [r["batched_eta_seconds"] for r in rows] == pytest.approx(batched)
    # at 5 MB/s all 3,595 moves at once never catch up; the executor's batches do
    assert rows[0]["eta_seconds"] is None and np.isfinite(batched[0])
    # KIP-73's MoveTime counts all 3 replicas of each moving partition through one
    # broker's throttle: far above both per-broker figures
    assert rows[1]["kip73_move_time_seconds"] > 5 * max(rows[1]["eta_seconds"], batched[1])
    figure = charts.sweep_figure("throttle", pd.DataFrame(rows).assign(scenario=[0, 1]))
    assert list(figure.data[0].y) == pytest.approx([b / 3600 for b in batched])
    assert "as Railyard runs the plan" in figure.layout.title.text
