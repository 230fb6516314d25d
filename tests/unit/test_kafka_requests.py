"""The requests the Kafka gateway builds, field by field, against what Kafka's own tools
send for the same operation (kafka-configs, kafka-reassign-partitions --execute --throttle,
kafka-topics), for the APIs Tansu cannot answer; and the connection config, whose secrets
never show in a repr, a log or an error."""

from __future__ import annotations

import struct

import pytest
from kafka.protocol.admin import DescribeConfigsResponse

from backend.errors import BadInput
from backend.gateways import kafka as k
from backend.gateways.config import Secret, parse_gateway, parse_kafka


def _wire(request, version: int) -> dict:
    """Encode at ``version`` and decode again: what a broker reads off the wire."""
    return type(request).decode(request.encode(version=version), version=version).to_dict()


# ---- configs (KIP-73 throttles as kafka-reassign-partitions --throttle sets them) --------
def test_broker_throttle_rate_as_kafka_configs_sends_it():
    """kafka-configs --alter --entity-type brokers --entity-name 1 --add-config
    leader.replication.throttled.rate=10485760,follower.replication.throttled.rate=10485760"""
    req = k.incremental_alter_configs_request(
        "broker", "1", {"leader.replication.throttled.rate": 10485760,
                        "follower.replication.throttled.rate": 10485760}, None)
    for version in (0, 1):
        assert _wire(req, version) == {"resources": [{
            "resource_type": 4, "resource_name": "1", "configs": [
                {"name": "leader.replication.throttled.rate", "config_operation": 0,
                 "value": "10485760"},
                {"name": "follower.replication.throttled.rate", "config_operation": 0,
                 "value": "10485760"}]}], "validate_only": False}


def _uvarint(n: int) -> bytes:
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def _cstr(s: str | None) -> bytes:
    return b"\x00" if s is None else _uvarint(len(s.encode()) + 1) + s.encode()


def test_incremental_alter_configs_v1_bytes_follow_the_protocol_spec():
    """Hand-encoded from Kafka's IncrementalAlterConfigsRequest.json (v1, flexible): the
    bytes the gateway puts on the wire, independent of kafka-python's own decoder."""
    req = k.incremental_alter_configs_request(
        "topic", "orders", {"leader.replication.throttled.replicas": "0:1,0:2"},
        ["follower.replication.throttled.replicas"])
    expected = (_uvarint(2) + struct.pack(">b", 2) + _cstr("orders") + _uvarint(3)
                + _cstr("leader.replication.throttled.replicas") + struct.pack(">b", 0)
                + _cstr("0:1,0:2") + b"\x00"
                + _cstr("follower.replication.throttled.replicas") + struct.pack(">b", 1)
                + _cstr(None) + b"\x00"
                + b"\x00"  # resource tagged fields
                + b"\x00"  # validate_only false
                + b"\x00")  # request tagged fields
    assert req.encode(version=1) == expected


def test_default_broker_is_the_empty_resource_name():
    """kafka-configs --entity-type brokers --entity-default names the resource ''."""
    req = k.incremental_alter_configs_request("broker", "<default>", None,
                                              ["leader.replication.throttled.rate"])
    assert _wire(req, 1)["resources"] == [{"resource_type": 4, "resource_name": "", "configs": [
        {"name": "leader.replication.throttled.rate", "config_operation": 1, "value": None}]}]


@pytest.mark.parametrize(("args", "message"), [
    (("cluster", "x", {"a": 1}, None), "entity type must be 'broker' or 'topic'"),
    (("broker", "b1", {"a": 1}, None), "broker must be an id or '<default>', got 'b1'"),
    (("topic", "t", {"a": 1}, ["a"]), "config 'a' is both set and deleted"),
    (("topic", "t", None, None), "nothing to alter"),
])
def test_alter_configs_bad_input(args, message):
    with pytest.raises(BadInput, match=message):
        k.incremental_alter_configs_request(*args)


def _configs_response(resource_type: int, name: str, entries) -> object:
    """A DescribeConfigs v4 answer as a broker encodes it, decoded by the client."""
    R = DescribeConfigsResponse
    res = R.DescribeConfigsResult
    resp = R(throttle_time_ms=0, results=[res(
        error_code=0, error_message=None, resource_type=resource_type, resource_name=name,
        configs=[res.DescribeConfigsResourceResult(
            name=n, value=v, read_only=False, config_source=src, is_sensitive=False,
            synonyms=[], config_type=2, documentation=None) for n, v, src in entries])])
    return R.decode(resp.encode(version=4), version=4).results[0]


def test_only_configs_set_on_the_entity_are_reported():
    """What Kafka answers DescribeConfigs with: the set value (own dynamic source) next to
    defaults, static server.properties values and values inherited from the cluster-wide
    default; only the first can be restored, so only it is recorded."""
    topic = _configs_response(2, "orders", [
        ("leader.replication.throttled.replicas", "0:1", 1),  # DYNAMIC_TOPIC_CONFIG
        ("retention.ms", "604800000", 5),  # DEFAULT_CONFIG
        ("min.insync.replicas", "2", 4)])  # STATIC_BROKER_CONFIG
    assert k.own_configs(topic, 2, "orders") == {"leader.replication.throttled.replicas": "0:1"}
    broker = _configs_response(4, "1", [
        ("leader.replication.throttled.rate", "1000", 2),  # DYNAMIC_BROKER_CONFIG
        ("follower.replication.throttled.rate", "2000", 3),  # inherited from <default>
        ("num.io.threads", "8", 4)])
    assert k.own_configs(broker, 4, "1") == {"leader.replication.throttled.rate": "1000"}
    default = _configs_response(4, "", [("follower.replication.throttled.rate", "2000", 3)])
    assert k.own_configs(default, 4, "") == {"follower.replication.throttled.rate": "2000"}


# ---- reassignments (KIP-455, kafka-reassign-partitions --execute / --cancel) ------------
PLAN = {"version": 1, "partitions": [
    {"topic": "orders", "partition": 1, "replicas": [3, 1, 2]},
    {"topic": "audit", "partition": 0, "replicas": [2, 3]},
    {"topic": "orders", "partition": 0, "replicas": [1, 2, 4]}]}


def test_reassignment_as_kafka_reassign_partitions_execute_sends_it():
    req = k.alter_reassignments_request(k.reassignment_moves(PLAN), 30000)
    assert _wire(req, 0) == {"timeout_ms": 30000, "topics": [
        {"name": "audit", "partitions": [{"partition_index": 0, "replicas": [2, 3]}]},
        {"name": "orders", "partitions": [{"partition_index": 0, "replicas": [1, 2, 4]},
                                          {"partition_index": 1, "replicas": [3, 1, 2]}]}]}


def test_cancel_sends_null_replicas():
    """kafka-reassign-partitions --cancel: a null replica list reverts the move."""
    req = k.alter_reassignments_request({("orders", 2): None}, 1000)
    assert _wire(req, 0)["topics"] == [
        {"name": "orders", "partitions": [{"partition_index": 2, "replicas": None}]}]


@pytest.mark.parametrize(("plan", "message"), [
    ({"partitions": []}, "expected"),
    ([], "expected"),
    ({"partitions": [{"topic": "t", "partition": 0, "replicas": [1, 1]}]}, r"partitions\[0\]"),
    ({"partitions": [{"topic": "t", "partition": -1, "replicas": [1]}]}, r"partitions\[0\]"),
    ({"partitions": [{"topic": "t", "partition": 0, "replicas": []}]}, r"partitions\[0\]"),
    ({"partitions": [{"topic": "t", "partition": 0, "replicas": [1]},
                     {"topic": "t", "partition": 0, "replicas": [2]}]}, "t-0 is listed twice"),
])
def test_bad_plans_are_refused_before_sending(plan, message):
    with pytest.raises(BadInput, match=message):
        k.reassignment_moves(plan)


# ---- topics (kafka-topics --create / --alter --partitions / --delete) -------------------
def test_create_topics_lets_the_broker_place_replicas():
    req = k.create_topics_request([{"name": "t", "partitions": 6, "rf": 3}], 5000)
    assert _wire(req, 7) == {"topics": [{"name": "t", "num_partitions": 6,
                                         "replication_factor": 3, "assignments": [],
                                         "configs": []}],
                             "timeout_ms": 5000, "validate_only": False}
    with pytest.raises(BadInput, match=r"topics\[0\]"):
        k.create_topics_request([{"name": "t", "partitions": 0}], 5000)


def test_create_topics_with_a_given_placement():
    """kafka-topics --create --replica-assignment: no count or RF, one list per partition."""
    req = k.create_topics_request([{"name": "t", "assignment": [[1, 2], [2, 3]]}], 5000)
    assert _wire(req, 7)["topics"] == [{
        "name": "t", "num_partitions": -1, "replication_factor": -1, "configs": [],
        "assignments": [{"partition_index": 0, "broker_ids": [1, 2]},
                        {"partition_index": 1, "broker_ids": [2, 3]}]}]
    with pytest.raises(BadInput, match=r"topics\[0\]: expected \{name, assignment"):
        k.create_topics_request([{"name": "t", "assignment": [[1, 2], [3]]}], 5000)


def test_create_partitions_names_the_new_total():
    req = k.create_partitions_request("t", 12, 5000)
    assert _wire(req, 3) == {"topics": [{"name": "t", "count": 12, "assignments": None}],
                             "timeout_ms": 5000, "validate_only": False}
    with pytest.raises(BadInput, match="positive total"):
        k.create_partitions_request("t", 0, 5000)


def test_delete_topics_by_name():
    req = k.delete_topics_request(["a", "b"], 5000)
    # v6 names topics (a zero topic id, read back as None); v0-5 list names
    assert _wire(req, 6)["topics"] == [{"name": "a", "topic_id": None},
                                       {"name": "b", "topic_id": None}]
    assert _wire(req, 5)["topic_names"] == ["a", "b"]


# ---- KIP-599 quotas (kafka-configs --entity-type users/clients) -------------------------
def test_describe_all_quota_entities():
    assert _wire(k.describe_client_quotas_request(), 1) == {"components": [], "strict": False}


def test_alter_quota_as_kafka_configs_sends_it():
    """kafka-configs --alter --entity-type users --entity-default --entity-type clients
    --entity-name app --add-config controller_mutation_rate=10"""
    req = k.alter_client_quotas_request("<default>", "app", 10)
    assert _wire(req, 1) == {"entries": [{
        "entity": [{"entity_type": "user", "entity_name": None},
                   {"entity_type": "client-id", "entity_name": "app"}],
        "ops": [{"key": "controller_mutation_rate", "value": 10.0, "remove": False}]}],
        "validate_only": False}
    removal = _wire(k.alter_client_quotas_request("alice", None, None), 0)
    assert removal["entries"][0]["entity"] == [{"entity_type": "user", "entity_name": "alice"}]
    assert removal["entries"][0]["ops"][0]["remove"] is True
    with pytest.raises(BadInput, match="names a user, a client id"):
        k.alter_client_quotas_request(None, None, 5)
    with pytest.raises(BadInput, match="must be > 0"):
        k.alter_client_quotas_request("a", None, 0)


def test_error_codes_become_kafka_error_names():
    assert k.error_of(0) == (None, None)
    assert k.error_of(36, "exists") == ("TOPIC_ALREADY_EXISTS", "exists")
    assert k.error_of(89)[0] == "THROTTLING_QUOTA_EXCEEDED"
    # Kafka's names (Errors.java) where kafka-python's differ: the twin answers with these
    assert [k.error_of(c)[0] for c in (-1, 6, 10, 17, 39, 128)] == [
        "UNKNOWN_SERVER_ERROR", "NOT_LEADER_OR_FOLLOWER", "MESSAGE_TOO_LARGE",
        "INVALID_TOPIC_EXCEPTION", "INVALID_REPLICA_ASSIGNMENT", "INVALID_REGULAR_EXPRESSION"]


# ---- the connection config -----------------------------------------------------------------
def _where(key: str) -> str:
    return f"cfg: clusters[0].gateway.{key}"


def test_plaintext_by_default():
    c = parse_kafka({"bootstrap_servers": "k1:9092, k2:9092"}, _where)
    assert c.bootstrap_servers == ("k1:9092", "k2:9092") and c.security_protocol == "PLAINTEXT"
    assert c.servers == "k1:9092,k2:9092" and c.tls is None and c.sasl is None


def test_sasl_scram_over_tls_with_secrets_from_file_and_env(tmp_path, monkeypatch):
    pw = tmp_path / "kafka-password"
    pw.write_text("s3cret-from-file\n")
    monkeypatch.setenv("RY_KEY_PASSWORD", "key-pass")
    c = parse_kafka({"bootstrap_servers": ["k1:9093"],
                     "tls": {"ca_file": "/etc/ca.pem", "cert_file": "/etc/c.pem",
                             "key_file": "/etc/c.key", "key_password": {"env": "RY_KEY_PASSWORD"}},
                     "sasl": {"mechanism": "SCRAM-SHA-512", "username": "railyard",
                              "password": {"file": str(pw)}}}, _where)
    assert c.security_protocol == "SASL_SSL"
    kw = c.admin_kwargs()
    assert kw["sasl_mechanism"] == "SCRAM-SHA-512" and kw["sasl_plain_username"] == "railyard"
    assert kw["sasl_plain_password"] == "s3cret-from-file"
    assert kw["ssl_password"] == "key-pass" and kw["ssl_cafile"] == "/etc/ca.pem"
    for text in (repr(c), str(c), repr(c.sasl.password)):
        assert "s3cret" not in text and "key-pass" not in text
    assert "<redacted>" in repr(c.sasl.password)


def test_missing_secret_names_the_variable_not_a_value(monkeypatch):
    monkeypatch.delenv("RY_NOT_SET", raising=False)
    c = parse_kafka({"bootstrap_servers": ["k1:9092"],
                     "sasl": {"mechanism": "PLAIN", "username": "u",
                              "password": {"env": "RY_NOT_SET"}}}, _where)
    assert c.security_protocol == "SASL_PLAINTEXT"
    with pytest.raises(BadInput, match=r"^cfg: clusters\[0\]\.gateway\.sasl\.password: "
                                       r"environment variable RY_NOT_SET is not set$"):
        c.admin_kwargs()
    with pytest.raises(BadInput, match="cannot read /no/such/file"):
        Secret(file="/no/such/file", where="x").read()


@pytest.mark.parametrize(("value", "message"), [
    ({"bootstrap_servers": ["k1"]}, r"gateway\.bootstrap_servers: expected host:port"),
    ({"bootstrap_servers": ["k1:9092"], "sasl": {"mechanism": "PLAIN", "username": "u",
                                                 "password": "hunter2"}},
     r"gateway\.sasl\.password: never write a secret in the config"),
    ({"bootstrap_servers": ["k1:9092"], "sasl": {"mechanism": "GSSAPI", "username": "u",
                                                 "password": {"env": "X"}}},
     r"gateway\.sasl\.mechanism: expected one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512"),
    ({"bootstrap_servers": ["k1:9092"], "security_protocol": "SASL_SSL"},
     r"gateway\.security_protocol: SASL_SSL needs a sasl section"),
    ({"bootstrap_servers": ["k1:9092"], "tls": {"cert_file": "/c.pem"}},
     r"gateway\.tls\.key_file: a client certificate needs both"),
    ({"bootstrap_servers": ["k1:9092"], "tls": {"ca": "/c.pem"}},
     r"gateway\.tls\.ca: unknown key"),
    ({"bootstrap_servers": ["k1:9092"], "timeout_seconds": 0},
     r"gateway\.timeout_seconds: expected seconds"),
])
def test_config_errors_are_one_line(value, message):
    with pytest.raises(BadInput, match=message) as e:
        parse_kafka(value, _where)
    assert "hunter2" not in str(e.value) and "\n" not in str(e.value)


def test_ssl_without_a_tls_section_uses_system_cas():
    c = parse_kafka({"bootstrap_servers": ["k1:9093"], "security_protocol": "SSL"}, _where)
    assert c.tls is not None and c.tls.ca_file is None and c.tls.check_hostname


def test_gateway_types():
    twin = parse_gateway({"type": "twin", "url": "http://x:1"}, _where, lambda key: "http://x:1")
    assert twin.type == "twin" and twin.url == "http://x:1" and twin.bootstrap_servers == ()
    kafka = parse_gateway({"type": "kafka", "bootstrap_servers": ["k:1"]}, _where, str)
    assert kafka.bootstrap_servers == ("k:1",)
    with pytest.raises(BadInput, match=r"gateway\.type: required"):
        parse_gateway({}, _where, str)
    with pytest.raises(BadInput, match=r"gateway\.bootstrap_servers: unknown key"):
        parse_gateway({"type": "twin", "url": "http://x:1", "bootstrap_servers": []},
                      _where, str)


def test_log_dirs_and_retention_requests_ask_for_everything_they_need():
    """DescribeLogDirs with no topic filter (every partition on the broker, as
    kafka-log-dirs --describe), and one DescribeConfigs naming retention.ms per topic."""
    from kafka.protocol.admin import DescribeLogDirsRequest
    assert _wire(DescribeLogDirsRequest(topics=None), 4) == {"topics": None}
    req = k.describe_configs_request([(2, "a"), (2, "b")], ["retention.ms"])
    assert _wire(req, 4)["resources"] == [
        {"resource_type": 2, "resource_name": n, "configuration_keys": ["retention.ms"]}
        for n in ("a", "b")]


# ---- answers (encoded as a broker sends them, decoded by the client) -------------------
def _answer(response, version: int):
    return type(response).decode(response.encode(version=version), version=version)


def test_quota_entities_as_kafka_describes_them():
    from kafka.protocol.admin import DescribeClientQuotasResponse as R
    E = R.EntryData
    resp = R(throttle_time_ms=0, error_code=0, error_message=None, entries=[
        E(entity=[E.EntityData(entity_type="user", entity_name=None)],
          values=[E.ValueData(key="controller_mutation_rate", value=5.0)]),
        E(entity=[E.EntityData(entity_type="user", entity_name="tenant"),
                  E.EntityData(entity_type="client-id", entity_name="app")],
          values=[E.ValueData(key="producer_byte_rate", value=1e6),
                  E.ValueData(key="controller_mutation_rate", value=0.5)]),
        E(entity=[E.EntityData(entity_type="client-id", entity_name="etl")],
          values=[E.ValueData(key="consumer_byte_rate", value=1e6)])])  # not a KIP-599 quota
    assert k.quotas_from(_answer(resp, 1)) == [
        {"user": "<default>", "client_id": None, "controller_mutation_rate": 5.0},
        {"user": "tenant", "client_id": "app", "controller_mutation_rate": 0.5}]


def _ongoing(parts):
    from kafka.protocol.admin import ListPartitionReassignmentsResponse as R
    T = R.OngoingTopicReassignment
    P = T.OngoingPartitionReassignment
    return _answer(R(throttle_time_ms=0, error_code=0, error_message=None, topics=[
        T(name=topic, partitions=[P(partition_index=i, replicas=r, adding_replicas=a,
                                    removing_replicas=d) for i, r, a, d in ps])
        for topic, ps in parts]), 0)


def test_in_flight_moves_are_the_partitions_adding_or_removing_a_replica():
    resp = _ongoing([("orders", [(1, [1, 2, 4], [4], [3]), (0, [1, 2], [], [])]),
                     ("audit", [(0, [2, 3, 1], [], [1])])])
    assert k.reassignments_from(resp) == [
        {"topic": "audit", "partition": 0, "replicas": [2, 3, 1], "adding": [],
         "removing": [1]},
        {"topic": "orders", "partition": 1, "replicas": [1, 2, 4], "adding": [4],
         "removing": [3]}]


def _altered(results):
    from kafka.protocol.admin import AlterPartitionReassignmentsResponse as R
    T = R.ReassignableTopicResponse
    return _answer(R(throttle_time_ms=0, error_code=0, error_message=None, responses=[
        T(name="t", partitions=[T.ReassignablePartitionResponse(
            partition_index=i, error_code=code, error_message=msg) for i, code, msg in results])]),
        0)


def test_reassignment_answers():
    ok, failed = k.reassign_outcome(_altered([(0, 0, None), (1, 39, "bad")]), cancelling=False)
    assert ok == ["t-0"] and failed == [("t-1", 39, "bad")]  # INVALID_REPLICA_ASSIGNMENT
    # cancelling: a move that finished meanwhile is no refusal ...
    ok, failed = k.reassign_outcome(_altered([(0, 0, None), (1, 85, None)]), cancelling=True)
    assert ok == ["t-0"] and failed == []
    # ... unless nothing was in flight at all
    with pytest.raises(BadInput, match="no reassignment in progress for t-1"):
        k.reassign_outcome(_altered([(1, 85, None)]), cancelling=True)


def test_a_refused_write_is_a_gateway_error_with_kafkas_name():
    """What the executor retries (Kafka's retriable errors) and what fails a plan."""
    from backend.gateways.base import GatewayError
    from backend.gateways.kafka import KafkaGateway
    gw = KafkaGateway(parse_kafka({"bootstrap_servers": ["k1:9092"]}, _where))  # not connected
    with pytest.raises(GatewayError) as e:
        gw._rejected("AlterPartitionReassignments t-1", 39, "bad")
    assert e.value.code == "INVALID_REPLICA_ASSIGNMENT" and not e.value.retriable
    assert "AlterPartitionReassignments t-1 on k1:9092: bad" in str(e.value)
    with pytest.raises(GatewayError) as e:
        gw._rejected("CreateTopics", 89)
    assert e.value.code == "THROTTLING_QUOTA_EXCEEDED" and e.value.retriable
    gw._rejected("CreateTopics", 0)  # no error: nothing raised
