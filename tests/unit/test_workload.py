"""The demo's steady producer (backend/localkafka/workload.py) outlives a deleted topic: a
fake cluster whose producer raises on a missing topic as kafka-python does (its send
waits for the topic's metadata, then raises KafkaTimeoutError)."""

from __future__ import annotations

import logging
import time
from collections import Counter

from kafka.errors import KafkaTimeoutError

from backend.localkafka import workload
from backend.localkafka.workload import RECORD_BYTES, SteadyProducer


class FakeCluster:
    """Topics -> partitions; a producer on it counts what each topic got."""

    def __init__(self, topics: dict[str, int]) -> None:
        self.topics = dict(topics)
        self.got: Counter[str] = Counter()
        self.closed = False

    def producer(self, bootstrap, client_id="x", **_kw):
        return self

    def partitions(self, bootstrap, topics):
        return {t: self.topics[t] for t in topics if t in self.topics}

    def send(self, topic, value, partition=None):
        if topic not in self.topics:
            raise KafkaTimeoutError("Failed to update metadata after 60.0 secs.")
        assert partition < self.topics[topic]
        self.got[topic] += 1
        return self

    def add_errback(self, _fn):
        return self

    def close(self, timeout=None):
        self.closed = True


def _wait(what, seconds=5.0):
    deadline = time.monotonic() + seconds
    while not what() and time.monotonic() < deadline:
        time.sleep(0.02)
    return what()


def test_a_deleted_topic_is_dropped_and_the_others_keep_their_traffic(monkeypatch, caplog):
    cluster = FakeCluster({"orders": 2, "payments": 2, "clicks": 2})
    monkeypatch.setattr(workload, "producer", cluster.producer)
    monkeypatch.setattr(workload, "existing_partitions", cluster.partitions, raising=False)
    caplog.set_level(logging.WARNING, logger=workload.__name__)
    writer = SteadyProducer(["fake:9092"], {"orders": 2, "payments": 2, "clicks": 2},
                            rate=100 * RECORD_BYTES, tick=0.01, look=0.2)
    with writer:
        assert _wait(lambda: min(cluster.got[t] for t in ("orders", "payments", "clicks")) >= 3)
        del cluster.topics["clicks"]  # the migration's last step
        time.sleep(0.5)  # a send found it gone, or a look did
        before = Counter(cluster.got)
        assert _wait(lambda: all(cluster.got[t] >= before[t] + 10
                                 for t in ("orders", "payments")))
        assert writer._thread.is_alive()
        assert cluster.got["clicks"] == before["clicks"]
        assert writer.dropped == {"clicks"}
        dropped = [r.getMessage() for r in caplog.records
                   if r.name == workload.__name__ and "'clicks'" in r.getMessage()]
        assert len(dropped) == 1 and "stopped writing" in dropped[0]

        cluster.topics["clicks"] = 1  # created again (with one partition): written again
        assert _wait(lambda: cluster.got["clicks"] > before["clicks"] + 3)
        assert writer.dropped == set()
    assert cluster.closed and not writer._thread.is_alive()


def test_a_deleted_topic_one_broker_still_lists_is_not_taken_back(monkeypatch, caplog):
    """Metadata comes from whichever broker answers, and one that has not applied the
    deletion yet still lists the topic: a look that finds it once is not "back" (under
    load the log read stopped, back, stopped for one deletion)."""
    cluster = FakeCluster({"orders": 1, "clicks": 1})
    looks = {"n": 0, "gone": None}  # gone: the first look that did not find it

    def stale_once(bootstrap, topics):
        looks["n"] += 1
        found = cluster.partitions(bootstrap, topics)
        if "clicks" not in found and looks["gone"] is None:
            looks["gone"] = looks["n"]
        if looks["gone"] is not None and looks["n"] == looks["gone"] + 1:
            return {**found, "clicks": 1}  # the next look asks a stale broker
        return found

    monkeypatch.setattr(workload, "producer", cluster.producer)
    monkeypatch.setattr(workload, "existing_partitions", stale_once)
    caplog.set_level(logging.WARNING, logger=workload.__name__)
    with SteadyProducer(["fake:9092"], {"orders": 1, "clicks": 1}, rate=100 * RECORD_BYTES,
                        tick=0.01, look=0.05) as writer:
        assert _wait(lambda: looks["n"] >= 2 and cluster.got["clicks"] >= 1)
        del cluster.topics["clicks"]
        assert _wait(lambda: looks["gone"] is not None and looks["n"] >= looks["gone"] + 4)
        assert writer.dropped == {"clicks"}
    lines = [r.getMessage() for r in caplog.records
             if r.name == workload.__name__ and "'clicks'" in r.getMessage()]
    assert len(lines) == 1 and "stopped writing" in lines[0]


def test_a_failed_look_keeps_the_topics_it_had(monkeypatch):
    cluster = FakeCluster({"orders": 1})
    looks = {"n": 0}

    def flaky(bootstrap, topics):
        looks["n"] += 1
        if looks["n"] > 1:
            raise KafkaTimeoutError("no broker answered")
        return cluster.partitions(bootstrap, topics)

    monkeypatch.setattr(workload, "producer", cluster.producer)
    monkeypatch.setattr(workload, "existing_partitions", flaky)
    with SteadyProducer(["fake:9092"], {"orders": 1}, rate=100 * RECORD_BYTES, tick=0.01,
                        look=0.05) as writer:
        assert _wait(lambda: looks["n"] >= 3)
        sent = cluster.got["orders"]
        assert _wait(lambda: cluster.got["orders"] >= sent + 5)
        assert writer._thread.is_alive() and writer.errors >= 2 and writer.dropped == set()
