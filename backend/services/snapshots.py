"""Snapshot questions: describe a cluster, generate one, import Kafka's assignment JSON,
capture a live cluster's assignment through its gateway."""

from __future__ import annotations

from typing import TYPE_CHECKING

from backend.engines.limits import broker_capacity
from backend.errors import BadInput
from backend.model.io import check_output_path, read_json, save_snapshot, snapshot_from_dict
from backend.model.reassignment import check_entries, reassignment_from_dict
from backend.model.snapshot import Limits, Snapshot

if TYPE_CHECKING:
    from backend.gateways.base import ClusterReader


def describe(snap: Snapshot) -> dict:
    """Per-broker replica and leader counts, racks, totals and headroom against limits."""
    counts = snap.broker_replica_counts()
    leaders = snap.broker_leader_counts()
    all_counts = snap.broker_replica_counts(counted_only=False)
    room = broker_capacity(counts, snap.limits)
    stored = snap.broker_bytes()
    cluster_total = int(counts.sum())
    lim = snap.limits
    brokers = [
        {
            "id": int(b),
            "rack": snap.broker_racks[i],
            "replicas": int(counts[i]),
            "internal_replicas": int(all_counts[i] - counts[i]),
            "leaders": int(leaders[i]),
            "bytes": int(stored[i]),
            "capacity": None if room is None else int(room[i]),
            "over_limit": bool(lim.max_broker_partitions is not None
                               and counts[i] > lim.max_broker_partitions),
        }
        for i, b in enumerate(snap.broker_ids)
    ]
    return {
        "cluster": snap.cluster,
        "brokers": brokers,
        "racks": snap.rack_names,
        "topics": snap.n_topics,
        "partitions": snap.n_partitions,
        "replicas": snap.n_replicas,
        "cluster_partitions": cluster_total,
        "limits": {"max.broker.partitions": lim.max_broker_partitions,
                   "max.partitions": lim.max_partitions},
        "cluster_capacity": None if lim.max_partitions is None
        else max(lim.max_partitions - cluster_total, 0),
    }


def import_assignment(snap: Snapshot, plan: dict, source: str) -> Snapshot:
    """Apply Kafka's current-assignment JSON (as kafka-reassign-partitions prints it)."""
    return reassignment_from_dict(plan, snap, source).target(snap)


def assignment_only_snapshot(plan_path: str, cluster: str) -> Snapshot:
    """A snapshot built from an assignment JSON alone: brokers are the ids it names."""
    obj = read_json(plan_path, "assignment file")
    entries = obj.get("partitions") if isinstance(obj, dict) else None
    if not isinstance(entries, list) or not entries:
        raise BadInput(f"{plan_path}: expected {{\"version\": 1, \"partitions\": [...]}}")
    check_entries(entries, plan_path)  # named as the file names them, before the snapshot
    topics: dict[str, list] = {}
    ids: set[int] = set()
    for e in entries:
        topics.setdefault(e["topic"], []).append(
            {"partition": e["partition"], "replicas": e["replicas"]})
        ids.update(e["replicas"])
    doc = {"cluster": cluster, "brokers": [{"id": i} for i in sorted(ids)],
           "topics": [{"name": t, "partitions": p} for t, p in topics.items()]}
    snap = snapshot_from_dict(doc, source=plan_path)
    reassignment_from_dict(obj, snap, plan_path)  # log_dirs and the rest, as `reassign diff`
    return snap


SUFFIXES = (".json", ".parquet")


def check_out(path: str) -> None:
    """Refuse an --out a snapshot cannot be written to, before the snapshot is built."""
    check_output_path(path, "--out", SUFFIXES)


def write(snap: Snapshot, path: str) -> dict:
    """Save ``snap`` (.json or .parquet) into a folder that exists, all or nothing."""
    check_out(path)
    save_snapshot(snap, path)
    return {"written": path, "cluster": snap.cluster, "brokers": snap.n_brokers,
            "partitions": snap.n_partitions, "replicas": snap.n_replicas}


def capture(gateway: ClusterReader, limits: Limits, path: str) -> dict:
    """The cluster's assignment as a snapshot file, so every what-if can start from a real
    cluster's state. Read whole before anything is written: a cluster that does not answer
    (Unavailable) leaves no file. ``notes`` says what the gateway could not learn."""
    if not path.endswith((".json", ".parquet")):
        raise BadInput(f"{path}: a snapshot file ends in .json or .parquet")
    snap = gateway.assignment()
    snap = snap.with_limits(snap.limits.merged(limits.max_broker_partitions,
                                               limits.max_partitions))
    return {**write(snap, path), "notes": list(getattr(gateway, "notes", []))}
