"""A reassignment previewed on a cluster whose write rates were unknown (the Kafka gateway
without Prometheus, or before Prometheus had the topics' bytes-in) says so: the demo's
first plan showed "Safe band 0 B/s .. 125 MB/s" with nothing saying that 0 was "unknown"
(KIP-73's lower bound is the moving partitions' write rate)."""

from __future__ import annotations

from dataclasses import replace

from backend.services import plan_preview
from tests.plan_helpers import ORDERS, cluster

MOVE = {"version": 1, "partitions": [{"topic": "orders", "partition": 0, "replicas": [3, 2]}]}
UNKNOWN = "write rates unknown (0): no Prometheus configured for this cluster"


def test_unknown_write_rates_are_a_risk_of_the_preview():
    snap = replace(cluster(ORDERS), notes=(UNKNOWN, "log sizes unknown (0): timeout"))
    risks = plan_preview.from_kafka_json(snap, MOVE, throttle=1e6).preview["risks"]
    assert risks == [
        "write rates unknown (0): no Prometheus configured for this cluster: the safe band's "
        "lower bound (the moving partitions' write rate, KIP-73) and the ETA assume nothing "
        "is written meanwhile; preview again once Prometheus has the topics' bytes-in rates"]
    goal = plan_preview.from_goal(snap, {"goal": "balance"}).preview["risks"]
    assert goal == risks[:1]


def test_known_write_rates_add_no_risk():
    assert plan_preview.from_kafka_json(cluster(ORDERS), MOVE, throttle=1e6) \
        .preview["risks"] == []
