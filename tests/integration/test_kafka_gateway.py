"""Railyard's Kafka gateway on Apache Kafka itself (the session's three KRaft brokers, ids
1, 2, 3 in racks r0, r1, r2), every call round-tripped and read back with an independent
client (kafka-python's KafkaAdminClient) or Kafka's own kafka-configs, in the style of
Kafka's AdminClient integration tests: exact answers, Kafka's own error names.

Kafka's metadata reaches the brokers a moment after the controller commits a write (KRaft),
so what another client reads is polled with a deadline (as Kafka's TestUtils.waitUntilTrue
does); what the gateway answers for its own write is asserted at once.

The cluster is shared with other tests: every topic made here starts with "gw-", and every
broker config, topic config and quota changed is put back (the executor tests check that
no throttle is left over)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import pytest
from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import ConfigResource
from kafka.protocol.metadata import MetadataRequest

from backend.errors import BadInput
from backend.gateways.base import ClusterGateway, GatewayError
from backend.twin.cluster import TwinCluster, TwinSettings
from backend.twin.gateway import TwinGateway
from tests.kafka_tools import kafka_configs, kafka_reassign

LEADER_RATE = "leader.replication.throttled.rate"  # KIP-73 broker configs
FOLLOWER_RATE = "follower.replication.throttled.rate"
LEADER_REPLICAS = "leader.replication.throttled.replicas"  # KIP-73 topic configs
FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"
THROTTLES = [LEADER_RATE, FOLLOWER_RATE]
# DescribeConfigsResponse config_source (KIP-226), as kafka-python names them
DYNAMIC_TOPIC, DYNAMIC_BROKER = "DYNAMIC_TOPIC_CONFIG", "DYNAMIC_BROKER_CONFIG"
DYNAMIC_DEFAULT_BROKER, STATIC_BROKER = "DYNAMIC_DEFAULT_BROKER_CONFIG", "STATIC_BROKER_CONFIG"
DEFAULT = "DEFAULT_CONFIG"
RECORD = 1000  # bytes of value per record produced


def until(read: Callable[[], Any], ok: Callable[[Any], bool], what: str,
          timeout: float = 30.0) -> Any:
    """``read()`` again until ``ok`` of it holds; fails naming ``what`` and the last read."""
    deadline = time.monotonic() + timeout
    while True:
        got = read()
        if ok(got):
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: still {got!r} after {timeout:g} s")
        time.sleep(0.1)


@pytest.fixture(scope="module")
def gw(kafka_gateway):
    return kafka_gateway


@pytest.fixture(scope="module")
def servers(kafka_cluster) -> str:
    return ",".join(kafka_cluster.bootstrap_servers)


@pytest.fixture(scope="module")
def raw(kafka_cluster):
    """An independent client, to read back what the gateway wrote; at the end, every gw-
    topic is deleted and no throttle this module set is left."""
    admin = KafkaAdminClient(bootstrap_servers=kafka_cluster.bootstrap_servers,
                             request_timeout_ms=10000, client_id="gw-test-raw")
    yield admin
    ours = [t for t in admin.list_topics() if t.startswith("gw-")]
    if ours:
        admin.delete_topics(ours)
    admin.close()


def made(gw, raw, topics: list[dict]) -> None:
    """Create topics through the gateway (each must succeed) and wait until every broker's
    metadata lists them with a leader for each partition."""
    got = gw.create_topics(topics)
    assert got == [{"name": t["name"], "error": None, "message": None, "throttle_time_ms": 0}
                   for t in topics]
    names = [t["name"] for t in topics]
    for broker in (b["broker_id"] for b in raw.describe_cluster()["brokers"]
                   if not b.get("is_fenced")):
        until(lambda b=broker: metadata_of(raw, b, names),
              lambda ts: len(ts) == len(names) and all(
                  t["error_code"] == 0 and t["partitions"]
                  and all(p["leader_id"] >= 0 for p in t["partitions"]) for t in ts),
              f"broker {broker}'s metadata for {names}")


def metadata_of(raw, broker: int, names: list[str]) -> list[dict]:
    """These topics as this one broker's Metadata answers: each KRaft broker applies the
    controller's records on its own, so another broker can still answer that a topic
    created a moment ago does not exist."""
    request = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=n)
                                      for n in names], allow_auto_topic_creation=False)

    async def ask():
        return await raw._manager.send(request, node_id=broker)
    return raw._manager.run(ask).to_dict()["topics"]


def produce(bootstrap: list[str], topic: str, counts: dict[int, int]) -> None:
    """``counts[p]`` records of RECORD bytes into partition p, acknowledged by all replicas."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5,
                             client_id="gw-test-producer")
    try:
        for p, n in counts.items():
            for i in range(n):
                producer.send(topic, bytes([i % 256]) * RECORD, partition=p)
        producer.flush(timeout=60)
    finally:
        producer.close()


def raw_sizes(raw) -> dict[tuple[str, int], list[tuple[int, int]]]:
    """{(topic, partition): [(broker, size)]} as kafka-python reads DescribeLogDirs."""
    out: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for b in raw.describe_log_dirs():
        for d in b["log_dirs"]:
            for t in d["topics"]:
                for p in t["partitions"]:
                    if not p["is_future_key"]:
                        out.setdefault((t["name"], p["partition_index"]), []).append(
                            (b["broker"], p["partition_size"]))
    return {k: sorted(v) for k, v in out.items()}


def raw_configs(raw, kind: str, name: str) -> dict[str, tuple[str | None, str]]:
    """{key: (value, config_source)} of every config Kafka reports for the entity."""
    got = raw.describe_configs([ConfigResource(kind, name)], config_filter="all")
    return {k: (v["value"], v["config_source"]) for k, v in got[kind][name].items()}


def partitions_of(raw, topic: str) -> list[list[int]]:
    t = raw.describe_topics([topic])[0]
    return [list(p["replica_nodes"]) for p in sorted(t["partitions"],
                                                     key=lambda p: p["partition_index"])]


# ---- cluster and topics ---------------------------------------------------------------------
def test_is_a_cluster_gateway(gw):
    assert isinstance(gw, ClusterGateway)


def test_describe_cluster_with_racks(gw, raw, kafka_cluster):
    got = gw.describe_cluster()
    meta = raw.describe_cluster()
    assert got == {"cluster": meta["cluster_id"], "controller": got["controller"],
                   "brokers": [{"id": 1, "rack": "r0", "alive": True},
                               {"id": 2, "rack": "r1", "alive": True},
                               {"id": 3, "rack": "r2", "alive": True}]}
    assert got["cluster"] == kafka_cluster.cluster_id
    # KRaft brokers name a live broker as the controller (KIP-590: clients reach the
    # quorum through brokers), never a missing one
    assert got["controller"] in (1, 2, 3)
    assert [(b["id"], b["rack"]) for b in got["brokers"]] == \
        [(b["id"], b["rack"]) for b in kafka_cluster.describe()["brokers"]]


def test_create_topics_with_explicit_assignments_places_them_as_asked(gw, raw):
    """kafka-topics --create --replica-assignment: placement, leader (the first replica)
    and ISR exactly as requested."""
    placement = [[1, 2], [2, 3], [3, 1], [2, 1]]
    made(gw, raw, [{"name": "gw-placed", "assignment": placement}])
    until(lambda: gw.describe_topics(["gw-placed"])[0]["partitions"],
          lambda ps: [p["isr"] for p in ps] == placement, "the ISR of gw-placed")
    assert gw.describe_topics(["gw-placed"]) == [{"name": "gw-placed", "internal": False,
                                                  "partitions": [
        {"partition": p, "leader": r[0], "replicas": r, "isr": r}
        for p, r in enumerate(placement)]}]
    assert partitions_of(raw, "gw-placed") == placement


def test_create_topics_with_partitions_and_rf_lets_kafka_place_rack_aware(gw, raw):
    """CreateTopics with a count and replication factor: Kafka's placer (KRaft's
    StripedReplicaPlacer) puts each partition's replicas in distinct racks, the first
    replica leading (Kafka 4.1 does not balance the counts exactly: 4/3/5 was seen)."""
    made(gw, raw, [{"name": "gw-counted", "partitions": 6, "rf": 2}])
    got = gw.describe_topics(["gw-counted"])[0]
    replicas = [p["replicas"] for p in got["partitions"]]
    assert [p["partition"] for p in got["partitions"]] == list(range(6))
    assert replicas == partitions_of(raw, "gw-counted")
    assert all(len(r) == 2 and len(set(r)) == 2 and set(r) <= {1, 2, 3} for r in replicas)
    rack = {b["id"]: b["rack"] for b in gw.describe_cluster()["brokers"]}
    assert all(len({rack[b] for b in r}) == 2 for r in replicas)  # never one rack twice
    assert [p["leader"] for p in got["partitions"]] == [r[0] for r in replicas]
    again = gw.create_topics([{"name": "gw-counted", "partitions": 1, "rf": 1}])
    assert again == [{"name": "gw-counted", "error": "TOPIC_ALREADY_EXISTS",
                      "message": "Topic 'gw-counted' already exists.", "throttle_time_ms": 0}]


@pytest.mark.parametrize(("topic", "error", "message"), [
    ({"name": "gw-bad-broker", "assignment": [[1, 9]]}, "INVALID_REPLICA_ASSIGNMENT",
     "The manual partition assignment includes broker 9, but no such broker is registered."),
    ({"name": "gw-bad-twice", "assignment": [[1, 1]]}, "INVALID_REPLICA_ASSIGNMENT",
     "The manual partition assignment includes the broker 1 more than once."),
    ({"name": "gw-bad-rf", "partitions": 1, "rf": 5}, "INVALID_REPLICATION_FACTOR",
     "Unable to replicate the partition 5 time(s): The target replication factor of 5 "
     "cannot be reached because only 3 broker(s) are registered."),
])
def test_a_bad_replica_assignment_is_kafkas_error(gw, topic, error, message):
    assert gw.create_topics([topic]) == [{"name": topic["name"], "error": error,
                                          "message": message, "throttle_time_ms": 0}]
    assert gw.describe_topics([topic["name"]], missing_ok=True) == []


def test_a_topic_name_kafka_refuses_gets_the_same_answer_from_the_twin(gw, raw):
    """Kafka refuses a bad or colliding name per topic (Topic.validate,
    ReplicationControlManager.validateNewTopicNames); the twin, and the what-if placement
    under it (engines.limits.name_refusal), answer each exactly as Kafka did."""
    made(gw, raw, [{"name": "gw.dotted", "partitions": 1, "rf": 1}])
    names = ["gw bad!", ".", "..", "gw-" + "x" * 247, "gw_dotted", "gw.dotted"]
    asked = [{"name": n, "partitions": 1, "rf": 1} for n in names]
    asked += [{"name": "gw-rf5", "partitions": 1, "rf": 5},  # and a count KRaft cannot place
              {"name": "gw bad rf", "partitions": 1, "rf": 5}]  # the name is checked first
    kafka = gw.create_topics(asked)
    assert [k["error"] for k in kafka] == ["INVALID_TOPIC_EXCEPTION"] * 5 + [
        "TOPIC_ALREADY_EXISTS", "INVALID_REPLICATION_FACTOR", "INVALID_TOPIC_EXCEPTION"]
    assert kafka[4]["message"] == "Topic 'gw_dotted' collides with existing topic: gw.dotted"
    twin = TwinGateway(TwinCluster(gw.assignment(), TwinSettings()))
    assert twin.create_topics(asked) == kafka
    assert gw.describe_topics(names[:5], missing_ok=True) == []
    for bad in ("gw bad!", ".."):  # no such topic, not "Kafka is unavailable"
        with pytest.raises(BadInput, match=rf"^no topic '{re.escape(bad)}' on "):
            gw.describe_topics([bad])
        with pytest.raises(BadInput, match=rf"^no topic '{re.escape(bad)}' on "):
            gw.describe_configs("topic", bad)


def test_create_partitions(gw, raw):
    made(gw, raw, [{"name": "gw-grown", "assignment": [[1, 2], [2, 3]]}])
    assert gw.create_partitions("gw-grown", 5) == {"name": "gw-grown", "error": None,
                                                   "message": None, "throttle_time_ms": 0}
    grown = until(lambda: partitions_of(raw, "gw-grown"), lambda ps: len(ps) == 5,
                  "gw-grown's 5 partitions")
    assert grown[:2] == [[1, 2], [2, 3]]  # the old ones stay where they were
    assert all(len(r) == 2 and len(set(r)) == 2 for r in grown[2:])  # the topic's rf
    until(lambda: gw.describe_topics(["gw-grown"])[0]["partitions"],
          lambda ps: [p["replicas"] for p in ps] == grown, "the gateway's view of gw-grown")
    assert gw.create_partitions("gw-grown", 3) == {
        "name": "gw-grown", "error": "INVALID_PARTITIONS", "throttle_time_ms": 0,
        "message": "The topic gw-grown currently has 5 partition(s); 3 would not be an "
                   "increase."}
    missing = gw.create_partitions("gw-never", 3)
    assert (missing["error"], missing["throttle_time_ms"]) == ("UNKNOWN_TOPIC_OR_PARTITION", 0)
    with pytest.raises(BadInput, match=r"^partitions must be a positive total, got 0$"):
        gw.create_partitions("gw-grown", 0)


def test_create_partitions_and_delete_topics_refused_alike_by_the_twin(gw, raw):
    """The twin refuses what Kafka refuses, with the same answer: a count that is no
    increase (ReplicationControlManager.createPartitions' words), a topic that is not
    there (Kafka sends no words for it to CreatePartitions: its clients show Errors.java's,
    which the twin answers, and DeleteTopics sends them)."""
    made(gw, raw, [{"name": "gw-alike", "assignment": [[1, 2], [2, 3]]}])
    twin = TwinGateway(TwinCluster(gw.assignment(), TwinSettings()))
    for total in (1, 2):
        assert twin.create_partitions("gw-alike", total) == \
            gw.create_partitions("gw-alike", total)
    assert gw.create_partitions("gw-alike", 2)["message"] == "Topic already has 2 partition(s)."
    gone = ["gw-never", "gw bad", "gw-zz", "gw.absent", "gw-0"]  # answered in this order
    assert twin.delete_topics(gone) == gw.delete_topics(gone)
    missing = twin.create_partitions("gw-never", 3)
    assert missing == {"name": "gw-never", "error": "UNKNOWN_TOPIC_OR_PARTITION",
                       "message": "This server does not host this topic-partition.",
                       "throttle_time_ms": 0}
    assert gw.create_partitions("gw-never", 3)["error"] == missing["error"]


def test_describe_topics_unknown_and_missing_ok(gw, raw, servers):
    made(gw, raw, [{"name": "gw-known", "assignment": [[3, 1, 2]]}])
    with pytest.raises(BadInput) as e:
        gw.describe_topics(["gw-known", "gw-unknown"])
    assert str(e.value) == f"no topic 'gw-unknown' on {servers}"
    got = gw.describe_topics(["gw-unknown", "gw-known"], missing_ok=True)
    assert [(t["name"], [p["replicas"] for p in t["partitions"]]) for t in got] == \
        [("gw-known", [[3, 1, 2]])]
    assert gw.describe_topics([]) == []
    everything = {t["name"]: t for t in gw.describe_topics()}
    assert everything["gw-known"] == got[0]
    assert everything["gw-known"]["internal"] is False
    assert set(everything) == set(raw.list_topics())


def test_topics_assignment_reads_only_the_named_topics(gw, raw):
    made(gw, raw, [{"name": "gw-basis-a", "assignment": [[1, 2], [2, 1]]},
                   {"name": "gw-basis-b", "assignment": [[3]]}])
    snap = gw.topics_assignment(["gw-basis-b", "gw-never", "gw-basis-a"])
    assert list(snap.topic_names) == ["gw-basis-a", "gw-basis-b"]
    assert [snap.replicas_of(r) for r in range(snap.n_partitions)] == [[1, 2], [2, 1], [3]]
    assert snap.broker_ids.tolist() == [1, 2, 3] and snap.cluster == "kafka"
    assert snap.part_size.sum() == 0  # a basis re-check reads no log dirs


# ---- configs --------------------------------------------------------------------------------
@pytest.fixture
def restore_configs(gw):
    """Records the configs of the entities a test names, and puts them back after it."""
    before: dict[tuple[str, str], dict[str, str]] = {}

    def track(kind: str, name: str) -> dict[str, str]:
        before[(kind, name)] = gw.describe_configs(kind, name)["configs"]
        return before[(kind, name)]

    yield track
    for (kind, name), was in before.items():
        try:
            now = gw.describe_configs(kind, name)["configs"]
        except BadInput:
            continue  # a topic deleted since
        extra = [k for k in now if k not in was]
        changed = {k: v for k, v in was.items() if now.get(k) != v}
        if extra or changed:
            gw.alter_configs(kind, name, set_=changed or None, delete=extra or None)
        assert gw.describe_configs(kind, name)["configs"] == was


def test_broker_configs_dynamic_default_and_static_told_apart(gw, raw, restore_configs):
    """describe_configs reports only what is set on the entity itself: broker 1's own
    dynamic value, not the cluster-wide default it inherits, not server.properties."""
    b1, b2 = restore_configs("broker", "1"), restore_configs("broker", "2")
    default = restore_configs("broker", "<default>")
    assert LEADER_RATE not in b1 and FOLLOWER_RATE not in default
    assert "num.io.threads" not in b1  # static (server.properties), not Railyard's to undo
    assert raw_configs(raw, "broker", "1")["num.io.threads"] == ("2", STATIC_BROKER)

    got = gw.alter_configs("broker", "1", {LEADER_RATE: 31457280})
    assert got == {"entity_type": "broker", "name": "1", "configs": {**b1, LEADER_RATE:
                                                                       "31457280"}}
    got = gw.alter_configs("broker", "<default>", {FOLLOWER_RATE: "20971520"})
    assert got == {"entity_type": "broker", "name": "<default>",
                   "configs": {**default, FOLLOWER_RATE: "20971520"}}
    assert gw.describe_configs("broker", "1")["configs"] == {**b1, LEADER_RATE: "31457280"}
    assert gw.describe_configs("broker", "2")["configs"] == b2
    # broker 2 inherits the default (source DYNAMIC_DEFAULT_BROKER_CONFIG): Kafka shows it,
    # the gateway does not count it as broker 2's own
    until(lambda: raw_configs(raw, "broker", "2")[FOLLOWER_RATE],
          lambda v: v == ("20971520", DYNAMIC_DEFAULT_BROKER), "broker 2's inherited rate")
    assert raw_configs(raw, "broker", "1")[LEADER_RATE] == ("31457280", DYNAMIC_BROKER)

    found = gw.find_configs("broker", THROTTLES)
    assert found["1"] == {LEADER_RATE: "31457280"}
    assert found["<default>"] == {FOLLOWER_RATE: "20971520"}
    assert "2" not in found and "3" not in found

    got = gw.alter_configs("broker", "1", delete=[LEADER_RATE])
    assert got["configs"] == b1
    got = gw.alter_configs("broker", "<default>", delete=[FOLLOWER_RATE])
    assert got["configs"] == default
    until(lambda: raw_configs(raw, "broker", "2").get(FOLLOWER_RATE, (None, DEFAULT)),
          lambda v: v[1] != DYNAMIC_DEFAULT_BROKER, "broker 2 without the default rate")


def test_topic_configs_set_and_delete(gw, raw, restore_configs):
    made(gw, raw, [{"name": "gw-configured", "assignment": [[1, 2], [2, 3], [3, 1]]}])
    assert restore_configs("topic", "gw-configured") == {}
    got = gw.alter_configs("topic", "gw-configured", {LEADER_REPLICAS: "0:1,1:2",
                                                      FOLLOWER_REPLICAS: "0:2",
                                                      "retention.ms": 3600000})
    assert got == {"entity_type": "topic", "name": "gw-configured", "configs": {
        LEADER_REPLICAS: "0:1,1:2", FOLLOWER_REPLICAS: "0:2", "retention.ms": "3600000"}}
    own = {LEADER_REPLICAS: ("0:1,1:2", DYNAMIC_TOPIC), FOLLOWER_REPLICAS: ("0:2", DYNAMIC_TOPIC),
           "retention.ms": ("3600000", DYNAMIC_TOPIC)}
    until(lambda: {k: v for k, v in raw_configs(raw, "topic", "gw-configured").items()
                   if v[1] == DYNAMIC_TOPIC}, lambda got: got == own,
          "gw-configured's configs read by kafka-python")
    # a default is not the topic's own
    assert raw_configs(raw, "topic", "gw-configured")["cleanup.policy"] == ("delete", DEFAULT)
    assert gw.find_configs("topic", [LEADER_REPLICAS, FOLLOWER_REPLICAS])["gw-configured"] \
        == {LEADER_REPLICAS: "0:1,1:2", FOLLOWER_REPLICAS: "0:2"}
    got = gw.alter_configs("topic", "gw-configured", {FOLLOWER_REPLICAS: "0:2,2:1"},
                           delete=[LEADER_REPLICAS, "retention.ms"])
    assert got["configs"] == {FOLLOWER_REPLICAS: "0:2,2:1"}
    got = gw.alter_configs("topic", "gw-configured", delete=[FOLLOWER_REPLICAS])
    assert got["configs"] == {}
    assert "gw-configured" not in gw.find_configs("topic", [LEADER_REPLICAS,
                                                            FOLLOWER_REPLICAS])


def test_each_alter_answers_with_its_own_write(gw, raw, restore_configs):
    """The bug Apache Kafka showed: the controller commits an alter before answering, but
    the broker answering DescribeConfigs applies it a moment later, so an alter answered
    with a read at once showed the value from before (about one alter in two on a topic
    and on the default entity). Ten alters in a row: each answer shows its own value."""
    made(gw, raw, [{"name": "gw-rewritten", "assignment": [[2, 3]]}])
    restore_configs("topic", "gw-rewritten")
    default = restore_configs("broker", "<default>")
    for i in range(10):
        got = gw.alter_configs("topic", "gw-rewritten", {"retention.ms": 3600000 + i})
        assert got["configs"] == {"retention.ms": str(3600000 + i)}
        got = gw.alter_configs("broker", "<default>", {FOLLOWER_RATE: 50000000 + i})
        assert got["configs"] == {**default, FOLLOWER_RATE: str(50000000 + i)}
    assert gw.alter_configs("broker", "<default>", delete=[FOLLOWER_RATE])["configs"] == \
        default


def test_config_errors_are_one_line(gw, raw, servers):
    made(gw, raw, [{"name": "gw-errs", "assignment": [[1]]}])
    cases = [
        (lambda: gw.describe_configs("topic", "gw-missing"),
         BadInput, f"no topic 'gw-missing' on {servers}"),
        (lambda: gw.describe_configs("broker", "9"),
         BadInput, f"no broker 9 on {servers} (brokers: 1, 2, 3)"),
        (lambda: gw.alter_configs("broker", "9", {LEADER_RATE: 1}),
         BadInput, f"no broker 9 on {servers} (brokers: 1, 2, 3)"),
        (lambda: gw.alter_configs("topic", "gw-missing", {"retention.ms": 1}),
         BadInput, "topic 'gw-missing': UNKNOWN_TOPIC_OR_PARTITION: The topic 'gw-missing' "
                   "does not exist."),
        (lambda: gw.alter_configs("topic", "gw-errs", {"no.such.config": 1}),
         BadInput, "topic 'gw-errs': INVALID_CONFIG: Unknown topic config name: "
                   "no.such.config"),
    ]
    for call, kind, message in cases:
        with pytest.raises(kind) as e:
            call()
        assert str(e.value) == message
    assert gw.describe_configs("topic", "gw-errs")["configs"] == {}


# ---- log dirs -------------------------------------------------------------------------------
def test_log_dir_sizes_reach_the_snapshot(gw, raw, kafka_cluster):
    """Real data: the snapshot's part_size per partition is the largest replica's size in
    DescribeLogDirs, as kafka-python reads it, and grows with what was written."""
    placement = [[1, 2], [2, 3], [3, 1]]
    counts = {0: 50, 1: 150, 2: 300}
    made(gw, raw, [{"name": "gw-sized", "assignment": placement}])
    produce(kafka_cluster.bootstrap_servers, "gw-sized", counts)
    # acks=all: every replica holds every record; the followers' log sizes say so
    sizes = until(lambda: raw_sizes(raw),
                  lambda s: all(len({size for _, size in s[("gw-sized", p)]}) == 1
                                for p in counts), "equal replica sizes of gw-sized")
    for p, brokers in enumerate(placement):
        assert [b for b, _ in sizes[("gw-sized", p)]] == sorted(brokers)
        size = sizes[("gw-sized", p)][0][1]
        # the values, and per record batch and record a few dozen bytes of headers
        assert counts[p] * RECORD < size < counts[p] * RECORD * 1.1
    snap = gw.assignment()
    assert gw.notes == ["write rates unknown (0): no Prometheus configured for this cluster"]
    assert snap.notes == tuple(gw.notes)  # carried to where the rates are used (previews)
    now = raw_sizes(raw)  # read after: nothing else writes to gw-sized
    for p, brokers in enumerate(placement):
        row = snap.partition_row("gw-sized", p)
        assert snap.replicas_of(row) == brokers
        assert int(snap.part_size[row]) == max(size for _, size in now[("gw-sized", p)])
        assert snap.part_rate[row] == 0.0
    assert snap.broker_ids.tolist() == [1, 2, 3]
    assert snap.broker_racks.tolist() == ["r0", "r1", "r2"]


# ---- client quotas (KIP-599) ----------------------------------------------------------------
QUOTA_ENTITIES = [("gw-alice", None), (None, "gw-app"), ("gw-bob", "gw-app2"),
                  ("<default>", None), (None, "<default>"), ("gw-carol", "<default>")]


def test_client_quotas_described_and_altered(gw):
    """controller_mutation_rate for a user, a client id, a user and client id, and the
    default entities (kafka-configs --alter --entity-type users --entity-default ...). The
    rates are high, so nothing else running is slowed while they are set."""
    before = gw.describe_client_quotas()
    ours = {(u, c) for u, c in QUOTA_ENTITIES}
    assert not [q for q in before if (q["user"], q["client_id"]) in ours]
    try:
        for i, (user, client) in enumerate(QUOTA_ENTITIES):
            assert gw.alter_client_quota(user, client, 1000.0 + i) == {
                "user": user, "client_id": client, "controller_mutation_rate": 1000.0 + i}
        expected = before + [{"user": u, "client_id": c, "controller_mutation_rate": 1000.0 + i}
                             for i, (u, c) in enumerate(QUOTA_ENTITIES)]
        key = lambda q: (str(q["user"]), str(q["client_id"]))  # noqa: E731
        assert gw.describe_client_quotas() == sorted(expected, key=key)
        gw.alter_client_quota("gw-alice", None, 2.5)  # changed in place
        assert next(q for q in gw.describe_client_quotas()
                    if q["user"] == "gw-alice")["controller_mutation_rate"] == 2.5
    finally:
        for user, client in QUOTA_ENTITIES:
            gw.alter_client_quota(user, client, None)
    assert gw.describe_client_quotas() == before
    with pytest.raises(BadInput, match=r"^a quota names a user, a client id, or both"):
        gw.alter_client_quota(None, None, 1.0)
    with pytest.raises(BadInput, match=r"^controller_mutation_rate must be > 0, got 0$"):
        gw.alter_client_quota("gw-alice", None, 0)


# ---- reassignments (KIP-455) under a throttle (KIP-73) --------------------------------------
def test_alter_list_and_cancel_a_throttled_reassignment(gw, raw, kafka_cluster, servers,
                                                        restore_configs):
    """A partition holding 3 MB moves to a second broker at 10 kB/s (a broker throttle
    with the topic's throttled replicas, as kafka-reassign-partitions --throttle sets
    them), so it stays in flight: listed by the gateway, by kafka-python and by
    kafka-reassign-partitions --list alike, then cancelled (Kafka puts the old replicas
    back). The same move without a throttle then completes."""
    made(gw, raw, [{"name": "gw-moving", "assignment": [[1]]}])
    produce(kafka_cluster.bootstrap_servers, "gw-moving", {0: 3000})
    for b in ("1", "2"):
        restore_configs("broker", b)
    restore_configs("topic", "gw-moving")
    gw.alter_configs("broker", "1", {LEADER_RATE: 10000})
    gw.alter_configs("broker", "2", {FOLLOWER_RATE: 10000})
    gw.alter_configs("topic", "gw-moving", {LEADER_REPLICAS: "0:1", FOLLOWER_REPLICAS: "0:2"})

    assert gw.alter_reassignments({"version": 1, "partitions": [
        {"topic": "gw-moving", "partition": 0, "replicas": [1, 2]}]}) == {
        "started": ["gw-moving-0"], "cancelled": []}
    moving = [{"topic": "gw-moving", "partition": 0, "replicas": [1, 2], "adding": [2],
               "removing": []}]
    assert [r for r in gw.list_reassignments() if r["topic"].startswith("gw-")] == moving
    listed = {(tp.topic, tp.partition): v for tp, v in raw.list_partition_reassignments().items()}
    assert listed[("gw-moving", 0)] == {"replicas": [1, 2], "adding_replicas": [2],
                                        "removing_replicas": []}
    tool = kafka_reassign(servers.split(",")[0], ["--list"]).stdout
    assert "gw-moving-0: replicas: 1,2. adding: 2." in tool.splitlines()

    assert gw.cancel_reassignments([("gw-moving", 0)]) == {"cancelled": ["gw-moving-0"]}
    until(lambda: [r for r in gw.list_reassignments() if r["topic"] == "gw-moving"],
          lambda rs: rs == [], "no move of gw-moving")
    until(lambda: partitions_of(raw, "gw-moving"), lambda ps: ps == [[1]],
          "gw-moving back on broker 1")
    with pytest.raises(BadInput) as e:
        gw.cancel_reassignments([("gw-moving", 0)])
    assert str(e.value) == "no reassignment in progress for gw-moving-0"

    gw.alter_configs("broker", "1", delete=[LEADER_RATE])
    gw.alter_configs("broker", "2", delete=[FOLLOWER_RATE])
    gw.alter_configs("topic", "gw-moving", delete=[LEADER_REPLICAS, FOLLOWER_REPLICAS])
    assert gw.alter_reassignments({"version": 1, "partitions": [
        {"topic": "gw-moving", "partition": 0, "replicas": [2, 3]}]})["started"] == \
        ["gw-moving-0"]
    until(lambda: gw.describe_topics(["gw-moving"])[0]["partitions"][0],
          lambda p: p["replicas"] == [2, 3] and sorted(p["isr"]) == [2, 3],
          "gw-moving on 2 and 3",
          timeout=60)
    assert [r for r in gw.list_reassignments() if r["topic"] == "gw-moving"] == []
    sizes = until(lambda: raw_sizes(raw)[("gw-moving", 0)], lambda s: [b for b, _ in s] == [2, 3],
                  "gw-moving's replicas in the log dirs of 2 and 3")
    assert sizes[0][1] == sizes[1][1] > 3000 * RECORD


@pytest.mark.parametrize(("replicas", "code", "message"), [
    ([1, 9], "INVALID_REPLICA_ASSIGNMENT",
     "The manual partition assignment includes broker 9, but no such broker is registered."),
])
def test_a_bad_reassignment_is_kafkas_error(gw, raw, servers, replicas, code, message):
    made(gw, raw, [{"name": "gw-unmoved", "assignment": [[1, 2]]}])
    with pytest.raises(GatewayError) as e:
        gw.alter_reassignments({"version": 1, "partitions": [
            {"topic": "gw-unmoved", "partition": 0, "replicas": replicas}]})
    assert e.value.code == code and not e.value.retriable
    assert str(e.value) == (f"{code}: AlterPartitionReassignments gw-unmoved-0 on "
                            f"{servers}: {message}")
    with pytest.raises(GatewayError) as e:
        gw.alter_reassignments({"version": 1, "partitions": [
            {"topic": "gw-nowhere", "partition": 0, "replicas": [1, 2]}]})
    assert str(e.value) == ("UNKNOWN_TOPIC_OR_PARTITION: AlterPartitionReassignments "
                            f"gw-nowhere-0 on {servers}: Unable to find a topic named "
                            "gw-nowhere.")
    assert partitions_of(raw, "gw-unmoved") == [[1, 2]]


# ---- side by side with kafka-configs --------------------------------------------------------
LINE = re.compile(r"^  (?P<key>[a-z0-9._-]+)=(?P<value>\S*) sensitive=(?P<sensitive>true|false)"
                  r" synonyms=\{(?P<synonyms>.*)\}$")


def kafka_configs_describe(bootstrap: str, entity: list[str], title: str,
                           source: str) -> dict[str, str]:
    """kafka-configs --describe, parsed strictly: the title line, then one line per
    config whose first synonym is the config itself from ``source``."""
    out = kafka_configs(bootstrap, ["--describe", *entity])
    lines = out.stdout.splitlines()
    assert lines[0] == title, out.stdout
    got = {}
    for line in lines[1:]:
        m = LINE.match(line)
        assert m, f"unexpected kafka-configs line {line!r}"
        key, value = m["key"], m["value"]
        assert m["sensitive"] == "false"
        assert m["synonyms"].split(", ")[0] == f"{source}:{key}={value}", line
        got[key] = value
    return got


def test_kafka_configs_describe_equals_describe_configs(gw, raw, servers, restore_configs):
    """After Railyard sets KIP-73 throttles on broker 1, the default broker and a topic,
    Kafka's own kafka-configs --describe lists the same configs for each."""
    made(gw, raw, [{"name": "gw-side", "assignment": [[1, 2], [2, 3]]}])
    for kind, name in (("broker", "1"), ("broker", "<default>"), ("topic", "gw-side")):
        restore_configs(kind, name)
    gw.alter_configs("broker", "1", {LEADER_RATE: 41943040, FOLLOWER_RATE: 41943041})
    gw.alter_configs("broker", "<default>", {FOLLOWER_RATE: 52428800})
    gw.alter_configs("topic", "gw-side", {LEADER_REPLICAS: "0:1,1:2",
                                          FOLLOWER_REPLICAS: "0:2,1:3"})
    first = servers.split(",")[0]
    cases = [
        ("broker", "1", ["--entity-type", "brokers", "--entity-name", "1"],
         "Dynamic configs for broker 1 are:", "DYNAMIC_BROKER_CONFIG"),
        ("broker", "<default>", ["--entity-type", "brokers", "--entity-default"],
         "Default configs for brokers in the cluster are:", "DYNAMIC_DEFAULT_BROKER_CONFIG"),
        ("topic", "gw-side", ["--entity-type", "topics", "--entity-name", "gw-side"],
         "Dynamic configs for topic gw-side are:", "DYNAMIC_TOPIC_CONFIG"),
    ]
    for kind, name, entity, title, source in cases:
        ours = gw.describe_configs(kind, name)["configs"]
        theirs = until(lambda e=entity, t=title, s=source: kafka_configs_describe(first, e, t, s),
                       lambda got, o=ours: got == o, f"kafka-configs on {kind} {name}",
                       timeout=60)
        assert theirs == ours
    assert gw.describe_configs("broker", "1")["configs"][LEADER_RATE] == "41943040"
    assert gw.describe_configs("topic", "gw-side")["configs"] == {
        LEADER_REPLICAS: "0:1,1:2", FOLLOWER_REPLICAS: "0:2,1:3"}


# ---- delete, last ---------------------------------------------------------------------------
def test_delete_topics(gw, raw):
    made(gw, raw, [{"name": "gw-doomed", "assignment": [[1, 2]]}])
    assert sorted(gw.delete_topics(["gw-doomed", "gw-never-made"]),
                  key=lambda r: r["name"]) == [
        {"name": "gw-doomed", "error": None, "message": None, "throttle_time_ms": 0},
        {"name": "gw-never-made", "error": "UNKNOWN_TOPIC_OR_PARTITION",
         "message": "This server does not host this topic-partition.", "throttle_time_ms": 0}]
    until(lambda: gw.describe_topics(["gw-doomed"], missing_ok=True), lambda ts: ts == [],
          "gw-doomed gone")
    until(raw.list_topics, lambda ts: "gw-doomed" not in ts, "gw-doomed gone for kafka-python")
    with pytest.raises(BadInput, match=r"^delete: give one or more topic names$"):
        gw.delete_topics([])


# ---- `railyard snapshot capture` and the what-if verbs on it --------------------------------
def railyard(capsys, args: list[str]) -> dict:
    """`railyard ARGS...` in this process: exit 0 and its JSON answer."""
    import json

    from backend.cli import main
    capsys.readouterr()
    code = main(args)
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


def test_snapshot_capture_equals_what_kafka_python_reads(gw, raw, kafka_cluster, tmp_path,
                                                         capsys):
    """`railyard snapshot capture` through a config naming the real cluster: brokers, racks,
    topics, replicas in order and partition sizes as kafka-python reads them; then the
    what-if verbs of README's example on the captured file."""
    import yaml

    from backend.model.io import load_snapshot

    made(gw, raw, [{"name": "cap-three", "assignment": [[1, 2, 3], [2, 3, 1], [3, 1, 2]]},
                   {"name": "cap-two", "assignment": [[1, 2], [2, 3], [3, 1], [1, 3]]}])
    try:
        produce(kafka_cluster.bootstrap_servers, "cap-two", {0: 40, 1: 80, 2: 120, 3: 160})
        produce(kafka_cluster.bootstrap_servers, "cap-three", {0: 30})
        until(lambda: raw_sizes(raw), lambda s: all(
            len({size for _, size in s[k]}) == 1 for k in s if k[0].startswith("cap-")),
              "every cap- replica holding all its records")
        cfg = tmp_path / "railyard.yaml"
        cfg.write_text(yaml.safe_dump({"clusters": [{"name": "real", "gateway": {
            "type": "kafka", "bootstrap_servers": kafka_cluster.bootstrap_servers,
            "timeout_seconds": 10}}]}))
        out = tmp_path / "real.parquet"
        answer = railyard(capsys, ["snapshot", "capture", "--config", str(cfg), "--cluster",
                                   "real", "--out", str(out)])
        meta, topics, sizes = raw.describe_cluster(), raw.describe_topics(), raw_sizes(raw)
        snap = load_snapshot(out)

        topics = sorted(topics, key=lambda t: t["topic"] if "topic" in t else t["name"])
        names = [t.get("name", t.get("topic")) for t in topics]
        replicas = [list(p["replica_nodes"]) for t in topics
                    for p in sorted(t["partitions"], key=lambda p: p["partition_index"])]
        assert answer == {"written": str(out), "cluster": "real", "brokers": 3,
                          "partitions": len(replicas),
                          "replicas": sum(map(len, replicas)),
                          "notes": ["write rates unknown (0): no Prometheus configured for "
                                    "this cluster"]}
        assert snap.cluster == "real"
        assert snap.broker_ids.tolist() == sorted(b["node_id"] if "node_id" in b
                                                  else b["broker_id"] for b in meta["brokers"])
        assert snap.broker_racks.tolist() == [b["rack"] for b in sorted(
            meta["brokers"], key=lambda b: b.get("node_id", b.get("broker_id")))]
        assert list(snap.topic_names) == names
        assert [snap.replicas_of(r) for r in range(snap.n_partitions)] == replicas
        keys = [(n, p["partition_index"]) for n, t in zip(names, topics, strict=True)
                for p in sorted(t["partitions"], key=lambda p: p["partition_index"])]
        assert snap.part_size.tolist() == [max((s for _, s in sizes.get(k, [])), default=0)
                                           for k in keys]
        two = [int(snap.part_size[snap.partition_row("cap-two", p)]) for p in range(4)]
        assert all(n * RECORD < size < n * RECORD * 1.1
                   for n, size in zip((40, 80, 120, 160), two, strict=True))
        # KIP-578 counts: internal topics left out (__consumer_offsets exists once any
        # test's consumer group committed; 3 partitions at RF 3 on this cluster)
        counted = [list(p["replica_nodes"]) for n, t in zip(names, topics, strict=True)
                   if not n.startswith("__") for p in t["partitions"]]
        held = {b: sum(b in r for r in counted) for b in (1, 2, 3)}

        # KIP-578 what-ifs: an rf-3 topic of 6 partitions puts one replica of each on
        # every broker; 3 more partitions of cap-two (rf 2) add 6 replicas, rack-aware
        created = railyard(capsys, ["limits", "create-topics", "--snapshot", str(out),
                                    "--topic", "cap-new:6:3"])
        new = created["topics"][0]
        assert (created["ok"], new["name"], new["ok"], new["error"], new["rack_aware"]) == \
            (True, "cap-new", True, None, True)
        assert sorted(new["assignment"]) == [str(p) for p in range(6)]
        assert all(sorted(r) == [1, 2, 3] for r in new["assignment"].values())
        assert created["broker_partitions_after"] == {str(b): n + 6 for b, n in held.items()}
        # KIP-578's max.partitions counts replicas: 6 partitions x 3
        assert created["cluster_partitions_after"] == sum(held.values()) + 18
        grown = railyard(capsys, ["limits", "add-partitions", "--snapshot", str(out),
                                  "--topic", "cap-two", "--total", "7"])
        added = grown["topics"][0]["assignment"] if "topics" in grown else grown["assignment"]
        assert sorted(added) == ["4", "5", "6"]
        assert all(len(set(r)) == 2 and set(r) <= {1, 2, 3} for r in added.values())
        assert sum(grown["broker_partitions_after"].values()) == sum(held.values()) + 6

        # drain broker 3: every partition with fewer than 3 replicas leaves it (its other
        # replicas stay); with 3 brokers an rf-3 partition cannot, and the plan says so
        plan = tmp_path / "plan.json"
        drained = railyard(capsys, ["reassign", "generate", "--snapshot", str(out), "--goal",
                                    "drain", "--brokers", "3", "--plan-out", str(plan)])
        before = {(t, p["partition_index"]): list(p["replica_nodes"])
                  for t, tp in zip(names, topics, strict=True) for p in tp["partitions"]}
        movable = {k: r for k, r in before.items() if 3 in r and len(r) < 3}
        stuck = sum(3 in r and len(r) == 3 for r in before.values())
        moves = {(m["topic"], m["partition"]): m["replicas"]
                 for m in drained["plan"]["partitions"]}
        assert set(moves) == set(movable)
        for k, r in moves.items():
            assert 3 not in r and len(r) == len(set(r)) == len(before[k])
            assert [b for b in before[k] if b != 3] == [b for b in r if b in before[k]]
        assert drained["summary"]["replica_moves"] == len(movable)
        assert drained["summary"]["unresolved"] == [{
            "kind": "not_drained", "broker": 3, "replicas": stuck,
            "message": f"broker 3 keeps {stuck} replicas: no other broker can take them "
                       "without breaking a limit, doubling a replica or reducing rack spread"}]
        assert drained["summary"]["bytes_to_move"] == sum(
            int(snap.part_size[snap.partition_row(*k)]) * len(set(r) - set(before[k]))
            for k, r in moves.items())

        # KIP-73: the leader throttle lists every current replica of a moving partition,
        # the follower throttle the replicas it gains; both rates on every broker involved
        throttled = railyard(capsys, ["throttle", "plan", "--snapshot", str(out),
                                      "--reassignment", str(plan), "--throttle", "1000000"])
        lead: dict[str, list[str]] = {}
        follow: dict[str, list[str]] = {}
        for (t, p), r in sorted(moves.items()):
            lead.setdefault(t, []).extend(f"{p}:{b}" for b in before[(t, p)])
            follow.setdefault(t, []).extend(f"{p}:{b}" for b in r if b not in before[(t, p)])
        assert {t: sorted(v.split(",")) for t, v in
                throttled["leader_throttled_replicas"].items()} == \
            {t: sorted(v) for t, v in lead.items()}
        assert {t: sorted(v.split(",")) for t, v in
                throttled["follower_throttled_replicas"].items()} == \
            {t: sorted(v) for t, v in follow.items()}
        assert throttled["broker_configs"] == {LEADER_RATE: 1000000, FOLLOWER_RATE: 1000000}
        assert throttled["moved_partitions"] == len(moves)
        assert throttled["bytes_to_move"] == drained["summary"]["bytes_to_move"]
    finally:
        gw.delete_topics(["cap-three", "cap-two"])
