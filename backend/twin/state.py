"""The twin's state as arrays: partitions, replicas and brokers of one simulated cluster.

The assignment is a ``Snapshot`` whose replica lists are in Kafka's order (preferred
leader first) and, while a partition is being reassigned, hold Kafka's full replica set
(target replicas, then the original ones being removed). Everything a replica carries
(lag, ISR membership, adding/removing, throttled-list membership) lives in arrays
aligned with ``snap.replica_broker``; ``adopt`` carries it over when the assignment
changes, keyed by (topic, partition, broker), so no per-replica Python loop runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from backend.model.csr import gather_index, offsets_from_lengths
from backend.model.snapshot import Snapshot

READ_WRITE, READ_ONLY, NO_ACCESS = 0, 1, -1  # partition modes (delete-partitions KIP)
MODE_NAMES = {READ_WRITE: "ReadWrite", READ_ONLY: "ReadOnly", NO_ACCESS: "None"}
DEFAULT_RETENTION_MS = 604_800_000  # Kafka's log.retention.hours=168


@dataclass(eq=False)
class TwinState:
    """Mutable arrays over one assignment; replaced wholesale by ``adopt``."""

    snap: Snapshot
    log_size: np.ndarray  # float64 per partition: the leader's log bytes
    log_cap: np.ndarray  # float64 per partition: bytes retention keeps at the current rate
    base_rate: np.ndarray  # float64 per partition: produce bytes/s before modes and noise
    mode: np.ndarray  # int8 per partition
    leader: np.ndarray  # int32 broker position per partition, -1 when offline
    lag: np.ndarray  # float64 per replica: bytes behind the leader's log end
    isr: np.ndarray  # bool per replica
    adding: np.ndarray  # bool per replica: a reassignment target not yet in sync
    removing: np.ndarray  # bool per replica: leaves when its partition's move completes
    in_leader_list: np.ndarray  # bool per replica: "p:b" in leader.replication.throttled.replicas
    in_follower_list: np.ndarray  # bool per replica: in follower.replication.throttled.replicas
    alive: np.ndarray  # bool per broker
    bytes_in: np.ndarray  # float64 (brokers, topics): produce bytes counted by the leader
    meter_exists: np.ndarray  # bool (brokers, topics): Kafka registers topic meters lazily
    derived: dict = field(default_factory=dict)  # caches cleared on every change

    @classmethod
    def fresh(cls, snap: Snapshot, retention_ms: np.ndarray | None = None) -> TwinState:
        """A healthy cluster: every replica in sync, preferred leaders leading."""
        n_r, n_b, n_t = snap.n_replicas, snap.n_brokers, snap.n_topics
        size = snap.part_size.astype(np.float64)
        state = cls(
            snap=snap,
            log_size=size,
            log_cap=size,
            base_rate=snap.part_rate.astype(np.float64),
            mode=np.zeros(snap.n_partitions, np.int8),
            leader=snap.leaders.astype(np.int32),
            lag=np.zeros(n_r),
            isr=np.ones(n_r, bool),
            adding=np.zeros(n_r, bool),
            removing=np.zeros(n_r, bool),
            in_leader_list=np.zeros(n_r, bool),
            in_follower_list=np.zeros(n_r, bool),
            alive=np.ones(n_b, bool),
            bytes_in=np.zeros((n_b, n_t)),
            meter_exists=np.zeros((n_b, n_t), bool),
        )
        state.set_retention(retention_ms)
        return state

    def set_retention(self, retention_ms: np.ndarray | None) -> None:
        """Cap each log at what retention keeps at its write rate (never below today's size)."""
        ms = (np.full(self.snap.n_topics, DEFAULT_RETENTION_MS, np.float64)
              if retention_ms is None else np.asarray(retention_ms, np.float64))
        steady = self.base_rate * ms[self.snap.part_topic] / 1000.0
        self.log_cap = np.maximum(self.log_size, steady)

    # ---- derived arrays (cached until the next change) -----------------------------------
    def touch(self) -> None:
        self.derived.clear()

    def cached(self, key: str, compute):
        if key not in self.derived:
            self.derived[key] = compute()
        return self.derived[key]

    @property
    def replica_partition(self) -> np.ndarray:
        return self.snap.replica_partition

    @property
    def leader_slot(self) -> np.ndarray:
        """Replica index of each partition's leader, -1 when offline."""
        def compute():
            slot = np.full(self.snap.n_partitions, -1, np.int64)
            idx = np.flatnonzero(self.is_leader_replica)
            slot[self.snap.replica_partition[idx]] = idx
            return slot
        return self.cached("leader_slot", compute)

    @property
    def replica_leader_broker(self) -> np.ndarray:
        return self.cached("rep_leader", lambda: self.leader[self.snap.replica_partition])

    @property
    def is_leader_replica(self) -> np.ndarray:
        return self.cached("is_leader",
                           lambda: self.snap.replica_broker == self.replica_leader_broker)

    def isr_size(self) -> np.ndarray:
        return np.bincount(self.snap.replica_partition, weights=self.isr,
                           minlength=self.snap.n_partitions).astype(np.int64)

    def replica_keys(self, snap: Snapshot | None = None) -> np.ndarray:
        """(partition row, broker position) of every replica as one int64 key."""
        snap = snap or self.snap
        return snap.replica_partition * snap.n_brokers + snap.replica_broker

    # ---- changing the assignment -------------------------------------------------------------
    def relist(self, new: Snapshot, rows: np.ndarray) -> None:
        """Switch to ``new``, which differs from the current assignment only in the replica
        lists of ``rows`` (ascending): everything else is copied in bulk and only the
        replicas of those rows are matched by (partition, broker)."""
        old = self.snap
        changed = np.zeros(old.n_partitions, bool)
        changed[rows] = True
        keep_old = ~changed[old.replica_partition]
        keep_new = ~changed[new.replica_partition]
        old_idx = np.flatnonzero(~keep_old)
        new_idx = np.flatnonzero(~keep_new)
        old_keys = old.replica_partition[old_idx] * old.n_brokers + old.replica_broker[old_idx]
        new_keys = new.replica_partition[new_idx] * new.n_brokers + new.replica_broker[new_idx]
        order = np.argsort(old_keys, kind="stable")
        pos = np.minimum(np.searchsorted(old_keys[order], new_keys), max(len(order) - 1, 0))
        found = (old_keys[order][pos] == new_keys) if len(order) else np.zeros(len(new_idx), bool)
        src = old_idx[order[pos]] if len(order) else pos
        for name, default in _REPLICA_FIELDS:
            arr = getattr(self, name)
            out = np.full(new.n_replicas, default, dtype=arr.dtype)
            out[keep_new] = arr[keep_old]
            out[new_idx[found]] = arr[src[found]]
            setattr(self, name, out)
        fresh = new_idx[~found]
        self.lag[fresh] = self.log_size[new.replica_partition[fresh]]
        self.snap = new
        self.touch()

    def adopt(self, new: Snapshot, new_rows_of_old: np.ndarray) -> None:
        """Switch to ``new``'s partitions, carrying state over by (partition, broker).

        ``new_rows_of_old[i]`` is the row in ``new`` of old row i (-1 if it is gone).
        Replicas that did not exist before start empty (lag = the leader's log), out of
        sync; partitions that did not exist start empty and in sync everywhere.
        """
        old = self.snap
        keep = new_rows_of_old >= 0
        part_fields = {"log_size": 0.0, "log_cap": 0.0, "base_rate": 0.0, "mode": READ_WRITE,
                       "leader": -1}
        carried = {}
        for name, default in part_fields.items():
            arr = getattr(self, name)
            out = np.full(new.n_partitions, default, dtype=arr.dtype)
            out[new_rows_of_old[keep]] = arr[keep]
            carried[name] = out
        was_there = np.zeros(new.n_partitions, bool)
        was_there[new_rows_of_old[keep]] = True
        new_rows = np.flatnonzero(~was_there)
        carried["base_rate"][new_rows] = new.part_rate[new_rows]
        carried["leader"][new_rows] = new.leaders[new_rows]

        old_rows_new = new_rows_of_old[old.replica_partition]
        old_alive = old_rows_new >= 0
        old_keys = old_rows_new[old_alive] * new.n_brokers + old.replica_broker[old_alive]
        new_keys = self.replica_keys(new)
        found = np.zeros(len(new_keys), bool)
        src = np.zeros(len(new_keys), np.int64)
        if len(old_keys):
            order = np.argsort(old_keys, kind="stable")
            sorted_keys = old_keys[order]
            pos = np.minimum(np.searchsorted(sorted_keys, new_keys), len(order) - 1)
            found = sorted_keys[pos] == new_keys
            src = np.flatnonzero(old_alive)[order[pos]]
        for name, default in _REPLICA_FIELDS:
            arr = getattr(self, name)
            out = np.full(new.n_replicas, default, dtype=arr.dtype)
            out[found] = arr[src[found]]
            carried[name] = out
        fresh = ~found
        carried["lag"][fresh] = carried["log_size"][new.replica_partition[fresh]]
        # a brand-new partition starts empty and in sync everywhere
        new_part = np.zeros(new.n_partitions, bool)
        new_part[new_rows] = True
        born = new_part[new.replica_partition]
        carried["lag"][born] = 0.0
        carried["isr"][born] = True

        topic_map = _topic_index_map(old, new)
        bytes_in = np.zeros((new.n_brokers, new.n_topics))
        meters = np.zeros((new.n_brokers, new.n_topics), bool)
        kept_t = topic_map >= 0
        bytes_in[:, topic_map[kept_t]] = self.bytes_in[:, kept_t]
        meters[:, topic_map[kept_t]] = self.meter_exists[:, kept_t]
        for name, value in carried.items():
            setattr(self, name, value)
        self.bytes_in, self.meter_exists = bytes_in, meters
        self.snap = new
        self.touch()


_REPLICA_FIELDS = (("lag", 0.0), ("isr", False), ("adding", False), ("removing", False),
                   ("in_leader_list", False), ("in_follower_list", False))


def replica_mask(snap: Snapshot, rows: np.ndarray, brokers: np.ndarray) -> np.ndarray:
    """Bool per replica: True where (partition row, broker position) is one of the pairs
    given; pairs naming a broker that holds no replica of the row are ignored."""
    rows = np.asarray(rows, np.int64)
    mask = np.zeros(snap.n_replicas, bool)
    if not len(rows):
        return mask
    idx = gather_index(snap.replica_offsets, rows)
    owner = np.repeat(np.arange(len(rows)), snap.replication_factors[rows])
    mask[idx[snap.replica_broker[idx] == np.asarray(brokers)[owner]]] = True
    return mask


def _topic_index_map(old: Snapshot, new: Snapshot) -> np.ndarray:
    """Index in ``new`` of each topic of ``old`` (-1 when deleted)."""
    return np.array([new.topic_index(n) if new.has_topic(n) else -1 for n in old.topic_names],
                    dtype=np.int64)


def row_map(old: Snapshot, new: Snapshot) -> np.ndarray:
    """Row in ``new`` of each partition of ``old`` (-1 when its topic is gone)."""
    t_map = _topic_index_map(old, new)
    new_t = t_map[old.part_topic]
    ok = new_t >= 0
    out = np.full(old.n_partitions, -1, np.int64)
    out[ok] = new.topic_starts[new_t[ok]] + old.part_id[ok]
    return out


def without_topics(snap: Snapshot, topics: np.ndarray) -> Snapshot:
    """``snap`` minus the given topic indexes (their partitions and replicas)."""
    drop_t = np.zeros(snap.n_topics, bool)
    drop_t[topics] = True
    return _subset(snap, ~drop_t, ~drop_t[snap.part_topic])


def without_partitions(snap: Snapshot, rows: np.ndarray) -> tuple[Snapshot, np.ndarray]:
    """``snap`` minus the partitions ``rows`` (each its topic's highest-numbered ones, so
    the rest keep their numbers), and the row in the result of each old row (-1: gone)."""
    keep = np.ones(snap.n_partitions, bool)
    keep[rows] = False
    out = np.full(snap.n_partitions, -1, np.int64)
    out[keep] = np.arange(int(keep.sum()))
    return _subset(snap, np.ones(snap.n_topics, bool), keep), out


def _subset(snap: Snapshot, keep_t: np.ndarray, keep_rows: np.ndarray) -> Snapshot:
    """The topics ``keep_t`` and partitions ``keep_rows`` (masks) of ``snap``."""
    rows = np.flatnonzero(keep_rows)
    new_topic_index = np.cumsum(keep_t) - 1
    return Snapshot.build(
        snap.cluster, snap.broker_ids, snap.broker_racks, snap.topic_names[keep_t],
        new_topic_index[snap.part_topic[rows]],
        offsets_from_lengths(snap.replication_factors[rows]),
        snap.replica_broker[keep_rows[snap.replica_partition]],
        topic_internal=snap.topic_internal[keep_t], topic_keyed=snap.topic_keyed[keep_t],
        topic_retention_ms=snap.topic_retention_ms[keep_t],
        part_size=snap.part_size[rows], part_rate=snap.part_rate[rows],
        limits=snap.limits,
    )
