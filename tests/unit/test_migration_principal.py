"""The principal a shrink migration's CreateTopics is charged to, and so the KIP-599
forecast it audits: the gateway's own, as Kafka's DefaultQuotaCallback.quotaMetricTags
sees the connection (the SASL user, ANONYMOUS without authentication, the configured
client id), not a fixed ("", "railyard")."""

from __future__ import annotations

from backend.executor.migration import quota_forecast
from backend.gateways.config import KafkaConnection, SaslSettings, Secret, TlsSettings
from backend.gateways.kafka import KafkaGateway
from backend.twin.cluster import TwinCluster, TwinSettings
from backend.twin.gateway import TwinGateway
from tests.unit.test_executor import small_cluster

SERVERS = ("127.0.0.1:9092",)


def test_kafkas_principal_is_the_connections():
    scram = SaslSettings("SCRAM-SHA-512", "railyard-ops", Secret(env="PW"))
    assert KafkaGateway(KafkaConnection(SERVERS)).principal() == ("ANONYMOUS", "railyard")
    assert KafkaGateway(KafkaConnection(SERVERS, client_id="ry-prod")).principal() == (
        "ANONYMOUS", "ry-prod")
    assert KafkaGateway(KafkaConnection(SERVERS, "SASL_SSL", TlsSettings(), scram,
                                        "ry")).principal() == ("railyard-ops", "ry")
    mutual = TlsSettings(cert_file="/etc/railyard/client.pem", key_file="/etc/k.pem")
    assert KafkaGateway(KafkaConnection(SERVERS, "SSL", mutual)).principal() == (
        None, "railyard")


def test_the_twin_names_railyard_as_kafka_without_authentication_does():
    gw = TwinGateway(TwinCluster(small_cluster(), TwinSettings()))
    assert gw.principal() == ("ANONYMOUS", "railyard")


def test_a_default_user_quota_applies_to_anonymous_with_kip_599s_numbers():
    """KIP-599: burst = rate x 11 samples x 1 s; 30 partitions from a full bucket of 22
    leave -8 tokens, throttled 8 / 2 x 1000 = 4000 ms. With the user left out (the old
    fixed principal) the user-default quota was missed and the forecast said none."""
    quotas = [{"user": "<default>", "client_id": None, "controller_mutation_rate": 2.0}]
    f = quota_forecast(quotas, 30, "ANONYMOUS", "railyard")
    assert f == {"quota": "/config/users/<default>", "rate": 2.0, "burst": 22.0, "cost": 30,
                 "tokens_after": -8.0, "throttle_ms": 4000,
                 "charged_to": {"user": "ANONYMOUS", "client_id": "railyard"}}
    assert quota_forecast(quotas, 30, "", "railyard")["quota"] is None


def test_a_certificates_user_leaves_the_forecast_unknown_only_under_a_user_quota():
    """Client-id quotas alone put every user in one bucket per client id
    (quotaMetricTags), so the certificate's user does not matter to them."""
    by_client = [{"user": None, "client_id": "railyard", "controller_mutation_rate": 2.0}]
    f = quota_forecast(by_client, 3, None, "railyard")
    assert (f["quota"], f["tokens_after"]) == ("/config/clients/railyard", 19.0)
    by_user = [*by_client, {"user": "ops", "client_id": None, "controller_mutation_rate": 1.0}]
    f = quota_forecast(by_user, 3, None, "railyard")
    assert f["quota"] is None and f["charged_to"] == {"user": None, "client_id": "railyard"}
    assert "ssl.principal.mapping.rules" in f["unknown"]
