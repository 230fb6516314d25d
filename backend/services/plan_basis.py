"""A plan's basis: the part of the cluster it was computed against.

An approver approves a plan for the cluster as it was when the plan was proposed. The
basis records the current replicas of every partition the plan touches and, for a shrink,
the topic's partition count (a clear-throttles plan: the values of the configs it
deletes); before approval and again before execution the services compare it with the
cluster now (``changes_since``: whatever the basis recorded, read from the cluster for
just those topics or configs), and a difference names the partitions and asks for a
re-proposal instead of running moves computed for a cluster that no longer exists.
What a plan's basis records is its kind's to say (backend/services/plan_kinds).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from backend.errors import Unavailable
from backend.model.snapshot import Snapshot

# (cluster name, topics) -> those topics as they are now, read from the live cluster (a
# topic it no longer has is absent; a snapshot holding more is fine)
TopicsOf = Callable[[str, list[str]], Snapshot]
# cluster name -> its throttle configs now, (entity_type, name, key) -> value
ConfigsOf = Callable[[str], dict[tuple[str, str, str], str]]


def changes_since(cluster: str, basis: dict, topics_of: TopicsOf,
                  configs_of: ConfigsOf | None) -> list[str]:
    """What changed on ``cluster`` since ``basis`` was recorded, one phrase each (empty:
    nothing): the replicas and partition counts it recorded, read for its topics only,
    and the configs it recorded (Unavailable when they cannot be read here)."""
    changes = []
    if "partitions" in basis or "topics" in basis:
        stored = StoredBasis.parse(basis)
        changes += stored.changes(topics_of(cluster, stored.topics))
    if "configs" in basis:
        if configs_of is None:
            raise Unavailable(f"Cluster '{cluster}'", "its throttle configs were not read: "
                              "a plan that deletes throttle configs is checked against them")
        changes += config_changes(basis, configs_of(cluster))
    return changes


def fingerprint(snap: Snapshot, partitions: Iterable[tuple[str, int]],
                topics: Iterable[str] = ()) -> dict:
    """{"partitions": {"topic:p": [replica ids, leader first]}, "topics": {topic: count}};
    BadInput when a partition or topic is not in the snapshot."""
    partitions = list(partitions)
    names = [t for t, _ in partitions]
    parts = np.fromiter((p for _, p in partitions), np.int64, len(partitions))
    rows = _rows(snap, names, parts)
    if (rows < 0).any():
        i = int(np.argmax(rows < 0))
        snap.partition_row(names[i], int(parts[i]))  # raises, naming it
    keys = [f"{t}:{p}" for t, p in partitions]
    counts = {t: snap.topic_partition_count(snap.topic_index(t)) for t in topics}
    return {"partitions": dict(zip(keys, _replicas(snap, rows), strict=True)),
            "topics": counts}


@dataclass(frozen=True)
class StoredBasis:
    """A stored basis as arrays, parsed once: the topics to read from the cluster and
    what to compare them with."""

    counts: dict[str, int]  # topic -> partition count when proposed (a shrink's topic)
    names: list[str]  # the topic of each touched partition
    parts: np.ndarray  # its partition number
    then: np.ndarray  # its replicas when proposed, leader first, -1 padded

    @classmethod
    def parse(cls, basis: dict) -> StoredBasis:
        stored = basis.get("partitions", {})
        split = [k.rpartition(":") for k in stored]
        was = list(stored.values())
        then = np.full((len(was), max(max(map(len, was), default=0), 1)), -1, np.int64)
        lengths = np.fromiter(map(len, was), np.int64, len(was))
        then[np.arange(then.shape[1])[None, :] < lengths[:, None]] = [b for r in was for b in r]
        return cls(dict(basis.get("topics", {})), [t for t, _, _ in split],
                   np.array([int(p) for _, _, p in split], np.int64), then)

    @property
    def topics(self) -> list[str]:
        """Every topic the basis names: all a re-check has to read."""
        return sorted(set(self.names).union(self.counts))

    def changes(self, snap: Snapshot) -> list[str]:
        """What differs between this basis and ``snap`` (which holds at least its
        topics that still exist), one phrase per partition or topic ("orders-3 replicas
        [1, 2, 3] -> [1, 2, 4]"); empty when nothing changed. Compared as arrays: a
        100k-partition plan is checked in tens of milliseconds."""
        changes = []
        for topic, count in self.counts.items():
            now = snap.topic_partition_count(snap.topic_index(topic)) \
                if snap.has_topic(topic) else None
            if now is None:
                changes.append(f"topic {topic} no longer exists")
            elif now != count:
                changes.append(f"{topic} partition count {count} -> {now}")
        if not self.names:
            return changes
        return changes + replica_changes(snap, self.names, self.parts, self.then)


def basis_changes(basis: dict, snap: Snapshot) -> list[str]:
    """What differs between the stored basis and ``snap`` (StoredBasis.changes)."""
    return StoredBasis.parse(basis).changes(snap)


def replica_changes(snap: Snapshot, names: list[str], parts: np.ndarray,
                    then: np.ndarray) -> list[str]:
    """The partitions (``names[i]``-``parts[i]``) whose replicas in ``snap`` are not
    ``then[i]`` (broker ids, leader first, -1 padded), one phrase each, in this order."""
    rows = _rows(snap, names, parts)
    now = np.full_like(then, -1)
    present = rows >= 0
    if present.any():
        m = _id_matrix(snap, rows[present])
        if m.shape[1] > then.shape[1]:  # a partition that grew replicas: compare them all
            then = np.pad(then, ((0, 0), (0, m.shape[1] - then.shape[1])), constant_values=-1)
            now = np.full_like(then, -1)
        now[present, :m.shape[1]] = m
    changes = []
    for i in np.flatnonzero(~present | (then != now).any(axis=1)).tolist():
        name = f"{names[i]}-{parts[i]}"
        if not present[i]:
            changes.append(f"{name} no longer exists")
        else:
            was = [b for b in then[i].tolist() if b >= 0]
            changes.append(f"{name} replicas {was} -> {snap.replicas_of(int(rows[i]))}")
    return changes


def _rows(snap: Snapshot, names: list[str], parts: np.ndarray) -> np.ndarray:
    """The snapshot row of each (topic, partition); -1 where either does not exist."""
    codes: dict[str, int] = {}
    code = np.fromiter((codes.setdefault(n, len(codes)) for n in names), np.int64, len(names))
    t_of = np.array([snap.topic_index(n) if snap.has_topic(n) else -1 for n in codes],
                    np.int64)
    t = t_of[code] if len(code) else code
    ok = (t >= 0) & (parts >= 0)
    ok[ok] = parts[ok] < np.diff(snap.topic_starts)[t[ok]]
    return np.where(ok, snap.topic_starts[np.maximum(t, 0)] + parts, -1)


def _id_matrix(snap: Snapshot, rows: np.ndarray) -> np.ndarray:
    """Broker ids of the rows' replicas, leader first, -1 padded."""
    m = snap.replica_matrix(rows)
    return np.where(m >= 0, snap.broker_ids[np.maximum(m, 0)], -1).astype(np.int64)


def _replicas(snap: Snapshot, rows: np.ndarray) -> list[list[int]]:
    m = _id_matrix(snap, rows)
    if (m >= 0).all():
        return m.tolist()
    return [[b for b in r if b >= 0] for r in m.tolist()]


def config_id(entity_type: str, name: str, key: str) -> str:
    """"broker:3:leader.replication.throttled.rate" (names of brokers and topics hold no
    colon)."""
    return f"{entity_type}:{name}:{key}"


def config_changes(basis: dict, current: dict[tuple[str, str, str], str]) -> list[str]:
    """What differs between a clear-throttles plan's basis and the configs now
    ((entity_type, name, key) -> value), one phrase per config; empty when nothing did."""
    changes = []
    for cid, value in basis.get("configs", {}).items():
        etype, name, key = cid.split(":", 2)
        now = current.get((etype, name, key))
        if now is None:
            changes.append(f"{etype} {name} {key} is no longer set")
        elif now != value:
            changes.append(f"{etype} {name} {key} {value} -> {now}")
    return changes
