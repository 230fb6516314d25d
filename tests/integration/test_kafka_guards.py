"""Guard-rail stops on Apache Kafka (issue 28): a throttled move between brokers 1 and 2
runs through Railyard's executor with its guards reading a real Prometheus scraping the
brokers' JMX exporters and the gateway. Broker 3, which the move does not touch, stops:
another topic's partitions are under-replicated outside the plan, so the executor pauses
(no new batch starts, the batch in flight drops to the guard floor, read back with
kafka-python); broker 3 comes back, the condition clears, the plan resumes by itself and
completes, and no throttle it set is left."""

from __future__ import annotations

import time

import pytest
from kafka import KafkaAdminClient

from backend.executor.freeze import executable_content
from backend.executor.guards import GUARD
from backend.executor.loop import Executor
from backend.gateways.kafka import topics_snapshot
from backend.model.guards import GuardSettings, Windows
from backend.services.cluster import ClusterSource
from backend.services.guards import watch_for
from backend.store.executions import ExecutionRecords
from tests.executor_rig import ListJournal, sqlite_store
from tests.integration.kafka_prometheus import kafka_prometheus
from tests.integration.test_kafka_plan_flow import restart_broker
from tests.kafka_moves import (
    create_placed,
    delete_topics,
    fill,
    in_flight,
    raw_rates,
    served,
    throttle_state,
    wait_until,
)

pytestmark = [pytest.mark.integration, pytest.mark.kafka]

MB = 1024 * 1024
BROKERS = (1, 2, 3)
MOVED, BYSTANDER = "ex-guarded-move", "ex-guarded-bystander"
# two single-replica partitions on broker 1, each moved to broker 2 in a batch of its own
# (one move per broker a batch): the first, held in flight, 24 MB at 2 MB/s (about 12 s);
# the second, which must not start while the plan is held, 4 MB
SIZES = [24 * MB, 4 * MB]
THROTTLE, FLOOR = 2_000_000, 500_000  # bytes/s
SETTINGS = GuardSettings(resume_after_seconds=3, floor=FLOOR)


@pytest.fixture
def prometheus(kafka_cluster, tmp_path):
    yield from kafka_prometheus(kafka_cluster, tmp_path / "prom-guards")


def test_a_broker_down_outside_the_plan_pauses_it_and_its_return_resumes_it(
        kafka_cluster, kafka_gateway, prometheus, tmp_path):
    gw = kafka_gateway
    delete_topics(gw, [MOVED, BYSTANDER])
    assert throttle_state(gw, BROKERS, []) == {}, "throttles left on the shared cluster"
    create_placed(gw, {MOVED: [[1]] * len(SIZES), BYSTANDER: [[3, 1], [3, 1]]})
    fill(kafka_cluster.bootstrap_servers, [MOVED], SIZES)
    raw = KafkaAdminClient(bootstrap_servers=kafka_cluster.bootstrap_servers,
                           request_timeout_ms=10000, client_id="guards-test-raw")
    stopped = False
    try:
        snap = topics_snapshot("kafka", gw.describe_topics([MOVED]),
                               gw.describe_cluster()["brokers"])
        plan = {"version": 1, "partitions": [
            {"topic": MOVED, "partition": p, "replicas": [2]} for p in range(len(SIZES))]}
        content = executable_content(snap, plan, THROTTLE, 1, 1250)
        assert content["execution"]["batches"] == [[p] for p in range(len(SIZES))]
        records = ExecutionRecords(sqlite_store(tmp_path / "s.db"))
        journal = ListJournal(records.store)
        records.create(1, "kafka", content, "x" * 64,
                       [len(b) for b in content["execution"]["batches"]], "olga", time.time())
        source = ClusterSource("kafka", None, snap.limits, prometheus_url=prometheus.url,
                               metrics_ttl=0, prometheus_timeout=10, gateway=gw)
        executor = Executor(records, gw, journal, watch=watch_for(source, SETTINGS, Windows()))

        def tick():
            ex = executor.tick(1, time.time())
            time.sleep(0.5)
            return ex

        wait_until(lambda: (ex := tick()).phase == "running" and in_flight(gw, [MOVED]) and ex,
                   60, "the first batch to be moving")
        kafka_cluster.stop_broker(3)
        stopped = True
        ex = wait_until(lambda: (e := tick()).state == "paused" and e, 90,
                        "the guards to pause the plan")
        assert ex.hold["kind"] == GUARD, ex.hold
        named = {c["condition"]: c["value"] for c in ex.hold["conditions"]}
        assert named.get("under_replicated", 0) >= 2 or "broker_down" in named, ex.hold
        held_at = ex.batch
        if in_flight(gw, [MOVED]):  # the batch in flight goes on at the guard floor
            wait_until(lambda: tick() and {v for cfg in raw_rates(raw, (1, 2)).values()
                                           for v in cfg.values()} == {str(FLOOR)},
                       30, "the batch in flight at the floor")
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            ex = tick()
            assert ex.state == "paused" and ex.batch == held_at, "a batch started while held"
        restart_broker(kafka_cluster, gw, 3)
        stopped = False
        ex = wait_until(lambda: (e := tick()).state in ("completed", "failed") and e, 240,
                        "the plan to resume and end")
        assert ex.state == "completed", ex.cause
        actions = [a for _, a, _, _ in journal.entries]
        assert "execution_held" in actions and "execution_released" in actions
        served(lambda: [p["replicas"] for p in gw.describe_topics([MOVED])[0]["partitions"]],
               [[2]] * len(SIZES), "the moved replicas")
        wait_until(lambda: raw_rates(raw, BROKERS) == {}, 30, "every rate put back")
        assert throttle_state(gw, BROKERS, [MOVED]) == {}
    finally:
        if stopped:
            restart_broker(kafka_cluster, gw, 3)
        if in_flight(gw, [MOVED]):
            gw.cancel_reassignments(list(in_flight(gw, [MOVED])))
        for (etype, name), cfg in throttle_state(gw, BROKERS, [MOVED]).items():
            gw.alter_configs(etype, name, delete=list(cfg))
        raw.close()
        delete_topics(gw, [MOVED, BYSTANDER])
