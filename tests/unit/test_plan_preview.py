"""plan_preview: the numbers a draft shows are the engines' numbers, bad plans are refused
with one line naming what and where, and the basis tells when the cluster moved on."""

from __future__ import annotations

import json

import numpy as np
import pytest

from backend.engines import throttle as throttle_engine
from backend.errors import BadInput
from backend.model.reassignment import reassignment_from_dict
from backend.model.snapshot import Limits, Snapshot
from backend.services import plan_preview as pp
from backend.services.plan_kinds import draft_from_request


def small() -> Snapshot:
    """Brokers 1-4; 'orders' has 4 partitions (RF 2), 'logs' 2 (RF 1); sizes known."""
    reps = [[1, 2], [2, 3], [3, 1], [1, 2], [4], [1]]
    return Snapshot.build(
        "test", [1, 2, 3, 4], [None] * 4, ["orders", "logs"], [0, 0, 0, 0, 1, 1],
        np.concatenate(([0], np.cumsum([len(r) for r in reps]))),
        np.array([b - 1 for r in reps for b in r], np.int32),
        part_size=[1000, 2000, 3000, 4000, 500, 600], part_rate=[0, 0, 0, 0, 0, 0],
        topic_retention_ms=[60_000, 60_000], limits=Limits(max_broker_partitions=5))


def plan(*entries) -> dict:
    return {"version": 1, "partitions": [{"topic": t, "partition": p, "replicas": r}
                                         for t, p, r in entries]}


def test_uploaded_plan_numbers_are_exact():
    snap = small()
    d = pp.from_kafka_json(snap, plan(("orders", 0, [1, 4]), ("orders", 1, [4, 3])),
                           throttle=100.0)
    p = d.preview
    # orders-0 adds a replica on 4 (1000 B); orders-1 adds one on 4 (2000 B), leader 2 -> 4
    assert p["replica_moves"] == 2 and p["bytes_to_move"] == 3000
    assert p["leader_moves"] == 1 and p["partitions"] == 2
    # broker 4 receives 3000 B at 100 B/s with nothing to keep up with: 30 s, the slowest
    assert p["eta_seconds"] == pytest.approx(30.0)
    engine = throttle_engine.plan_throttle(
        snap, reassignment_from_dict(d.content, snap), throttle_engine.ThrottleParams(100.0))
    assert p["eta_seconds"] == engine.to_dict()["eta_seconds"]
    by_id = {b["id"]: b for b in p["brokers"]}
    assert [(by_id[b]["before"], by_id[b]["after"]) for b in (1, 2, 3, 4)] == \
        [(4, 4), (3, 1), (2, 2), (1, 3)]
    assert {b["limit"] for b in p["brokers"]} == {5}
    assert p["headroom_after"] == 1 and by_id[4]["headroom_after"] == 2
    assert p["violations"] == [] and p["unresolved"] == []
    assert p["throttle"] == 100 and p["throttle_source"] == "given"
    # the content is Kafka's file, canonical; the basis holds the replicas it was made on
    assert d.content["partitions"][1] == {"topic": "orders", "partition": 1,
                                          "replicas": [4, 3], "log_dirs": ["any", "any"]}


def test_plan_over_the_limit_is_a_violation_in_words():
    snap = small().with_limits(Limits(max_broker_partitions=2))
    d = pp.from_kafka_json(snap, plan(("orders", 2, [3, 4]), ("orders", 3, [1, 4]),
                                      ("logs", 1, [4])), throttle=1e6)
    messages = [v["message"] for v in d.preview["violations"]]
    assert "broker 4 would hold 4 replicas, over the limit 2" in messages


def test_default_throttle_is_autothrottles_lowest_rate():
    snap = small()
    d = pp.from_kafka_json(snap, plan(("orders", 0, [1, 4])))
    # nothing is written to the cluster: every broker's headroom is 90% of 1 GbE
    assert d.preview["throttle"] == 112_500_000
    assert d.preview["throttle_source"].startswith("suggested")
    assert d.preview["safe_band"] == {"low": 0.0, "high": 125_000_000.0}


@pytest.mark.parametrize("entries, message", [
    ([("payments", 0, [1, 2])], "plan: partition payments-0: topic 'payments' is not in "
                                "cluster 'test'"),
    ([("orders", 9, [1, 2])], "plan: partition orders-9: partition orders-9 does not exist"),
    ([("orders", 0, [1, 1])], "plan: partition orders-0: a broker appears twice in "
                              "replicas [1, 1]"),
    ([("orders", 0, [1, 7])], "plan: partition orders-0: broker 7 is not in cluster 'test'"),
    ([("orders", 0, [1, 2]), ("orders", 0, [2, 1])], "plan: partition orders-0: listed twice"),
    ([("orders", 0, [1, 2, 3])], "plan: partition orders-0: replication factor 2 -> 3; a "
                                 "reassignment plan here keeps each partition's replication "
                                 "factor"),
    ([], "plan: the partition list is empty"),
])
def test_bad_plans_are_refused_in_one_line(entries, message):
    with pytest.raises(BadInput) as e:
        pp.from_kafka_json(small(), plan(*entries))
    assert str(e.value) == message


def test_goal_drain_moves_every_replica_off_the_broker():
    snap = small()
    d = pp.from_goal(snap, {"goal": "drain", "brokers": [4]}, throttle=1e6)
    by_id = {b["id"]: b for b in d.preview["brokers"]}
    assert by_id[4]["after"] == 0
    assert d.preview["replica_moves"] == 1  # logs-0, its only replica
    assert d.preview["bytes_to_move"] == 500
    assert d.title == "drain 4: 1 moves on test"


@pytest.mark.parametrize("body, message", [
    ([], "request: expected a JSON object with cluster and kind"),
    ({"kind": "move"}, "kind: must be one of reassignment, shrink, got 'move'"),
    ({"kind": "reassignment"}, "kind reassignment: give exactly one of plan"),
    ({"kind": "reassignment", "generate": {"goal": "spread"}},
     "generate.goal: must be one of limits, drain, add, balance, got 'spread'"),
    ({"kind": "reassignment", "generate": {"goal": "drain", "brokers": ["4"]}},
     "generate.brokers: expected a list of broker ids, got ['4']"),
    ({"kind": "reassignment", "generate": {"goal": "balance"}, "throttle": -5},
     "throttle: must be larger than 0, got -5"),
    ({"kind": "reassignment", "generate": {"goal": "drain", "brokers": [9]}},
     "generate.brokers: broker 9 is not in cluster 'test'"),  # the field, not the flag
    ({"kind": "reassignment", "plan": plan(("orders", 0, [1, 2]))},
     "plan: nothing to move on cluster 'test': no plan to propose"),
    # the API's field, not the CLI's flag (issue 26 item 12)
    ({"kind": "shrink", "topic": "orders", "partitions": 4},
     "topic 'orders' has 4 partitions; a shrink needs 1 <= partitions < 4, got 4"),
    ({"kind": "shrink", "topic": "orders", "partitions": 2, "delay_ms": -1},
     "delay_ms: expected a whole number >= 0, got -1"),
    ({"kind": "shrink", "topic": "orders", "partitions": "2"},
     "partitions: expected a whole number >= 1, got '2'"),
])
def test_api_requests_are_refused_in_one_line(body, message):
    with pytest.raises(BadInput) as e:
        draft_from_request(small(), body)
    assert str(e.value).startswith(message)


def test_api_request_with_title():
    d = draft_from_request(small(), {"cluster": "test", "kind": "reassignment", "title": " mine ",
                                  "plan": plan(("orders", 0, [2, 1]))})
    assert d.kind == "reassignment" and d.title == "mine"
    assert d.preview["replica_moves"] == 0 and d.preview["leader_moves"] == 1


def test_shrink_draft():
    snap = small()
    d = draft_from_request(snap, {"kind": "shrink", "topic": "orders", "partitions": 2})
    assert d.kind == "shrink" and d.title == "shrink orders 4 -> 2 partitions"
    assert d.content["removed_partitions"] == [2, 3]
    assert [s["mode"] for s in d.content["stages"]] == ["ReadOnly", "None", "Removed"]
    p = d.preview
    # retention 60 s is the delay; the controller checks every 300 s at the latest
    assert p["eta_seconds"] == 360.0
    assert p["bytes_reclaimed"] == 2 * 3000 + 2 * 4000 and p["replicas_reclaimed"] == 4
    by_id = {b["id"]: b for b in p["brokers"]}
    # orders-2 on 3,1 and orders-3 on 1,2 go
    assert [(by_id[b]["before"], by_id[b]["after"]) for b in (1, 2, 3, 4)] == \
        [(4, 2), (3, 2), (2, 1), (1, 1)]
    assert by_id[1]["bytes_reclaimed"] == 7000
    assert any("cannot delete partitions" in r for r in p["risks"])
    assert d.content["migration"]["new_topic"] == "orders.p2"


def test_diff_table_pages_sorts_and_filters():
    snap = small()
    d = pp.from_kafka_json(snap, plan(("orders", 0, [1, 4]), ("orders", 1, [4, 3]),
                                      ("logs", 1, [2])))
    table = d.table
    rows, n = table.page(0, 10, [{"colId": "bytes", "sort": "desc"}])
    assert n == 3
    assert rows[0] == {"partition": "orders-1", "before": "2, 3", "after": "4, 3",
                       "added": "4", "removed": "2", "leader": "2 -> 4", "bytes": 2000}
    assert [r["partition"] for r in rows] == ["orders-1", "orders-0", "logs-1"]
    rows, n = table.page(0, 1, None, "ORDERS")
    assert n == 2 and rows[0]["partition"] == "orders-0"
    rows, _ = table.page(1, 3, [{"colId": "partition", "sort": "asc"}])
    assert [r["partition"] for r in rows] == ["orders-0", "orders-1"]
    # a stored plan's grid: its basis against its content gives the same rows
    basis = {"partitions": {"orders:0": [1, 2], "orders:1": [2, 3], "logs:1": [1]}}
    stored = pp.stored_diff_table(d.content, basis, snap)
    assert stored.page(0, 10, [{"colId": "bytes", "sort": "desc"}]) == \
        table.page(0, 10, [{"colId": "bytes", "sort": "desc"}])
    # its sizes are the cluster's as read now, the draft's as read for the preview
    assert stored.sizes_now and not table.sizes_now
    assert not pp.stored_diff_table(d.content, basis).sizes_now
    assert d.table.kafka_json() == d.content


def test_exports():
    d = pp.from_kafka_json(small(), plan(("orders", 0, [1, 4])))
    assert json.loads(pp.kafka_json_text(d.content)) == d.content
    assert pp.kafka_command(50_000_000, "plan.json", "k1:9092") == (
        "kafka-reassign-partitions.sh --bootstrap-server k1:9092 --reassignment-json-file "
        "plan.json --execute --throttle 50000000")


def test_draft_basis_is_plan_basis_form():
    snap = small()
    d = pp.from_kafka_json(snap, plan(("orders", 0, [1, 4]), ("logs", 1, [2])))
    assert d.basis() == {"partitions": {"orders:0": [1, 2], "logs:1": [1]}, "topics": {}}
    s = pp.from_shrink(snap, "orders", 2)
    assert s.basis() == {"partitions": {}, "topics": {"orders": 4}}


def test_draft_changes_are_its_basis_changes():
    """The array comparison a draft is checked with before Propose says what comparing its
    basis would say."""
    from backend.services.plan_basis import basis_changes

    snap = small()
    d = pp.from_kafka_json(snap, plan(("orders", 0, [1, 4]), ("logs", 1, [2])))
    assert d.changes(snap) == []
    moved = pp.from_kafka_json(snap, plan(("orders", 0, [2, 1]))).table
    now = reassignment_from_dict(moved.kafka_json(), snap).target(snap)
    assert d.changes(now) == basis_changes(d.basis(), now) == [
        "orders-0 replicas [1, 2] -> [2, 1]"]
    s = pp.from_shrink(snap, "orders", 2)
    assert s.changes(snap) == [] and s.changes(now) == []
