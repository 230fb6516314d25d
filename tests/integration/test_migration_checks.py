"""A shrink migration's "producers switched" step against a real Prometheus scraping the
twin's exporters (Kafka's per-topic BytesInPerSec, Strimzi's names): refused for a topic
producers write to, with the rate they write at; confirmed for one whose producers
stopped; not confirmed for one nobody wrote to since the brokers started (Kafka makes a
topic's meter on its first write, and so does the twin)."""

from __future__ import annotations

import re
import threading

import pytest

from backend.errors import Conflict
from backend.model.snapshot import Limits
from backend.services import migration_checks
from backend.services.cluster import ClusterSource
from backend.twin.cluster import TwinCluster, TwinSettings
from backend.twin.generate import generate_snapshot
from tests.integration.kafka_prometheus import poll
from tests.servers import prometheus_on_twin

pytestmark = pytest.mark.integration

SCRAPE = 0.5  # seconds


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """(twin, source): topic 0 written to throughout, topic 1 written to until just before
    Prometheus started, topic 2 never; one simulated second per wall second."""
    twin = TwinCluster(generate_snapshot(6, 3, 3, 30, 3, seed=7, cluster="it"),
                       TwinSettings(traffic_noise=0.0))
    busy, stopped, silent = (str(t) for t in twin.snap.topic_names[:3])
    twin.set_traffic(0.0, silent)
    twin.advance(3.0)  # busy's and stopped's meters exist
    twin.set_traffic(0.0, stopped)
    stop = threading.Event()

    def clock() -> None:
        while not stop.wait(0.25):
            twin.advance(0.25)
    ticker = threading.Thread(target=clock, daemon=True)
    with prometheus_on_twin(twin, "it", tmp_path_factory.mktemp("mig"), SCRAPE) as (_, prom):
        ticker.start()
        try:
            yield twin, (busy, stopped, silent), ClusterSource(
                "it", None, Limits(), prometheus_url=prom.url, metrics_ttl=0)
        finally:
            stop.set()
            ticker.join(timeout=5)


def test_step_2_refused_while_producers_write_confirmed_once_they_stopped(world):
    _, (busy, stopped, silent), source = world

    def refusal() -> str:
        try:
            migration_checks.producers_switched(source, busy, f"{busy}.new", 2)
        except Conflict as e:
            return str(e)
        return ""
    said = poll("a rate for the busy topic", refusal, bool, timeout=30)
    # rate() over 60 s divides by the whole window, so a Prometheus seconds old reads a
    # fraction of the topic's rate: any write refuses the step
    assert re.fullmatch(
        rf"step 2: producers still write to '{busy}': [1-9][\d,]* B/s over the last 60 s "
        rf"\(Kafka's BytesInPerSec for the topic, from Prometheus\): switch them to "
        rf"'{busy}\.new', then check this step off \(the rate reads 0 once 60 s pass "
        rf"without a write\)", said), said
    assert migration_checks.producers_switched(source, stopped, f"{stopped}.new", 2) == (
        f"confirmed: no writes to '{stopped}' over the last 60 s (BytesInPerSec)")
    assert migration_checks.producers_switched(source, silent, f"{silent}.new", 2) \
        .startswith(f"not confirmed: Prometheus has no BytesInPerSec series for '{silent}'")
