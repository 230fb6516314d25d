"""What-if sweeps as the CLI and the pages ask them: a spec in, rows out, on Spark.

Inputs are loaded and validated here with the same loaders the single-scenario verbs
use (so a typo is one BadInput line before Spark starts); the rows come from
backend.spark.sweeps, which maps the engines over the scenarios.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from backend.errors import BadInput, shown_url
from backend.model.io import atomic_output, check_output_path, load_snapshot
from backend.model.reassignment import Reassignment, load_reassignment
from backend.model.snapshot import Snapshot
from backend.services import fields, limits, quota, throttle, uploads
from backend.services.cluster import ClusterSource, cluster_snapshot, snapshot_file
from backend.spark import fleet
from backend.spark import session as spark_session
from backend.spark.spec import (
    FleetSpec,
    LimitsSpec,
    QuotaSpec,
    Spec,
    ThrottleSpec,
    count_scenarios,
    load_spec,
    parse_spec,
)
from backend.spark.sweeps import ProgressFn, SweepCancelled, run_sweep

__all__ = ["SweepCancelled", "load_inputs", "run", "sweep", "write_rows"]


def load_inputs(spec: Spec) -> dict[str, Any]:
    """The files a spec names, loaded as the single-scenario verbs load them."""
    if isinstance(spec, LimitsSpec):
        return {"snapshot": load_snapshot(spec.snapshot)}
    if isinstance(spec, ThrottleSpec):
        snap = load_snapshot(spec.snapshot)
        return {"snapshot": snap, "reassignment": load_reassignment(spec.reassignment, snap)}
    if isinstance(spec, QuotaSpec):
        requests = quota.load_requests(spec.requests)
        frame = requests[["t", "user", "client_id", "partitions", "validate_only"]].copy()
        frame.insert(0, "seq", range(len(frame)))
        return {"requests": frame}
    if isinstance(spec, FleetSpec):
        return {"fleet": fleet.history_frame(spec) if spec.forecasts else _fleet_files(spec)}
    raise TypeError(type(spec).__name__)


def _fleet_files(spec: FleetSpec) -> pd.DataFrame:
    """Each snapshot file's bytes, read here and parsed on the executor of its cluster."""
    rows = []
    for c, cluster in enumerate(spec.clusters):
        for j, snap in enumerate(cluster.snapshots):
            try:
                content = Path(snap.file).read_bytes()
            except FileNotFoundError:
                raise BadInput(f"{snap.file}: no such snapshot file") from None
            except OSError as e:
                raise BadInput(f"{snap.file}: cannot read ({e.strerror})") from None
            suffix = ".parquet" if snap.file.endswith(".parquet") else ".json"
            rows.append({"cluster_order": c, "snapshot_order": j, "suffix": suffix,
                         "content": content})
    return pd.DataFrame(rows)


def run(spec: Spec | dict | str | os.PathLike,
        settings: spark_session.SparkSettings | None = None,
        progress: ProgressFn | None = None,
        cancel: threading.Event | None = None) -> pa.Table:
    """Run a sweep (a parsed spec, a spec dict or a spec file) and return its rows."""
    if isinstance(spec, dict):
        spec = parse_spec(spec)
    elif isinstance(spec, str | os.PathLike):
        spec = load_spec(spec)
    inputs = load_inputs(spec)
    spark = spark_session.get_session(settings)
    return run_sweep(spark, spec, inputs, progress, cancel)


def rows_as_json(table: pa.Table) -> list[dict]:
    """Rows as JSON objects; a detail column holds the verb's JSON as an object."""
    rows = table.to_pylist()
    if "result" in table.column_names:
        for r in rows:
            r["result"] = json.loads(r["result"])
    return rows


OUT_SUFFIXES = (".parquet", ".json")


def write_rows(table: pa.Table, out: str) -> None:
    """.parquet (columns as the sweep returns them) or .json (an array of row objects),
    all or nothing."""
    check_output_path(out, "--out", OUT_SUFFIXES)
    with atomic_output(out, "--out") as tmp:
        if out.endswith(".parquet"):
            pq.write_table(table, str(tmp))
        else:
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(rows_as_json(table), f, separators=(",", ":"), allow_nan=False)


def sweep(spec_path: str, settings: spark_session.SparkSettings, out: str | None = None,
          progress: ProgressFn | None = None,
          cancel: threading.Event | None = None) -> dict:
    """The `railyard whatif sweep` answer: the rows, or where they were written."""
    if out is not None:
        check_output_path(out, "--out", OUT_SUFFIXES)
    spec = load_spec(spec_path)
    table = run(spec, settings, progress, cancel)
    # the Connect URL may carry ;token=..., a master URL a password: shown masked
    answer = {"kind": spec.kind, "scenarios": count_scenarios(spec),
              "spark": shown_url(settings.where), "columns": table.column_names}
    if out is None:
        return {**answer, "rows": rows_as_json(table)}
    write_rows(table, out)
    return {**answer, "row_count": table.num_rows, "written": out}


# ---- what the what-if page asks -------------------------------------------------------

SWEEP_GRID_KEYS = {
    "limits": ("max.broker.partitions", "max.partitions", "add_brokers"),
    "throttle": ("throttle", "window_num"),
    "quota": ("rate", "samples"),
    "fleet": ("growth_pct_month", "add_brokers", "max.broker.partitions", "max.partitions",
              "topic_partitions", "topic_rf"),
}


def parse_grid(kind: str, text: str) -> dict[str, list[float | int]]:
    """'throttle=10e6,50e6; window_num=11' -> {"throttle": [1e7, 5e7], "window_num": [11]}."""
    known = SWEEP_GRID_KEYS[kind]
    grid: dict[str, list] = {}
    for part in (p.strip() for p in (text or "").replace("\n", ";").split(";")):
        if not part:
            continue
        key, sep, values = part.partition("=")
        key = key.strip()
        if not sep or key not in known:
            raise BadInput(f"grid: '{part}': expected KEY=V1,V2,... with KEY one of "
                           f"{', '.join(known)}")
        if key in grid:  # the second list would replace the first in silence
            raise BadInput(f"grid: {key} is given twice: list all its values once, "
                           f"{key}=V1,V2,...")
        texts = [v.strip() for v in values.split(",") if v.strip()]
        if not all(fields.NUMBER.fullmatch(v) for v in texts):
            raise BadInput(f"grid: {key}: values must be numbers, got '{values.strip()}'")
        numbers = [float(v) for v in texts]
        if not numbers:
            raise BadInput(f"grid: {key}: list at least one value")
        grid[key] = [int(v) if v.is_integer() and key not in ("rate", "growth_pct_month") else v
                     for v in numbers]
    if not grid:
        raise BadInput(f"grid: give at least one KEY=V1,V2,... ({', '.join(known)})")
    return grid


# the sweeps tab's first workload: new topics on both demo clusters (the Kafka demo has
# orders, payments and clicks: a default naming clicks was refused there before it ran)
DEFAULT_WORKLOAD = "orders-v2:300:3, clicks-v2:600:3"


def parse_workload(text: str) -> list[dict]:
    """'orders:100:3, clicks:500:3' -> the limits sweep's workload."""
    topics = [limits.parse_topic_spec(t.strip(), "workload")
              for t in (text or "").replace("\n", ",").split(",") if t.strip()]
    if not topics:
        raise BadInput("workload: list topics as NAME:PARTITIONS:RF, e.g. orders:100:3")
    return [{"topic": t.name, "partitions": t.partitions, "rf": t.rf} for t in topics]


def sweep_spec(kind: str, grid_text: str, workload_text: str | None, snapshot_path: str | None,
               plan: Reassignment | None, snap: Snapshot | None, requests_path: str | None,
               directory: str) -> dict:
    """A `railyard whatif sweep` spec for the inputs the what-if page holds."""
    grid = parse_grid(kind, grid_text)
    if kind == "limits":
        workload = parse_workload(workload_text)
        existing = [w["topic"] for w in workload if snap is not None and snap.has_topic(w["topic"])]
        if existing:  # Kafka refuses to create them: each scenario said "rejected", no reason
            raise BadInput(f"workload: {', '.join(existing)} already in cluster "
                           f"'{snap.cluster}': a limits sweep places new topics (grow a topic on "
                           "the Partition limits tab)")
        return {"kind": "limits", "snapshot": snapshot_path, "grid": grid, "workload": workload}
    if kind == "throttle":
        path = Path(directory) / f"plan-{id(plan)}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(plan.to_kafka_json(snap)), encoding="utf-8")
        return {"kind": "throttle", "snapshot": snapshot_path, "reassignment": str(path),
                "grid": grid}
    if kind == "quota":
        if requests_path is None:
            raise BadInput("quota sweep: load a workload in the Quota tab first")
        return {"kind": "quota", "requests": requests_path, "grid": grid}
    raise BadInput(f"sweep kind must be one of {', '.join(SWEEP_GRID_KEYS)}, got '{kind}'")


def run_for_page(spec: dict | Spec, spark_config: dict, progress: ProgressFn | None = None,
                 cancel: threading.Event | None = None) -> pd.DataFrame:
    """Run a sweep spec on the warm Spark session; Unavailable when Spark is not there."""
    settings = spark_session.settings_from(config=spark_config)
    spark_session.start(settings)
    return run(spec, settings, progress, cancel).to_pandas()


Upload = tuple[str | None, str | None]  # (a browser upload's contents, its file name)


def sweep_for_page(kind: str, grid: str, workload: str | None, source: ClusterSource,
                   plan: Upload, requests: Upload, *, work_dir: str, spark_config: dict,
                   max_upload_bytes: int, progress: ProgressFn | None = None,
                   cancel: threading.Event | None = None) -> pd.DataFrame:
    """A limits, throttle or quota sweep of the what-if page on the warm Spark session:
    the cluster's snapshot written as the spec's file, the Throttle tab's plan (or the
    balance plan), the Quota tab's workload (kept only while the sweep runs). BadInput
    names the field; SweepCancelled when ``cancel`` is set."""
    snap = cluster_snapshot(source)
    reassignment = None
    if kind == "throttle":
        contents, name = plan
        reassignment, _ = throttle.reassignment_for(
            source, uploads.json_object(contents, name, max_upload_bytes), name)
    with contextlib.ExitStack() as job:
        requests_path = job.enter_context(quota.workload_for_job(
            *requests, work_dir, max_upload_bytes))[0] if kind == "quota" else None
        spec = sweep_spec(kind, grid, workload, snapshot_file(source, work_dir),
                          reassignment, snap, requests_path, work_dir)
        return run_for_page(spec, spark_config, progress, cancel)
