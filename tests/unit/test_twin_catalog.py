"""The PromQL catalog: one query per concept per dialect, names from the dialect."""

from __future__ import annotations

import pytest

from backend.errors import BadInput
from backend.metrics import catalog


@pytest.mark.parametrize("name", sorted(catalog.CATALOG))
@pytest.mark.parametrize("dialect", ["strimzi", "confluent"])
def test_every_concept_renders_in_both_dialects(name, dialect):
    q = catalog.promql(name, dialect, window="2m", by="instance")
    assert "{" not in q.replace("{topic", "").replace('{__name__', "")
    assert ("instance" in q) == ("{by}" in catalog.CATALOG[name].template)


def test_dialect_specific_names():
    assert catalog.promql("bytes_in_per_broker", "strimzi") == (
        'sum by (broker) (rate(kafka_server_brokertopicmetrics_bytesin_total{topic=""}[1m]))')
    assert catalog.promql("bytes_in_per_broker", "confluent") == (
        'sum by (broker) (rate(kafka_server_brokertopicmetrics_bytesinpersec{topic=""}[1m]))')
    assert catalog.promql("replica_lag_sum_per_broker", "confluent") == (
        'sum by (broker) ({__name__=~"kafka_server_fetcherlagmetrics_consumerlag_clientid_.+"})')


def test_unknown_names_are_bad_input():
    with pytest.raises(BadInput):
        catalog.promql("nope")
    with pytest.raises(BadInput):
        catalog.promql("partitions_per_broker", "cloudera")
