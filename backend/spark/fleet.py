"""The fleet sweep kind's rows for one cluster: what each Spark task runs on its group.

Two ways in, one kind. From snapshot files, each cluster's headroom per broker
(engines.fleet: room under the limits and days to reach them at the observed growth). From
partition history (each cluster's daily peaks read from its own Prometheus), the capacity
forecast: the same engine /capacity and `railyard capacity forecast` run, so a cluster's
rows here equal its forecast there, under every grid point of the review's knobs.

Pure pandas and the engines; backend.spark.sweeps does the Spark wiring.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from backend.engines import forecast as fc
from backend.engines.fleet import cluster_headroom
from backend.model.io import load_snapshot
from backend.model.snapshot import Limits, Snapshot
from backend.spark.spec import SNAPSHOT_LIMIT, FleetSpec

HEADROOM_COLUMNS = {
    "scenario": "long", "max_broker_partitions": "long", "max_partitions": "long",
    "cluster": "string", "broker": "long", "rack": "string", "replicas": "long",
    "headroom": "long", "growth_per_day": "double", "days_to_limit": "double",
    "cluster_replicas": "long", "cluster_headroom": "long",
    "cluster_growth_per_day": "double", "cluster_days_to_limit": "double", "cluster_order": "long",
}
HEADROOM_INPUT = "cluster_order long, snapshot_order long, suffix string, content binary"

FORECAST_COLUMNS = {
    "scenario": "long", "max_broker_partitions": "long", "max_partitions": "long",
    "growth_pct_month": "double", "add_brokers": "long", "topic_partitions": "long",
    "topic_rf": "long", "cluster": "string", "scope": "string", "limit_name": "string",
    "limit": "long", "now": "double", "growth_per_day": "double", "days": "double",
    "earliest_days": "double", "latest_days": "double", "brokers_to_add": "long",
    "brokers_to_add_cautious": "long", "cluster_order": "long",
}
FORECAST_INPUT = "cluster_order long, series string, time double, value double"
CLUSTER_SERIES = "__cluster__"  # the cluster's own replicas series among its brokers'


def columns(spec: FleetSpec) -> dict[str, str]:
    return FORECAST_COLUMNS if spec.forecasts else HEADROOM_COLUMNS


def input_schema(spec: FleetSpec) -> str:
    return FORECAST_INPUT if spec.forecasts else HEADROOM_INPUT


def order(spec: FleetSpec) -> list[str]:
    """How the rows are sorted: per scenario, clusters in the spec's order."""
    return ["scenario", "cluster_order", "scope" if spec.forecasts else "broker"]


def history_frame(spec: FleetSpec) -> pd.DataFrame:
    """One row per (cluster, series, day): what Spark groups by cluster."""
    parts = []
    for c, cluster in enumerate(spec.clusters):
        h = cluster.history
        values = np.vstack([h.broker_values, h.cluster_values[None, :]])
        n_series, n_days = values.shape
        parts.append(pd.DataFrame({
            "cluster_order": c, "series": np.repeat([*h.brokers, CLUSTER_SERIES], n_days),
            "time": np.tile(h.times, n_series),
            "value": values.ravel()}))
    return pd.concat(parts, ignore_index=True)


def cluster_rows(spec: FleetSpec, scens: list[dict], part: pd.DataFrame) -> list[dict]:
    """Every scenario's rows for the cluster whose inputs are ``part``."""
    c = int(part["cluster_order"].iloc[0])
    if spec.forecasts:
        return _forecast_rows(spec, scens, c, part)
    return _headroom_rows(spec, scens, c, part)


def _forecast_rows(spec: FleetSpec, scens: list[dict], c: int, part: pd.DataFrame
                   ) -> list[dict]:
    cluster = spec.clusters[c]
    h = cluster.history
    wide = part.pivot_table(index="series", columns="time", values="value", aggfunc="max",
                            dropna=False)
    times = wide.columns.to_numpy(np.float64)
    brokers = list(h.brokers)
    own = Limits(h.max_broker_partitions, h.max_partitions)
    rows = []
    for s in scens:
        scenario = fc.Scenario(
            float(s["growth_pct_month"]), int(s["add_brokers"]),
            None if s["max_broker_partitions"] == SNAPSHOT_LIMIT else s["max_broker_partitions"],
            None if s["max_partitions"] == SNAPSHOT_LIMIT else s["max_partitions"],
            int(s["topic_partitions"]), int(s["topic_rf"]))
        scenario.validate()
        answer = fc.forecast(times, brokers, wide.loc[brokers].to_numpy(np.float64),
                             wide.loc[CLUSTER_SERIES].to_numpy(np.float64), own, scenario,
                             spec.by_days)
        add = answer["brokers_to_add"]
        rows += [{**s, "max_broker_partitions": answer["limits"]["max.broker.partitions"],
                  "max_partitions": answer["limits"]["max.partitions"],
                  "cluster": cluster.name, "cluster_order": c, **r,
                  "brokers_to_add": add["likely"]["brokers_to_add"],
                  "brokers_to_add_cautious": add["cautious"]["brokers_to_add"]}
                 for r in answer["table"]]
    return rows


def load_snapshot_bytes(content: bytes, suffix: str) -> Snapshot:
    """A snapshot from a file's bytes, through the same loader the CLI uses."""
    with tempfile.TemporaryDirectory(prefix="railyard-") as tmp:
        path = Path(tmp) / f"snapshot{suffix}"
        path.write_bytes(content)
        return load_snapshot(path)


def _headroom_rows(spec: FleetSpec, scens: list[dict], c: int, files: pd.DataFrame
                   ) -> list[dict]:
    files = files.sort_values("snapshot_order")
    cluster = spec.clusters[c]
    snaps = [load_snapshot_bytes(b, s) for b, s in zip(files["content"], files["suffix"],
                                                       strict=True)]
    taken = [s.taken_at for s in cluster.snapshots]
    own = snaps[-1].limits
    rows = []
    for s in scens:
        mbp = own.max_broker_partitions if s["max_broker_partitions"] == SNAPSHOT_LIMIT \
            else s["max_broker_partitions"]
        mp = own.max_partitions if s["max_partitions"] == SNAPSHOT_LIMIT else s["max_partitions"]
        cols = cluster_headroom(cluster.name, snaps, taken, cluster.growth_per_day,
                                Limits(mbp, mp))
        n = len(cols["broker"])
        rows += [{"scenario": s["scenario"], "max_broker_partitions": mbp,
                  "max_partitions": mp, "cluster_order": c,
                  **{k: v[i] for k, v in cols.items()}} for i in range(n)]
    return rows
