"""Issue 24 item 8: every series the metrics catalog queries (strimzi dialect) returns data
from Apache Kafka's brokers through the shipped JMX exporter rules, concept by concept, with
the labels Railyard reads.

Some series exist only under conditions, which the module creates and then undoes: a
reassignment in flight under a KIP-73 replication throttle (ReassigningPartitions, the
LeaderReplication/FollowerReplication byte-rate, which Kafka creates on a broker's first
throttled bytes) and a KIP-599 controller_mutation_rate quota a client exceeds
(ControllerMutation tokens, mutation-rate; the throttle the forwarding broker told it).
"""

from __future__ import annotations

import math
import time

import pytest
from kafka import KafkaAdminClient, KafkaProducer
from kafka.protocol.admin import CreateTopicsRequest

from backend.metrics import catalog
from backend.metrics.client import MetricsClient
from tests.integration.kafka_prometheus import SCRAPE_SECONDS, kafka_prometheus, poll

pytestmark = pytest.mark.integration

BROKERS = {"1", "2", "3"}
DATA, MOVING = "mx-data", "mx-moving"
QUOTA_CLIENT = "mx-metrics:app"  # ':' is outside [\w-%. \t]: Kafka quotes it in the MBean
QUOTA_TOPICS = [f"mx-quota-{i}" for i in range(3)]
THROTTLE = 5_000  # bytes/s
BROKER_RATES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
TOPIC_LISTS = ("leader.replication.throttled.replicas",
               "follower.replication.throttled.replicas")

# Every catalog concept, listed by hand: a concept added to the catalog without a case here
# fails test_every_catalog_concept_is_listed. Value: the check its answer must pass.
ALL_BROKERS = "all brokers"
CONCEPTS: dict[str, object] = {
    # first: the move ends once its bytes are copied, and a follower fetches up to 1 MB
    # whenever the throttle's 11 s window allows it, so "throttled" still means a minute
    "reassigning_per_broker": "moving leader",
    "reassigning_peak": "positive",
    "reassigning_peak_per_broker": "moving leader",
    "leader_throttled_rate": "moving source",
    "follower_throttled_rate": "moving destination",
    "replica_bytes_behind_in": "moving replicas",
    # first: a throttle time is an average over Kafka's quota window (11 x 1 s), NaN after it
    "mutation_throttle_time": "quota client told to wait",
    "mutation_throttle_time_high": "quota client told to wait",
    "mutation_tokens_low": "quota client below zero",
    "mutation_tokens": "quota client",
    "mutation_rate": "quota client",
    "partitions_per_broker": ALL_BROKERS,
    "leaders_per_broker": ALL_BROKERS,
    "cluster_partitions": "one controller's count",
    "cluster_replicas": "positive",
    "partitions_per_broker_peak": ALL_BROKERS,
    "cluster_replicas_peak": "positive",
    "partitions_per_broker_in_14d": ALL_BROKERS,
    "cluster_replicas_in_14d": "any",
    "brokers_up": ALL_BROKERS,
    "under_replicated_per_broker": ALL_BROKERS,
    "under_min_isr_per_broker": ALL_BROKERS,
    "newest_sample": "recent",
    "active_controllers": "one",
    "offline_partitions": "zero",
    "offline_partitions_peak": "zero",
    "under_replicated_peak": "any",
    "under_min_isr_peak": "any",
    "under_replicated_peak_per_broker": ALL_BROKERS,
    "under_min_isr_peak_per_broker": ALL_BROKERS,
    "bytes_in_per_broker": ALL_BROKERS,
    "bytes_in_per_topic": "data topic",
    "bytes_in_of_topics": "the named topic",  # asked for MOVING alone, as _ask names it
    "bytes_out_per_broker": ALL_BROKERS,
    "replication_bytes_in_per_broker": ALL_BROKERS,
    "replication_bytes_out_per_broker": ALL_BROKERS,
    "reassignment_bytes_in_per_broker": ALL_BROKERS,
    "reassignment_bytes_out_per_broker": ALL_BROKERS,
    "replica_lag_sum_per_broker": ALL_BROKERS,
    "max_lag_growth_per_broker": ALL_BROKERS,
    "max_lag_per_broker": ALL_BROKERS,
    "log_bytes_per_broker": ALL_BROKERS,
    "replica_bytes_behind": "any",
}
# the window each concept is asked over ("range:resolution" for newest_sample's subquery)
WINDOWS = {"newest_sample": "1m:1s", "mutation_tokens_low": "5m",
           "mutation_throttle_time_high": "5m", "max_lag_growth_per_broker": "30s"}
# History concepts sample a subquery every 5 m (1 m for the lag growth), so over the minute of
# history this Prometheus holds they have no instant yet: here they run at the scrape's
# resolution, the same series and labels.
SUBQUERY_RESOLUTION = {":5m]": f":{SCRAPE_SECONDS:g}s]", ":1m]": f":{SCRAPE_SECONDS:g}s]"}


def test_every_catalog_concept_is_listed():
    assert set(CONCEPTS) == set(catalog.CATALOG)


@pytest.fixture(scope="module")
def prometheus(kafka_cluster, tmp_path_factory):
    yield from kafka_prometheus(kafka_cluster, tmp_path_factory.mktemp("prom-metrics"))


def _partitions(gw, topic: str) -> list[dict]:
    return gw.describe_topics([topic])[0]["partitions"]


@pytest.fixture(scope="module")
def conditions(kafka_cluster, kafka_gateway, prometheus):
    """Data in two topics, one partition moving under a replication throttle, a client over
    its controller mutation quota; every change undone afterwards."""
    gw = kafka_gateway
    gw.create_topics([{"name": DATA, "partitions": 3, "rf": 3},
                      {"name": MOVING, "assignment": [[1]]}])
    moved = False
    admin = None
    try:
        producer = KafkaProducer(bootstrap_servers=kafka_cluster.bootstrap_servers,
                                 acks=1, linger_ms=20)
        for _ in range(3000):
            producer.send(MOVING, b"m" * 1000)
            producer.send(DATA, b"d" * 100)
        producer.flush()
        producer.close()
        # kafka-reassign-partitions --execute --throttle: rates on the source (leader) and
        # destination (follower), the partition named in both topic lists
        gw.alter_configs("broker", "1", {BROKER_RATES[0]: str(THROTTLE)})
        gw.alter_configs("broker", "2", {BROKER_RATES[1]: str(THROTTLE)})
        gw.alter_configs("topic", MOVING, {TOPIC_LISTS[0]: "0:1", TOPIC_LISTS[1]: "0:2"})
        gw.alter_reassignments({"version": 1, "partitions": [
            {"topic": MOVING, "partition": 0, "replicas": [1, 2]}]})
        moved = True
        # KIP-599: 1 partition/s, burst 11 (11 windows of 1 s): topics of 10 and 20
        # partitions are admitted (tokens 11 -> 1 -> -19: below zero for 19 s, which 2 s
        # scrapes see), the next request is rejected with a throttle
        gw.alter_client_quota(None, QUOTA_CLIENT, 1.0)
        poll("the quota to be listed", gw.describe_client_quotas,
             lambda qs: any(q["client_id"] == QUOTA_CLIENT for q in qs), 20)
        time.sleep(0.5)  # the controller applies it from the same metadata
        admin = KafkaAdminClient(bootstrap_servers=kafka_cluster.bootstrap_servers,
                                 client_id=QUOTA_CLIENT)
        T = CreateTopicsRequest.CreatableTopic
        for names, sizes in ((QUOTA_TOPICS[:2], (10, 20)), (QUOTA_TOPICS[2:3], (5,))):
            request = CreateTopicsRequest(
                topics=[T(name=n, num_partitions=p, replication_factor=1, assignments=[],
                          configs=[]) for n, p in zip(names, sizes, strict=True)],
                timeout_ms=10_000, validate_only=False)
            admin._manager.run(admin._send_request_to_controller, request, lambda r: (), False)
        yield
    finally:
        if admin is not None:
            admin.close()
        if moved and any(r["topic"] == MOVING for r in gw.list_reassignments()):
            gw.cancel_reassignments([(MOVING, 0)])
        for b, key in (("1", BROKER_RATES[0]), ("2", BROKER_RATES[1])):
            gw.alter_configs("broker", b, delete=[key])
        gw.alter_client_quota(None, QUOTA_CLIENT, None)
        existing = {t["name"] for t in gw.describe_topics()}
        gw.delete_topics([t for t in (DATA, MOVING, *QUOTA_TOPICS) if t in existing])


def _ask(client: MetricsClient, concept: str):
    """The concept's answer now, as the dashboard's client frames it."""
    window = WINDOWS.get(concept, "1m")
    if concept == "mutation_throttle_time":  # an average over Kafka's quota window: read
        now = time.time()  # its history, not only this instant, so a slow test still sees it
        return client.range(concept, now - 300, now, step="1s")
    query = catalog.promql(concept, "strimzi", window=window, topics=MOVING)
    fine = query
    for coarse, res in SUBQUERY_RESOLUTION.items():
        fine = fine.replace(coarse, res)
    if fine == query:
        return client.instant(concept, window=window, topics=MOVING)
    return client._frame(concept, fine, client.prom.custom_query(fine), False)


def _check(kind: object, frame, gw) -> bool:
    brokers = set(frame["broker"]) if "broker" in frame else set()
    values = frame["value"].tolist()
    by_broker = dict(zip(frame.get("broker", []), values, strict=False))
    principals = dict(zip(zip(frame.get("user", []), frame.get("client_id", []),
                              strict=False), values, strict=False))
    quota = principals.get(("", QUOTA_CLIENT))
    match kind:
        case "all brokers":
            return brokers == BROKERS and all(not math.isnan(v) for v in values)
        case "positive":
            return values[0] > 0
        case "any":
            return len(values) == 1 and not math.isnan(values[0])
        case "one":
            return values == [1]
        case "zero":
            return values == [0]
        case "recent":
            return time.time() - 10 < values[0] <= time.time() + 1
        case "one controller's count":
            total = sum(len(t["partitions"]) for t in gw.describe_topics())
            return values == [total]
        case "data topic":
            return DATA in set(frame["topic"])
        case "the named topic":  # its series only, whatever it writes now (MOVING: none)
            return set(frame["topic"]) == {MOVING}
        case "moving leader":
            return brokers == BROKERS and by_broker["1"] >= 1
        case "moving source":
            return by_broker.get("1", 0) > 0
        case "moving destination":
            return by_broker.get("2", 0) > 0
        case "moving replicas":
            rows = set(zip(frame["broker"], frame["topic"], frame["partition"], strict=True))
            return rows == {("1", MOVING, "0"), ("2", MOVING, "0")}
        case "quota client":
            return quota is not None and not math.isnan(quota)
        case "quota client below zero":
            return quota is not None and quota < 0
        case "quota client told to wait":
            return quota is not None and quota > 0
    raise AssertionError(f"unknown check {kind}")


@pytest.mark.parametrize("concept", list(CONCEPTS))
def test_concept_returns_data_from_apache_kafka(concept, conditions, prometheus, kafka_gateway):
    client = MetricsClient(prometheus.url, "strimzi", ttl=0)
    frame = poll(concept, lambda: _ask(client, concept),
                 lambda f: _check(CONCEPTS[concept], f, kafka_gateway))
    assert list(frame.columns) == [*catalog.label_columns(concept), "timestamp", "value"]


def test_each_kraft_controller_reports_the_whole_cluster(conditions, prometheus):
    """Three controllers each publish GlobalPartitionCount: the old sum was three times the
    cluster; the catalog reads one controller's (issue 24)."""
    client = MetricsClient(prometheus.url, "strimzi", ttl=0)
    per = poll("three controllers' counts", lambda: client.prom.custom_query(
        "kafka_controller_kafkacontroller_globalpartitioncount"), lambda r: len(r) == 3)
    counts = {float(s["value"][1]) for s in per}
    one = client.instant("cluster_partitions")["value"].item()
    assert counts == {one}
    summed = client.prom.custom_query("sum(kafka_controller_kafkacontroller_globalpartitioncount)")
    assert float(summed[0]["value"][1]) == 3 * one
