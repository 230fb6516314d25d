"""`railyard demo --kafka`: the demo's live cluster is Apache Kafka instead of the twin.

Three KRaft brokers in racks r0, r1, r2 on 127.0.0.1 (backend/localkafka, a fresh cluster
each run under the demo's home), three topics of six partitions at replication factor 2
holding DEMO_BYTES of real data each, and a producer writing PRODUCER_RATE bytes/s over
them, so a replication throttle has something to hold back. The dashboard reads it through
the Kafka gateway (`gateway: {type: kafka}`), and one plan waits for the demo approver:
moving broker 3's replicas of those topics to the other two brokers, throttled.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from backend.gateways.config import GatewayConfig, parse_kafka
from backend.localkafka.cluster import LocalKafka
from backend.localkafka.workload import SteadyProducer, fill
from dashboard.config import ClusterConfig, PrometheusSettings

TOPICS = {"orders": 6, "payments": 6, "clicks": 6}  # name -> partitions, RF 2
DEMO_BYTES = 30_000_000  # per topic, written at start
PRODUCER_RATE = 200_000  # bytes/s, spread over every partition
DEMO_THROTTLE = 2_000_000  # bytes/s: broker 3's ~60 MB of replicas move in about 30 s
DRAINED = 3


class KafkaDemo:
    """The demo's Apache Kafka, its data and its producer, under ``home``. ``cluster``: a
    running cluster to use instead of starting one (the tests' session cluster)."""

    def __init__(self, home: Path, cluster: LocalKafka | None = None,
                 topic_bytes: int = DEMO_BYTES, producer_rate: float = PRODUCER_RATE) -> None:
        self.home, self.topic_bytes, self.producer_rate = home, topic_bytes, producer_rate
        self.cluster, self.owned = cluster, cluster is None
        self.producer: SteadyProducer | None = None

    def start(self, say) -> dict[str, str]:
        """Start the brokers, fill the topics, start the producer; {broker: exporter}."""
        if self.owned:
            shutil.rmtree(self.home, ignore_errors=True)  # the demo's own folder
            self.cluster = LocalKafka(self.home, brokers=3, racks=3)
            self.cluster.start()
        doc = self.cluster.describe()
        say(f"kafka: Apache Kafka {doc['kafka_version']}, brokers "
            + ", ".join(f"{b['id']} (rack {b['rack']}) on 127.0.0.1:{b['port']}"
                        for b in doc["brokers"]) + f"; logs under {self.cluster.root}")
        gateway = self.gateway()
        try:
            results = gateway.create_topics([{"name": t, "partitions": n, "rf": 2}
                                             for t, n in TOPICS.items()])
        finally:
            gateway.close()
        refused = [r for r in results if r["error"]]
        if refused:
            raise RuntimeError(f"creating the demo topics: {refused[0]}")
        for i, (topic, parts) in enumerate(TOPICS.items()):
            fill(self.cluster.bootstrap_servers, topic, parts, self.topic_bytes, seed=i)
        say(f"kafka: topics {', '.join(TOPICS)} ({self.topic_bytes / 1e6:g} MB each, RF 2); "
            f"a producer writes {self.producer_rate / 1000:g} kB/s")
        self.producer = SteadyProducer(self.cluster.bootstrap_servers, TOPICS,
                                       self.producer_rate).start()
        return {str(g["labels"]["broker"]): g["targets"][0] for g in self.cluster.targets()}

    def gateway_config(self) -> GatewayConfig:
        conn = parse_kafka({"bootstrap_servers": self.cluster.bootstrap_servers},
                           lambda key: f"demo kafka: {key}")
        return GatewayConfig("kafka", kafka=conn)

    def gateway(self):
        from backend.gateways.kafka import KafkaGateway
        return KafkaGateway(self.gateway_config().kafka, "kafka")

    def cluster_config(self, prometheus_url: str) -> ClusterConfig:
        return ClusterConfig("kafka", self.gateway_config(), PrometheusSettings(prometheus_url))

    def propose_plan(self, store, actor):
        """Broker 3's replicas of the demo topics moved to the broker of the other two that
        does not hold the partition yet (racks stay distinct), throttled; None when a plan
        is proposed already."""
        from backend.services import plan_preview, plans

        if plans.list_plans(store, cluster="kafka", state="proposed", limit=1):
            return None
        gateway = self.gateway()
        try:
            snap = gateway.assignment()
            topics = gateway.describe_topics(list(TOPICS))
        finally:
            gateway.close()
        others = {b["id"] for b in self.cluster.describe()["brokers"]} - {DRAINED}
        moves = [{"topic": t["name"], "partition": p["partition"],
                  "replicas": [min(others - set(p["replicas"])) if b == DRAINED else b
                               for b in p["replicas"]]}
                 for t in topics for p in t["partitions"] if DRAINED in p["replicas"]]
        draft = plan_preview.from_kafka_json(snap, {"version": 1, "partitions": moves},
                                             throttle=DEMO_THROTTLE)
        return plans.propose(store, actor, cluster="kafka", kind="reassignment",
                             content=draft.content, preview=draft.preview, snapshot=snap,
                             title=f"Move broker {DRAINED}'s replicas of the demo topics "
                                   "(demo)", throttle=DEMO_THROTTLE)

    def stop(self, say) -> None:
        if self.producer is not None:
            self.producer.stop()
            say(f"stopped the producer ({self.producer.sent // 1_000_000} MB written)")
        if self.cluster is not None and self.owned:
            self.cluster.stop()
            say("stopped the Kafka brokers (their data stays under "
                f"{self.home} until the next demo)")
