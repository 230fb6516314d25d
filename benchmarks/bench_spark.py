"""What-if sweeps on Spark against a 200k-partition, 100-broker cluster (issue 6 §4).

- limit scenarios per second over a 1,000-scenario sweep on local[2] (target >= 20/s),
  the same sweep on local[1] and on a standalone master + worker (2 cores) started from
  the pyspark package, so scaling with cores is visible;
- a 50-value throttle sweep over a 100,000-move plan, spec to rows (target <= 30 s);
- one warm single-scenario what-if, spec to rows, on the warm session (target <= 1 s).
Session and Python worker start-up are not timed (the dashboard warms its session in the
background).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

from backend.model.io import save_snapshot
from backend.services import whatif
from backend.spark.session import settings_from, stop_session
from backend.spark.spec import parse_spec
from backend.twin.generate import generate_snapshot
from benchmarks.bench_throttle import random_reassignment
from benchmarks.common import Figure, best_of
from tests import spark_servers

# 30,000 new replicas: rejected under the low limits, so "brokers to add" is searched too
WORKLOAD = [{"topic": "payments", "partitions": 2000, "rf": 3},
            {"topic": "audit", "partitions": 5000, "rf": 3},
            {"topic": "metrics", "partitions": 3000, "rf": 3}]


def _limit_spec(snapshot: Path) -> dict:
    """1,000 scenarios: 50 broker limits x 2 cluster limits x 10 broker additions."""
    return {"kind": "limits", "snapshot": str(snapshot), "workload": WORKLOAD,
            "grid": {"max.broker.partitions": list(range(4000, 9000, 100)),
                     "max.partitions": [None, 615_000],
                     "add_brokers": list(range(10))}}


def _throughput(spec: dict, settings, label: str, target: float, note: str) -> Figure:
    # the JVM, executors and Python workers are up before timing
    warm = {**spec, "grid": {"max.broker.partitions": list(range(8000, 8016))}}
    whatif.run(parse_spec(warm), settings)
    parsed = parse_spec(spec)
    t0 = time.perf_counter()
    table = whatif.run(parsed, settings)
    seconds = time.perf_counter() - t0
    return Figure(f"limit sweep, 1,000 scenarios, {label}", table.num_rows / seconds,
                  "scenarios/s", target, higher_is_better=True,
                  note=f"{seconds:.1f} s; {note}")


def run() -> list[Figure]:
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    figures = []
    with tempfile.TemporaryDirectory(prefix="railyard-bench-spark-") as tmp:
        d = Path(tmp)
        snap = generate_snapshot(100, 4, 2000, 200_000, 3, seed=7)
        save_snapshot(snap, d / "cluster.parquet")
        plan = random_reassignment(snap, 100_000, seed=1)
        (d / "plan.json").write_text(json.dumps(plan.to_kafka_json(snap)))
        limits = _limit_spec(d / "cluster.parquet")
        try:
            local2 = settings_from(master="local[2]", env={})
            figures.append(_throughput(limits, local2, "local[2]", 20.0,
                                       "the issue's target"))
            throttle = {"kind": "throttle", "snapshot": str(d / "cluster.parquet"),
                        "reassignment": str(d / "plan.json"),
                        "grid": {"throttle": [10_000_000 * (i + 1) for i in range(50)]}}
            t0 = time.perf_counter()
            whatif.run(parse_spec(throttle), local2)
            figures.append(Figure("throttle sweep, 50 values, 100,000-move plan, local[2]",
                                  time.perf_counter() - t0, "s", 30.0,
                                  note="spec to rows, plan JSON parsed once on the driver"))
            single = {**limits, "grid": {"max.broker.partitions": [5000]}}
            best, _ = best_of(lambda: whatif.run(parse_spec(single), local2), repeat=3)
            figures.append(Figure("warm single what-if, spec to rows, local[2]", best, "s",
                                  1.0, note="200k-partition snapshot loaded each time"))
            stop_session()
            figures.append(_throughput(limits, settings_from(master="local[1]", env={}),
                                       "local[1]", 10.0, "half the local[2] target: "
                                       "one core"))
            stop_session()
            with spark_servers.standalone_cluster(d / "standalone", cores=2) as url:
                figures.append(_throughput(
                    limits, settings_from(master=url, env={}), "standalone, 1 worker x 2 cores",
                    20.0, "master + worker started from the pyspark package"))
                stop_session()
        finally:
            stop_session()
    return figures
