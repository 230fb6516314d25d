"""The twin behaves like Kafka where guard rails are concerned (KIP-73, KIP-455, KIP-578,
KIP-599, ISR and leader election), deterministically."""

from __future__ import annotations

import math

import numpy as np
import pytest

from backend.errors import BadInput
from backend.metrics.dialects import STRIMZI
from backend.model.snapshot import Limits, Snapshot
from backend.twin.cluster import THROTTLING_QUOTA_EXCEEDED, TwinCluster, TwinSettings
from backend.twin.exporter import broker_families
from backend.twin.gateway import TwinGateway
from backend.twin.generate import generate_snapshot
from backend.twin.replication import EMPTY_FETCH_RESPONSE_BYTES, IDLE_FETCHES_PER_SECOND
from backend.twin.scenario import throttled_reassign

QUIET = TwinSettings(traffic_noise=0.0)


def tiny(size: float = 1e6, rate: float = 1e4, limits: Limits | None = None) -> Snapshot:
    """3 brokers, one topic 't' with one partition on [1, 2] (leader 1)."""
    return Snapshot.build("tiny", [1, 2, 3], [None] * 3, ["t"], [0], [0, 2], [0, 1],
                          part_size=[size], part_rate=[rate], limits=limits)


def move_to_13(twin: TwinCluster, throttle: float | None) -> dict:
    plan = {"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1, 3]}]}
    return throttled_reassign(TwinGateway(twin), plan, throttle)


def test_healthy_cluster_keeps_every_follower_in_sync_and_counts_bytes():
    snap = generate_snapshot(6, 3, 20, 300, 3, seed=4)
    twin = TwinCluster(snap, QUIET)
    twin.advance(10)
    assert twin.state.isr.all() and (twin.state.lag == 0).all()
    produced = snap.part_rate.sum() * 10
    assert twin.state.bytes_in.sum() == pytest.approx(produced)
    # every follower fetched what its leader got
    followers = snap.replication_factors - 1
    assert twin.counters["replication_in"].sum() == pytest.approx((snap.part_rate * followers)
                                                                  .sum() * 10)
    assert np.array_equal(twin.snap.broker_replica_counts(), snap.broker_replica_counts())


def test_throttled_move_completes_when_kip73_arithmetic_says_so():
    # Leader side binds: broker 1 sends keep-up w to in-sync follower 2 (counted against
    # the throttle T) and the new replica on 3 gets T - w, of which w is new writes:
    # lag falls by T - 2w per second.
    size, w, t = 1e6, 1e4, 1.1e5
    twin = TwinCluster(tiny(size, w), QUIET)
    move_to_13(twin, t)
    assert twin.topic_configs["t"] == {"leader.replication.throttled.replicas": "0:1,0:2",
                                       "follower.replication.throttled.replicas": "0:3"}
    expected = math.ceil(size / (t - 2 * w))
    twin.advance(expected - 1)
    assert twin.moves and twin.list_reassignments()[0]["adding"] == [3]
    lag_now = twin.state.lag[twin.state.adding][0]
    assert lag_now == pytest.approx(size - (expected - 1) * (t - 2 * w))
    # the leader side also records its followers' fetch overhead (2 and 3 fetch from 1)
    floor = 2 * IDLE_FETCHES_PER_SECOND * EMPTY_FETCH_RESPONSE_BYTES
    assert twin.throttled_rate["leader"][0] == pytest.approx(t + floor)
    twin.advance(1)
    assert not twin.moves
    assert twin.snap.replicas_of(0) == [1, 3] and twin.state.isr.all()
    assert twin.counters["reassignment_in"][2] == pytest.approx(size + expected * w)


def test_move_with_throttle_below_write_rate_never_completes_and_lag_climbs():
    twin = TwinCluster(tiny(1e6, 1e5), QUIET)
    move_to_13(twin, 1.5e5)  # T < 2w: the in-sync follower's keep-up eats the budget
    lags = []
    for _ in range(5):
        twin.advance(60)
        lags.append(twin.state.lag[twin.state.adding][0])
    assert twin.moves and np.all(np.diff(lags) > 0)


def test_unthrottled_move_is_bounded_by_the_network_and_counts_urp_as_kafka_does():
    twin = TwinCluster(tiny(5e8, 0.0), TwinSettings(traffic_noise=0.0,
                                                    network_bytes_per_sec=1e8))
    move_to_13(twin, None)
    twin.advance(1)
    fams = {f.name: f.values for f in broker_families(twin, 0, STRIMZI)}
    # KIP-455: URP compares the ISR with the original replica count while moving
    assert fams[STRIMZI.under_replicated][0] == 0
    assert fams[STRIMZI.reassigning][0] == 1
    twin.advance(3)
    assert twin.moves
    twin.advance(1)
    assert not twin.moves


def test_cancel_reverts_and_a_new_target_replaces_the_old():
    twin = TwinCluster(tiny(), QUIET)
    move_to_13(twin, 1.0)
    assert twin.snap.replicas_of(0) == [1, 3, 2]
    plan = {"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [2, 3]}]}
    twin.alter_reassignments(plan)
    assert twin.list_reassignments() == [{"topic": "t", "partition": 0, "replicas": [2, 3, 1],
                                          "adding": [3], "removing": [1]}]
    twin.cancel_reassignments()
    assert twin.snap.replicas_of(0) == [1, 2] and not twin.moves


def test_failed_broker_leaves_isr_leader_moves_and_last_isr_member_stays():
    twin = TwinCluster(tiny(), QUIET)
    twin.fail_broker(1)
    assert twin.state.leader[0] == 1  # broker 2 (position 1) took over
    assert twin.state.isr.tolist() == [False, True]
    twin.fail_broker(2)
    assert twin.state.leader[0] == -1  # offline; broker 2 stays the last ISR member
    assert twin.state.isr.tolist() == [False, True]
    twin.recover_broker(2)
    assert twin.state.leader[0] == 1
    twin.recover_broker(1)
    twin.advance(2)
    assert twin.state.isr.all()


def test_a_move_whose_partition_goes_offline_copies_nothing_stays_listed_and_resumes():
    """KIP-455: a reassignment stays in flight until every adding replica is in the ISR,
    and ListPartitionReassignments keeps listing it meanwhile. When every original
    replica's broker fails the partition has no leader (unclean election off, the last
    ISR member stays in the ISR); Kafka's followers fetch only from the leader
    (ReplicaFetcherThread), so the adding replicas copy nothing, no byte counts as
    reassignment traffic, and the move resumes once the last in-sync replica returns
    and leads again. The twin raised ValueError here (reassignment bytes summed per
    leader broker, the leader being -1)."""
    snap = Snapshot.build("tiny4", [1, 2, 3, 4], [None] * 4, ["t"], [0], [0, 2], [0, 1],
                          part_size=[1e6], part_rate=[1e4])
    twin = TwinCluster(snap, QUIET)
    plan = {"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [3, 4]}]}
    throttled_reassign(TwinGateway(twin), plan, 1e5)
    twin.advance(2)
    listed = [{"topic": "t", "partition": 0, "replicas": [3, 4, 1, 2], "adding": [3, 4],
               "removing": [1, 2]}]
    assert twin.list_reassignments() == listed
    twin.fail_broker(1)
    twin.fail_broker(2)
    assert twin.state.leader[0] == -1
    lag = twin.state.lag.copy()
    before = {k: v.copy() for k, v in twin.counters.items()}
    twin.advance(5)  # raised ValueError
    assert twin.list_reassignments() == listed
    assert np.array_equal(twin.state.lag, lag) and not twin.state.isr[twin.state.adding].any()
    for key, value in twin.counters.items():
        assert np.array_equal(value, before[key]), key
    twin.recover_broker(2)  # the last ISR member returns and leads
    assert twin.state.leader[0] == 1
    twin.advance(2)
    assert twin.counters["reassignment_in"][2:].sum() > before["reassignment_in"][2:].sum()
    twin.advance(60)
    assert not twin.moves and twin.snap.replicas_of(0) == [3, 4]


def test_strict_quota_admits_while_tokens_last_then_throttles_with_kafkas_time():
    twin = TwinCluster(generate_snapshot(6, 3, 5, 30, 3, seed=1), QUIET)
    twin.set_mutation_quota("tenant", None, 5.0)  # burst 55
    out = twin.create_topics([{"name": f"x{i}", "partitions": 20, "rf": 3} for i in range(4)],
                             user="tenant", client_id="app")
    assert [o["error"] for o in out] == [None, None, None, THROTTLING_QUOTA_EXCEEDED]
    assert out[3]["throttle_time_ms"] == 1000  # tokens 55 - 60 = -5 -> 5 / 5 s
    assert twin.quotas.metrics(twin.time_ms)[0]["tokens"] == -5.0
    twin.advance(1)
    assert twin.create_topics([{"name": "y", "partitions": 1, "rf": 3}], user="tenant",
                              client_id="app")[0]["error"] is None  # back at 0 tokens


def test_a_quota_rejected_topic_takes_no_room_from_the_next():
    """Kafka places a topic, then charges the quota: a rejected topic leaves no trace, so
    the topic after it fails on the quota too, not on a limit it would otherwise fit."""
    snap = generate_snapshot(3, 0, 1, 3, 3, seed=1, limits=Limits(max_broker_partitions=9))
    twin = TwinCluster(snap, QUIET)
    twin.set_mutation_quota("tenant", None, 1.0)  # burst 11
    out = twin.create_topics([{"name": "a", "partitions": 12, "rf": 1},
                              {"name": "b", "partitions": 2, "rf": 3},
                              {"name": "c", "partitions": 2, "rf": 3}],
                             user="tenant", client_id="app")
    # a takes 12 of 18 free slots (tokens 11 -> -1); b and c (6 replicas) each fit the rest
    assert [o["error"] for o in out] == [None, THROTTLING_QUOTA_EXCEEDED,
                                         THROTTLING_QUOTA_EXCEEDED]
    assert twin.snap.broker_replica_counts().sum() == 9 + 12


def test_topic_creation_respects_partition_limits_from_the_limit_engine():
    snap = generate_snapshot(3, 0, 2, 30, 3, seed=1, limits=Limits(max_broker_partitions=35))
    twin = TwinCluster(snap, QUIET)
    out = twin.create_topics([{"name": "ok", "partitions": 5, "rf": 3},
                              {"name": "big", "partitions": 10, "rf": 3}])
    assert out[0]["error"] is None and out[1]["error"] == "POLICY_VIOLATION"
    assert "max.broker.partitions=35" in out[1]["message"]
    assert twin.snap.has_topic("ok") and not twin.snap.has_topic("big")


def test_a_topic_name_kafka_refuses_gets_kafkas_error_and_nothing_is_made():
    """CreateTopics answers INVALID_TOPIC_EXCEPTION per topic, placed by count or given an
    assignment (Kafka checks every new name first: ReplicationControlManager.createTopics);
    the request's other topics are made and the quota is charged for them only."""
    twin = TwinCluster(generate_snapshot(3, 0, 2, 30, 3, seed=1), QUIET)
    made = twin.create_topics([{"name": "pay.ments", "partitions": 1, "rf": 1}])
    before = twin.snap.n_topics
    out = twin.create_topics([{"name": "bad name", "partitions": 2, "rf": 1},
                              {"name": "pay_ments", "assignment": [[1]]},
                              {"name": "good", "partitions": 1, "rf": 1}])
    assert made[0]["error"] is None
    assert [(o["error"], o["message"]) for o in out] == [
        ("INVALID_TOPIC_EXCEPTION", "Topic name is invalid: 'bad name' contains one or more "
                                    "characters other than ASCII alphanumerics, '.', '_' and '-'"),
        ("INVALID_TOPIC_EXCEPTION", "Topic 'pay_ments' collides with existing topic: pay.ments"),
        (None, None)]
    assert twin.snap.n_topics == before + 1 and twin.snap.has_topic("good")
    again = twin.create_topics([{"name": "pay.ments", "assignment": [[2]]}])
    assert (again[0]["error"], again[0]["message"]) == ("TOPIC_ALREADY_EXISTS",
                                                        "Topic 'pay.ments' already exists.")
    counts = twin.create_topics([{"name": "none", "partitions": 0, "rf": 1},
                                 {"name": "unreplicated", "partitions": 1, "rf": 0},
                                 {"name": "too-wide", "partitions": 1, "rf": 4}])
    assert [(o["error"], o["message"]) for o in counts] == [  # KRaft's createTopic
        ("INVALID_PARTITIONS", "Number of partitions was set to an invalid non-positive value."),
        ("INVALID_REPLICATION_FACTOR",
         "Replication factor must be larger than 0, or -1 to use the default value."),
        ("INVALID_REPLICATION_FACTOR", "Unable to replicate the partition 4 time(s): The target "
         "replication factor of 4 cannot be reached because only 3 broker(s) are registered.")]
    assert twin.snap.n_topics == before + 1


def test_create_partitions_checks_in_krafts_order_and_words():
    """Topic, count, then the quota (charged before placement, as KRaft's createPartitions
    does), then the placement under the limits."""
    snap = generate_snapshot(3, 0, 2, 30, 3, seed=1, limits=Limits(max_broker_partitions=35))
    twin = TwinCluster(snap, QUIET)
    name = str(twin.snap.topic_names[0])
    n = twin.snap.topic_partition_count(0)
    assert twin.create_partitions("nope", 3)["error"] == "UNKNOWN_TOPIC_OR_PARTITION"
    assert twin.create_partitions(name, n)["message"] == f"Topic already has {n} partition(s)."
    assert twin.create_partitions(name, n - 1)["message"] == (
        f"The topic {name} currently has {n} partition(s); {n - 1} would not be an increase.")
    twin.set_mutation_quota("<default>", "<default>", 1.0)  # burst 11 partitions
    over = twin.create_partitions(name, n + 20, user="u", client_id="c")  # drains the bucket
    assert over["error"] == "POLICY_VIOLATION"  # charged, then refused by the limit
    again = twin.create_partitions(name, n + 1, user="u", client_id="c")
    assert (again["error"], again["message"]) == (THROTTLING_QUOTA_EXCEEDED,
                                                  "The throttling quota has been exceeded.")
    assert twin.snap.topic_partition_count(0) == n


def test_create_partitions_and_delete_topics_carry_state_over():
    twin = TwinCluster(generate_snapshot(4, 2, 3, 12, 2, seed=3), QUIET)
    twin.advance(3)
    before = twin.state.bytes_in.sum()
    name = str(twin.snap.topic_names[0])
    n = twin.snap.topic_partition_count(0)
    assert twin.create_partitions(name, n + 2)["error"] is None
    assert twin.snap.topic_partition_count(0) == n + 2
    assert twin.delete_topics([str(twin.snap.topic_names[1]), "nope"])[1]["error"] == \
        "UNKNOWN_TOPIC_OR_PARTITION"
    assert twin.snap.n_topics == 2
    assert twin.state.bytes_in.sum() < before  # the deleted topic's meters went with it
    twin.advance(2)
    assert twin.state.isr.all()


def test_read_only_partition_takes_no_writes_and_siblings_take_its_share():
    snap = Snapshot.build("m", [1, 2], [None, None], ["t"], [0, 0], [0, 1, 2], [0, 1],
                          part_rate=[100.0, 100.0])
    twin = TwinCluster(snap, QUIET)
    twin.set_partition_mode("t", [0], "ReadOnly")
    before = twin.state.log_size.copy()
    twin.advance(10)
    assert twin.state.log_size[0] == before[0]
    assert twin.state.log_size[1] - before[1] == pytest.approx(2000.0)
    with pytest.raises(BadInput):
        twin.set_partition_mode("t", [1], "WriteOnly")


def test_same_seed_same_history():
    snap = generate_snapshot(6, 3, 20, 200, 3, seed=9)
    runs = []
    for _ in range(2):
        twin = TwinCluster(snap, TwinSettings(seed=5, traffic_noise=0.3))
        twin.advance(20)
        runs.append(twin.state.bytes_in.copy())
    assert np.array_equal(runs[0], runs[1])


def test_config_validation_is_one_line_bad_input():
    twin = TwinCluster(tiny(), QUIET)
    with pytest.raises(BadInput, match="partition:broker"):
        twin.alter_configs("topic", "t", {"leader.replication.throttled.replicas": "0-1"})
    with pytest.raises(BadInput, match="not supported"):
        twin.alter_configs("broker", "1", {"num.io.threads": "8"})
    twin.alter_configs("topic", "t", {"follower.replication.throttled.replicas": "*"})
    assert twin.state.in_follower_list.all()


W, RATE = 1e4, 1e5  # tiny()'s write rate; a throttle well below the network's


def _copied(twin: TwinCluster) -> float:
    """Bytes broker 3's new replica copies in the next second."""
    before = twin.counters["reassignment_in"][2]
    twin.advance(1)
    return twin.counters["reassignment_in"][2] - before


@pytest.mark.parametrize(("broker", "side", "copied"), [
    ("<default>", "follower", RATE), ("3", "follower", RATE),
    ("<default>", "leader", RATE - W), ("1", "leader", RATE - W)])
def test_a_throttle_rate_set_while_a_move_copies_applies_at_the_next_step(broker, side, copied):
    """KIP-73: the topics' throttled-replica lists say which replicas are throttled, the
    brokers' leader/follower.replication.throttled.rate how fast; a rate set while a
    move copies (on the <default> entity or on one broker) applies at once: the broker
    updates its ReplicationQuotaManager's quota on the dynamic config change
    (updateQuota) and its fetchers and KafkaApis check the quota on every fetch. The
    twin kept copying unthrottled until the next leader or assignment change (its
    cached throttle flags were computed while no rate was set). Follower side: broker
    3 takes the whole rate; leader side: broker 1's in-sync follower 2 takes its
    writes W out of it (both are counted as throttled bytes)."""
    twin = TwinCluster(tiny(1e11, W), QUIET)
    gw = TwinGateway(twin)
    gw.alter_configs("topic", "t", {f"{side}.replication.throttled.replicas":
                                    "0:3" if side == "follower" else "0:1,0:2"})
    move_to_13(twin, None)
    assert _copied(twin) == pytest.approx(QUIET.network_bytes_per_sec)  # no rate: no throttle
    gw.alter_configs("broker", broker, {f"{side}.replication.throttled.rate": str(RATE)})
    assert _copied(twin) == pytest.approx(copied)
    floor = 2 * IDLE_FETCHES_PER_SECOND * EMPTY_FETCH_RESPONSE_BYTES  # 2 and 3 fetch from 1
    assert twin.throttled_rate[side][2 if side == "follower" else 0] == pytest.approx(
        RATE if side == "follower" else RATE + floor)


def test_removed_rates_and_changed_replica_lists_apply_at_the_next_step():
    """KIP-73, every way the throttle configs change while a move copies, each in force
    at the next step: a broker's own rate overrides the <default> entity's, and
    removing it falls back to the default's; removing every rate leaves an unbounded
    quota (Kafka's default, Long.MAX_VALUE), so the copy is bound by the network alone;
    a rate set again throttles again; a topic's throttled-replica lists name what is
    throttled from the moment they change (Kafka's TopicConfigHandler marks the
    partitions in ReplicationQuotaManager.markThrottled / removeThrottle)."""
    twin = TwinCluster(tiny(1e11, W), QUIET)
    gw = TwinGateway(twin)
    move_to_13(twin, RATE)  # both lists, both rates on brokers 1, 2 and 3
    assert _copied(twin) == pytest.approx(RATE - W)  # the leader side binds
    gw.alter_configs("broker", "<default>", {"leader.replication.throttled.rate": str(3 * RATE),
                                             "follower.replication.throttled.rate": str(3 * RATE)})
    assert _copied(twin) == pytest.approx(RATE - W)  # each broker's own rate still rules
    gw.alter_configs("broker", "1", delete=["leader.replication.throttled.rate"])
    assert _copied(twin) == pytest.approx(RATE)  # the leader at 3 x RATE; broker 3 binds
    gw.alter_configs("broker", "3", delete=["follower.replication.throttled.rate"])
    assert _copied(twin) == pytest.approx(3 * RATE - W)  # both at the default's
    gw.alter_configs("broker", "<default>", delete=["leader.replication.throttled.rate",
                                                    "follower.replication.throttled.rate"])
    assert _copied(twin) == pytest.approx(QUIET.network_bytes_per_sec)
    gw.alter_configs("broker", "<default>", {"leader.replication.throttled.rate": str(RATE)})
    assert _copied(twin) == pytest.approx(RATE - W)
    gw.alter_configs("topic", "t", delete=["leader.replication.throttled.replicas"])
    assert _copied(twin) == pytest.approx(QUIET.network_bytes_per_sec)
    gw.alter_configs("topic", "t", {"leader.replication.throttled.replicas": "*"})
    assert _copied(twin) == pytest.approx(RATE - W)
    assert twin.moves  # still copying: 1e11 bytes


def test_a_small_move_is_not_starved_by_a_large_one_behind_the_same_throttle():
    """Two moves out of leader broker 1 at a 100 kB/s throttle, one of 40 kB and one of
    1 GB: Kafka's fetcher gives each partition its turn (KIP-73 caps the total, not each
    partition's share of it), so the small one finishes in about a second of its half of
    the rate; a share in proportion to what each still wants starved it forever."""
    snap = Snapshot.build("two", [1, 2, 3], [None] * 3, ["s", "l"], [0, 1], [0, 2, 4],
                          [0, 1, 0, 1], part_size=[4e4, 1e9], part_rate=[1e3, 1e3])
    twin = TwinCluster(snap, QUIET)
    plan = {"version": 1, "partitions": [
        {"topic": "s", "partition": 0, "replicas": [1, 3]},
        {"topic": "l", "partition": 0, "replicas": [1, 3]}]}
    throttled_reassign(TwinGateway(twin), plan, 1e5)
    twin.advance(3)
    assert [m["topic"] for m in twin.list_reassignments()] == ["l"]


def test_fair_shares_give_each_its_want_up_to_an_equal_level():
    from backend.twin.replication import _fair

    got = _fair(np.array([10.0, 3.0]), np.array([0, 0, 0, 1, 1]),
                np.array([100.0, 1.0, 5.0, 2.0, 2.0]))
    assert got.tolist() == [4.5, 1.0, 4.5, 1.5, 1.5]  # 10 = 1 + 4.5 + 4.5; 3 = 1.5 x 2
    assert _fair(np.array([0.0]), np.array([0, 0]), np.array([1.0, 2.0])).tolist() == [0, 0]
