"""KIP-578 partition limits: limit-aware topic creation, partition addition and
reassignment checks.

Rules (KIP-578 and its prototype, apache/kafka#8499):
- a broker's partition count is the number of partition replicas it hosts; max.partitions
  counts replicas across all brokers (10 partitions with RF 3 use 30);
- internal topics (``__*``) are neither limited nor counted;
- the stricter limit decides; a broker at or over max.broker.partitions keeps what it has
  and gets nothing new; each topic is all-or-nothing, requests are applied in order.
When no limit binds, the placement is exactly Kafka's AdminUtils.assignReplicasToBrokers.
When Kafka's placement would break a limit, a capacity-aware placement is used, which
finds a placement whenever one exists (the KIP's 10/20/30 example), racks kept distinct
where capacity allows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from backend.engines.batches import new_replicas
from backend.engines.fit import fits, place_by_capacity, shortfall
from backend.engines.placement import kafka_assign, validate_request
from backend.errors import BadInput
from backend.model.csr import offsets_from_lengths
from backend.model.jsonrows import IndexedRows
from backend.model.names import kafka_name_error
from backend.model.reassignment import Reassignment
from backend.model.snapshot import Limits, Snapshot, is_internal_name

KRAFT_MAX_PARTITIONS_PER_REQUEST = 10_000  # "Excessively large number of partitions per request."
# Kafka's error codes for a topic it will not create (CreateTopics' per-topic answer)
TOPIC_ALREADY_EXISTS, INVALID_TOPIC = "TOPIC_ALREADY_EXISTS", "INVALID_TOPIC_EXCEPTION"
POLICY_VIOLATION = "POLICY_VIOLATION"  # KIP-578: a partition limit would be exceeded
_UNLIMITED = 2**40  # room of a broker with no limit, beside a closed one (more than any cluster)


@dataclass(frozen=True)
class TopicRequest:
    name: str
    partitions: int
    rf: int


@dataclass
class TopicOutcome:
    """One topic's answer: its new partitions' replicas (broker positions) or why not."""

    name: str
    ok: bool
    first_partition: int = 0
    assignment: np.ndarray | None = None  # (new partitions, RF), leader first
    error: str | None = None
    code: str | None = None  # Kafka's error code when refused
    kafka_compatible: bool = False  # placement equals Kafka's AdminUtils for this start
    rack_aware: bool = True  # every partition on min(racks, RF) racks
    warnings: list[str] = field(default_factory=list)


@dataclass
class PlacementResult:
    before: Snapshot
    limits: Limits
    topics: list[TopicOutcome]
    counts_after: np.ndarray  # counted replicas per broker once accepted topics exist

    @property
    def ok(self) -> bool:
        return all(t.ok for t in self.topics)

    @cached_property
    def after(self) -> Snapshot:
        """The cluster with the accepted topics (or partitions) added."""
        return _with_accepted(self.before, self.topics)

    def to_dict(self, compact: bool = False) -> dict:
        """The answer as plain values; ``compact`` keeps each assignment as an IndexedRows
        view of the arrays (a mapping that writes its own JSON), for answers at scale."""
        ids = self.before.broker_ids
        topics = []
        for t in self.topics:
            assignment: Mapping[str, list[int]] | None = None
            if t.assignment is not None:
                assignment = IndexedRows(t.first_partition, t.assignment, ids)
                if not compact:
                    assignment = dict(zip(assignment, ids[t.assignment].tolist(), strict=True))
            topics.append({"name": t.name, "ok": t.ok, "assignment": assignment,
                           "error": t.error, "kafka_compatible": t.kafka_compatible,
                           "rack_aware": t.rack_aware, "warnings": t.warnings})
        figures = broker_figures(self.before.broker_ids, self.counts_after, self.limits)
        return {"ok": self.ok, "topics": topics, **figures}


@dataclass
class ReassignmentCheck:
    after: Snapshot
    limits: Limits
    violations: list[dict]

    @property
    def ok(self) -> bool:
        return not self.violations

    def to_dict(self) -> dict:
        figures = broker_figures(self.after.broker_ids, self.after.broker_replica_counts(),
                                 self.limits)
        return {"ok": self.ok, "violations": self.violations, **figures}


def broker_figures(broker_ids: np.ndarray, counts: np.ndarray, limits: Limits) -> dict:
    """Per-broker counts and remaining capacity (never negative; null when unlimited)."""
    room = broker_capacity(counts, limits)
    ids = [str(b) for b in broker_ids.tolist()]
    return {
        "broker_partitions_after": dict(zip(ids, counts.tolist(), strict=True)),
        "capacity_after": dict(zip(ids, [None] * len(ids) if room is None else room.tolist(),
                                   strict=True)),
        "cluster_partitions_after": int(counts.sum()),
    }


def broker_capacity(counts: np.ndarray, limits: Limits) -> np.ndarray | None:
    """Room under max.broker.partitions per broker, clipped at 0; None if unlimited."""
    if limits.max_broker_partitions is None:
        return None
    return np.maximum(limits.max_broker_partitions - counts, 0)


# ---- the engine -----------------------------------------------------------------------------
class _Placer:
    """Places topics one after another, each seeing the replicas placed before it."""

    def __init__(self, snap: Snapshot, limits: Limits, start_index: int | None, seed: int,
                 closed: np.ndarray | None = None):
        if snap.rack_mode == "mixed":
            raise BadInput("not all brokers have rack information: give every broker a rack "
                           "or none (Kafka refuses rack-aware placement otherwise)")
        if start_index is not None and start_index < 0:
            raise BadInput(f"--start-index must be >= 0, got {start_index}")
        self.snap, self.limits = snap, limits
        self.start_index, self.seed = start_index, seed
        self.counts = snap.broker_replica_counts()
        self.racks = snap.broker_rack_index if snap.rack_mode == "all" else None
        self.closed = np.zeros(0, np.int64) if closed is None else np.asarray(closed)

    @cached_property
    def rng(self) -> np.random.Generator:
        """Made on first use: a fixed start index never draws."""
        return np.random.default_rng(self.seed)

    def starts(self) -> tuple[int, int]:
        """Kafka's startIndex and nextReplicaShift: fixed, or random (reproducibly)."""
        if self.start_index is not None:
            return self.start_index, self.start_index
        n = self.snap.n_brokers
        return int(self.rng.integers(n)), int(self.rng.integers(n))

    def place(self, name: str, partitions: int, rf: int, first_partition: int,
              start: tuple[int, int]) -> TopicOutcome:
        validate_request(self.snap.n_brokers, partitions, rf)
        out = TopicOutcome(name, True, first_partition)
        if partitions > KRAFT_MAX_PARTITIONS_PER_REQUEST:
            out.warnings.append(f"KRaft rejects one request adding more than "
                                f"{KRAFT_MAX_PARTITIONS_PER_REQUEST:,} partitions; split it")
        if is_internal_name(name):  # neither limited nor counted
            out.assignment, out.kafka_compatible = self._kafka(partitions, rf, first_partition,
                                                               start), True
            return out
        error = self._cluster_limit_error(name, partitions * rf)
        if error:
            return TopicOutcome(name, False, first_partition, error=error, code=POLICY_VIOLATION)
        if rf > self.snap.n_brokers - len(self.closed):
            return TopicOutcome(name, False, first_partition, code=POLICY_VIOLATION, error=(
                f"topic '{name}' needs {rf} distinct brokers and only "
                f"{self.snap.n_brokers - len(self.closed)} are not kept empty (drained)"))
        capacity = self._capacity()
        kafka = added = None
        # Kafka gives every broker the lead of at least partitions // n of them: a broker
        # with less room shows Kafka's placement breaks the limit without computing it
        if capacity is None or int(capacity.min()) >= partitions // self.snap.n_brokers:
            kafka = self._kafka(partitions, rf, first_partition, start)
            added = np.bincount(kafka.ravel(), minlength=self.snap.n_brokers)
        if kafka is not None and (capacity is None or (added <= capacity).all()):
            out.assignment, out.kafka_compatible = kafka, True
        elif fits(capacity, partitions, rf):
            out.assignment, out.rack_aware, added = place_by_capacity(
                self.counts, capacity, partitions, rf, self.racks)
            if not out.rack_aware:  # Kafka's own walk spreads racks by construction
                out.warnings.append(f"capacity does not allow every partition on "
                                    f"{min(rf, len(self.snap.rack_names))} racks: some "
                                    f"partitions span fewer")
        else:
            return TopicOutcome(name, False, first_partition, code=POLICY_VIOLATION,
                                error=self._broker_limit_error(name, partitions, rf, capacity))
        self.counts = self.counts + added
        return out

    def _capacity(self) -> np.ndarray | None:
        """Room per broker: under max.broker.partitions (None: unlimited), none on a
        closed broker."""
        capacity = broker_capacity(self.counts, self.limits)
        if not len(self.closed):
            return capacity
        capacity = np.full(self.snap.n_brokers, _UNLIMITED, np.int64) if capacity is None \
            else capacity.copy()
        capacity[self.closed] = 0
        return capacity

    def _kafka(self, partitions: int, rf: int, first_partition: int,
               start: tuple[int, int]) -> np.ndarray:
        return kafka_assign(self.snap.n_brokers, partitions, rf, start[0], shift=start[1],
                            start_partition=first_partition, racks=self.racks)

    def _cluster_limit_error(self, name: str, replicas: int) -> str | None:
        limit = self.limits.max_partitions
        total = int(self.counts.sum())
        if limit is None or total + replicas <= limit:
            return None
        capacity = broker_capacity(self.counts, self.limits)
        per_broker = "" if capacity is None else \
            f"; remaining capacity per broker: {self._room(capacity)}"
        return (f"max.partitions={limit} would be exceeded: the cluster hosts {total} partition "
                f"replicas and topic '{name}' adds {replicas}; room for "
                f"{max(limit - total, 0)}{per_broker}")

    def _room(self, capacity: np.ndarray) -> dict[int, int]:
        """A per-broker figure by broker id, as the KIP's error message lists room."""
        return {int(b): int(c) for b, c in zip(self.snap.broker_ids, capacity, strict=True)}

    def _broker_limit_error(self, name: str, partitions: int, rf: int,
                            capacity: np.ndarray) -> str:
        limit = self.limits.max_broker_partitions
        room = self._room(capacity)
        now = self._room(self.counts)
        missing = shortfall(capacity, partitions, rf)
        per_new_broker = min(limit, partitions)
        more = -(-missing // per_new_broker) if per_new_broker else None
        hint = (f"; {more} more broker{'s' if more != 1 else ''} at the same limit would make "
                "it fit" if more else "; adding brokers cannot help with a limit of 0")
        return (f"max.broker.partitions={limit} would be exceeded: topic '{name}' needs "
                f"{partitions} x {rf} replicas on distinct brokers, {missing} more than the "
                f"brokers can take; remaining capacity per broker: {room} (replicas per "
                f"broker now: {now}){hint}")


def create_topics(snap: Snapshot, requests: list[TopicRequest], limits: Limits,
                  start_index: int | None = None, seed: int = 0,
                  closed: np.ndarray | None = None) -> PlacementResult:
    """Create topics in order, each all-or-nothing, each seeing the ones before it.

    ``closed``: broker positions that take no replica (brokers a drain emptied, for a
    topic Railyard creates with an explicit assignment); Kafka's own walk is kept only
    when it leaves them out, as it is kept only when it fits the limits."""
    names = [r.name for r in requests]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup:
        raise BadInput(f"topic '{dup}' is requested twice")
    placer = _Placer(snap, limits, start_index, seed, closed)
    outcomes = []
    for r in requests:
        start = placer.starts()
        refused = name_refusal(snap, r.name)  # Kafka checks the names first
        if refused is None:
            try:
                validate_request(snap.n_brokers, r.partitions, r.rf)
            except BadInput as e:  # Kafka's own check and wording, naming the topic
                raise BadInput(f"topic '{r.name}': {e}") from None
        outcomes.append(refused or placer.place(r.name, r.partitions, r.rf, 0, start))
    return PlacementResult(snap, limits, outcomes, placer.counts)


def name_refusal(snap: Snapshot, name: str) -> TopicOutcome | None:
    """Why Kafka's controller would not create a topic of this name on this cluster, in its
    wording (ReplicationControlManager.createTopics: validateNewTopicNames, then an
    existing name, whose answer wins), or None. Checked against the cluster as it is:
    Kafka does not compare the new names of one request with each other either."""
    if snap.has_topic(name):
        return TopicOutcome(name, False, error=f"Topic '{name}' already exists.",
                            code=TOPIC_ALREADY_EXISTS)
    error = kafka_name_error(name)
    clash = snap.colliding_topic(name)
    if clash is not None:
        error = f"Topic '{name}' collides with existing topic: {clash}"
    return None if error is None else TopicOutcome(name, False, error=error, code=INVALID_TOPIC)


def add_partitions(snap: Snapshot, topic: str, total: int, limits: Limits,
                   start_index: int | None = None, seed: int = 0) -> PlacementResult:
    """Grow a topic to ``total`` partitions, as kafka-topics --alter --partitions does.

    Kafka (AdminZkClient.createNewPartitionsAssignment) keeps partition 0's replication
    factor and starts at the position of partition 0's leader in the sorted broker list.
    """
    t = snap.topic_index(topic)
    existing = snap.topic_partition_count(t)
    if not existing:
        raise BadInput(f"topic '{topic}' has no partitions in the snapshot (Kafka was still "
                       "creating it): there is no partition 0 to take the replication "
                       "factor and first leader from")
    if total <= existing:
        raise BadInput(f"topic '{topic}' has {existing} partitions; --total {total} would not "
                       "be an increase (Kafka can only add partitions)")
    row0 = int(snap.topic_starts[t])
    rf = int(snap.replication_factors[row0])
    placer = _Placer(snap, limits, start_index, seed)
    if start_index is None:
        leader_id = int(snap.broker_ids[snap.leaders[row0]])
        first = int(np.searchsorted(snap.broker_ids, leader_id))
        start = (first, first)
    else:
        start = placer.starts()
    outcome = placer.place(topic, total - existing, rf, existing, start)
    return PlacementResult(snap, limits, [outcome], placer.counts)


def check_reassignment(snap: Snapshot, plan: Reassignment, limits: Limits) -> ReassignmentCheck:
    """Limits a proposed reassignment would break.

    Only brokers that receive new replicas can violate max.broker.partitions; the cluster
    limit is broken only when the plan adds replicas (raises replication factors).
    """
    after = plan.target(snap)
    before_counts = snap.broker_replica_counts()
    after_counts = after.broker_replica_counts()
    received = _received(snap, plan)
    violations = []
    if limits.max_broker_partitions is not None:
        bad = np.flatnonzero((received > 0) & (after_counts > limits.max_broker_partitions))
        violations += [{"broker": int(snap.broker_ids[b]), "after": int(after_counts[b]),
                        "limit": limits.max_broker_partitions, "received": int(received[b])}
                       for b in bad]
    total_before, total_after = int(before_counts.sum()), int(after_counts.sum())
    if (limits.max_partitions is not None and total_after > total_before
            and total_after > limits.max_partitions):
        violations.append({"broker": None, "after": total_after, "limit": limits.max_partitions,
                           "received": total_after - total_before})
    return ReassignmentCheck(after, limits, violations)


def _received(snap: Snapshot, plan: Reassignment) -> np.ndarray:
    """New (counted) replicas each broker receives under the plan."""
    counted = np.repeat(~snap.part_internal[plan.rows], np.diff(plan.offsets))
    fresh = new_replicas(snap, plan) & counted
    return np.bincount(plan.brokers[fresh], minlength=snap.n_brokers)


def _with_accepted(snap: Snapshot, outcomes: list[TopicOutcome]) -> Snapshot:
    accepted = [o for o in outcomes if o.ok]
    if not accepted:
        return snap
    counts = np.array([len(o.assignment) for o in accepted])
    rf = np.concatenate([np.full(len(o.assignment), o.assignment.shape[1]) for o in accepted])
    offsets = offsets_from_lengths(rf)
    brokers = np.concatenate([o.assignment.ravel() for o in accepted]).astype(np.int32)
    return snap.with_partitions_added([o.name for o in accepted], counts, offsets, brokers)
