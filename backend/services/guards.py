"""What the executor's guard-rail stops read, and each cluster's guards as its executor
holds them (backend/executor/guards.py, the conditions in backend/engines/guards.py).

The figures come from the cluster's Prometheus through the catalog (the twin's exporters
publish the same series as Kafka's JMX exporter) and from its gateway (brokers up, the
live assignment). A figure Prometheus does not give is None (not known): it neither
starts a hold nor ends one (backend/engines/guards.py). A guard never fails a plan, it
only holds it.
"""

from __future__ import annotations

import pandas as pd

from backend.engines.guards import Figures, Key
from backend.errors import Unavailable
from backend.executor.guards import Watch
from backend.gateways.base import GatewayError
from backend.metrics import catalog
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
        client, brokers = self._client(), self._brokers()
        up = down = None
        if brokers is not None:
            up = frozenset(b for b, alive in brokers.items() if alive)
            down = frozenset(brokers) - up
        offline, under_min_isr, under_replicated = _counts(client, up)
        return Figures(
            offline_partitions=offline, under_min_isr=under_min_isr,
            under_replicated=under_replicated, down_brokers=down,
            lag=None if client is None else _lag(client, moving) if moving else {})

    def assignment(self) -> Snapshot:
        """The live assignment (the next batch's brokers and KIP-578 counts)."""
        return self.source.gateway.assignment()

    def _client(self) -> MetricsClient | None:
        try:
            return metrics_client(self.source)
        except Unavailable:
            return None

    def _brokers(self) -> dict[int, bool] | None:
        """Broker id -> alive, as the cluster answers now; None when it does not."""
        try:
            brokers = self.source.gateway.describe_cluster()["brokers"]
        except (GatewayError, Unavailable):
            return None
        return {int(b["id"]): bool(b["alive"]) for b in brokers}


COUNTS = ("offline_partitions", "under_min_isr_per_broker", "under_replicated_per_broker")


def _counts(client: MetricsClient | None, up: frozenset[int] | None) -> list[int | None]:
    """The COUNTS summed over their series; None where not known. A count is known only
    when every broker up that Prometheus scrapes answered its last scrape and is in the
    sum: a failed scrape leaves no series (Prometheus marks them stale), and the sum of
    the others, or the offline count of brokers that are no controller (0), would read
    as clear. ``up`` (None: the cluster did not answer) is asked of Prometheus after the
    counts, so a scrape that failed while they were read counts against them."""
    if client is None:
        return [None] * len(COUNTS)
    frames = [_instant(client, concept) for concept in COUNTS]
    expected = _answered(client, up)
    if expected is None:
        return [None] * len(COUNTS)
    return [None if frame is None or (client.by in frame
                                      and not expected <= set(frame[client.by].astype(str)))
            else round(float(frame["value"].sum())) for frame in frames]


def _instant(client: MetricsClient, concept: str, **query: str) -> pd.DataFrame | None:
    """The concept's answer now (``query``: MetricsClient.instant's); None when
    Prometheus gives none."""
    try:
        return client.instant(concept, **query)
    except (MetricsError, Unavailable):
        return None


def _answered(client: MetricsClient, up: frozenset[int] | None) -> set[str] | None:
    """The broker labels of the brokers up that Prometheus scrapes, when every one of
    them answered its last scrape; None when one did not. Brokers are matched by the
    scrape label ``broker="<id>"`` (docs/recording-rules.md): labels that are no broker's
    id match nothing, and nothing is checked."""
    if up is None:
        return set()
    frame = _instant(client, "brokers_up")
    if frame is None:
        return None
    labels = frame[client.by].astype(str)
    scraped = {str(b) for b in up} & set(labels)
    return scraped if scraped <= set(labels[frame["value"] > 0]) else None


def _lag(client: MetricsClient, moving: list[Key]) -> dict[Key, float] | None:
    """Bytes each moving partition's most-behind replica still has to copy; None when
    Prometheus does not answer."""
    frame = _instant(client, "replica_bytes_behind_in",
                     topics=catalog.topic_regex(t for t, _ in moving))
    if frame is None:
        return None
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
