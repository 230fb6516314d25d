"""The demo's steady producer on the session's Apache Kafka outlives a deleted topic (a
shrink migration's last step): it drops that topic with one log line and the others keep
their traffic, where kafka-python's send waited 60 s for the topic and raised
KafkaTimeoutError, which ended the producer's thread and every topic's traffic."""

from __future__ import annotations

import logging
import threading
import time

import pytest
from kafka import KafkaConsumer, TopicPartition

from backend.localkafka import workload
from backend.localkafka.workload import SteadyProducer

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
    created = kafka_gateway.create_topics([{"name": t, "partitions": n, "rf": 2}
                                           for t, n in TOPICS.items()])
    assert not [r for r in created if r["error"]]
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
