"""Kafka's reassignment JSON ({"version":1,"partitions":[...]}) as arrays over a snapshot.

Validated as kafka-reassign-partitions validates it (FACTS.md): a non-empty list, no
empty replica list, no duplicate partition, no duplicate broker within a partition,
log_dirs (optional) as long as replicas; plus Railyard's own checks that every topic,
partition and broker exists in the snapshot it is applied to.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from backend.errors import BadInput
from backend.model.csr import gather_index, offsets_from_lengths
from backend.model.io import read_json
from backend.model.snapshot import Snapshot


@dataclass(eq=False)
class Reassignment:
    """Target replica lists for some partitions of one snapshot (CSR, rows ascending)."""

    rows: np.ndarray  # int64 partition rows of the snapshot, ascending, unique
    offsets: np.ndarray  # int64, len = len(rows) + 1
    brokers: np.ndarray  # int32 broker positions, target leader first
    log_dirs: list[list[str]] | None = None

    def __len__(self) -> int:
        return len(self.rows)

    def target(self, snap: Snapshot) -> Snapshot:
        """The snapshot as it will be once the reassignment completes."""
        return snap.with_replicas(self.rows, self.offsets, self.brokers)

    def to_kafka_json(self, snap: Snapshot) -> dict:
        """The plan file kafka-reassign-partitions --execute accepts."""
        ids = snap.broker_ids[self.brokers].tolist()
        off = self.offsets.tolist()
        out = []
        for i, row in enumerate(self.rows.tolist()):
            entry = {
                "topic": snap.topic_names[snap.part_topic[row]],
                "partition": int(snap.part_id[row]),
                "replicas": ids[off[i] : off[i + 1]],
            }
            entry["log_dirs"] = (self.log_dirs[i] if self.log_dirs
                                 else ["any"] * (off[i + 1] - off[i]))
            out.append(entry)
        return {"version": 1, "partitions": out}


def load_reassignment(path: str | os.PathLike, snap: Snapshot) -> Reassignment:
    return reassignment_from_dict(read_json(path, "reassignment file"), snap, source=str(path))


def reassignment_from_dict(obj: Any, snap: Snapshot, source: str = "reassignment") -> Reassignment:
    """Validate a Kafka reassignment plan against ``snap`` and convert it to arrays."""
    if not isinstance(obj, dict) or not isinstance(obj.get("partitions"), list):
        raise BadInput(f"{source}: expected {{\"version\": 1, \"partitions\": [...]}}")
    if obj.get("version", 1) != 1:
        raise BadInput(f"{source}: unsupported version {obj.get('version')!r} (Kafka writes 1)")
    entries = obj["partitions"]
    if not entries:
        raise BadInput(f"{source}: the partition list is empty")
    rows, lists, dirs = [], [], []
    any_dirs = False
    seen: set[int] = set()
    for i, e in enumerate(entries):
        where = f"{source}: partitions[{i}]"
        if not isinstance(e, dict):
            raise BadInput(f"{where}: must be an object with topic, partition and replicas")
        topic, part, reps = e.get("topic"), e.get("partition"), e.get("replicas")
        if not isinstance(topic, str):
            raise BadInput(f"{where}: 'topic' must be a string")
        if isinstance(part, bool) or not isinstance(part, int):
            raise BadInput(f"{where}: 'partition' must be an integer")
        label = f"{source}: partition {topic}-{part}"
        if not snap.has_topic(topic):
            raise BadInput(f"{label}: topic '{topic}' is not in cluster '{snap.cluster}'")
        row = snap.partition_row(topic, part)
        if row in seen:
            raise BadInput(f"{label}: listed twice")
        seen.add(row)
        if not isinstance(reps, list) or not reps:
            raise BadInput(f"{label}: 'replicas' must be a non-empty list of broker ids")
        if any(isinstance(r, bool) or not isinstance(r, int) for r in reps):
            raise BadInput(f"{label}: replicas must be broker ids (integers), got {reps}")
        if len(set(reps)) != len(reps):
            raise BadInput(f"{label}: a broker appears twice in replicas {reps}")
        ld = e.get("log_dirs")
        if ld is not None:
            if not isinstance(ld, list) or len(ld) != len(reps):
                raise BadInput(f"{label}: 'log_dirs' must list one directory per replica")
            any_dirs = True
        rows.append(row)
        lists.append(snap.broker_positions(reps, where=label))
        dirs.append(ld or ["any"] * len(reps))
    order = np.argsort(np.asarray(rows, dtype=np.int64), kind="stable")
    return Reassignment(
        rows=np.asarray(rows, dtype=np.int64)[order],
        offsets=offsets_from_lengths([len(lists[i]) for i in order]),
        brokers=np.concatenate([lists[i] for i in order]).astype(np.int32),
        log_dirs=[dirs[i] for i in order] if any_dirs else None,
    )


def reassignment_between(before: Snapshot, after: Snapshot) -> Reassignment:
    """The plan that turns ``before``'s assignment into ``after``'s (same partitions).

    Only partitions whose replica list changes (order included: the first replica is the
    preferred leader) are in the plan.
    """
    if before.n_partitions != after.n_partitions:
        raise ValueError("snapshots must describe the same partitions")
    rf_b, rf_a = before.replication_factors, after.replication_factors
    changed = rf_b != rf_a
    same = np.flatnonzero(~changed)
    if len(same):
        diff = (before.replica_broker[gather_index(before.replica_offsets, same)]
                != after.replica_broker[gather_index(after.replica_offsets, same)])
        owner = np.repeat(same, rf_b[same])
        changed[owner[diff]] = True
    rows = np.flatnonzero(changed).astype(np.int64)
    return Reassignment(
        rows=rows,
        offsets=offsets_from_lengths(rf_a[rows]),
        brokers=after.replica_broker[gather_index(after.replica_offsets, rows)],
    )
