"""The exporters: fast text equals the Collector's, dialect names, dead brokers answer 503."""

from __future__ import annotations

import math
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
from backend.twin.replication import EMPTY_FETCH_RESPONSE_BYTES, IDLE_FETCHES_PER_SECOND
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
    """(name, labels, value); NaN as the string "NaN" (NaN != NaN would never match)."""
    return {(s.name, tuple(sorted(s.labels.items())), "NaN" if math.isnan(s.value) else s.value)
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
    # Confluent's rules since April 2023: lag per partition under one name, clientid label
    # (no more "..._consumerlag_clientid_replicafetcherthread_0_<leader>" names)
    assert not any(n.startswith("kafka_server_fetcherlagmetrics_consumerlag_")
                   for n in names_c)
    lag_c = [s for s in confluent if s[0] == "kafka_server_fetcherlagmetrics_consumerlag"]
    assert lag_c and all({k for k, _ in s[1]} == {"clientid", "topic", "partition"}
                         and dict(s[1])["clientid"].startswith("ReplicaFetcherThread-0-")
                         for s in lag_c)
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


def test_every_controller_exports_the_cluster_wide_gauges():
    """KRaft: GlobalPartitionCount and OfflinePartitionsCount on each of the three
    controllers (combined nodes 1-3), ActiveControllerCount 1 on one of them only."""
    twin = TwinCluster(generate_snapshot(5, 0, 4, 30, 3, seed=4), TwinSettings(seed=1))
    gauges = {}
    for broker in twin.snap.broker_ids.tolist():
        got = samples(TwinCollector(twin, broker, STRIMZI).exposition())
        gauges[broker] = {name: value for name, _, value in got}
    first3 = twin.snap.broker_ids.tolist()[:3]
    for broker, got in gauges.items():
        expected = twin.snap.n_partitions if broker in first3 else 0
        assert got["kafka_controller_kafkacontroller_globalpartitioncount"] == expected
    assert sum(g["kafka_controller_kafkacontroller_activecontrollercount"]
               for g in gauges.values()) == 1


def test_quota_principals_are_encoded_as_kafkas_mbean_tags():
    """Kafka URL-encodes the user (Sanitizer.sanitize) and quotes a client id with
    characters outside [\\w-%. \\t] (Sanitizer.jmxSanitize); throttle-time of the
    ControllerMutation bean is NaN on KRaft, the Request bean's holds it (KIP-599)."""
    twin = TwinCluster(generate_snapshot(3, 0, 2, 6, 1, seed=1), TwinSettings(seed=1))
    twin.set_mutation_quota("CN=a,O=b", None, 1.0)
    twin.create_topics([{"name": f"q{i}", "partitions": 8, "rf": 1} for i in range(3)],
                       user="CN=a,O=b", client_id="app:1")
    active = int(twin.snap.broker_ids[twin.controller()])
    got = samples(TwinCollector(twin, active, STRIMZI).exposition())
    tokens = [s for s in got if s[0] == "kafka_server_controllermutation_tokens"]
    assert [dict(s[1])["user"] for s in tokens] == ["CN%3Da%2CO%3Db"]
    [throttle] = [s for s in got if s[0] == "kafka_server_controllermutation_throttle_time"]
    assert throttle[2] == "NaN"
    [told] = [s for s in got if s[0] == "kafka_server_request_throttle_time"]
    assert told[2] > 0


def test_replication_byte_rate_exists_as_kafkas_sensors_do():
    """KIP-73's FollowerReplication sensor is made on a broker's first throttled bytes: a
    configured but idle throttle exports no follower series. The LeaderReplication one
    records every follower fetch's response overhead, throttled or not (KafkaApis's
    sizeOfThrottledPartitions), so every broker that leads a replicated partition exports
    it, at the idle fetch floor."""
    twin = TwinCluster(generate_snapshot(3, 0, 2, 6, 3, seed=1), TwinSettings(seed=1))
    got = {b: {s[0]: s[2] for s in samples(TwinCollector(twin, b, STRIMZI).exposition())}
           for b in twin.snap.broker_ids.tolist()}
    leaders = set(twin.snap.broker_ids[twin.state.leader].tolist())
    floor = 2 * IDLE_FETCHES_PER_SECOND * EMPTY_FETCH_RESPONSE_BYTES  # RF 3: 2 followers
    assert {b: g[STRIMZI.leader_byte_rate] for b, g in got.items()
            if STRIMZI.leader_byte_rate in g} == dict.fromkeys(leaders, floor)
    assert not any(STRIMZI.follower_byte_rate in g for g in got.values())
    busy = busy_twin()  # leaders 1-3 send throttled bytes; 4 is down, 5 and 6 send none
    for b in busy.snap.broker_ids.tolist():
        pos = int(busy.snap.broker_positions([b])[0])
        if not busy.state.alive[pos]:
            continue
        names = {s[0] for s in samples(TwinCollector(busy, b, STRIMZI).exposition())}
        assert (STRIMZI.leader_byte_rate in names) == (busy.throttled_rate["leader"][pos] > 0)
