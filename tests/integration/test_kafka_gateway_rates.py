"""The Kafka gateway's assignment takes write rates from the cluster's Prometheus: a real
Prometheus scraping the twin's exporters (Strimzi names) stands in for the brokers'
metrics, and Tansu holds topics of the same names. Kafka exports bytes-in per topic, not
per partition, so each partition gets its topic's rate (the catalog's bytes_in_per_topic)
over its partition count."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from backend.gateways.config import parse_kafka
from backend.gateways.kafka import KafkaGateway
from backend.metrics.client import MetricMissing, MetricsClient
from backend.metrics.dialects import STRIMZI
from backend.metrics.server import PrometheusProcess, scrape_config
from backend.twin.cluster import TwinCluster, TwinSettings
from backend.twin.exporter import Exporters
from backend.twin.generate import generate_snapshot

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def metrics(tmp_path_factory):
    """A twin (traffic without noise), its exporters, Prometheus scraping every 0.5 s."""
    twin = TwinCluster(generate_snapshot(3, 0, 4, 24, 1, seed=5),
                       TwinSettings(seed=1, traffic_noise=0.0))
    exporters = Exporters(twin, STRIMZI).start()
    prom = PrometheusProcess(tmp_path_factory.mktemp("prom"))
    stop = threading.Event()

    def clock():  # one simulated second per wall second, so counters have rates
        while not stop.wait(0.25):
            twin.advance(0.25)
    ticker = threading.Thread(target=clock, daemon=True)
    try:
        prom.write_config(scrape_config(exporters.targets, "it", 0.5))
        prom.start()
        ticker.start()
        # answers cached for a minute: the gateway and the test read the same figures
        yield twin, MetricsClient(prom.url, "strimzi", ttl=60)
    finally:
        stop.set()
        ticker.join(timeout=5)
        prom.stop()
        exporters.stop()


def wait_for_every_topic(client: MetricsClient, topics: int) -> None:
    """Until Prometheus has two scrapes of every topic's bytes-in (nothing cached before)."""
    uncached = MetricsClient(client.url, "strimzi", ttl=0)
    deadline = time.monotonic() + 30
    while True:
        try:
            if len(uncached.instant("bytes_in_per_topic")) == topics:
                return
        except MetricMissing:
            pass
        assert time.monotonic() < deadline, "Prometheus never had every topic's rate"
        time.sleep(0.3)


def test_partition_rates_are_the_topic_rate_spread_evenly(bootstrap, metrics):
    twin, client = metrics
    names = [str(n) for n in twin.snap.topic_names]
    counts = {n: twin.snap.topic_partition_count(i) for i, n in enumerate(names)}
    gw = KafkaGateway(parse_kafka({"bootstrap_servers": [bootstrap], "timeout_seconds": 5},
                                  str), "tansu", client)
    try:
        made = gw.create_topics([{"name": n, "partitions": c, "rf": 1}
                                 for n, c in counts.items()])
        assert [m["error"] for m in made] == [None] * len(names)
        wait_for_every_topic(client, len(names))
        snap = gw.assignment()
        assert not any("write rates" in n for n in gw.notes)
        frame = client.instant("bytes_in_per_topic")  # the answer the gateway had
        want = dict(zip(frame["topic"], frame["value"], strict=True))
        for name in names:
            rows = [snap.partition_row(name, p) for p in range(counts[name])]
            rates = snap.part_rate[rows]
            assert want[name] > 0
            assert rates == pytest.approx(np.full(len(rows), want[name] / len(rows)))
    finally:
        gw.close()
