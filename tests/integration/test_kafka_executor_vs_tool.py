"""Railyard's executor beside Kafka's own kafka-reassign-partitions, on Apache Kafka.

Two identical topics (same explicit placement, same data): Kafka's tool runs
`--execute --throttle R` for a plan on topic A, then Railyard's executor runs the same plan
on topic B exactly as the plan flow runs it (proposed, approved by a second person,
executed by the executor thread on the Kafka gateway). The two runs take turns rather than
overlapping: both set the same broker-level keys on the same three brokers, so run at once
each would see the other's throttle as "what was there before". An operator's own broker
throttle is on the cluster before each run.

While data moves, the configs are equal config by config (KIP-73: both rates on every
source and destination broker, the leader list naming the current replicas and the
follower list the new ones on each moving topic, with A's partitions read as B's). When
both are done they differ, as docs/executor.md says: `--verify` deletes the broker rates on
every broker of the cluster (the operator's own throttle with them) and the topic lists;
Railyard puts back what was there before and deletes only what it set."""

from __future__ import annotations

import json
import time

import pytest

from backend.services import execution, plan_preview, plans
from backend.store.store import open_store
from tests.kafka_moves import (
    FOLLOWER_RATE,
    FOLLOWER_REPLICAS,
    LEADER_RATE,
    LEADER_REPLICAS,
    create_placed,
    delete_topics,
    fill,
    in_flight,
    log_sizes,
    replicas,
    served,
    throttle_state,
    wait_until,
)
from tests.kafka_tools import kafka_reassign
from tests.plan_helpers import APPROVER, OPERATOR

pytestmark = pytest.mark.integration

A, B = "ex-vs-tool-a", "ex-vs-tool-b"
PLACEMENT = [[1, 2], [2, 1]]  # partition -> replicas, leader first
TARGET = [[3, 2], [2, 3]]  # broker 3 gets a replica of both partitions
# bytes of data in each partition: broker 3 fetches 10 MiB, more than Kafka's first burst
# can take (up to the rate x 11 s plus a 1 MiB response per partition, docs/throttle.md),
# so both moves are still in flight when the configs are read
PER_PARTITION = 5 * 1024 * 1024
# bytes/s per broker and side (KIP-73): about 21 s for broker 3's 10 MiB at this rate
THROTTLE = 500_000
BROKERS = (1, 2, 3)
OPERATORS_OWN = {("broker", "2"): {LEADER_RATE: "90000000"}}  # set before each run


def plan_for(topic: str) -> dict:
    return {"version": 1, "partitions": [{"topic": topic, "partition": p, "replicas": r}
                                         for p, r in enumerate(TARGET)]}


def as_b(state: dict) -> dict:
    """Topic A's configs read as topic B's (same partitions, same brokers)."""
    return {(etype, B if name == A else name): cfg for (etype, name), cfg in state.items()}


@pytest.fixture
def twins(kafka_cluster, kafka_gateway):
    """Topics A and B, identical; every throttle this test sets is gone afterwards."""
    gw = kafka_gateway
    delete_topics(gw, [A, B])  # a run killed midway may have left them
    assert throttle_state(gw, BROKERS, []) == {}, "throttles left on the shared cluster"
    create_placed(gw, {A: PLACEMENT, B: PLACEMENT})
    fill(kafka_cluster.bootstrap_servers, [A, B], [PER_PARTITION] * len(PLACEMENT))
    try:
        yield gw
    finally:
        for r in in_flight(gw, [A, B]):
            gw.cancel_reassignments([r])
        for (etype, name), cfg in throttle_state(gw, BROKERS, []).items():
            gw.alter_configs(etype, name, delete=list(cfg))
        delete_topics(gw, [A, B])


def test_throttles_equal_kafkas_tool_while_moving_and_differ_as_documented_after(
        twins, kafka_cluster, tmp_path):
    gw = twins
    bootstrap = kafka_cluster.bootstrap_servers[0]

    def set_operators_own() -> dict:
        for (etype, name), cfg in OPERATORS_OWN.items():
            gw.alter_configs(etype, name, set_=cfg)
        state = throttle_state(gw, BROKERS, [A, B])
        assert state == OPERATORS_OWN
        return state

    # ---- Kafka's tool on A ------------------------------------------------------------
    before_a = set_operators_own()
    plan_file = tmp_path / "a.json"
    plan_file.write_text(json.dumps(plan_for(A)))
    started = time.monotonic()
    kafka_reassign(bootstrap, ["--reassignment-json-file", str(plan_file), "--execute",
                               "--throttle", str(THROTTLE)])
    assert set(in_flight(gw, [A])) == {(A, 0), (A, 1)}
    during_a = throttle_state(gw, BROKERS, [A, B])
    assert set(in_flight(gw, [A])) == {(A, 0), (A, 1)}, "A finished while its configs were read"
    wait_until(lambda: not in_flight(gw, [A]), 120, "Kafka's reassignment of A to finish")
    took_a = time.monotonic() - started
    verify = kafka_reassign(bootstrap, ["--reassignment-json-file", str(plan_file),
                                        "--verify"]).stdout
    after_a = throttle_state(gw, BROKERS, [A, B])

    # ---- Railyard's executor on B, through the plan flow ------------------------------
    before_b = set_operators_own()
    store = open_store(f"sqlite:///{tmp_path}/plans.db")
    thread = execution.executor_thread(store, ["kafka"], lambda _c: gw,
                                      lambda _c: gw.assignment(), holder="vs-tool")
    try:
        snap = gw.assignment()
        draft = plan_preview.from_kafka_json(snap, plan_for(B), throttle=THROTTLE)
        plan = plans.propose(store, OPERATOR, cluster="kafka", kind="reassignment",
                             content=draft.content, preview=draft.preview, snapshot=snap,
                             throttle=THROTTLE, title="B as A")
        def topics_of(_cluster, names):
            return gw.topics_assignment(names)
        plans.approve(store, APPROVER, plan.id, sha256=plan.sha256, topics_of=topics_of)
        plans.request_execute(store, OPERATOR, plan.id, topics_of=topics_of)
        started = time.monotonic()
        thread.start()
        wait_until(lambda: set(in_flight(gw, [B])) == {(B, 0), (B, 1)}, 60,
                   "Railyard's reassignment of B to start")
        during_b = throttle_state(gw, BROKERS, [A, B])
        assert set(in_flight(gw, [B])) == {(B, 0), (B, 1)}, \
            "B finished while its configs were read"
        wait_until(lambda: plans.get(store, plan.id).state != "executing", 120,
                   "Railyard's plan to end")
        took_b = time.monotonic() - started
        assert plans.get(store, plan.id).state == "completed", \
            execution.progress(store, plan.id)
    finally:
        thread.stop()
        store.close()
    after_b = throttle_state(gw, BROKERS, [A, B])

    # ---- while data moved: equal config by config -------------------------------------
    rate = str(THROTTLE)
    assert during_b == {
        **{("broker", str(b)): {LEADER_RATE: rate, FOLLOWER_RATE: rate} for b in BROKERS},
        ("topic", B): {LEADER_REPLICAS: "0:1,0:2,1:1,1:2", FOLLOWER_REPLICAS: "0:3,1:3"}}
    assert as_b(during_a) == during_b

    # ---- afterwards: what --verify removes and what Railyard restores -----------------
    assert "Clearing broker-level throttles on brokers 1,2,3" in verify, verify
    assert f"Clearing topic-level throttles on topic {A}" in verify, verify
    assert before_a == before_b == OPERATORS_OWN
    assert after_a == {}  # every rate on every broker, the operator's own included
    assert after_b == before_b  # the operator's own throttle is back, exactly

    # both moves did the same thing to the same data: every replica, the new one on
    # broker 3 included, holds the leader's log byte for byte (the producer's batches, and
    # so the record-batch headers, may differ a little between A and B)
    served(lambda: replicas(gw, [A, B]), {A: TARGET, B: TARGET}, "both moves' replicas")
    sizes = log_sizes(gw, [A, B])
    assert set(sizes) == {(t, p, b) for t in (A, B) for p, reps in enumerate(TARGET)
                          for b in reps}
    for t in (A, B):
        for p, reps in enumerate(TARGET):
            assert {sizes[(t, p, b)] for b in reps} == {sizes[(t, p, reps[0])]}
            assert sizes[(t, p, 3)] >= PER_PARTITION
            assert sizes[(A, p, 3)] == pytest.approx(sizes[(B, p, 3)], rel=0.01)
    print(f"\nKafka's tool moved A in {took_a:.1f} s; Railyard moved B in {took_b:.1f} s "
          f"(throttle {THROTTLE} B/s, {2 * PER_PARTITION} B into broker 3)\n{verify}")
