"""The cluster snapshot: what Railyard knows about one cluster at one moment, as arrays.

Every engine speaks in snapshots. Partitions are rows (grouped by topic, ordered by
partition number); their replica lists are stored CSR-style (``replica_offsets`` into
``replica_broker``), so a 1M-partition cluster is a handful of flat numpy arrays and
per-broker figures are one ``np.bincount`` away. Replicas are stored as broker
*positions* (indexes into ``broker_ids``), leader first.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from backend.errors import BadInput
from backend.model.csr import gather_index, offsets_from_lengths, padded_rows
from backend.model.names import metric_name


@dataclass(frozen=True)
class Limits:
    """KIP-578 guard rails; None means unlimited (Kafka's default of Long.MAX_VALUE)."""

    max_broker_partitions: int | None = None
    max_partitions: int | None = None

    def merged(self, max_broker_partitions: int | None, max_partitions: int | None) -> Limits:
        """These limits with any value given on the command line taking precedence."""
        return Limits(
            self.max_broker_partitions if max_broker_partitions is None else max_broker_partitions,
            self.max_partitions if max_partitions is None else max_partitions,
        )


NEAR_LIMIT_RATIO = 0.9
"""From this share of a limit a broker or cluster counts as near it (the config's
``near_limit_ratio`` overrides it per dashboard)."""


def is_near(value: float, limit: float | None, ratio: float = NEAR_LIMIT_RATIO) -> bool:
    """``value`` at or above ``ratio`` of ``limit`` (and not over it): the near-limit rule."""
    return limit is not None and limit > 0 and ratio * limit <= value <= limit


DEFAULT_RETENTION_MS = 7 * 24 * 3600 * 1000  # Kafka's log.retention.hours=168


def is_internal_name(name: str) -> bool:
    """Kafka's internal topics (__consumer_offsets, __transaction_state) start with '__'."""
    return name.startswith("__")


@dataclass(eq=False)
class Snapshot:
    """A cluster as columns. Build with ``Snapshot.build`` or the loaders; never mutate."""

    cluster: str
    broker_ids: np.ndarray  # int32, ascending, unique
    broker_racks: np.ndarray  # object: str or None per broker
    topic_names: np.ndarray  # object: str per topic
    topic_internal: np.ndarray  # bool per topic
    topic_keyed: np.ndarray  # bool per topic
    topic_retention_ms: np.ndarray  # int64 retention.ms per topic (-1 = keep forever)
    part_topic: np.ndarray  # int32 topic index per partition row
    part_id: np.ndarray  # int32 partition number per row (0..n-1 within a topic)
    part_size: np.ndarray  # int64 bytes per partition (one replica's log)
    part_rate: np.ndarray  # float64 produce bytes/s into the partition
    replica_offsets: np.ndarray  # int64, len = partitions + 1
    replica_broker: np.ndarray  # int32 broker positions, leader first
    limits: Limits = field(default_factory=Limits)
    # reassignments in flight when the cluster was read, as a gateway's
    # list_reassignments answers them ({topic, partition, replicas, adding, removing}):
    # their replica lists above are Kafka's full set, target and removing (KIP-455)
    in_flight: tuple[dict, ...] = ()
    # what the reader could not learn ("write rates unknown (0): ..."), in its words: a
    # figure read as 0 because it was unknown is said where it is used
    notes: tuple[str, ...] = ()

    # ---- construction -------------------------------------------------------------
    @classmethod
    def build(
        cls,
        cluster: str,
        broker_ids,
        broker_racks,
        topic_names,
        part_topic,
        replica_offsets,
        replica_broker,
        *,
        topic_internal=None,
        topic_keyed=None,
        topic_retention_ms=None,
        part_size=None,
        part_rate=None,
        limits: Limits | None = None,
    ) -> Snapshot:
        """Assemble a snapshot from arrays, deriving partition numbers and defaults.

        ``part_topic`` must group partitions by topic in ascending partition order.
        """
        topic_names = np.asarray(topic_names, dtype=object)
        part_topic = np.asarray(part_topic, dtype=np.int32)
        n_parts = len(part_topic)
        counts = np.bincount(part_topic, minlength=len(topic_names))
        starts = offsets_from_lengths(counts)[:-1]
        part_id = (np.arange(n_parts) - np.repeat(starts, counts)).astype(np.int32)
        if topic_internal is None:
            topic_internal = [is_internal_name(n) for n in topic_names]
        return cls(
            cluster=cluster,
            broker_ids=np.asarray(broker_ids, dtype=np.int32),
            broker_racks=np.asarray(list(broker_racks), dtype=object),
            topic_names=topic_names,
            topic_internal=np.asarray(topic_internal, dtype=bool),
            topic_keyed=np.zeros(len(topic_names), bool)
            if topic_keyed is None
            else np.asarray(topic_keyed, dtype=bool),
            topic_retention_ms=np.full(len(topic_names), DEFAULT_RETENTION_MS, np.int64)
            if topic_retention_ms is None
            else np.asarray(topic_retention_ms, dtype=np.int64),
            part_topic=part_topic,
            part_id=part_id,
            part_size=np.zeros(n_parts, np.int64)
            if part_size is None
            else np.asarray(part_size, dtype=np.int64),
            part_rate=np.zeros(n_parts, np.float64)
            if part_rate is None
            else np.asarray(part_rate, dtype=np.float64),
            replica_offsets=np.asarray(replica_offsets, dtype=np.int64),
            replica_broker=np.asarray(replica_broker, dtype=np.int32),
            limits=limits or Limits(),
        )

    # ---- sizes ----------------------------------------------------------------------
    @property
    def n_brokers(self) -> int:
        return len(self.broker_ids)

    @property
    def n_topics(self) -> int:
        return len(self.topic_names)

    @property
    def n_partitions(self) -> int:
        return len(self.part_topic)

    @property
    def n_replicas(self) -> int:
        return len(self.replica_broker)

    @cached_property
    def replication_factors(self) -> np.ndarray:
        return np.diff(self.replica_offsets)

    @cached_property
    def replica_partition(self) -> np.ndarray:
        """Partition row of every replica entry (the CSR expanded)."""
        return np.repeat(np.arange(self.n_partitions, dtype=np.int64), self.replication_factors)

    @cached_property
    def leaders(self) -> np.ndarray:
        """Broker position of each partition's leader (its first replica)."""
        return self.replica_broker[self.replica_offsets[:-1]]

    @cached_property
    def part_internal(self) -> np.ndarray:
        return self.topic_internal[self.part_topic]

    @cached_property
    def topic_starts(self) -> np.ndarray:
        """First partition row of each topic; len = topics + 1."""
        return offsets_from_lengths(np.bincount(self.part_topic, minlength=self.n_topics))

    def topic_partition_count(self, topic: int) -> int:
        return int(self.topic_starts[topic + 1] - self.topic_starts[topic])

    # ---- racks ----------------------------------------------------------------------
    @cached_property
    def rack_mode(self) -> str:
        """'none', 'all' or 'mixed': which brokers carry rack information."""
        has = np.array([r is not None for r in self.broker_racks], dtype=bool)
        if not has.any():
            return "none"
        return "all" if has.all() else "mixed"

    @cached_property
    def rack_names(self) -> list[str]:
        return sorted({r for r in self.broker_racks if r is not None})

    @cached_property
    def broker_rack_index(self) -> np.ndarray:
        """Rack of each broker as an index into rack_names (-1 for none)."""
        lookup = {r: i for i, r in enumerate(self.rack_names)}
        return np.array([lookup.get(r, -1) for r in self.broker_racks], dtype=np.int32)

    # ---- lookups --------------------------------------------------------------------
    @cached_property
    def _topic_lookup(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.topic_names)}

    def topic_index(self, name: str) -> int:
        try:
            return self._topic_lookup[name]
        except KeyError:
            raise BadInput(f"topic '{name}' is not in cluster '{self.cluster}'") from None

    def has_topic(self, name: str) -> bool:
        return name in self._topic_lookup

    def colliding_topic(self, name: str) -> str | None:
        """An existing topic whose name differs from ``name`` only by '.' against '_'
        (Kafka's Topic.hasCollision: their metric names would be one), or None."""
        return self._collision_lookup.get(metric_name(name)) \
            if "." in name or "_" in name else None

    @cached_property
    def _collision_lookup(self) -> dict[str, str]:
        return {metric_name(n): n for n in self.topic_names.tolist() if "." in n or "_" in n}

    def broker_positions(self, ids, where: str = "") -> np.ndarray:
        """Positions of broker ids; BadInput naming the first unknown id."""
        ids = np.asarray(ids, dtype=np.int64)
        pos = np.searchsorted(self.broker_ids, ids)
        pos_clipped = np.minimum(pos, max(self.n_brokers - 1, 0))
        bad = (pos >= self.n_brokers) | (self.broker_ids[pos_clipped] != ids)
        if bad.any():
            first = int(ids[np.argmax(bad)])
            suffix = f" ({where})" if where else ""
            raise BadInput(f"broker {first} is not in cluster '{self.cluster}'{suffix}")
        return pos.astype(np.int32)

    def partition_row(self, topic: str, partition: int) -> int:
        t = self.topic_index(topic)
        if not 0 <= partition < self.topic_partition_count(t):
            raise BadInput(f"partition {topic}-{partition} does not exist")
        return int(self.topic_starts[t] + partition)

    def replicas_of(self, row: int) -> list[int]:
        """Broker ids of one partition's replicas, leader first."""
        a, b = self.replica_offsets[row], self.replica_offsets[row + 1]
        return self.broker_ids[self.replica_broker[a:b]].tolist()

    def replica_matrix(self, rows: np.ndarray) -> np.ndarray:
        """Broker positions of the ``rows``' replicas, leader first: one row per
        partition, as long as the longest, short ones padded with -1 (whole-array
        comparisons instead of a loop per partition)."""
        return padded_rows(self.replica_offsets, self.replica_broker, rows)

    # ---- per-broker figures ------------------------------------------------------------
    def broker_replica_counts(self, counted_only: bool = True) -> np.ndarray:
        """Replicas hosted per broker; by default without internal topics (KIP-578).

        Counted once per snapshot (it never changes); each call gets its own copy."""
        return (self._counted_replicas if counted_only else self._all_replicas).copy()

    @cached_property
    def _all_replicas(self) -> np.ndarray:
        return np.bincount(self.replica_broker, minlength=self.n_brokers).astype(np.int64)

    @cached_property
    def _counted_replicas(self) -> np.ndarray:
        if not self.topic_internal.any():
            return self._all_replicas
        counted = self.replica_broker[~self.part_internal[self.replica_partition]]
        return np.bincount(counted, minlength=self.n_brokers).astype(np.int64)

    def broker_leader_counts(self) -> np.ndarray:
        return np.bincount(self.leaders, minlength=self.n_brokers).astype(np.int64)

    def broker_bytes(self) -> np.ndarray:
        """Log bytes stored per broker (every replica holds the partition's log)."""
        weights = self.part_size[self.replica_partition].astype(np.float64)
        return np.bincount(self.replica_broker, weights=weights, minlength=self.n_brokers)

    def counted_replicas(self) -> int:
        """Replicas that count toward max.partitions (internal topics excluded)."""
        return int(self.broker_replica_counts(counted_only=True).sum())

    # ---- derived snapshots --------------------------------------------------------------
    def only_topics(self, names: list[str]) -> Snapshot:
        """A copy holding only the named topics it has (in its own order) and their moves
        in flight, brokers unchanged: a few topics of a 200k-partition cluster, sliced as
        arrays."""
        keep = np.array(sorted({self._topic_lookup[n] for n in names if n in self._topic_lookup}),
                        np.int64)
        rows = gather_index(self.topic_starts, keep)
        kept = set(self.topic_names[keep].tolist())
        return replace(Snapshot.build(
            self.cluster, self.broker_ids, self.broker_racks, self.topic_names[keep],
            np.repeat(np.arange(len(keep)), np.diff(self.topic_starts)[keep]),
            offsets_from_lengths(self.replication_factors[rows]),
            self.replica_broker[gather_index(self.replica_offsets, rows)],
            topic_internal=self.topic_internal[keep], topic_keyed=self.topic_keyed[keep],
            topic_retention_ms=self.topic_retention_ms[keep], part_size=self.part_size[rows],
            part_rate=self.part_rate[rows], limits=self.limits),
            in_flight=tuple(m for m in self.in_flight if m["topic"] in kept))

    def with_limits(self, limits: Limits) -> Snapshot:
        return replace(self, limits=limits)

    def with_replicas(self, rows: np.ndarray, offsets: np.ndarray, brokers: np.ndarray) -> Snapshot:
        """A copy whose partitions ``rows`` (ascending, unique) get new replica lists (CSR)."""
        lengths = self.replication_factors.copy()
        changed = np.zeros(self.n_partitions, dtype=bool)
        changed[rows] = True
        lengths[rows] = np.diff(offsets)
        new_offsets = offsets_from_lengths(lengths)
        new_brokers = np.empty(int(new_offsets[-1]), dtype=np.int32)
        keep_new = np.repeat(~changed, lengths)
        keep_old = np.repeat(~changed, self.replication_factors)
        new_brokers[keep_new] = self.replica_broker[keep_old]
        new_brokers[~keep_new] = brokers
        return replace(self, replica_offsets=new_offsets, replica_broker=new_brokers)

    def with_partitions_added(
        self,
        topic_names: list[str],
        counts: np.ndarray,
        offsets: np.ndarray,
        brokers: np.ndarray,
        keyed: bool = False,
    ) -> Snapshot:
        """A copy with new topics (or new partitions of existing topics) appended.

        ``topic_names[i]`` gets ``counts[i]`` partitions whose replicas are the CSR slice
        of ``offsets``/``brokers`` in that order. Existing topics keep their row order;
        new partitions of an existing topic follow its last partition.
        """
        names = list(self.topic_names)
        internal = list(self.topic_internal)
        keyed_flags = list(self.topic_keyed)
        retention = list(self.topic_retention_ms)
        new_topic_of_row = []
        for name, n in zip(topic_names, counts, strict=True):
            if name in self._topic_lookup:
                t = self._topic_lookup[name]
            else:
                t = len(names)
                names.append(name)
                internal.append(is_internal_name(name))
                keyed_flags.append(keyed)
                retention.append(DEFAULT_RETENTION_MS)
            new_topic_of_row.append(np.full(int(n), t, dtype=np.int32))
        new_topic = np.concatenate(new_topic_of_row) if new_topic_of_row else np.zeros(0, np.int32)
        all_topic = np.concatenate((self.part_topic, new_topic))
        rf = np.concatenate((self.replication_factors, np.diff(offsets)))
        all_brokers_rows = np.concatenate((self.replica_broker, brokers))
        order = np.argsort(all_topic, kind="stable")
        gather = gather_index(offsets_from_lengths(rf), order)
        zeros_i = np.zeros(len(new_topic), np.int64)
        zeros_f = np.zeros(len(new_topic), np.float64)
        return Snapshot.build(
            self.cluster,
            self.broker_ids,
            self.broker_racks,
            names,
            all_topic[order],
            offsets_from_lengths(rf[order]),
            all_brokers_rows[gather],
            topic_internal=internal,
            topic_keyed=keyed_flags,
            topic_retention_ms=retention,
            part_size=np.concatenate((self.part_size, zeros_i))[order],
            part_rate=np.concatenate((self.part_rate, zeros_f))[order],
            limits=self.limits,
        )

