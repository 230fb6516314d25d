"""Partition deletion in the twin, as a controller implementing the delete-partitions KIP
runs it (backend/engines/shrink_stages.py has the stages): the twin's cluster.py calls
``request`` for DeletePartitions and ``due`` / ``confirmed`` after every step of time.

One DeleteTopicPartitionsRecord per topic: the partitions from ``keep`` up go ReadOnly
(or None at once when the delay is 0); the controller's check (every
delete.topic.partition.interval.delay.ms from the twin's start) sets them None once the
delay has passed, which sends StopReplica with delete; they are Removed once every broker
holding one of their replicas is alive to delete it (a dead broker's replica is
ReplicaDeletionIneligible until it returns).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from backend.engines.shrink_stages import check_at
from backend.model.snapshot import Snapshot


@dataclass
class Deletion:
    """A DeleteTopicPartitionsRecord: partitions ``keep`` .. end of ``topic`` go."""

    topic: str
    keep: int
    delay_ms: int
    created_ms: int
    deleting: bool = False  # mode None: StopReplica sent, waiting for every broker

    @property
    def due_ms(self) -> int:
        return self.created_ms + self.delay_ms


class PartitionDeletions:
    """The controller's pending partition deletions (not thread-safe: the twin's lock)."""

    def __init__(self, interval_ms: int) -> None:
        self.interval_ms = interval_ms
        self.pending: dict[str, Deletion] = {}

    def request(self, topic: str, keep: int, delay_ms: int, now_ms: int) -> Deletion:
        d = Deletion(topic, keep, delay_ms, now_ms, deleting=delay_ms == 0)
        self.pending[topic] = d
        return d

    def due(self, now_ms: int) -> list[Deletion]:
        """ReadOnly deletions the controller's check turns None by ``now_ms``."""
        out = [d for d in self.pending.values()
               if not d.deleting and check_at(d.due_ms, self.interval_ms) <= now_ms]
        for d in out:
            d.deleting = True
        return out

    def confirmed(self, snap: Snapshot, alive: np.ndarray) -> list[Deletion]:
        """Deleting records whose every replica sits on a live broker: those brokers
        answer StopReplica and the partitions leave the metadata now."""
        out = []
        for d in [d for d in self.pending.values() if d.deleting]:
            t = snap.topic_index(d.topic)
            a, b = snap.replica_offsets[snap.topic_starts[t] + d.keep], \
                snap.replica_offsets[snap.topic_starts[t + 1]]
            if alive[snap.replica_broker[a:b]].all():
                out.append(self.pending.pop(d.topic))
        return out

    def forget(self, topics: set[str]) -> None:
        """Topics deleted whole take their records with them."""
        for t in topics:
            self.pending.pop(t, None)
