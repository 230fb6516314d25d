"""What the dashboard's pages ask, composed from the other services.

Pages call these functions and nothing lower. Anything a page cannot get (the cluster,
Prometheus, Spark) is an ``Unavailable`` naming what is missing, which the page turns
into a banner; bad operator input is BadInput, shown as one line beside the form.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from backend.engines.limits import TopicRequest
from backend.engines.planner import Goal
from backend.engines.quota import DEFAULT_SAMPLES, DEFAULT_WINDOW_SECONDS
from backend.engines.throttle import ThrottleParams
from backend.errors import BadInput, Unavailable
from backend.gateways.base import ClusterReader
from backend.model.io import load_snapshot, save_snapshot
from backend.model.reassignment import Reassignment, reassignment_from_dict
from backend.model.snapshot import Limits, Snapshot
from backend.services import limits as limit_service
from backend.services import quota as quota_service
from backend.services import reassign, snapshots, whatif
from backend.services import throttle as throttle_service
from backend.spark import session as spark_session
from backend.spark.sweeps import SweepCancelled

__all__ = ["SweepCancelled", "Unavailable"]

SNAPSHOT_TTL_SECONDS = 30.0  # a cluster's assignment changes slowly; what-ifs reuse it
GATEWAY_TTL_SECONDS = 5.0  # a live cluster's assignment, re-read this often at most
ETA_CURVE_POINTS = 25


@dataclass(frozen=True)
class ClusterSource:
    """Where a cluster's assignment, configs and metrics come from (the dashboard config)."""

    name: str
    snapshot_file: str | None
    limits: Limits
    prometheus_url: str | None = None
    dialect: str = "strimzi"
    prometheus_timeout: float = 5.0
    metrics_ttl: int = 10
    redis_url: str | None = None  # Prometheus answers cached in Redis when set
    gateway: ClusterReader | None = field(default=None, compare=False)  # live cluster
    default_mutation_rate: float | None = None  # KIP-599 quota of the default principal
    quota_window_num: int = DEFAULT_SAMPLES
    quota_window_seconds: int = DEFAULT_WINDOW_SECONDS
    no_gateway_reason: str | None = None  # why a configured gateway cannot be used


_snapshots: dict[str, tuple[float, Snapshot]] = {}
_snapshots_lock = threading.Lock()
_fallbacks: dict[str, str] = {}  # cluster -> why its gateway did not answer


def cluster_snapshot(source: ClusterSource) -> Snapshot:
    """The cluster's current assignment with its configured limits (cached briefly): read
    through the gateway when the cluster has one, else (or when the gateway does not
    answer; assignment_note says so) from its snapshot file."""
    ttl = GATEWAY_TTL_SECONDS if source.gateway is not None else SNAPSHOT_TTL_SECONDS
    with _snapshots_lock:
        hit = _snapshots.get(source.name)
        if hit is not None and time.monotonic() - hit[0] < ttl:
            return hit[1]
    snap = None
    if source.gateway is not None:
        try:
            snap = source.gateway.assignment()
            _fallbacks.pop(source.name, None)
        except Unavailable as e:
            if source.snapshot_file is None:
                raise
            _fallbacks[source.name] = f"{e}; showing the assignment in {source.snapshot_file}"
    if snap is None and source.snapshot_file is None:
        raise Unavailable(f"Cluster '{source.name}'", source.no_gateway_reason or
                          "no snapshot file configured and no gateway to read the "
                          "assignment from")
    if snap is None:
        try:
            snap = load_snapshot(source.snapshot_file)
        except BadInput as e:
            raise Unavailable(f"Cluster '{source.name}'", str(e)) from None
    snap = snap.with_limits(snap.limits.merged(source.limits.max_broker_partitions,
                                               source.limits.max_partitions))
    with _snapshots_lock:
        _snapshots[source.name] = (time.monotonic(), snap)
    return snap


def assignment_note(source: ClusterSource) -> str | None:
    """Why the assignment shown comes from the snapshot file instead of the gateway."""
    if source.no_gateway_reason and source.snapshot_file:
        return (f"Cluster '{source.name}': {source.no_gateway_reason}; showing the "
                f"assignment in {source.snapshot_file}")
    return _fallbacks.get(source.name)


def snapshot_file(source: ClusterSource, directory: str) -> str:
    """The cluster's snapshot as a file (what sweep specs name), written once per TTL."""
    snap = cluster_snapshot(source)
    path = Path(directory) / f"{source.name}-{id(snap)}.parquet"
    if not path.exists():
        save_snapshot(snap, path)
    return str(path)


def describe(source: ClusterSource) -> dict:
    return snapshots.describe(cluster_snapshot(source))


# ---- limits (KIP-578) -----------------------------------------------------------------------

def limits_whatif(source: ClusterSource, action: str, topic: str, partitions: int | None,
                  rf: int | None, max_broker_partitions: int | None,
                  max_partitions: int | None) -> dict:
    """Create a topic or add partitions: placement preview and replicas per broker."""
    snap = cluster_snapshot(source)
    limits = limit_service.effective_limits(snap, max_broker_partitions, max_partitions)
    topic = (topic or "").strip()
    if not topic:
        raise BadInput("topic: give a topic name")
    if partitions is None or partitions <= 0:
        raise BadInput("partitions: give a whole number larger than 0")
    if action == "create":
        if rf is None or rf <= 0:
            raise BadInput("replication factor: give a whole number larger than 0")
        if snap.has_topic(topic):
            raise BadInput(f"topic '{topic}' already exists: add partitions to it instead")
        result = limit_service.create_topics(snap, [TopicRequest(topic, partitions, rf)],
                                             limits)
    else:
        if not snap.has_topic(topic):
            raise BadInput(f"topic '{topic}' does not exist in cluster '{snap.cluster}'")
        result = limit_service.add_partitions(snap, topic, partitions, limits)
    before = snap.broker_replica_counts()
    return {**result, "brokers": [str(b) for b in snap.broker_ids.tolist()],
            "broker_partitions_before": before.tolist(),
            "limits": {"max.broker.partitions": limits.max_broker_partitions,
                       "max.partitions": limits.max_partitions}}


# ---- throttle (KIP-73) ----------------------------------------------------------------------

def reassignment_for(source: ClusterSource, uploaded: dict | None,
                     uploaded_name: str | None) -> tuple[Reassignment, str]:
    """The uploaded plan, or else the plan `railyard reassign generate --goal balance`
    proposes for the cluster (a real plan to rehearse on, never invented moves)."""
    snap = cluster_snapshot(source)
    if uploaded is not None:
        return reassignment_from_dict(uploaded, snap, uploaded_name or "uploaded plan"), \
            uploaded_name or "uploaded plan"
    plan = reassign.generate(snap, Goal("balance"), snap.limits)["plan"]
    if not plan["partitions"]:
        raise BadInput("the cluster is balanced, so there is nothing to move: upload a "
                       "reassignment plan (kafka-reassign-partitions JSON)")
    return reassignment_from_dict(plan, snap, "balance plan"), \
        f"balance plan ({len(plan['partitions'])} partitions)"


def throttle_whatif(source: ClusterSource, plan: Reassignment, throttle: float,
                    network_capacity: float | None) -> dict:
    """The throttle plan at ``throttle``, plus the predicted ETA over a range of throttles."""
    snap = cluster_snapshot(source)
    answer = throttle_service.plan(snap, plan, ThrottleParams(throttle, network_capacity))
    grid = np.unique(np.geomspace(max(throttle / 20, 1.0), throttle * 20, ETA_CURVE_POINTS)
                     .round())
    curve = [throttle_service.plan(snap, plan, ThrottleParams(float(t), network_capacity))
             ["eta_seconds"] for t in grid]
    return {**answer, "eta_curve": {"throttle": grid.tolist(), "eta_seconds": curve}}


# ---- quota (KIP-599) ------------------------------------------------------------------------

def quota_whatif(requests_path: str, rate: float | None, samples: int,
                 window_seconds: int) -> dict:
    """Replay a workload through KIP-599 strict token buckets: who is rejected, and when."""
    if rate is None or not rate > 0:
        raise BadInput("rate: give the controller_mutation_rate in partitions/s (> 0)")
    requests = quota_service.load_requests(requests_path)
    answer = quota_service.replay(requests_path, rate, samples, window_seconds, "strict",
                                  None)
    per_request = pd.DataFrame(answer["requests"])
    principal = requests["user"].where(requests["client_id"] == "",
                                       requests["user"] + "/" + requests["client_id"])
    series = pd.DataFrame({"t": requests["t"], "principal": principal,
                           "tokens": per_request["tokens_after"],
                           "admitted": per_request["admitted"]})
    return {"burst": answer["burst"], "principals": answer["principals"],
            "series": series.dropna(subset=["tokens"])}


# ---- sweeps on Spark ------------------------------------------------------------------------

SWEEP_GRID_KEYS = {
    "limits": ("max.broker.partitions", "max.partitions", "add_brokers"),
    "throttle": ("throttle", "window_num"),
    "quota": ("rate", "samples"),
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
        try:
            numbers = [float(v) for v in values.split(",") if v.strip()]
        except ValueError:
            raise BadInput(f"grid: {key}: values must be numbers, got '{values.strip()}'") \
                from None
        if not numbers:
            raise BadInput(f"grid: {key}: list at least one value")
        grid[key] = [int(v) if v.is_integer() and key != "rate" else v for v in numbers]
    if not grid:
        raise BadInput(f"grid: give at least one KEY=V1,V2,... ({', '.join(known)})")
    return grid


def parse_workload(text: str) -> list[dict]:
    """'orders:100:3, clicks:500:3' -> the limits sweep's workload."""
    topics = [limit_service.parse_topic_spec(t.strip())
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
        return {"kind": "limits", "snapshot": snapshot_path, "grid": grid,
                "workload": parse_workload(workload_text)}
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


def run_sweep(spec: dict, spark_config: dict, progress=None,
              cancel: threading.Event | None = None) -> pd.DataFrame:
    """Run a sweep spec on the warm Spark session; Unavailable when Spark is not there."""

    settings = spark_session.settings_from(config=spark_config)
    try:
        spark_session.get_session(settings)
    except BadInput as e:
        raise Unavailable("Spark", str(e)) from None
    rows = whatif.run(spec, settings, progress, cancel)
    return rows.to_pandas() if hasattr(rows, "to_pandas") else rows


# ---- monitoring -----------------------------------------------------------------------------

def prometheus_status(url: str | None, timeout: float = 2.0) -> None:
    """Raise Unavailable unless Prometheus answers its readiness endpoint."""
    if url is None:
        raise Unavailable("Prometheus", "no Prometheus configured for this cluster, so "
                          "there are no live metrics or history")
    try:
        with urllib.request.urlopen(f"{url}/-/ready", timeout=timeout) as r:
            if r.status == 200:
                return
            raise Unavailable(f"Prometheus at {url}", f"not ready (HTTP {r.status})")
    except (OSError, urllib.error.URLError) as e:
        reason = getattr(e, "reason", e)
        raise Unavailable(f"Prometheus at {url}", f"unreachable ({reason}); live metrics "
                          "and history are not shown") from None


_guard_rails: dict[str, tuple[Snapshot, dict]] = {}


def guard_rails(source: ClusterSource) -> dict:
    """Partition guard rails from the cluster's assignment (KIP-578): per broker and total
    (worked out once per assignment read)."""
    snap = cluster_snapshot(source)
    hit = _guard_rails.get(source.name)
    if hit is not None and hit[0] is snap:
        return hit[1]
    d = snapshots.describe(snap)
    limit = d["limits"]["max.broker.partitions"]
    answer = {**d, "near": [b["id"] for b in d["brokers"]
                            if limit and NEAR_FRACTION * limit <= b["replicas"] <= limit],
              "over": [b["id"] for b in d["brokers"] if b["over_limit"]]}
    _guard_rails[source.name] = (snap, answer)
    return answer


NEAR_FRACTION = 0.9
