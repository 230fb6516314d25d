"""What-if sweeps on Spark: the engines mapped over scenarios, clusters and principals.

The engines stay the only implementation of the maths; Spark only distributes calls to
them. Limit and throttle sweeps map scenario ids (spark.range) with mapInPandas, the
loaded snapshot (and plan) shipped once: a broadcast variable on classic Spark, decoded
once per Python worker, or inside the function on Spark Connect (which has no
broadcast). Quota sweeps group the requests by principal with applyInPandas (each
principal's token bucket is independent); fleet sweeps group each cluster's snapshot files
or partition history by cluster with applyInPandas (backend.spark.fleet), so each
cluster's inputs travel once, to one executor.

Each row carries its scenario's parameters; rows are the single-scenario CLI verb's
figures for the same inputs. Progress is Spark's task count; cancelling interrupts the
running job.
"""

from __future__ import annotations

import contextlib
import json
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from backend.engines import limits as limits_engine
from backend.engines import quota as quota_engine
from backend.engines import throttle as throttle_engine
from backend.engines.batches import execution_batches
from backend.engines.fit import shortfall
from backend.errors import BadInput
from backend.model.reassignment import Reassignment
from backend.model.snapshot import Limits, Snapshot
from backend.spark import fleet
from backend.spark.session import is_connect
from backend.spark.spec import (
    SNAPSHOT_LIMIT,
    FleetSpec,
    LimitsSpec,
    QuotaSpec,
    ThrottleSpec,
    scenarios,
)

ProgressFn = Callable[[int, int], None]
"""Called with (finished tasks, known tasks) while a sweep runs."""

TASKS_PER_CORE = 4  # enough to balance uneven scenarios, few enough to keep task overhead low
CONNECT_TASKS = 16  # Spark Connect does not tell the client how many cores it has


class SweepCancelled(RuntimeError):
    """The sweep was cancelled; its Spark job was interrupted."""


@dataclass
class _Inline:
    """A value travelling inside the function (Spark Connect): same ``.value`` as Broadcast."""

    value: Any


def ship(spark, value: Any):
    """Send ``value`` to the executors once: a broadcast, or inline on Spark Connect."""
    if is_connect(spark):
        return _Inline(value)
    return spark.sparkContext.broadcast(value)


def _bare(snap: Snapshot) -> Snapshot:
    """The snapshot without cached derived arrays, so only its columns are shipped."""
    return replace(snap)


def _null(x: Any) -> Any:
    """None for NaN/inf (JSON and Arrow nulls), plain Python numbers otherwise."""
    if isinstance(x, float | np.floating) and not np.isfinite(x):
        return None
    return x.item() if isinstance(x, np.generic) else x


def _frame(rows: list[dict], columns: list[str]) -> pd.DataFrame:
    """Rows as an object-typed frame: Arrow then casts to the declared schema, nulls kept."""
    return pd.DataFrame({c: pd.Series([r.get(c) for r in rows], dtype=object) for c in columns})


def _errors_to_rows(fn: Callable[[dict], dict], scenario: dict) -> dict:
    """A BadInput from an engine becomes the row's ``error``; the driver raises it."""
    try:
        return {**fn(scenario), "error": None}
    except BadInput as e:
        return {"error": str(e)}


# ---- limits ------------------------------------------------------------------------------------
LIMITS_COLUMNS = {
    "scenario": "long", "max_broker_partitions": "long", "max_partitions": "long",
    "add_brokers": "long", "ok": "boolean", "accepted": "array<string>",
    "rejected": "array<string>", "min_capacity": "long", "brokers_at_limit": "long",
    "brokers_over_limit": "array<long>", "brokers_to_add": "long",
    "cluster_replicas_after": "long",
}


def with_brokers_added(snap: Snapshot, count: int) -> Snapshot:
    """The cluster with ``count`` empty brokers, ids after the largest, racks dealt in turn."""
    if count == 0:
        return snap
    first = int(snap.broker_ids.max()) + 1
    ids = np.concatenate((snap.broker_ids, np.arange(first, first + count, dtype=np.int32)))
    racks = ([snap.rack_names[i % len(snap.rack_names)] for i in range(count)]
             if snap.rack_mode == "all" else [None] * count)
    return replace(snap, broker_ids=ids,
                   broker_racks=np.array(list(snap.broker_racks) + racks, dtype=object))


def limit_scenarios(spec: LimitsSpec | FleetSpec, snap_limits: Limits | None) -> list[dict]:
    """Grid points with "snapshot" limits replaced by the snapshot's own (when known)."""
    out = []
    for s in scenarios(spec):
        row = {k.replace(".", "_"): v for k, v in s.items()}
        if snap_limits is not None:
            if row["max_broker_partitions"] == SNAPSHOT_LIMIT:
                row["max_broker_partitions"] = snap_limits.max_broker_partitions
            if row["max_partitions"] == SNAPSHOT_LIMIT:
                row["max_partitions"] = snap_limits.max_partitions
        out.append(row)
    return out


def brokers_to_add(snap: Snapshot, requests: list, limits: Limits, start_index: int | None,
                   seed: int, result: limits_engine.PlacementResult) -> int | None:
    """Fewest brokers (same limits, empty) with which every topic is accepted.

    Found with the limits engine itself: None when even one broker per requested replica
    would not do (max.partitions binds, a topic exists, a limit of 0); otherwise a
    search starting at the engine's own shortfall estimate, bisecting down or doubling up.
    """
    if result.ok:
        return 0

    def accepted_with(k: int) -> bool:
        return limits_engine.create_topics(with_brokers_added(snap, k), requests, limits,
                                           start_index, seed).ok

    ceiling = sum(r.partitions * r.rf for r in requests) + max(r.rf for r in requests)
    if limits.max_broker_partitions in (None, 0) or not accepted_with(ceiling):
        return None
    room = limits_engine.broker_capacity(result.after.broker_replica_counts(), limits)
    missing = sum(-(-shortfall(room, t.partitions, t.rf) // min(limits.max_broker_partitions,
                                                                 t.partitions))
                  for t, out in zip(requests, result.topics, strict=True) if not out.ok)
    lo, hi = 0, min(max(missing, 1), ceiling)  # accepted_with(lo) is False
    while not accepted_with(hi):
        lo, hi = hi, min(2 * hi, ceiling)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if accepted_with(mid) else (mid, hi)
    return hi


def limits_row(snap: Snapshot, spec: LimitsSpec, scenario: dict) -> dict:
    """One limit scenario: `railyard limits create-topics` on the cluster plus new brokers."""
    cluster = with_brokers_added(snap, scenario["add_brokers"])
    requests = [limits_engine.TopicRequest(t.name, t.partitions, t.rf) for t in spec.workload]
    for t in requests:
        if t.rf > cluster.n_brokers:
            raise BadInput(f"topic '{t.name}': replication factor {t.rf} is larger than the "
                           f"{cluster.n_brokers} brokers of cluster '{cluster.cluster}'")
    lim = Limits(scenario["max_broker_partitions"], scenario["max_partitions"])
    result = limits_engine.create_topics(cluster, requests, lim, spec.start_index, spec.seed)
    answer = result.to_dict()
    room = [c for c in answer["capacity_after"].values() if c is not None]
    row = {
        **scenario,
        "ok": answer["ok"],
        "accepted": [t["name"] for t in answer["topics"] if t["ok"]],
        "rejected": [t["name"] for t in answer["topics"] if not t["ok"]],
        "min_capacity": min(room) if room else None,
        "brokers_at_limit": sum(c == 0 for c in room) if room else None,
        "brokers_over_limit": over_limit(answer["broker_partitions_after"], lim),
        "brokers_to_add": brokers_to_add(cluster, requests, lim, spec.start_index, spec.seed,
                                         result),
        # KIP-578's max.partitions counts replicas: the verb's cluster_partitions_after
        "cluster_replicas_after": answer["cluster_partitions_after"],
    }
    if spec.detail:
        row["result"] = json.dumps(answer, separators=(",", ":"))
    return row


def over_limit(counts: dict[str, int], limits: Limits) -> list[int]:
    """Brokers holding more than max.broker.partitions (KIP-578: one over its limit keeps
    its partitions but takes no new one, so the workload went elsewhere; a reassignment
    brings it under)."""
    cap = limits.max_broker_partitions
    return [] if cap is None else [int(b) for b, n in counts.items() if n > cap]


# ---- throttle ----------------------------------------------------------------------------------
THROTTLE_COLUMNS = {
    "scenario": "long", "throttle": "double", "window_num": "long", "eta_seconds": "double",
    "moved_partitions": "long", "bytes_to_move": "long",
    "brokers_outside_safe_band": "array<long>", "max_fetch_response_bytes": "long",
    "fetch_response_ok": "boolean", "suggested_throttle": "long",
    "kip73_move_time_seconds": "double", "batched_eta_seconds": "double",
}


def throttle_row(snap: Snapshot, plan: Reassignment, spec: ThrottleSpec, scenario: dict) -> dict:
    """One throttle scenario: `railyard throttle plan` with this throttle and window count,
    and the ETA of the plan as Railyard's executor runs it (``batched_eta_seconds``: its
    default batches one after another, engines.throttle.batched_eta_seconds)."""
    params = throttle_engine.ThrottleParams(
        scenario["throttle"], spec.network_capacity, spec.fetch_response_max_bytes,
        scenario["window_num"], spec.window_seconds)
    answer = throttle_engine.plan_throttle(snap, plan, params).to_dict()
    batched = throttle_engine.batched_eta_seconds(snap, plan, execution_batches(snap, plan),
                                                  params.rate)  # min(T, N)
    row = {
        **scenario,
        **{k: _null(answer[k]) for k in ("eta_seconds", "moved_partitions", "bytes_to_move",
                                         "max_fetch_response_bytes", "fetch_response_ok",
                                         "suggested_throttle", "kip73_move_time_seconds")},
        "brokers_outside_safe_band": [b["id"] for b in answer["brokers"]
                                      if not b["in_safe_band"]],
        "batched_eta_seconds": _null(batched),
    }
    if spec.detail:
        row["result"] = json.dumps(answer, separators=(",", ":"), allow_nan=False)
    return row


# ---- quota ---------------------------------------------------------------------------------------
QUOTA_COLUMNS = {
    "scenario": "long", "rate": "double", "samples": "long", "mode": "string",
    "user": "string", "client_id": "string", "quota_entity": "string", "burst": "double",
    "requests": "long", "admitted": "long", "rejected": "long", "partitions_admitted": "long",
    "max_throttle_ms": "long", "first_request": "long",
}
QUOTA_INPUT = "seq long, t double, user string, client_id string, partitions long, " \
              "validate_only boolean"


def quota_rows(requests: pd.DataFrame, spec: QuotaSpec, scenario: dict) -> dict:
    """One principal under one scenario: its entry of `railyard quota replay`'s principals.

    ``requests`` are one principal's (one bucket under the default-entity rate), in order.
    """
    per_request, buckets = quota_engine.replay_frame(
        requests, scenario["rate"], scenario["samples"], spec.window_seconds,
        spec.mode == "strict")
    totals = quota_engine.bucket_totals(requests, per_request, 1)
    bucket = buckets.iloc[0]
    return {
        **scenario, "mode": spec.mode,
        "user": bucket["user"], "client_id": bucket["client_id"],
        "quota_entity": _null(bucket["quota_entity"]), "burst": _null(float(bucket["burst"])),
        **{k: int(v[0]) for k, v in totals.items()},
        "first_request": int(requests["seq"].iloc[0]),
    }


# ---- running on Spark ----------------------------------------------------------------------
def _schema(columns: dict[str, str], detail: bool = False) -> str:
    extra = ", result string" if detail else ""
    return ", ".join(f"{c} {t}" for c, t in columns.items()) + extra + ", error string"


def _over_scenarios(spark, n: int, payload: Any, row_of: Callable[[Any, int], dict],
                    columns: list[str]):
    """mapInPandas over scenario ids 0..n-1; ``row_of(payload_value, id)`` makes a row."""
    shipped = ship(spark, payload)

    def run(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        value = shipped.value
        for batch in batches:
            rows = [row_of(value, int(i)) for i in batch["id"]]
            yield _frame(rows, columns)

    return spark.range(0, n, 1, min(n, _tasks(spark))), run


def _tasks(spark) -> int:
    if is_connect(spark):
        return CONNECT_TASKS
    return TASKS_PER_CORE * spark.sparkContext.defaultParallelism


def sweep_frame(spark, spec, inputs: dict) -> tuple[Any, list[str]]:
    """The Spark DataFrame computing a sweep's rows, and the columns to sort them by."""
    if isinstance(spec, LimitsSpec):
        snap = inputs["snapshot"]
        scens = [{"scenario": i, **s} for i, s in enumerate(limit_scenarios(spec, snap.limits))]
        columns = [*LIMITS_COLUMNS, *(["result"] if spec.detail else []), "error"]

        def row(value: tuple, i: int) -> dict:
            s, sc = value[0], value[1][i]
            return {**sc, **_errors_to_rows(lambda x: limits_row(s, spec, x), sc)}

        ids, fn = _over_scenarios(spark, len(scens), (_bare(snap), scens), row, columns)
        return ids.mapInPandas(fn, _schema(LIMITS_COLUMNS, spec.detail)), ["scenario"]
    if isinstance(spec, ThrottleSpec):
        scens = [{"scenario": i, **s} for i, s in enumerate(scenarios(spec))]
        columns = [*THROTTLE_COLUMNS, *(["result"] if spec.detail else []), "error"]

        def row(value: tuple, i: int) -> dict:
            s, plan, sc = value[0], value[1], value[2][i]
            return {**sc, **_errors_to_rows(lambda x: throttle_row(s, plan, spec, x), sc)}

        payload = (_bare(inputs["snapshot"]), inputs["reassignment"], scens)
        ids, fn = _over_scenarios(spark, len(scens), payload, row, columns)
        return ids.mapInPandas(fn, _schema(THROTTLE_COLUMNS, spec.detail)), ["scenario"]
    if isinstance(spec, QuotaSpec):
        scens = [{"scenario": i, **s} for i, s in enumerate(scenarios(spec))]
        columns = [*QUOTA_COLUMNS, "error"]

        def per_principal(requests: pd.DataFrame) -> pd.DataFrame:
            requests = requests.sort_values("seq", kind="stable").reset_index(drop=True)
            rows = [{**sc, **_errors_to_rows(lambda x: quota_rows(requests, spec, x), sc)}
                    for sc in scens]
            return _frame(rows, columns)

        frame = spark.createDataFrame(inputs["requests"], QUOTA_INPUT)
        out = frame.groupBy("user", "client_id").applyInPandas(per_principal,
                                                               _schema(QUOTA_COLUMNS))
        return out, ["scenario", "first_request"]
    if isinstance(spec, FleetSpec):
        scens = [{"scenario": i, **s} for i, s in enumerate(limit_scenarios(spec, None))]
        declared = fleet.columns(spec)
        columns = [*declared, "error"]

        def per_cluster(part: pd.DataFrame) -> pd.DataFrame:
            try:
                rows = [{**r, "error": None} for r in fleet.cluster_rows(spec, scens, part)]
            except BadInput as e:
                c = int(part["cluster_order"].iloc[0])
                rows = [{"cluster": spec.clusters[c].name, "cluster_order": c,
                         "error": str(e)}]
            return _frame(rows, columns)

        frame = spark.createDataFrame(inputs["fleet"], fleet.input_schema(spec))
        out = frame.groupBy("cluster_order").applyInPandas(per_cluster, _schema(declared))
        return out, fleet.order(spec)
    raise TypeError(f"not a sweep spec: {type(spec).__name__}")


def run_sweep(spark, spec, inputs: dict, progress: ProgressFn | None = None,
              cancel: threading.Event | None = None) -> pa.Table:
    """Run a sweep on ``spark``; rows sorted by scenario (then principal, cluster, broker).

    ``inputs`` are the loaded inputs (snapshot, reassignment, requests frame, or fleet
    file bytes), validated by the caller with the CLI's loaders. An engine's BadInput in
    any scenario is raised here, naming the scenario.
    """
    frame, order = sweep_frame(spark, spec, inputs)
    table = _collect(spark, frame, progress, cancel)
    table = table.sort_by([(c, "ascending") for c in order])
    if isinstance(spec, FleetSpec) and spec.forecasts:
        return table.drop_columns(["cluster_order"])  # a cluster that cannot be fitted is a row
    errors = table.column("error")
    if errors.null_count < len(errors):
        i = next(i for i, e in enumerate(errors.to_pylist()) if e is not None)
        scenario = table.column("scenario")[i].as_py()
        where = "fleet" if scenario is None else f"scenario {scenario}"
        raise BadInput(f"{where}: {errors[i].as_py()}")
    hidden = [c for c in ("error", "first_request", "cluster_order") if c in table.column_names]
    return table.drop_columns(hidden)


def _collect(spark, frame, progress: ProgressFn | None, cancel: threading.Event | None):
    """frame.toArrow() in a thread, reporting task progress and honouring ``cancel``."""
    tag = f"railyard-sweep-{uuid.uuid4().hex}"
    box: dict[str, Any] = {"progress": (0, 0)}
    connect = is_connect(spark)

    def run() -> None:
        try:
            if connect:
                spark.addTag(tag)
            else:
                spark.sparkContext.setJobGroup(tag, "railyard what-if sweep", True)
            box["table"] = frame.toArrow()
        except BaseException as e:  # re-raised in the caller's thread
            box["error"] = e
        finally:
            if connect:
                spark.removeTag(tag)

    def on_progress(stages, inflight_tasks, operation_id, done) -> None:
        stages = list(stages or [])
        box["progress"] = (sum(s.num_completed_tasks for s in stages),
                           sum(s.num_tasks for s in stages))

    if connect:
        spark.registerProgressHandler(on_progress)
    worker = threading.Thread(target=run, name="railyard-sweep", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.25)
            if cancel is not None and cancel.is_set():
                _interrupt(spark, tag, connect)
                worker.join()
                raise SweepCancelled("sweep cancelled")
            if progress is not None:
                progress(*(box["progress"] if connect else _classic_progress(spark, tag)))
    except KeyboardInterrupt:
        _interrupt(spark, tag, connect)
        worker.join(30)
        raise
    finally:
        if connect:
            with contextlib.suppress(Exception):
                spark.removeProgressHandler(on_progress)
    if "error" in box:
        raise box["error"]
    if progress is not None:
        done = box["progress"] if connect else _classic_progress(spark, tag)
        progress(max(done[1], 1), max(done[1], 1))
    return box["table"]


def _interrupt(spark, tag: str, connect: bool) -> None:
    if connect:
        spark.interruptTag(tag)
    else:
        spark.sparkContext.cancelJobGroup(tag)


def _classic_progress(spark, tag: str) -> tuple[int, int]:
    tracker = spark.sparkContext.statusTracker()
    done = total = 0
    for job in tracker.getJobIdsForGroup(tag):
        info = tracker.getJobInfo(job)
        for stage in (info.stageIds if info else []):
            s = tracker.getStageInfo(stage)
            if s is not None:
                done, total = done + s.numCompletedTasks, total + s.numTasks
    return done, total
