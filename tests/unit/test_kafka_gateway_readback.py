"""When the Kafka gateway counts a write as visible: an alter's answer (and the next read on
any broker) must show it, since KRaft brokers apply the controller's record a moment after
the controller answers (tests/integration/test_kafka_gateway.py saw the old values)."""

from __future__ import annotations

from kafka.protocol.admin import DescribeConfigsResponse

from backend.gateways import kafka as k


def _result(rtype: int, name: str, entries: list[tuple[str, str | None, int]]):
    R = DescribeConfigsResponse[4]
    resp = R(throttle_time_ms=0, results=[R.DescribeConfigsResult(
        error_code=0, error_message=None, resource_type=rtype, resource_name=name,
        configs=[R.DescribeConfigsResult.DescribeConfigsResourceResult(
            name=n, value=v, read_only=False, config_source=src, is_sensitive=False,
            synonyms=[], config_type=2, documentation=None) for n, v, src in entries])])
    return R.decode(resp.encode(version=4), version=4).results[0]


RATE = "leader.replication.throttled.rate"


def test_a_set_shows_once_the_new_value_is_read():
    stale = _result(4, "1", [(RATE, "1000", 2)])  # DYNAMIC_BROKER_CONFIG, the old value
    fresh = _result(4, "1", [(RATE, "2000", 2)])
    assert not k.shows_write(stale, 4, "1", {RATE: 2000}, [])
    assert k.shows_write(fresh, 4, "1", {RATE: 2000}, [])
    # Tansu labels what it stores DEFAULT_CONFIG (5): the value alone counts
    assert k.shows_write(_result(2, "t", [("retention.ms", "5", 5)]), 2, "t",
                         {"retention.ms": "5"}, [])


def test_a_delete_shows_once_the_entity_no_longer_sets_the_key():
    own = _result(2, "t", [("retention.ms", "5", 1)])  # DYNAMIC_TOPIC_CONFIG
    fallen_back = _result(2, "t", [("retention.ms", "604800000", 5)])
    assert not k.shows_write(own, 2, "t", {}, ["retention.ms"])
    assert k.shows_write(fallen_back, 2, "t", {}, ["retention.ms"])
    # on the default entity, its own source is DYNAMIC_DEFAULT_BROKER_CONFIG (3)
    assert not k.shows_write(_result(4, "", [(RATE, "7", 3)]), 4, "", {}, [RATE])


def test_a_quota_shows_at_its_rate_or_gone():
    quotas = [{"user": "alice", "client_id": None, "controller_mutation_rate": 5.0}]
    assert k.shows_quota(quotas, "alice", None, 5)
    assert not k.shows_quota(quotas, "alice", None, 2.5)
    assert not k.shows_quota(quotas, "alice", None, None)
    assert k.shows_quota(quotas, None, "alice", None)
