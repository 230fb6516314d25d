"""KIP-578 partition limits: the KIP's worked examples, all-or-nothing topics, and a
brute-force check that a placement is found whenever one exists."""

from itertools import combinations, product

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from backend.engines.limits import (
    TopicRequest,
    add_partitions,
    check_reassignment,
    create_topics,
)
from backend.errors import BadInput
from backend.model.reassignment import reassignment_from_dict
from backend.model.snapshot import Limits
from tests.unit.helpers import filled_snapshot

LIMIT_10 = Limits(max_broker_partitions=10)


def test_kip_example_8_6_9():
    """3 brokers at 8, 6, 9 with max.broker.partitions=10 (KIP-578, 'An illustrative example')."""
    snap = filled_snapshot({1: 8, 2: 6, 3: 9})
    first = create_topics(snap, [TopicRequest("a", 1, 3)], LIMIT_10, start_index=0)
    assert first.ok
    assert first.to_dict()["broker_partitions_after"] == {"1": 9, "2": 7, "3": 10}
    # then one more partition with RF 3 fails: broker 3 is at its limit
    after = first.after
    second = create_topics(after, [TopicRequest("b", 1, 3)], LIMIT_10, start_index=0)
    assert not second.ok
    assert "max.broker.partitions=10" in second.topics[0].error
    assert "{1: 1, 2: 3, 3: 0}" in second.topics[0].error
    # the refusal says why the room is what it is: the replicas each broker holds now
    assert "(replicas per broker now: {1: 9, 2: 7, 3: 10})" in second.topics[0].error
    # a similar request with RF 2 succeeds, on the two brokers with room
    third = create_topics(after, [TopicRequest("c", 1, 2)], LIMIT_10, start_index=0)
    assert third.ok and sorted(third.to_dict()["topics"][0]["assignment"]["0"]) == [1, 2]
    # 2 partitions with RF 3 from the start fail in entirety
    whole = create_topics(snap, [TopicRequest("d", 2, 3)], LIMIT_10, start_index=0)
    assert not whole.ok
    assert whole.to_dict()["broker_partitions_after"] == {"1": 8, "2": 6, "3": 9}


def test_kip_example_in_one_request_sees_earlier_topics():
    snap = filled_snapshot({1: 8, 2: 6, 3: 9})
    out = create_topics(snap, [TopicRequest("a", 1, 3), TopicRequest("b", 1, 3),
                               TopicRequest("c", 1, 2)], LIMIT_10, start_index=0).to_dict()
    assert [t["ok"] for t in out["topics"]] == [True, False, True]
    assert out["cluster_partitions_after"] == 23 + 3 + 2
    assert out["capacity_after"] == {"1": 0, "2": 2, "3": 0}


def test_kip_example_10_20_30():
    """Limit 40 on brokers at 10, 20, 30: 30 partitions with RF 2 fit (60 slots of room),
    which a skip-at-capacity round robin (the KIP's prototype) rejects."""
    snap = filled_snapshot({1: 10, 2: 20, 3: 30})
    for start in range(3):
        res = create_topics(snap, [TopicRequest("big", 30, 2)], Limits(40), start_index=start)
        assert res.ok
        assert res.to_dict()["broker_partitions_after"] == {"1": 40, "2": 40, "3": 40}
        assert not res.topics[0].kafka_compatible
        assert all(len(set(r)) == 2 for r in res.topics[0].assignment.tolist())


def test_unlimited_equals_kafka():
    snap = filled_snapshot({0: 0, 1: 0, 2: 0, 3: 0, 4: 0})
    res = create_topics(snap, [TopicRequest("t", 10, 3)], Limits(), start_index=0)
    assert res.topics[0].kafka_compatible
    assert res.to_dict()["topics"][0]["assignment"]["5"] == [0, 2, 3]  # AdminTest


def test_max_partitions_counts_replicas():
    """10 partitions with RF 3 use 30 of max.partitions."""
    snap = filled_snapshot({1: 0, 2: 0, 3: 0})
    assert create_topics(snap, [TopicRequest("t", 10, 3)], Limits(None, 30)).ok
    res = create_topics(snap, [TopicRequest("t", 10, 3)], Limits(None, 29))
    assert not res.ok and "max.partitions=29" in res.topics[0].error


def test_stricter_limit_decides():
    snap = filled_snapshot({1: 5, 2: 5, 3: 5})
    # broker limit leaves room for 15, the cluster limit only for 3
    res = create_topics(snap, [TopicRequest("t", 2, 2)], Limits(10, 18))
    assert not res.ok and res.topics[0].error == (
        "max.partitions=18 would be exceeded: the cluster hosts 15 partition replicas and "
        "topic 't' adds 4; room for 3; remaining capacity per broker: {1: 5, 2: 5, 3: 5}")
    res = create_topics(snap, [TopicRequest("t", 6, 3)], Limits(10, 1000))
    assert not res.ok and "max.broker.partitions" in res.topics[0].error


def test_over_limit_broker_keeps_what_it_has_and_gets_nothing():
    snap = filled_snapshot({1: 12, 2: 0, 3: 0})
    res = create_topics(snap, [TopicRequest("t", 4, 2)], LIMIT_10, start_index=0)
    assert res.ok
    after = res.to_dict()["broker_partitions_after"]
    assert after["1"] == 12 and after["2"] == 4 and after["3"] == 4
    assert res.to_dict()["capacity_after"]["1"] == 0  # never negative


def test_brokers_to_add_hint():
    snap = filled_snapshot({1: 9, 2: 9, 3: 9})
    res = create_topics(snap, [TopicRequest("t", 4, 3)], LIMIT_10)
    # room: 3 slots; needed 12; each new broker takes min(10, 4) = 4 -> 3 more brokers
    assert "3 more brokers at the same limit" in res.topics[0].error


def test_internal_topics_neither_limited_nor_counted():
    snap = filled_snapshot({1: 10, 2: 10, 3: 10},
                           extra_topics={"__consumer_offsets": [[1, 2, 3]] * 4})
    assert snap.broker_replica_counts().tolist() == [10, 10, 10]
    res = create_topics(snap, [TopicRequest("__transaction_state", 5, 3)], LIMIT_10)
    assert res.ok
    assert not create_topics(snap, [TopicRequest("user", 1, 1)], LIMIT_10).ok


def test_existing_topic_is_rejected_not_replaced():
    snap = filled_snapshot({1: 0, 2: 0})
    res = create_topics(snap, [TopicRequest("fill", 1, 1)], Limits())
    assert not res.ok and "already exists" in res.topics[0].error


# Kafka's Topic.validate and ReplicationControlManager.validateNewTopicNames, word for word
# (tests/integration/test_kafka_gateway.py gets the same answers from Apache Kafka)
CHARS = "contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"


@pytest.mark.parametrize(("name", "error"), [
    ("bad topic!", f"Topic name is invalid: 'bad topic!' {CHARS}"),
    ("ordérs", f"Topic name is invalid: 'ordérs' {CHARS}"),
    ("", "Topic name is invalid: the empty string is not allowed"),
    (".", "Topic name is invalid: '.' is not allowed"),
    ("..", "Topic name is invalid: '..' is not allowed"),
    ("x" * 250, f"Topic name is invalid: the length of '{'x' * 250}' is longer than the max "
                "allowed length 249"),
    ("pay_ments", "Topic 'pay_ments' collides with existing topic: pay.ments"),
    ("pay.ments", "Topic 'pay.ments' already exists."),  # Kafka's answer for a name it has
])
def test_a_name_kafka_refuses_is_refused_with_kafkas_words(name, error):
    snap = filled_snapshot({1: 0, 2: 0}, extra_topics={"pay.ments": [[1]]})
    res = create_topics(snap, [TopicRequest("first", 1, 1), TopicRequest(name, 1, 1),
                               TopicRequest("last", 1, 1)], Limits())
    first, refused, last = res.topics
    assert (refused.ok, refused.error, refused.assignment) == (False, error, None)
    assert refused.code == ("TOPIC_ALREADY_EXISTS" if name == "pay.ments"
                            else "INVALID_TOPIC_EXCEPTION")
    assert first.ok and last.ok  # each topic is answered on its own, as Kafka does
    assert res.counts_after.sum() == snap.broker_replica_counts().sum() + 2


def test_names_kafka_accepts_are_placed():
    snap = filled_snapshot({1: 0, 2: 0}, extra_topics={"pay.ments": [[1]]})
    names = ["x" * 249, "a.b_c-D9", "pay.ments2", "_underscore", "..."]
    res = create_topics(snap, [TopicRequest(n, 1, 1) for n in names], Limits())
    assert [t.error for t in res.topics] == [None] * len(names)
    # Kafka compares a new name with the cluster's topics, not with the request's others
    both = create_topics(snap, [TopicRequest("a.b", 1, 1), TopicRequest("a_b", 1, 1)], Limits())
    assert both.ok


def test_rack_aware_under_limits():
    racks = {1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"}
    snap = filled_snapshot({1: 9, 2: 0, 3: 5, 4: 0, 5: 9, 6: 0}, racks=racks)
    res = create_topics(snap, [TopicRequest("t", 6, 3)], LIMIT_10, start_index=1)
    assert res.ok and res.topics[0].rack_aware
    for reps in res.to_dict()["topics"][0]["assignment"].values():
        assert len({racks[b] for b in reps}) == 3


def test_rack_spread_given_up_only_when_capacity_forces_it():
    racks = {1: "a", 2: "a", 3: "b", 4: "c"}
    snap = filled_snapshot({1: 0, 2: 0, 3: 10, 4: 9}, racks=racks)
    res = create_topics(snap, [TopicRequest("t", 2, 2)], LIMIT_10, start_index=0)
    assert res.ok and not res.topics[0].rack_aware
    assert any("some partitions span fewer" in w for w in res.topics[0].warnings)


def test_more_replicas_than_racks_still_span_every_rack_under_a_limit():
    # RF 3 on 2 racks with broker 2 full: Kafka's walk would overfill, the capacity
    # placement must still put every partition on both racks (rack r0 has room for 3)
    racks = {1: "r1", 2: "r0", 3: "r1", 4: "r0", 5: "r1"}
    snap = filled_snapshot({1: 0, 2: 6, 3: 1, 4: 3, 5: 0}, racks=racks)
    res = create_topics(snap, [TopicRequest("t", 3, 3)], Limits(6), start_index=1)
    assert res.ok and not res.topics[0].kafka_compatible and res.topics[0].rack_aware
    for reps in res.to_dict()["topics"][0]["assignment"].values():
        assert {racks[b] for b in reps} == {"r0", "r1"}


def test_add_partitions_as_kafka_topics_alter():
    snap = filled_snapshot({0: 0, 1: 0, 2: 0, 3: 0, 4: 0},
                           extra_topics={"t": [[2, 3, 4], [3, 4, 0]]})
    res = add_partitions(snap, "t", 5, Limits())
    d = res.to_dict()["topics"][0]
    assert set(d["assignment"]) == {"2", "3", "4"}
    # start index = position of partition 0's leader (2); shift starts equal to it
    assert d["assignment"]["2"] == [4, 2, 3]
    with pytest.raises(BadInput, match="not be an increase"):
        add_partitions(snap, "t", 2, Limits())
    with pytest.raises(BadInput, match="'nope' is not in cluster"):
        add_partitions(snap, "nope", 5, Limits())


def test_check_reassignment_only_receivers_violate():
    snap = filled_snapshot({1: 11, 2: 5, 3: 9}, extra_topics={"t": [[1, 2]]})
    plan = reassignment_from_dict(
        {"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [3, 2]}]}, snap)
    res = check_reassignment(snap, plan, LIMIT_10).to_dict()
    # broker 1 stays over its limit but receives nothing; broker 3 goes 9 -> 10: fine
    assert res["ok"] and res["broker_partitions_after"] == {"1": 11, "2": 6, "3": 10}
    plan = reassignment_from_dict(
        {"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [3, 2, 1]}]},
        snap)
    res = check_reassignment(snap, plan, Limits(10, 27)).to_dict()
    # RF 2 -> 3 takes the cluster from 27 to 28 replicas
    assert res["violations"] == [{"broker": None, "after": 28, "limit": 27, "received": 1}]
    res = check_reassignment(snap, plan, Limits(9)).to_dict()
    assert res["violations"] == [{"broker": 3, "after": 10, "limit": 9, "received": 1}]


def test_mixed_racks_is_bad_input():
    snap = filled_snapshot({1: 0, 2: 0}, racks={1: "a", 2: None})
    with pytest.raises(BadInput, match="rack"):
        create_topics(snap, [TopicRequest("t", 1, 1)], Limits())


# ---- properties ------------------------------------------------------------------------------
def brute_force_fits(capacity: list[int], partitions: int, rf: int,
                     racks: list[str] | None = None) -> bool:
    """Whether a placement exists (with ``racks``: one where every partition spans
    min(rf, racks) racks), by trying every replica set for every partition."""
    brokers = range(len(capacity))
    left = list(capacity)
    spread = min(rf, len(set(racks))) if racks else 0
    combos = [c for c in combinations(brokers, rf)
              if not racks or len({racks[b] for b in c}) >= spread]

    def place(p: int) -> bool:
        if p == partitions:
            return True
        for combo in combos:
            if all(left[b] > 0 for b in combo):
                for b in combo:
                    left[b] -= 1
                if place(p + 1):
                    return True
                for b in combo:
                    left[b] += 1
        return False

    return place(0)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=5), st.integers(1, 4),
       st.integers(1, 4), st.integers(0, 4), st.integers(0, 3))
def test_found_whenever_one_exists(counts, partitions, rf, start, n_racks):
    rf = min(rf, len(counts))
    limit = 6
    ids = list(range(1, len(counts) + 1))
    racks = {b: f"r{i % n_racks}" for i, b in enumerate(ids)} if n_racks else None
    snap = filled_snapshot(dict(zip(ids, counts, strict=True)), racks=racks)
    res = create_topics(snap, [TopicRequest("t", partitions, rf)], Limits(limit),
                        start_index=start)
    capacity = [max(limit - c, 0) for c in counts]
    assert res.ok == brute_force_fits(capacity, partitions, rf)
    after = res.after.broker_replica_counts()
    before = snap.broker_replica_counts()
    grew = after > before
    assert (after[grew] <= limit).all()  # capacity is never exceeded
    if res.ok:
        rows = res.topics[0].assignment
        assert all(len(set(r)) == rf for r in rows.tolist())
        if racks:  # spread over min(rf, racks) racks exactly when some placement does
            spreads = brute_force_fits(capacity, partitions, rf, [racks[b] for b in ids])
            assert res.topics[0].rack_aware == spreads
            spans = {len({racks[ids[b]] for b in r}) for r in rows.tolist()}
            assert (min(spans) >= min(rf, n_racks)) == spreads
            assert bool(res.topics[0].warnings) != spreads
    else:  # all-or-nothing
        assert (after == before).all() and res.after.n_partitions == snap.n_partitions


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 6), st.integers(1, 3)), min_size=1, max_size=5),
       st.integers(0, 1000))
def test_topics_in_order_never_exceed(requests, seed):
    snap = filled_snapshot({1: 3, 2: 7, 3: 0, 4: 5})
    res = create_topics(snap, [TopicRequest(f"t{i}", p, rf) for i, (p, rf) in
                               enumerate(requests)], LIMIT_10, seed=seed)
    counts = res.after.broker_replica_counts()
    assert (counts <= np.maximum(snap.broker_replica_counts(), 10)).all()
    accepted = sum(p * rf for (p, rf), t in zip(requests, res.topics, strict=True) if t.ok)
    assert counts.sum() == snap.broker_replica_counts().sum() + accepted


def test_product_of_start_indexes_is_kafka_when_unbound():
    snap = filled_snapshot({b: 0 for b in range(6)})
    for start, p in product(range(6), (1, 7, 13)):
        res = create_topics(snap, [TopicRequest("t", p, 3)], Limits(10_000), start_index=start)
        assert res.topics[0].kafka_compatible


def test_the_whatif_page_refuses_a_name_kafka_would_as_bad_input_naming_the_field(tmp_path):
    """The page's form gets one line naming its field, before anything is placed; the
    engine's own answer (Kafka's words, above) is what the twin gives a client."""
    from backend.model.io import save_snapshot
    from backend.services.cluster import ClusterSource
    from backend.services.limits import whatif

    path = tmp_path / "snap.json"
    save_snapshot(filled_snapshot({1: 0, 2: 0}, extra_topics={"pay.ments": [[1]]}), path)
    source = ClusterSource("c", str(path), Limits())
    with pytest.raises(BadInput, match=r"^topic: topic name 'bad topic!' contains ' ': Kafka "
                                       r"allows only ASCII letters, digits, '\.', '_' and '-'$"):
        whatif(source, "create", "bad topic!", 1, 1, None, None)
    with pytest.raises(BadInput, match=r"^topic: topic 'pay_ments' collides with existing "
                                       r"topic 'pay\.ments'"):
        whatif(source, "create", "pay_ments", 1, 1, None, None)
    assert whatif(source, "create", "payments", 1, 1, None, None)["ok"]


@pytest.mark.parametrize(("mbp", "mp", "field", "typed"), [
    ("0", None, "max.broker.partitions", "0"), (None, "0", "max.partitions", "0"),
    ("-5", None, "max.broker.partitions", "-5"), (None, -1, "max.partitions", "-1")])
def test_the_whatif_limits_are_at_least_1_as_on_the_capacity_page(tmp_path, mbp, mp, field,
                                                                   typed):
    """The what-if took max.broker.partitions 0 (nothing fits) while the capacity page
    refused a limit below 1: one rule (limits.typed_limit), in the capacity page's words."""
    from backend.model.io import save_snapshot
    from backend.services.cluster import ClusterSource
    from backend.services.limits import whatif

    path = tmp_path / "snap.json"
    save_snapshot(filled_snapshot({1: 0, 2: 0}), path)
    source = ClusterSource("c", str(path), Limits())
    with pytest.raises(BadInput) as e:
        whatif(source, "create", "payments", 1, 1, mbp, mp)
    assert str(e.value) == (f"{field}: give a whole number of at least 1, or leave it empty "
                            f"for the cluster's current limit, got {typed}")
    assert whatif(source, "create", "payments", 1, 1, "1", "1")["ok"]
