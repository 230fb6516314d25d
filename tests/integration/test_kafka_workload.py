"""The demo's steady producer on the session's Apache Kafka outlives a deleted topic (a
shrink migration's last step): it drops that topic with one log line and the others keep
their traffic, where kafka-python's send waited 60 s for the topic and raised
KafkaTimeoutError, which ended the producer's thread and every topic's traffic.

Told that a topic moved (a shrink migration's new topic, as an application is switched at
its step 2), the producer writes that topic's share to the new one, over the partitions
the cluster gives it, once the cluster has it; the consumer group reading them reads the
old topic to its end, then the new one, so the group's lag on the old one reads 0 (the
migration's step 3)."""

from __future__ import annotations

import logging
import threading
import time

import pytest
from kafka import KafkaConsumer, TopicPartition

from backend.errors import Unavailable
from backend.localkafka import workload
from backend.localkafka.workload import SteadyConsumer, SteadyProducer
from tests.kafka_moves import delete_group

pytestmark = pytest.mark.integration

TOPICS = {"wl-orders": 2, "wl-payments": 2, "wl-clicks": 2}


def _ends(bootstrap, topics) -> dict[str, int]:
    """Records in each topic now (its partitions' end offsets, summed)."""
    c = KafkaConsumer(bootstrap_servers=list(bootstrap), client_id="wl-test")
    try:
        tps = [TopicPartition(t, p) for t in topics for p in range(TOPICS[t])]
        ends = c.end_offsets(tps)
    finally:
        c.close()
    return {t: sum(v for tp, v in ends.items() if tp.topic == t) for t in topics}


def _wait(what, seconds):
    deadline = time.monotonic() + seconds
    while not what() and time.monotonic() < deadline:
        time.sleep(0.2)
    return what()


def test_the_steady_producer_drops_a_deleted_topic_and_keeps_writing_the_others(
        kafka_cluster, kafka_gateway, caplog, monkeypatch):
    caplog.set_level(logging.WARNING, logger=workload.__name__)
    raised: list[str] = []  # a thread of the producer's that ended on an exception
    monkeypatch.setattr(threading, "excepthook", lambda a: raised.append(a.thread.name))
    bootstrap = kafka_cluster.bootstrap_servers
    _create(kafka_gateway, TOPICS)
    try:
        with SteadyProducer(bootstrap, TOPICS, rate=200_000, look=1.0) as writer:
            assert _wait(lambda: min(_ends(bootstrap, TOPICS).values()) >= 5, 60)
            kafka_gateway.delete_topics(["wl-clicks"])
            assert _wait(lambda: writer.dropped == {"wl-clicks"}, 30)
            kept = ("wl-orders", "wl-payments")
            before = _ends(bootstrap, kept)
            assert _wait(lambda: all(n >= before[t] + 20
                                     for t, n in _ends(bootstrap, kept).items()), 30)
            assert writer._thread.is_alive()
        assert not writer._thread.is_alive() and raised == []
        lines = [r.getMessage() for r in caplog.records
                 if r.name == workload.__name__ and "'wl-clicks'" in r.getMessage()]
        assert len(lines) == 1 and "stopped writing" in lines[0]
    finally:
        kafka_gateway.delete_topics([t for t in TOPICS if t != "wl-clicks"])


def _create(gateway, topics: dict[str, int]) -> None:
    """``topics`` (name -> partitions) created at replication factor 2."""
    created = gateway.create_topics([{"name": t, "partitions": n, "rf": 2}
                                     for t, n in topics.items()])
    assert not [r for r in created if r["error"]], created


def _offsets(bootstrap, topics: dict[str, int]) -> dict[TopicPartition, int]:
    """Each partition's end offset now."""
    c = KafkaConsumer(bootstrap_servers=list(bootstrap), client_id="wl-test")
    try:
        return c.end_offsets([TopicPartition(t, p) for t, n in topics.items()
                              for p in range(n)])
    finally:
        c.close()


def _written(bootstrap, topics: dict[str, int]) -> dict[str, int]:
    """Records in each topic now."""
    ends = _offsets(bootstrap, topics)
    return {t: sum(v for tp, v in ends.items() if tp.topic == t) for t in topics}


def _lags(gateway, topic: str) -> dict[str, int]:
    """Each group's lag on ``topic``; none while the cluster cannot say yet (a fresh
    cluster's group coordinator loading __consumer_offsets)."""
    try:
        return gateway.group_lags(topic)
    except Unavailable:
        return {}


MOVING = {"wl-mv-orders": 2, "wl-mv-clicks": 2}
MOVED_TO = "wl-mv-clicks.p3"  # three partitions: the producer writes to each


def test_the_steady_producer_moves_a_topics_traffic_to_the_new_topic_once_it_exists(
        kafka_cluster, kafka_gateway, caplog):
    caplog.set_level(logging.WARNING, logger=workload.__name__)
    bootstrap = kafka_cluster.bootstrap_servers
    _create(kafka_gateway, MOVING)
    told: dict[str, str] = {}
    try:
        with SteadyProducer(bootstrap, MOVING, rate=200_000, look=1.0,
                            moves=lambda: told, move_line="moved '{old}' to '{new}'") as writer:
            assert _wait(lambda: min(_written(bootstrap, MOVING).values()) >= 5, 60)
            # told before the new topic exists: the old one keeps its traffic
            told["wl-mv-clicks"] = MOVED_TO
            before = _written(bootstrap, MOVING)["wl-mv-clicks"]
            time.sleep(2.5)  # two looks
            assert writer.moved == {}
            assert _written(bootstrap, MOVING)["wl-mv-clicks"] >= before + 20
            _create(kafka_gateway, {MOVED_TO: 3})
            assert _wait(lambda: writer.moved == {"wl-mv-clicks": MOVED_TO}, 30)
            time.sleep(1.0)  # the records sent before the move have landed
            old = _offsets(bootstrap, {"wl-mv-clicks": 2})
            new = {MOVED_TO: 3}
            # every partition of the new topic written to, the old topic no longer
            assert _wait(lambda: min(_offsets(bootstrap, new).values()) >= 10, 30)
            orders = _written(bootstrap, MOVING)["wl-mv-orders"]
            assert _wait(lambda: _written(bootstrap, MOVING)["wl-mv-orders"] >= orders + 10,
                         30)
            assert _offsets(bootstrap, {"wl-mv-clicks": 2}) == old
            # the old topic deleted (the migration's last step): nothing to drop
            kafka_gateway.delete_topics(["wl-mv-clicks"])
            time.sleep(2.5)
            assert writer.dropped == set() and writer._thread.is_alive()
            assert writer.errors == 0
        lines = [r.getMessage() for r in caplog.records if r.name == workload.__name__]
        assert lines == [f"moved 'wl-mv-clicks' to '{MOVED_TO}'"]
    finally:
        kafka_gateway.delete_topics([t for t in (*MOVING, MOVED_TO)
                                     if kafka_gateway.describe_topics([t], missing_ok=True)])


READING = {"wl-rd-orders": 2, "wl-rd-clicks": 2}
READ_TO = "wl-rd-clicks.p1"
READERS = "wl-readers"


def test_the_steady_consumer_reads_the_old_topic_to_its_end_then_the_new_one(
        kafka_cluster, kafka_gateway, caplog):
    caplog.set_level(logging.WARNING, logger=workload.__name__)
    bootstrap = kafka_cluster.bootstrap_servers
    _create(kafka_gateway, READING)
    told: dict[str, str] = {}
    try:
        with SteadyProducer(bootstrap, READING, rate=200_000, look=1.0,
                            moves=lambda: told) as writer, \
                SteadyConsumer(bootstrap, list(READING), READERS, look=1.0,
                               moves=lambda: writer.moved) as readers:
            assert _wait(lambda: readers.reading == set(READING), 30)
            # the group commits what it reads: some lag now and then, never the whole log
            assert _wait(lambda: READERS in _lags(kafka_gateway, "wl-rd-clicks"), 60)
            assert readers.records > 0
            _create(kafka_gateway, {READ_TO: 1})
            told["wl-rd-clicks"] = READ_TO
            assert _wait(lambda: writer.moved == {"wl-rd-clicks": READ_TO}, 30)
            # the producer moved: the group reads the new topic beside the old one until
            # it has read the old one to its end, then leaves it
            assert _wait(lambda: readers.left == {"wl-rd-clicks"}, 60), readers.reading
            assert readers.reading == {"wl-rd-orders", READ_TO}
            assert kafka_gateway.group_lags("wl-rd-clicks") == {READERS: 0}
            # and reads the new topic, committing there too
            assert _wait(lambda: READERS in _lags(kafka_gateway, READ_TO), 30)
            writer.stop()  # the group reads the new topic to its end too
            assert _wait(lambda: _lags(kafka_gateway, READ_TO) == {READERS: 0}, 30)
            assert readers._thread.is_alive() and readers.errors == 0
        assert not readers._thread.is_alive()
        lines = [r.getMessage() for r in caplog.records if r.name == workload.__name__
                 and "left" in r.getMessage()]
        assert lines == [f"steady consumer: group '{READERS}' read topic 'wl-rd-clicks' to "
                         "its end and left it"]
        assert kafka_gateway.group_lags("wl-rd-clicks") == {READERS: 0}
    finally:
        delete_group(bootstrap, READERS)
        kafka_gateway.delete_topics([t for t in (*READING, READ_TO)
                                     if kafka_gateway.describe_topics([t], missing_ok=True)])
