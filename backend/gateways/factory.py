"""The one place that turns a cluster's config into a gateway: the dashboard, the worker
and the CLI call open_gateway and never name a gateway type themselves."""

from __future__ import annotations

from typing import Protocol

from backend.gateways.base import ClusterReader
from backend.gateways.config import GatewayConfig


class _Prometheus(Protocol):
    url: str
    dialect: str
    timeout_seconds: float


class ClusterSettings(Protocol):
    """What open_gateway reads of a cluster's config (dashboard.config.ClusterConfig)."""

    name: str
    gateway: GatewayConfig
    prometheus: _Prometheus | None


def open_gateway(cluster: ClusterSettings) -> ClusterReader | None:
    """The cluster's gateway, not yet connected (each call connects, or raises
    Unavailable). None for a twin without a URL: one running in the caller's own process
    (`railyard demo`), which hands that gateway over itself.

    A twin is read through its HTTP API, and changed through it too when the config
    names the twin's token file; a Kafka cluster through the admin client (reads and
    writes), with per-topic write rates from the cluster's Prometheus when one is
    configured."""
    gw = cluster.gateway
    if gw.type == "twin":
        if gw.url is None:
            return None
        from backend.gateways.twin_http import TwinHttpGateway, TwinHttpWriter
        return TwinHttpGateway(gw.url) if gw.token is None else TwinHttpWriter(gw.url, gw.token)
    if gw.type == "kafka":
        from backend.gateways.kafka import KafkaGateway
        metrics = None
        if cluster.prometheus is not None:
            from backend.metrics.client import MetricsClient
            p = cluster.prometheus
            metrics = MetricsClient(p.url, p.dialect, p.timeout_seconds, ttl=0,
                                    authorization=p.authorization, ca_file=p.ca_file)
        return KafkaGateway(gw.kafka, cluster.name, metrics)
    raise ValueError(f"unknown gateway type {gw.type!r}")  # config parsing rejects these
