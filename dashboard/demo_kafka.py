"""`railyard demo --kafka`: the demo's live cluster is Apache Kafka instead of the twin.

Three KRaft brokers in racks r0, r1, r2 on 127.0.0.1 (backend/localkafka, a fresh cluster
each run under the demo's home), three topics of six partitions at replication factor 2
holding DEMO_BYTES of real data each, and a producer writing PRODUCER_RATE bytes/s over
them, so a replication throttle has something to hold back, and a consumer group
(READERS) reading them. The dashboard reads it through the Kafka gateway (`gateway: {type:
kafka}`), and one plan waits for the demo approver: moving broker 3's replicas of those
topics to the other two brokers, throttled.

The producer and the group act as the application a shrink migration switches: once a
migration in the demo's plan store has created its new topic (its step 1), the producer
writes that topic's share to the new topic instead of the old one, and the group, having
read the old one to its end, reads the new one; so the migration's steps 2 (no writes to
the old topic) and 3 (no group behind on it) are confirmed by the cluster, as where an
operator switched the application.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from backend.gateways.config import GatewayConfig, parse_kafka
from backend.localkafka.cluster import LocalKafka
from backend.localkafka.workload import SteadyConsumer, SteadyProducer, fill
from backend.store.executions import MIGRATION, ExecutionRecords
from backend.store.store import Store
from dashboard.config import ClusterConfig, PrometheusSettings

TOPICS = {"orders": 6, "payments": 6, "clicks": 6}  # name -> partitions, RF 2
DEMO_BYTES = 30_000_000  # per topic, written at start
PRODUCER_RATE = 200_000  # bytes/s, spread over every partition
DEMO_THROTTLE = 2_000_000  # bytes/s: broker 3's ~60 MB of replicas move in about 30 s
DRAINED = 3
CLUSTER = "kafka"  # the demo's name for its cluster
READERS = "demo-readers"  # the demo's consumer group
MOVE_LINE = ("demo: the producer of '{old}' moved to '{new}', as the application a "
             "migration's step 2 switches")
LEFT_LINE = ("demo: consumer group '{group}' read '{topic}' to its end and reads the new "
             "topic, as the application a migration's step 3 drains")


def migration_moves(store: Store, cluster: str = CLUSTER) -> dict[str, str]:
    """{old topic: new topic} of the shrink migrations on ``cluster`` in ``store`` that
    have created their new topic (step 1 done), the later one of a topic winning. A
    migration that ended keeps its move: the application stays switched (completed, its
    old topic is gone; cancelled, its new topic stays)."""
    records = ExecutionRecords(store)
    moves: dict[str, str] = {}
    for ex in records.on_cluster(cluster, since=0.0):  # oldest first
        if records.mode(ex.plan_id) != MIGRATION:
            continue
        steps = records.batches(ex.plan_id)
        if not steps or steps[0]["state"] != "done":
            continue
        shrink = records.content(ex.plan_id)["shrink"]
        moves[str(shrink["topic"])] = str(shrink["migration"]["new_topic"])
    return moves


class KafkaDemo:
    """The demo's Apache Kafka, its data and its producer, under ``home``. ``cluster``: a
    running cluster to use instead of starting one (the tests' session cluster)."""

    def __init__(self, home: Path, cluster: LocalKafka | None = None,
                 topic_bytes: int = DEMO_BYTES, producer_rate: float = PRODUCER_RATE) -> None:
        self.home, self.topic_bytes, self.producer_rate = home, topic_bytes, producer_rate
        self.cluster, self.owned = cluster, cluster is None
        self.producer: SteadyProducer | None = None
        self.readers: SteadyConsumer | None = None
        self.store: Store | None = None  # the plan store whose migrations the workload follows

    def follow_migrations(self, store: Store) -> None:
        """Have the producer and the group follow the shrink migrations of ``store`` (the
        demo's plan store, closed at ``stop``)."""
        self.store = store

    def moves(self) -> dict[str, str]:
        """The producer's moves: those of the plan store's migrations, none before it has
        one."""
        return {} if self.store is None else migration_moves(self.store)

    def start(self, say) -> dict[str, str]:
        """Start the brokers, fill the topics, start the producer and the group; {broker:
        exporter}. They follow no migration until ``follow_migrations``."""
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
            f"a producer writes {self.producer_rate / 1000:g} kB/s, consumer group "
            f"'{READERS}' reads them")
        bootstrap = self.cluster.bootstrap_servers
        self.producer = SteadyProducer(bootstrap, TOPICS, self.producer_rate,
                                       moves=self.moves, move_line=MOVE_LINE).start()
        producer = self.producer
        self.readers = SteadyConsumer(bootstrap, list(TOPICS), READERS,
                                      moves=lambda: producer.moved,
                                      left_line=LEFT_LINE).start()
        return {str(g["labels"]["broker"]): g["targets"][0] for g in self.cluster.targets()}

    def gateway_config(self) -> GatewayConfig:
        conn = parse_kafka({"bootstrap_servers": self.cluster.bootstrap_servers},
                           lambda key: f"demo kafka: {key}")
        return GatewayConfig("kafka", kafka=conn)

    def gateway(self):
        from backend.gateways.kafka import KafkaGateway
        return KafkaGateway(self.gateway_config().kafka, CLUSTER)

    def cluster_config(self, prometheus_url: str) -> ClusterConfig:
        return ClusterConfig(CLUSTER, self.gateway_config(), PrometheusSettings(prometheus_url))

    def propose_plan(self, store, actor):
        """Broker 3's replicas of the demo topics moved to the broker of the other two that
        does not hold the partition yet (racks stay distinct), throttled; None when a plan
        is proposed already."""
        from backend.services import plan_preview, plans

        if plans.list_plans(store, cluster=CLUSTER, state="proposed", limit=1):
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
        return plans.propose(store, actor, cluster=CLUSTER, kind="reassignment",
                             content=draft.content, preview=draft.preview, snapshot=snap,
                             title=f"Move broker {DRAINED}'s replicas of the demo topics "
                                   "(demo)", throttle=DEMO_THROTTLE)

    def stop(self, say) -> None:
        if self.producer is not None:
            self.producer.stop()
            say(f"stopped the producer ({self.producer.sent // 1_000_000} MB written)")
        if self.readers is not None:
            self.readers.stop()
            say(f"stopped consumer group '{READERS}' ({self.readers.records:,} records read)")
        if self.store is not None:
            self.store.close()
            self.store = None
        if self.cluster is not None and self.owned:
            self.cluster.stop()
            say("stopped the Kafka brokers (their data stays under "
                f"{self.home} until the next demo)")
