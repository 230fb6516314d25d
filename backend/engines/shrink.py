"""Partition shrinks as the delete-partitions KIP describes them.

Reducing a topic from n to m partitions removes the highest-numbered n - m partitions.
Each goes ReadOnly at once (producers stop writing to it, consumers still read), then
None after the delay (filtered out, data deleted), checked every
delete.topic.partition.interval.delay.ms (300,000 ms by default). Apache Kafka never
adopted the KIP (its Admin.createPartitions only adds), so the plan is a what-if for
brokers that implement it; the service adds the migration that works on any cluster today.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from backend.errors import BadInput
from backend.model.bounds import check_long
from backend.model.csr import gather_index
from backend.model.snapshot import Snapshot

CHECK_INTERVAL_MS = 300_000  # delete.topic.partition.interval.delay.ms default


@dataclass
class ShrinkPlan:
    topic: str
    from_partitions: int
    to_partitions: int
    delay_ms: int
    removed_rows: np.ndarray  # snapshot rows of the partitions that go
    bytes_reclaimed: int  # over all replicas
    broker_bytes_reclaimed: np.ndarray
    counts_after: np.ndarray  # counted replicas per broker once removed
    removed_rate: float  # produce bytes/s currently going into removed partitions
    stages: list[dict]
    warnings: list[str] = field(default_factory=list)


CLI_FIELDS = ("--partitions", "--delay-ms")  # what a refusal names: the CLI's flags
API_FIELDS = ("partitions", "delay_ms")  # ... or the API's fields (POST /api/v1/plans)


def plan_shrink(snap: Snapshot, topic: str, partitions: int, delay_ms: int | None = None,
                fields: tuple[str, str] = CLI_FIELDS,
                deletes_partitions: bool | None = None) -> ShrinkPlan:
    """The stages, reclaimed room and risks of shrinking ``topic`` to ``partitions``; a
    refusal names the partitions and delay as ``fields`` does. ``deletes_partitions``:
    whether the cluster implements the delete-partitions KIP, as the caller knows it
    (None: not known); the risk that it does not (Apache Kafka) is left out where it does."""
    t = snap.topic_index(topic)
    n = snap.topic_partition_count(t)
    if snap.topic_internal[t]:
        raise BadInput(f"topic '{topic}' is internal; its partition count is Kafka's own")
    if not n:
        raise BadInput(f"topic '{topic}' has no partitions in the snapshot (Kafka was still "
                       "creating it): there is nothing to shrink")
    if not 1 <= partitions < n:
        raise BadInput(f"topic '{topic}' has {n} partitions; a shrink needs 1 <= {fields[0]} "
                       f"< {n}, got {partitions}")
    retention = int(snap.topic_retention_ms[t])
    if delay_ms is None:
        delay_ms = retention if retention >= 0 else None
        if delay_ms is None:
            raise BadInput(f"topic '{topic}' keeps data forever (retention.ms=-1): give "
                           f"{fields[1]}, the time consumers get to read the removed "
                           "partitions")
    check_long(delay_ms, fields[1])  # the KIP's --delete-partitions-delay is a Long

    rows = np.arange(snap.topic_starts[t] + partitions, snap.topic_starts[t] + n, dtype=np.int64)
    rf = snap.replication_factors[rows]
    brokers = snap.replica_broker[gather_index(snap.replica_offsets, rows)]
    sizes = np.repeat(snap.part_size[rows], rf).astype(np.float64)
    broker_bytes = np.bincount(brokers, weights=sizes, minlength=snap.n_brokers)
    counts = snap.broker_replica_counts() - np.bincount(brokers, minlength=snap.n_brokers)
    removed_rate = float(snap.part_rate[rows].sum())

    offline_at = (0, 0) if delay_ms == 0 else (delay_ms, delay_ms + CHECK_INTERVAL_MS)
    stages = ([] if delay_ms == 0 else [_stage("ReadOnly", 0, 0)]) + [
        _stage("None", *offline_at), _stage("Removed", *offline_at)]
    plan = ShrinkPlan(topic, n, partitions, delay_ms, rows, int(broker_bytes.sum()),
                      broker_bytes, counts, removed_rate, stages)
    plan.warnings = _warnings(snap, t, plan, retention, deletes_partitions)
    return plan


def _span(ms: int) -> str:
    """A config's milliseconds as people read them: '2 h (7,200,000 ms)'."""
    s = ms / 1000
    value, unit = ((s, "s") if s < 90 else (s / 60, "min") if s < 5400 else
                   (s / 3600, "h") if s < 172_800 else (s / 86_400, "days"))
    return f"{round(value, 1):g} {unit} ({ms:,} ms)"


NO_DELETE_PARTITIONS = (
    "Apache Kafka cannot delete partitions (it never adopted the delete-partitions KIP): the "
    "stages need brokers that implement it, with delete.topic.partition.enable=true; on a "
    "cluster without it, Execute is refused and 'Run the migration' on the plan's page runs "
    "the migration instead")


def _warnings(snap: Snapshot, t: int, plan: ShrinkPlan, retention: int,
              deletes_partitions: bool | None) -> list[str]:
    name = plan.topic
    out = [] if deletes_partitions else [NO_DELETE_PARTITIONS]
    if snap.topic_keyed[t]:
        out.append(f"topic '{name}' is keyed: the key-to-partition mapping changes from "
                   f"{plan.from_partitions} to {plan.to_partitions} partitions, so records of "
                   "one key land on another partition and per-key ordering breaks across "
                   "the change")
    if plan.delay_ms == 0:
        out.append("a delay of 0 deletes the removed partitions' data at once: consumers "
                   "that have not read it lose it")
    elif retention >= 0 and plan.delay_ms < retention:
        out.append(f"the delay, {_span(plan.delay_ms)}, is shorter than retention.ms, "
                   f"{_span(retention)}: data in removed partitions goes earlier than "
                   "promised")
    if plan.removed_rate > 0:
        out.append(f"the removed partitions take {plan.removed_rate:,.0f} B/s of produce "
                   "traffic now: producers that pick partitions explicitly fail once they "
                   "are ReadOnly; the rest must move to the remaining partitions")
    out.append("consumer groups' committed offsets on removed partitions are lost once they "
               "are None: check each group's lag on them is 0 before the delay ends")
    return out


STAGE_EFFECTS = {
    "ReadOnly": "producers can no longer write to the removed partitions; consumers still "
                "read them",
    "None": "the removed partitions go offline: consumers stop reading them",
    "Removed": "every broker deletes their replicas (StopReplica with delete) and they leave "
               "the topic's metadata; a broker that is down deletes them when it returns",
}


def _stage(mode: str, at_ms: int, latest_at_ms: int) -> dict:
    """A stage of the KIP's workflow, when it happens (at the latest, given the controller's
    check interval) and what it does."""
    return {"mode": mode, "at_ms": at_ms, "latest_at_ms": latest_at_ms,
            "effect": STAGE_EFFECTS[mode]}
