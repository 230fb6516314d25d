"""The PromQL catalog: one query per concept per dialect, names from the dialect."""

from __future__ import annotations

import pytest

from backend.errors import BadInput
from backend.metrics import catalog


@pytest.mark.parametrize("name", sorted(catalog.CATALOG))
@pytest.mark.parametrize("dialect", ["strimzi", "confluent"])
def test_every_concept_renders_in_both_dialects(name, dialect):
    q = catalog.promql(name, dialect, window="2m", by="instance")
    assert "{" not in q.replace("{topic", "")
    assert ("instance" in q) == ("{by}" in catalog.CATALOG[name].template)


def test_dialect_specific_names():
    assert catalog.promql("bytes_in_per_broker", "strimzi") == (
        'sum by (broker) (rate(kafka_server_brokertopicmetrics_bytesin_total{topic=""}[1m]))')
    assert catalog.promql("bytes_in_per_broker", "confluent") == (
        'sum by (broker) (rate(kafka_server_brokertopicmetrics_bytesinpersec{topic=""}[1m]))')
    # Confluent's rules give kafka_server_fetcherlagmetrics_consumerlag{clientid, topic,
    # partition} since April 2023; the clientid folded into the name (the query this pinned
    # before, {__name__=~"..._consumerlag_clientid_.+"}) matches nothing on a current setup
    assert catalog.promql("replica_lag_sum_per_broker", "confluent") == (
        "sum by (broker) (kafka_server_fetcherlagmetrics_consumerlag)")


def test_controller_gauges_count_the_cluster_once():
    """Every KRaft controller publishes GlobalPartitionCount and OfflinePartitionsCount
    (three controllers: the sum was three times the cluster), so one controller's value."""
    assert catalog.promql("cluster_partitions") == (
        "max(kafka_controller_kafkacontroller_globalpartitioncount)")
    assert catalog.promql("offline_partitions") == (
        "max(kafka_controller_kafkacontroller_offlinepartitionscount)")


def test_throttle_time_reads_the_forwarding_brokers_request_throttle_too():
    """KIP-599 on KRaft: the controller's ControllerMutation throttle-time stays NaN (it does
    not throttle forwarded requests); the broker's Request throttle-time holds it."""
    q = catalog.promql("mutation_throttle_time")
    assert q == ("max by (user, client_id) (kafka_server_controllermutation_throttle_time >= 0 "
                 "or kafka_server_request_throttle_time >= 0)")


def test_unknown_names_are_bad_input():
    with pytest.raises(BadInput):
        catalog.promql("nope")
    with pytest.raises(BadInput):
        catalog.promql("partitions_per_broker", "cloudera")
