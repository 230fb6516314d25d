"""The exporters: fast text equals the Collector's, dialect names, dead brokers answer 503."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from backend.metrics.dialects import CONFLUENT, STRIMZI
from backend.twin.cluster import TwinCluster, TwinSettings
from backend.twin.exporter import Exporters, TwinCollector
from backend.twin.gateway import TwinGateway
from backend.twin.generate import generate_snapshot
from backend.twin.scenario import move_plan, throttled_reassign


def busy_twin() -> TwinCluster:
    twin = TwinCluster(generate_snapshot(6, 3, 12, 120, 3, seed=2), TwinSettings(seed=1))
    twin.set_mutation_quota("tenant", None, 2.0)
    twin.create_topics([{"name": f"n{i}", "partitions": 6, "rf": 3} for i in range(6)],
                       user="tenant", client_id="app")
    throttled_reassign(TwinGateway(twin), move_plan(twin.snap, 1, 6, 5), 1e5)
    twin.fail_broker(4)
    twin.advance(5)
    return twin


def samples(text: str) -> set:
    return {(s.name, tuple(sorted(s.labels.items())), s.value)
            for fam in text_string_to_metric_families(text) for s in fam.samples}


@pytest.mark.parametrize("dialect", [STRIMZI, CONFLUENT], ids=lambda d: d.name)
def test_fast_exposition_equals_the_collector(dialect):
    twin = busy_twin()
    for broker in (1, 2, 6):
        collector = TwinCollector(twin, broker, dialect)
        registry = CollectorRegistry()
        registry.register(collector)
        assert samples(collector.exposition()) == samples(generate_latest(registry).decode())


def test_dialect_names_and_labels():
    twin = busy_twin()
    strimzi = samples(TwinCollector(twin, 1, STRIMZI).exposition())
    confluent = samples(TwinCollector(twin, 1, CONFLUENT).exposition())
    names_s = {s[0] for s in strimzi}
    names_c = {s[0] for s in confluent}
    assert {"kafka_server_brokertopicmetrics_bytesin_total", "kafka_log_log_size",
            "kafka_server_fetcherlagmetrics_consumerlag",
            "kafka_server_controllermutation_tokens"} <= names_s
    assert "kafka_server_brokertopicmetrics_bytesinpersec" in names_c
    assert any(n.startswith("kafka_server_fetcherlagmetrics_consumerlag_clientid_"
                            "replicafetcherthread_0_") for n in names_c)
    lag = [s for s in strimzi if s[0] == "kafka_server_fetcherlagmetrics_consumerlag"]
    assert all(dict(s[1])["clientId"].startswith("ReplicaFetcherThread-0-") for s in lag)
    # the broker total has no topic label and equals the sum of the topics
    bytes_in = [s for s in strimzi if s[0] == "kafka_server_brokertopicmetrics_bytesin_total"]
    total = [s[2] for s in bytes_in if not s[1]]
    assert total == [pytest.approx(sum(s[2] for s in bytes_in if s[1]))]
    tokens = [s for s in strimzi if s[0] == "kafka_server_controllermutation_tokens"]
    assert tokens and dict(tokens[0][1])["user"] == "tenant"


def test_exporters_serve_each_broker_and_a_dead_one_answers_503():
    twin = busy_twin()
    exporters = Exporters(twin, STRIMZI).start()
    try:
        targets = exporters.targets
        with urllib.request.urlopen(f"http://{targets[1]}/metrics", timeout=5) as r:
            assert b"kafka_server_replicamanager_partitioncount" in r.read()
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"http://{targets[4]}/metrics", timeout=5)
        assert err.value.code == 503
    finally:
        exporters.stop()
