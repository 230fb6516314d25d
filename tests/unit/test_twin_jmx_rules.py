"""deploy/jmx-exporter/ rules give Kafka's MBeans exactly the names and labels the twin
exports (dialect "strimzi"), for every family the twin exports.

The rules are applied the way the JMX exporter applies them: each bean attribute is
written ``domain<key=value, ...><>attribute``, rules are tried in order, the first whose
pattern matches (unanchored) wins, ``$n`` are its groups, names are lowercased
(lowercaseOutputName) and made safe (runs of illegal characters become one '_')."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from backend.metrics.dialects import STRIMZI
from backend.twin.cluster import TwinCluster
from backend.twin.exporter import broker_families
from backend.twin.gateway import TwinGateway
from backend.twin.generate import generate_snapshot
from backend.twin.scenario import move_plan, throttled_reassign

RULES = Path(__file__).resolve().parents[2] / "deploy" / "jmx-exporter"

# Kafka's MBean (as the JMX exporter writes it) -> the series the twin exports for it.
KAFKA_BEANS = [
    ("kafka.server<type=ReplicaManager, name=PartitionCount><>Value",
     STRIMZI.partition_count, {}),
    ("kafka.server<type=ReplicaManager, name=LeaderCount><>Value", STRIMZI.leader_count, {}),
    ("kafka.server<type=ReplicaManager, name=UnderReplicatedPartitions><>Value",
     STRIMZI.under_replicated, {}),
    ("kafka.server<type=ReplicaManager, name=UnderMinIsrPartitionCount><>Value",
     STRIMZI.under_min_isr, {}),
    ("kafka.server<type=ReplicaManager, name=ReassigningPartitions><>Value",
     STRIMZI.reassigning, {}),
    ("kafka.controller<type=KafkaController, name=ActiveControllerCount><>Value",
     STRIMZI.active_controller, {}),
    ("kafka.controller<type=KafkaController, name=OfflinePartitionsCount><>Value",
     STRIMZI.offline_partitions, {}),
    ("kafka.controller<type=KafkaController, name=GlobalPartitionCount><>Value",
     STRIMZI.global_partitions, {}),
    ("kafka.server<type=BrokerTopicMetrics, name=BytesInPerSec, topic=orders><>Count",
     STRIMZI.bytes_in, {"topic": "orders"}),
    ("kafka.server<type=BrokerTopicMetrics, name=BytesInPerSec><>Count", STRIMZI.bytes_in, {}),
    ("kafka.server<type=BrokerTopicMetrics, name=BytesOutPerSec, topic=orders><>Count",
     STRIMZI.bytes_out, {"topic": "orders"}),
    ("kafka.server<type=BrokerTopicMetrics, name=BytesOutPerSec><>Count", STRIMZI.bytes_out, {}),
    ("kafka.server<type=BrokerTopicMetrics, name=ReplicationBytesInPerSec><>Count",
     STRIMZI.replication_bytes_in, {}),
    ("kafka.server<type=BrokerTopicMetrics, name=ReplicationBytesOutPerSec><>Count",
     STRIMZI.replication_bytes_out, {}),
    ("kafka.server<type=BrokerTopicMetrics, name=ReassignmentBytesInPerSec><>Count",
     STRIMZI.reassignment_bytes_in, {}),
    ("kafka.server<type=BrokerTopicMetrics, name=ReassignmentBytesOutPerSec><>Count",
     STRIMZI.reassignment_bytes_out, {}),
    ("kafka.log<type=Log, name=Size, topic=orders, partition=7><>Value", STRIMZI.log_size,
     {"topic": "orders", "partition": "7"}),
    ("kafka.server<type=FetcherLagMetrics, name=ConsumerLag, clientId=ReplicaFetcherThread-0-3,"
     " topic=orders, partition=7><>Value", STRIMZI.consumer_lag,
     {"clientId": "ReplicaFetcherThread-0-3", "topic": "orders", "partition": "7"}),
    ("kafka.server<type=ReplicaFetcherManager, name=MaxLag, clientId=Replica><>Value",
     STRIMZI.max_lag, {"clientId": "Replica"}),
    ("kafka.server<type=LeaderReplication><>byte-rate", STRIMZI.leader_byte_rate, {}),
    ("kafka.server<type=FollowerReplication><>byte-rate", STRIMZI.follower_byte_rate, {}),
    ("kafka.server<type=ControllerMutation, user=tenant, client-id=app><>tokens",
     STRIMZI.mutation_tokens, {"user": "tenant", "client_id": "app"}),
    ("kafka.server<type=ControllerMutation, user=tenant><>mutation-rate",
     STRIMZI.mutation_rate, {"user": "tenant"}),
    ("kafka.server<type=ControllerMutation, client-id=app><>throttle-time",
     STRIMZI.mutation_throttle_time, {"client_id": "app"}),
    # KRaft: the throttle a forwarded CreateTopics got, on the broker that forwarded it
    ("kafka.server<type=Request, user=tenant, client-id=app><>throttle-time",
     STRIMZI.request_throttle_time, {"user": "tenant", "client_id": "app"}),
    ("kafka.server<type=Request, client-id=\"app:1\"><>throttle-time",
     STRIMZI.request_throttle_time, {"client_id": '"app:1"'}),
    # Kafka's tags as the MBean holds them (backend.metrics.tags decodes them)
    ("kafka.server<type=ControllerMutation, user=CN%3Da%2CO%3Db><>tokens",
     STRIMZI.mutation_tokens, {"user": "CN%3Da%2CO%3Db"}),
]


def safe_name(name: str) -> str:
    out = re.sub(r"[^a-zA-Z0-9:_]+", "_", name)
    return re.sub(r"_+", "_", out)


def apply_rules(config: dict, bean: str) -> tuple[str, dict] | None:
    for rule in config["rules"]:
        m = re.match(f"^.*(?:{rule['pattern']}).*$", bean)
        if m is None:
            continue

        def sub(template: str, m=m) -> str:
            return re.sub(r"\$(\d+)", lambda g: m.group(int(g.group(1))) or "", template)
        name = safe_name(sub(rule["name"]))
        if config.get("lowercaseOutputName"):
            name = name.lower()
        labels = {sub(k): sub(v) for k, v in (rule.get("labels") or {}).items()}
        return name, labels
    return None


@pytest.fixture(scope="module")
def broker_rules() -> dict:
    return yaml.safe_load((RULES / "kafka-broker.yaml").read_text())


@pytest.mark.parametrize("bean, name, labels", KAFKA_BEANS, ids=[b[0][:60] for b in KAFKA_BEANS])
def test_rule_gives_kafkas_bean_the_twins_name(broker_rules, bean, name, labels):
    assert apply_rules(broker_rules, bean) == (name, labels)


def test_every_family_the_twin_exports_is_covered():
    twin = TwinCluster(generate_snapshot(4, 2, 4, 24, 3, seed=1))
    twin.set_mutation_quota("tenant", "app", 1.0)
    twin.create_topics([{"name": "n", "partitions": 1, "rf": 3}], user="tenant", client_id="app")
    throttled_reassign(TwinGateway(twin), move_plan(twin.snap, 1, 4, 2), 1e4)
    twin.advance(2)
    exported = {f.name for b in range(4) for f in broker_families(twin, b, STRIMZI)}
    expected = {name for _, name, _ in KAFKA_BEANS}
    if not (twin.throttled_rate["follower"] > 0).any():  # Kafka makes the sensor on the
        expected.discard(STRIMZI.follower_byte_rate)  # first throttled bytes only
    assert exported == expected


def test_guard_rail_rules_alone_match_the_guard_rail_beans():
    rules = yaml.safe_load((RULES / "guard-rails.yaml").read_text())
    guard = [b for b in KAFKA_BEANS if "Replication><>" in b[0] or "ControllerMutation" in b[0]
             or "type=Request" in b[0]]
    for bean, name, labels in guard:
        assert apply_rules(rules, bean) == (name, labels)
    assert apply_rules(rules, KAFKA_BEANS[0][0]) is None  # they leave other beans alone
