"""`railyard demo --kafka`'s Kafka part on the session's cluster: the demo topics hold real
data at replication factor 2 on distinct racks, the producer writes, and the plan waiting
for the approver moves exactly broker 3's replicas of them to the broker of the other two
that lacks the partition, keeping racks distinct, throttled."""

from __future__ import annotations

import time

import pytest

from backend.services import plans
from backend.store.store import open_store
from backend.store.workflow import Actor
from dashboard.demo_kafka import DEMO_THROTTLE, DRAINED, READERS, TOPICS, KafkaDemo
from tests.kafka_moves import delete_group

pytestmark = pytest.mark.integration


def test_the_kafka_demo_fills_its_topics_and_proposes_a_drain_of_broker_3(
        kafka_cluster, kafka_gateway, tmp_path):
    said: list[str] = []
    demo = KafkaDemo(tmp_path / "kafka", cluster=kafka_cluster, topic_bytes=600_000,
                     producer_rate=100_000)
    store = open_store(f"sqlite:///{tmp_path}/railyard.db")
    try:
        targets = demo.start(said.append)
        assert targets == {str(b.id): f"127.0.0.1:{b.exporter_port}"
                           for b in kafka_cluster.brokers}
        racks = {b.id: b.rack for b in kafka_cluster.brokers}
        before = {t["name"]: t["partitions"] for t in kafka_gateway.describe_topics(list(TOPICS))}
        assert {t: len(ps) for t, ps in before.items()} == TOPICS
        for ps in before.values():
            assert all(len(p["replicas"]) == 2 and
                       len({racks[b] for b in p["replicas"]}) == 2 for p in ps)
        sizes = kafka_gateway.assignment()
        rows = [i for i, t in enumerate(sizes.part_topic.tolist())
                if str(sizes.topic_names[t]) in TOPICS]
        assert sum(int(sizes.part_size[i]) for i in rows) >= 3 * 600_000
        deadline = time.monotonic() + 30
        while demo.producer.sent < 100_000 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert demo.producer.sent >= 100_000 and demo.producer.errors == 0

        plan = demo.propose_plan(store, Actor("olivia", "operator", "127.0.0.1"))
        assert plan.throttle == DEMO_THROTTLE and plan.state == "proposed"
        moves = [{k: m[k] for k in ("topic", "partition", "replicas")}
                 for m in plans.get(store, plan.id).content["partitions"]]
        expected = [{"topic": t, "partition": p["partition"],
                     "replicas": [({1, 2} - set(p["replicas"])).pop() if b == DRAINED else b
                                  for b in p["replicas"]]}
                    for t in sorted(TOPICS) for p in before[t] if DRAINED in p["replicas"]]
        assert sorted(moves, key=lambda m: (m["topic"], m["partition"])) == expected
        assert all(len({racks[b] for b in m["replicas"]}) == 2 for m in moves)
        assert demo.propose_plan(store, Actor("olivia", "operator", "127.0.0.1")) is None
    finally:
        demo.stop(said.append)
        store.close()
        kafka_gateway.delete_topics(list(TOPICS))
        delete_group(kafka_cluster.bootstrap_servers, READERS)  # the demo's own group
    assert any("stopped the producer" in line for line in said)
    assert kafka_cluster.live_brokers() == {1, 2, 3}  # the session's cluster is not stopped
