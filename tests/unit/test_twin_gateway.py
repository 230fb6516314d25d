"""The twin gateway implements the gateway interface with Kafka's Admin API shapes."""

from __future__ import annotations

import pytest

from backend.errors import BadInput
from backend.gateways.base import ClusterGateway
from backend.twin.cluster import TwinCluster, TwinSettings
from backend.twin.gateway import TwinGateway
from backend.twin.generate import generate_snapshot


@pytest.fixture
def gw() -> TwinGateway:
    return TwinGateway(TwinCluster(generate_snapshot(4, 2, 3, 12, 3, seed=1),
                                   TwinSettings(traffic_noise=0.0)))


def test_is_a_cluster_gateway(gw):
    assert isinstance(gw, ClusterGateway)


def test_describe_and_reassign_round_trip(gw):
    assert gw.describe_cluster()["controller"] == 1
    topic = gw.describe_topics()[0]
    p0 = topic["partitions"][0]
    assert p0["leader"] == p0["replicas"][0] and p0["isr"] == p0["replicas"]
    spare = next(b for b in (1, 2, 3, 4) if b not in p0["replicas"])
    target = [*p0["replicas"][:-1], spare]
    plan = {"version": 1, "partitions": [{"topic": topic["name"], "partition": 0,
                                          "replicas": target}]}
    assert gw.alter_reassignments(plan)["started"] == [f"{topic['name']}-0"]
    assert gw.list_reassignments()[0]["adding"] == [spare]
    gw.twin.advance(120)
    assert gw.list_reassignments() == []
    assert gw.describe_topics([topic["name"]])[0]["partitions"][0]["replicas"] == target


def test_configs_and_topics(gw):
    gw.alter_configs("broker", "<default>", {"max.broker.partitions": "12"})
    assert gw.describe_configs("broker", "<default>")["configs"] == {
        "max.broker.partitions": "12"}
    out = gw.create_topics([{"name": "new", "partitions": 6, "rf": 3}])
    assert out[0]["error"] == "POLICY_VIOLATION"
    with pytest.raises(BadInput):
        gw.describe_configs("cluster", "x")
    assert gw.delete_topics([gw.describe_topics()[0]["name"]])[0]["error"] is None


def test_client_quotas_set_and_removed_as_kafka_configs_would(gw):
    """alter_client_quota (AlterClientQuotas on Kafka) and describe_client_quotas agree:
    the entity as named, '<default>' for the default one, None = not part of it."""
    assert gw.alter_client_quota("tenant", "app", 2.5) == {
        "user": "tenant", "client_id": "app", "controller_mutation_rate": 2.5}
    gw.alter_client_quota("<default>", None, 10.0)
    assert gw.describe_client_quotas() == [
        {"user": "<default>", "client_id": None, "controller_mutation_rate": 10.0},
        {"user": "tenant", "client_id": "app", "controller_mutation_rate": 2.5}]
    gw.alter_client_quota("tenant", "app", None)
    assert [q["user"] for q in gw.describe_client_quotas()] == ["<default>"]
    with pytest.raises(BadInput, match="names a user, a client id"):
        gw.alter_client_quota(None, None, 1.0)
    with pytest.raises(BadInput, match="must be > 0"):
        gw.alter_client_quota("tenant", None, 0)
