"""Kafka's reassignment JSON ({"version":1,"partitions":[...]}) as arrays over a snapshot.

Validated as kafka-reassign-partitions validates it (Kafka's
tools/src/main/java/org/apache/kafka/tools/reassign/ReassignPartitionsCommand.java): a
non-empty list, no
empty replica list, no duplicate partition, no duplicate broker within a partition,
log_dirs (optional) as long as replicas, each "any" or an absolute path (KIP-113: the
broker moves the replica into that log directory; kafka-reassign-partitions reads "any" as
no preference); plus Railyard's own checks that every topic, partition and broker exists in
the snapshot it is applied to.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np

from backend.errors import BadInput
from backend.model.bounds import MAX_BROKER_ID, MAX_PARTITIONS
from backend.model.csr import gather_index, offsets_from_lengths
from backend.model.io import read_json
from backend.model.names import check_topic_name
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
        topics = snap.topic_names[snap.part_topic[self.rows]].tolist()
        parts = snap.part_id[self.rows].tolist()
        out = []
        for i, (topic, part) in enumerate(zip(topics, parts, strict=True)):
            replicas = ids[off[i] : off[i + 1]]
            given = self.log_dirs[i] if self.log_dirs else None
            out.append({"topic": topic, "partition": part, "replicas": replicas,
                        "log_dirs": given or ["any"] * len(replicas)})
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
    parsed = _parse_fast(entries, snap) or _parse_validating(entries, snap, source)
    rows, lengths, brokers, dirs = parsed
    order = np.argsort(rows, kind="stable")
    return Reassignment(
        rows=rows[order],
        offsets=offsets_from_lengths(lengths[order]),
        brokers=brokers[gather_index(offsets_from_lengths(lengths), order)],
        log_dirs=None if dirs is None else [dirs[i] for i in order],
    )


Parsed = tuple[np.ndarray, np.ndarray, np.ndarray, list | None]
ANY_LOG_DIR = "any"
MAX_PATH_CHARS = 4096  # Linux's PATH_MAX


def log_dir_problem(log_dir: Any) -> str | None:
    """Why ``log_dir`` is not a log directory Kafka takes ("any" or an absolute path,
    without . or .. segments or control characters), or None."""
    if log_dir == ANY_LOG_DIR:
        return None
    if not isinstance(log_dir, str) or not log_dir.startswith("/"):
        return f"{str(log_dir)[:80]!r}: Kafka takes an absolute path or \"any\""
    if len(log_dir) > MAX_PATH_CHARS or any(ord(c) < 32 for c in log_dir) \
            or {".", ".."} & set(log_dir.split("/")):
        return f"{log_dir[:80]!r}: not a plain absolute path (no . or .. segments, " \
               "control characters or more than 4,096 characters)"
    return None


def _parse_fast(entries: list, snap: Snapshot) -> Parsed | None:
    """Whole-plan checks in a few passes; None when anything is off (the validating
    parser then names the first problem)."""
    try:
        topics = [e["topic"] for e in entries]
        parts = [e["partition"] for e in entries]
        reps = [e["replicas"] for e in entries]
        dirs = [e.get("log_dirs") for e in entries]
    except (TypeError, KeyError, AttributeError):
        return None
    if ({*map(type, topics)} != {str} or {*map(type, parts)} != {int}
            or {*map(type, reps)} != {list}):
        return None
    lengths = np.fromiter(map(len, reps), np.int64, len(reps))
    flat = list(chain.from_iterable(reps))
    if not flat or {*map(type, flat)} != {int} or (lengths == 0).any():
        return None
    has_dirs = any(d is not None for d in dirs)
    if has_dirs and any(type(d) is not list or len(d) != n for d, n in zip(dirs, lengths,
                                                                             strict=True)):
        return None
    if has_dirs and any(log_dir_problem(x) for x in {*chain.from_iterable(dirs)}):
        return None
    if not (min(parts) >= 0 and max(parts) < MAX_PARTITIONS  # as int64 arrays below
            and min(flat) >= 0 and max(flat) <= MAX_BROKER_ID):
        return None
    topic_of = {name: t for t, name in enumerate(snap.topic_names)}
    t_idx = np.fromiter((topic_of.get(t, -1) for t in topics), np.int64, len(topics))
    part = np.asarray(parts, dtype=np.int64)
    starts = snap.topic_starts
    if (t_idx < 0).any() or (part < 0).any() or (part >= starts[t_idx + 1] - starts[t_idx]).any():
        return None
    rows = starts[t_idx] + part
    ids = np.asarray(flat, dtype=np.int64)
    pos = np.searchsorted(snap.broker_ids, ids)
    if (pos >= snap.n_brokers).any() or (snap.broker_ids[np.minimum(pos, snap.n_brokers - 1)]
                                         != ids).any():
        return None
    pairs = np.repeat(np.arange(len(rows)), lengths) * snap.n_brokers + pos
    if np.bincount(rows).max() > 1 or (np.diff(np.sort(pairs)) == 0).any():
        return None
    return rows, lengths, pos.astype(np.int32), dirs if has_dirs else None


def _parse_validating(entries: list, snap: Snapshot, source: str) -> Parsed:
    """Entry by entry, raising BadInput at the first problem with its place in the file."""
    topic_of = {name: t for t, name in enumerate(snap.topic_names)}
    starts = snap.topic_starts.tolist()
    rows, lengths, flat, dirs, labels = [], [], [], [], []
    any_dirs = False
    seen: set[int] = set()
    for i, e in enumerate(entries):
        topic, part = _topic_partition(e, i, source)
        label = f"{source}: partition {topic}-{part}"
        t = topic_of.get(topic)
        if t is None:
            raise BadInput(f"{label}: topic '{topic}' is not in cluster '{snap.cluster}'")
        if not 0 <= part < starts[t + 1] - starts[t]:
            raise BadInput(f"{label}: partition {topic}-{part} does not exist")
        row = starts[t] + part
        if row in seen:
            raise BadInput(f"{label}: listed twice")
        seen.add(row)
        reps, ld = _replicas(e, label)
        any_dirs = any_dirs or ld is not None
        rows.append(row)
        lengths.append(len(reps))
        flat.extend(reps)
        dirs.append(ld)
        labels.append(label)
    brokers = _positions(snap, np.asarray(flat, dtype=np.int64), lengths, labels)
    return (np.asarray(rows, dtype=np.int64), np.asarray(lengths, dtype=np.int64), brokers,
            dirs if any_dirs else None)


def _topic_partition(e: Any, i: int, source: str) -> tuple[str, int]:
    """Entry ``i``'s topic and partition, or BadInput naming its place in the file."""
    where = f"{source}: partitions[{i}]"
    if not isinstance(e, dict):
        raise BadInput(f"{where}: must be an object with topic, partition and replicas")
    topic, part = e.get("topic"), e.get("partition")
    if not isinstance(topic, str):
        raise BadInput(f"{where}: 'topic' must be a string")
    if isinstance(part, bool) or not isinstance(part, int):
        raise BadInput(f"{where}: 'partition' must be an integer")
    return topic, part


def _replicas(e: dict, label: str) -> tuple[list[int], list | None]:
    """An entry's replicas and log_dirs (None when not given), or BadInput at ``label``."""
    reps = e.get("replicas")
    if not isinstance(reps, list) or not reps:
        raise BadInput(f"{label}: 'replicas' must be a non-empty list of broker ids")
    if any(isinstance(r, bool) or not isinstance(r, int) or not 0 <= r <= MAX_BROKER_ID
           for r in reps):
        raise BadInput(f"{label}: replicas must be broker ids (integers from 0 to "
                       f"{MAX_BROKER_ID}), got {str(reps)[:200]}")
    if len(set(reps)) != len(reps):
        raise BadInput(f"{label}: a broker appears twice in replicas {reps}")
    ld = e.get("log_dirs")
    if ld is not None:
        if not isinstance(ld, list) or len(ld) != len(reps):
            raise BadInput(f"{label}: 'log_dirs' must list one directory per replica")
        for j, log_dir in enumerate(ld):
            problem = log_dir_problem(log_dir)
            if problem:
                raise BadInput(f"{label}: log_dirs[{j}] {problem}")
    return reps, ld


def check_entries(entries: list, source: str) -> None:
    """Each entry of Kafka's assignment JSON well formed, without a cluster to hold it
    against (a snapshot built from the file alone): BadInput naming the entry, as
    ``reassignment_from_dict`` would, and a topic name Kafka would refuse."""
    for i, e in enumerate(entries):
        topic, part = _topic_partition(e, i, source)
        label = f"{source}: partition {topic}-{part}"
        check_topic_name(topic, label)
        if part < 0:
            raise BadInput(f"{label}: partition {topic}-{part} does not exist")
        _replicas(e, label)


def _positions(snap: Snapshot, ids: np.ndarray, lengths: list[int], labels: list[str]
               ) -> np.ndarray:
    """Broker positions of all plan replicas at once; BadInput names the first bad entry."""
    pos = np.searchsorted(snap.broker_ids, ids)
    known = (pos < snap.n_brokers) & (snap.broker_ids[np.minimum(pos, snap.n_brokers - 1)] == ids)
    if not known.all():
        first = int(np.argmax(~known))
        entry = int(np.searchsorted(np.cumsum(lengths), first, side="right"))
        raise BadInput(f"{labels[entry]}: broker {int(ids[first])} is not in cluster "
                       f"'{snap.cluster}'")
    return pos.astype(np.int32)


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


def before_moves(snap: Snapshot, in_flight: list[dict]) -> Snapshot:
    """``snap`` with every reassignment in flight shown at its original replicas (KIP-455:
    the full list minus the adding replicas), as Kafka's tool computes a move's sources.
    ``in_flight``: what a gateway's list_reassignments answers."""
    return _relisted(snap, in_flight, "adding")


def after_moves(snap: Snapshot) -> Snapshot:
    """``snap`` with every reassignment in flight (``snap.in_flight``) shown at its target:
    the full list minus the removing replicas (KIP-455; Kafka's controller lists a moving
    partition as target + removing, PartitionReassignmentReplicas). What the cluster holds
    once those moves finish: what a new plan is computed against."""
    return _relisted(snap, list(snap.in_flight), "removing")


def in_flight_rows(snap: Snapshot) -> np.ndarray:
    """Rows (ascending) of the partitions ``snap.in_flight`` lists, topics it has only."""
    rows = [snap.partition_row(m["topic"], m["partition"]) for m in snap.in_flight
            if snap.has_topic(m["topic"])]
    return np.unique(np.asarray(rows, np.int64))


def _relisted(snap: Snapshot, in_flight: list[dict], leaving: str) -> Snapshot:
    """``snap`` with each move's replicas minus its ``leaving`` ones ('adding' or
    'removing'), order kept."""
    moves = [m for m in in_flight if snap.has_topic(m["topic"])]
    if not moves:
        return snap
    rows = np.array([snap.partition_row(m["topic"], m["partition"]) for m in moves])
    order = np.argsort(rows, kind="stable")
    lists = [[b for b in moves[i]["replicas"] if b not in moves[i][leaving]] for i in order]
    return snap.with_replicas(rows[order], offsets_from_lengths([len(r) for r in lists]),
                              snap.broker_positions([b for r in lists for b in r])
                              .astype(np.int32))
