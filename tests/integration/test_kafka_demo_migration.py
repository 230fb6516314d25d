"""A shrink migration in `railyard demo --kafka` runs to its end: the demo's producer and
consumer group act as the application the operator switches. Once the migration has
created its new topic, the producer writes the old topic's share there (one line saying
so), so Prometheus soon reads no writes to the old topic and step 2 is confirmed, where it
was refused for as long as the demo ran; the group reads the old topic to its end, then
the new one, so step 3 is confirmed with the group named; the old topic deleted, step 4
completes the plan. On the session's Apache Kafka, scraped by Prometheus, the demo's
topics and group under this test's names."""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime

import pytest

from backend.errors import Conflict
from backend.localkafka import workload
from backend.model.snapshot import Limits
from backend.services import execution, migration_checks, plan_preview, plans, shrink_execution
from backend.services.cluster import ClusterSource
from backend.store.store import open_store
from dashboard import demo_kafka
from dashboard.demo_kafka import KafkaDemo
from tests.integration.kafka_prometheus import kafka_prometheus, poll
from tests.kafka_moves import delete_group, wait_until
from tests.plan_helpers import APPROVER, OPERATOR

pytestmark = pytest.mark.integration

TOPICS = {"dm-orders": 3, "dm-clicks": 6}
OLD, NEW = "dm-clicks", "dm-clicks.p3"
GROUP = "dm-readers"


@pytest.fixture
def prometheus(kafka_cluster, tmp_path):
    yield from kafka_prometheus(kafka_cluster, tmp_path / "prom-demo-migration")


def test_a_shrink_migration_in_the_kafka_demo_has_its_steps_confirmed_by_the_cluster(
        kafka_cluster, kafka_gateway, prometheus, tmp_path, monkeypatch, caplog):
    caplog.set_level(logging.WARNING, logger=workload.__name__)
    monkeypatch.setattr(demo_kafka, "TOPICS", TOPICS)
    monkeypatch.setattr(demo_kafka, "READERS", GROUP)
    gw, said = kafka_gateway, []
    demo = KafkaDemo(tmp_path / "kafka", cluster=kafka_cluster, topic_bytes=300_000,
                     producer_rate=100_000)
    store = open_store(f"sqlite:///{tmp_path}/railyard.db")
    thread = None
    try:
        demo.start(said.append)
        demo.follow_migrations(store)  # as the demo stack does once its store is open
        source = ClusterSource("kafka", None, Limits(), prometheus_url=prometheus.url,
                               metrics_ttl=0, prometheus_timeout=10, gateway=gw)

        def writing() -> bool | str:
            try:
                return migration_checks.producers_switched(source, OLD, NEW, 2)
            except Conflict:
                return True
        # (a scrape that times out on a busy machine leaves no series until the next one)
        poll(f"Prometheus to read the producer's writes to '{OLD}'", writing,
             lambda said: said is True, 180)

        snap = gw.assignment()
        draft = plan_preview.from_shrink(snap, OLD, 3, delay_ms=0)
        assert draft.content["migration"]["new_topic"] == NEW
        plan = plans.propose(store, OPERATOR, cluster=demo_kafka.CLUSTER, kind="shrink",
                             content=draft.content, preview=draft.preview, snapshot=snap,
                             now=datetime.now(UTC))

        def topics_of(_c, names):
            return gw.topics_assignment(names)
        plans.approve(store, APPROVER, plan.id, sha256=plan.sha256, topics_of=topics_of)
        plans.execute(store, OPERATOR, plan.id, gateway=gw, migration=True,
                      topics_of=topics_of)
        assert demo.producer.moved == {}
        thread = execution.executor_thread(store, [demo_kafka.CLUSTER], lambda _c: gw,
                                          lambda _c: gw.assignment(), holder="demo-mig")

        def created() -> bool:
            thread.cycle(time.time())
            return execution.progress(store, plan.id, time.time())["shrink"]["steps"][0][
                "done"]
        wait_until(created, 60, f"the migration to create '{NEW}'")

        def check(step: int) -> dict:
            return shrink_execution.check_step(store, OPERATOR, plan.id, step,
                                               source_of=lambda _c: source,
                                               topics_of=topics_of)
        # the producer wrote to the old topic within the last 60 s: refused, as before
        with pytest.raises(Conflict, match=f"step 2: producers still write to '{OLD}'"):
            check(1)
        # the demo's producer follows the migration, as the application switched
        wait_until(lambda: demo.producer.moved == {OLD: NEW}, 30, "the producer to move")
        moved = [r.getMessage() for r in caplog.records
                 if r.name == workload.__name__ and "moved to" in r.getMessage()]
        assert moved == [f"demo: the producer of '{OLD}' moved to '{NEW}', as the "
                         "application a migration's step 2 switches"]

        def checked(step: int):
            try:
                return check(step)["checked"]["cluster"]
            except Conflict:
                return None
        # once 60 s pass without a write to the old topic (and a scrape or two)
        poll("Prometheus to read no writes to the old topic", writing,
             lambda said: str(said).startswith("confirmed"), 180)
        assert checked(1) == (
            f"confirmed: no writes to '{OLD}' over the last 60 s (BytesInPerSec)")
        # the demo's group read the old topic to its end (long since)
        assert wait_until(lambda: checked(2), 30, "step 3 to be confirmed", every=1.0) == (
            f"confirmed: every consumer group with offsets on '{OLD}' is at its end "
            f"({GROUP})")
        assert wait_until(lambda: demo.readers.left == {OLD}, 30, "the group to move")
        assert demo.readers.reading == {"dm-orders", NEW}
        gw.delete_topics([OLD])  # the operator's, then checked off
        # the check reads the metadata of whichever broker answers it, and each learns of
        # the deletion on its own, within seconds: waiting for one broker's was a race
        assert wait_until(lambda: checked(3), 30, "step 4 to be confirmed", every=1.0) == \
            "confirmed: the topic is gone"
        thread.cycle(time.time())
        assert plans.get(store, plan.id).state == "completed"
        # the workload goes on over the new topic: nothing dropped, nothing failed
        sent = demo.producer.sent
        wait_until(lambda: demo.producer.sent >= sent + 50_000, 30, "more writes")
        assert demo.producer.dropped == set() and demo.readers.errors == 0
    finally:
        if thread is not None:
            thread.stop()
        followed = demo.store is not None
        demo.stop(said.append)  # closes the store it followed
        if not followed:
            store.close()
        gw.delete_topics([t for t in (*TOPICS, NEW)
                          if gw.describe_topics([t], missing_ok=True)])
        delete_group(kafka_cluster.bootstrap_servers, GROUP)
    assert any(f"stopped consumer group '{GROUP}'" in line for line in said)
