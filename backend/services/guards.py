"""What the executor's guard-rail stops read, and each cluster's guards as its executor
holds them (backend/executor/guards.py, the conditions in backend/engines/guards.py).

The figures come from the cluster's Prometheus through the catalog (the twin's exporters
publish the same series as Kafka's JMX exporter) and from its gateway (brokers up, the
live assignment). A figure Prometheus does not give is None and its condition is not
checked: a guard never fails a plan, it only holds it.
"""

from __future__ import annotations

import re

from backend.engines.guards import Figures, Key
from backend.errors import Unavailable
from backend.executor.guards import Watch
from backend.gateways.base import GatewayError
from backend.metrics.client import MetricsClient, MetricsError
from backend.model.guards import GuardSettings, Windows
from backend.model.snapshot import Snapshot
from backend.services.cluster import ClusterSource
from backend.services.monitoring import metrics_client


class ClusterHealth:
    """The figures of one cluster, read when the executor asks (every tick; Prometheus'
    answers are kept the metrics cache's lifetime)."""

    def __init__(self, source: ClusterSource) -> None:
        self.source = source

    def figures(self, moving: list[Key]) -> Figures:
        client = self._client()
        return Figures(
            offline_partitions=_total(client, "offline_partitions"),
            under_min_isr=_total(client, "under_min_isr_per_broker"),
            under_replicated=_total(client, "under_replicated_per_broker"),
            down_brokers=self._down(),
            lag=_lag(client, moving) if client is not None and moving else {})

    def assignment(self) -> Snapshot:
        """The live assignment (the next batch's brokers and KIP-578 counts)."""
        return self.source.gateway.assignment()

    def _client(self) -> MetricsClient | None:
        try:
            return metrics_client(self.source)
        except Unavailable:
            return None

    def _down(self) -> frozenset[int]:
        try:
            brokers = self.source.gateway.describe_cluster()["brokers"]
        except (GatewayError, Unavailable):
            return frozenset()
        return frozenset(int(b["id"]) for b in brokers if not b["alive"])


def _total(client: MetricsClient | None, concept: str) -> int | None:
    if client is None:
        return None
    try:
        frame = client.instant(concept)
    except (MetricsError, Unavailable):
        return None
    return round(float(frame["value"].sum())) if len(frame) else 0


def _lag(client: MetricsClient, moving: list[Key]) -> dict[Key, float]:
    """Bytes each moving partition's most-behind replica still has to copy."""
    topics = "|".join(re.escape(t) for t in sorted({t for t, _ in moving}))
    try:
        frame = client.instant("replica_bytes_behind_in", topics=topics)
    except (MetricsError, Unavailable):
        return {}
    if not len(frame):
        return {}
    worst = frame.groupby(["topic", "partition"])["value"].max()
    wanted = set(moving)
    return {(str(t), int(p)): float(v) for (t, p), v in worst.items()
            if (str(t), int(p)) in wanted}


def watch_for(source: ClusterSource, settings: GuardSettings, windows: Windows) -> Watch | None:
    """The cluster's guards and windows for its executor; None when neither applies
    (the executor then runs exactly as without them)."""
    if not settings.enabled and not windows.ranges:
        return None
    health = ClusterHealth(source) if settings.enabled and source.gateway is not None else None
    return Watch(settings, windows, health, source.limits)
