"""What the adaptive throttle reads (backend/executor/adaptive.py's TrafficReader): each
broker's traffic now, from Prometheus through the catalog (all bytes out and in, and the
replication part of each), so the executor never holds PromQL.

A broker's traffic out is what consumers fetch plus what it sends followers, in is what
producers write plus what it fetches as a follower: the NIC's bytes that kafka-kit's
autothrottle reads from Datadog (system.net.bytes_sent / bytes_rcvd)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from backend.errors import Unavailable
from backend.executor.adaptive import BrokerTraffic, ControlSettings
from backend.metrics.client import MetricsError
from backend.services.cluster import ClusterSource
from backend.services.monitoring import metrics_client

CONCEPTS = ("bytes_out_per_broker", "bytes_in_per_broker",
            "replication_bytes_out_per_broker", "replication_bytes_in_per_broker")


class PrometheusTraffic:
    """A cluster's broker traffic from its Prometheus (answers kept the metrics cache's
    lifetime, shorter than the controller's interval)."""

    def __init__(self, source: ClusterSource) -> None:
        self.source = source

    def broker_traffic(self, brokers: list[int]) -> BrokerTraffic:
        """Bytes/s per broker in ``brokers``' order; Unavailable when Prometheus does not
        answer or has no figure for one of them (the controller then holds its rates)."""
        client = metrics_client(self.source)
        try:  # the four queries at once: a tick waits for the slowest, not their sum
            with ThreadPoolExecutor(len(CONCEPTS)) as pool:
                frames = list(pool.map(client.instant, CONCEPTS))
        except MetricsError as e:
            raise Unavailable("Prometheus", str(e)) from None
        cols = []
        for concept, frame in zip(CONCEPTS, frames, strict=True):
            by = dict(zip(frame[client.by].astype(str), frame["value"].astype(float),
                          strict=True))
            missing = [b for b in brokers if str(b) not in by]
            if missing:
                raise Unavailable("Prometheus", f"no {concept} for broker {missing[0]}")
            cols.append(np.array([by[str(b)] for b in brokers]))
        out, into, sent, received = cols
        return BrokerTraffic(tx=out + sent, rx=into + received, sent=sent, received=received)


def control_for(source: ClusterSource, interval_seconds: float, hold_seconds: float,
                network_capacity: float) -> tuple[PrometheusTraffic | None, ControlSettings]:
    """The executor thread's adaptive throttle for one cluster (no Prometheus: no reader,
    and adaptive plans hold, then run at their floor)."""
    reader = PrometheusTraffic(source) if source.prometheus_url else None
    return reader, ControlSettings(interval_seconds, hold_seconds, network_capacity)
