"""The adaptive throttle on Apache Kafka (issue 28): the executor (in process, on the
session's three brokers through Railyard's gateway) runs a drain of broker 3 approved
adaptive, reading the brokers' traffic from a real Prometheus scraping their JMX exporters
(services.throttle_traffic through the catalog). Read back with kafka-python while it
moves: the broker rates it sets stay between the floor and the ceiling, and follow the
traffic (below the ceiling once the headroom is smaller); afterwards every rate is gone
again, and an operator's own throttle is back exactly."""

from __future__ import annotations

import time

import pytest
from kafka import KafkaAdminClient

from backend.errors import Unavailable
from backend.executor.adaptive import ControlSettings, ThrottleControl
from backend.executor.freeze import executable_content
from backend.executor.loop import Executor
from backend.gateways.kafka import topics_snapshot
from backend.services import reassign, throttle_traffic
from backend.services.cluster import ClusterSource
from backend.store.executions import ExecutionRecords
from tests.executor_rig import ListJournal, sqlite_store
from tests.integration.kafka_prometheus import kafka_prometheus, poll
from tests.kafka_moves import (
    LEADER_RATE,
    create_placed,
    delete_topics,
    fill,
    in_flight,
    raw_rates,
    throttle_state,
    wait_until,
)

pytestmark = [pytest.mark.integration, pytest.mark.kafka]

MB = 1024 * 1024
BROKERS = (1, 2, 3)
PLACEMENT = [[3, 1], [1, 3], [3, 2], [2, 3]]  # broker 3 holds one replica of each
SIZES = [8 * MB, 8 * MB, 8 * MB, 8 * MB]
# each of brokers 1 and 2 takes 16 MiB: at least 8 s at the ceiling, so the batch is still
# in flight at the executor's next tick (its first look) however slow a loaded machine's
# first tick is
CEILING, FLOOR = 2_000_000, 500_000  # bytes/s
# a network this small makes the replication itself go over capacity at the ceiling
# (kafka-kit counts that over-capacity part off the headroom): the rates fall below it
CAPACITY = 1_500_000.0
OPERATORS_OWN = ("broker", "2", LEADER_RATE, "77000000")
TOPIC = "ex-adaptive-drain"


@pytest.fixture
def prometheus(kafka_cluster, tmp_path):
    yield from kafka_prometheus(kafka_cluster, tmp_path / "prom-adaptive")


@pytest.fixture
def raw(kafka_cluster):
    admin = KafkaAdminClient(bootstrap_servers=kafka_cluster.bootstrap_servers,
                             request_timeout_ms=10000, client_id="adaptive-test-raw")
    yield admin
    admin.close()


def test_an_adaptive_drain_sets_rates_within_the_band_and_restores_them(
        kafka_cluster, kafka_gateway, prometheus, raw, tmp_path):
    gw = kafka_gateway
    delete_topics(gw, [TOPIC])
    assert throttle_state(gw, BROKERS, []) == {}, "throttles left on the shared cluster"
    create_placed(gw, {TOPIC: PLACEMENT})
    fill(kafka_cluster.bootstrap_servers, [TOPIC], SIZES)
    gw.alter_configs(OPERATORS_OWN[0], OPERATORS_OWN[1], set_={OPERATORS_OWN[2]:
                                                               OPERATORS_OWN[3]})
    try:
        snap = topics_snapshot("kafka", gw.describe_topics([TOPIC]),
                               gw.describe_cluster()["brokers"])
        out = reassign.generate(snap, reassign.goal("drain", (3,)), snap.limits)
        assert out["ok"], out["summary"]
        content = executable_content(snap, out["plan"], CEILING, 4, 1250,
                                     {"mode": "adaptive", "floor": FLOOR})
        records = ExecutionRecords(sqlite_store(tmp_path / "s.db"))
        journal = ListJournal(records.store)
        records.create(1, "kafka", content, "x" * 64,
                       [len(b) for b in content["execution"]["batches"]], "olga", time.time())
        source = ClusterSource("kafka", None, snap.limits, prometheus_url=prometheus.url,
                               metrics_ttl=0, prometheus_timeout=10)
        traffic = throttle_traffic.PrometheusTraffic(source)
        # the brokers' traffic in Prometheus before the plan starts (two scrapes for a
        # rate): on a loaded machine the drain can end before the first scrape lands,
        # and the controller then only ever holds (its silent case is a unit test)
        poll("every broker's traffic in Prometheus", lambda: _answers(traffic), bool)
        control = ThrottleControl(records, journal, traffic,
                                  ControlSettings(interval_seconds=2, hold_seconds=60,
                                                  network_capacity=CAPACITY))
        executor = Executor(records, gw, journal, control=control)
        seen: list[dict] = []
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            ex = executor.tick(1, time.time())
            if ex.state in ("completed", "failed", "cancelled"):
                break
            seen.append(raw_rates(raw, BROKERS))
            time.sleep(0.5)
        assert ex.state == "completed", ex.cause
        looks = records.throttle_ticks(1)
        measured = [lk for lk in looks if lk["note"] is None]
        assert measured, (f"{len(seen)} ticks while it moved", [lk["note"] for lk in looks])
        # every rate the plan set, read back with kafka-python, within [floor, ceiling]
        # (broker 2's leader rate is the operator's until the plan sets its own)
        ours = [int(v) for rates in seen for b, cfg in rates.items() for k, v in cfg.items()
                if (b, k) != (OPERATORS_OWN[1], OPERATORS_OWN[2]) or v != OPERATORS_OWN[3]]
        assert ours and all(FLOOR <= v <= CEILING for v in ours)
        adjusted = [d for _, a, d, _ in journal.entries if a == "throttle_adjusted"]
        assert adjusted, "the controller never changed a rate"
        assert any(v < CEILING for rates in seen for cfg in rates.values()
                   for v in map(int, cfg.values()) if v != int(OPERATORS_OWN[3]))
        # afterwards: no rate of the plan left, the operator's own back exactly
        want = {OPERATORS_OWN[1]: {OPERATORS_OWN[2]: OPERATORS_OWN[3]}}
        wait_until(lambda: raw_rates(raw, BROKERS) == want, 30, "the brokers' rates put back")
    finally:
        if in_flight(gw, [TOPIC]):
            gw.cancel_reassignments(list(in_flight(gw, [TOPIC])))
        for (etype, name), cfg in throttle_state(gw, BROKERS, [TOPIC]).items():
            gw.alter_configs(etype, name, delete=list(cfg))
        delete_topics(gw, [TOPIC])


def _answers(traffic: throttle_traffic.PrometheusTraffic) -> bool:
    try:
        traffic.broker_traffic(list(BROKERS))
    except Unavailable:
        return False
    return True
