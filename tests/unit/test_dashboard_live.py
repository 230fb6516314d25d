"""The live views' pure parts: chart rows from range answers, the fullest brokers, the
observed ETA, quota bursts resolved as Kafka does, and the predicted ETA of the moves a
twin has in flight (read through its gateway)."""

from __future__ import annotations

import pandas as pd
import pytest

from backend.errors import Unavailable
from backend.metrics.client import MetricMissing, PrometheusSlow, PrometheusUnavailable
from backend.model.snapshot import Limits
from backend.services import monitoring
from backend.services.cluster import ClusterSource, cluster_snapshot
from backend.twin.cluster import TwinCluster, TwinSettings
from backend.twin.gateway import TwinGateway
from backend.twin.generate import generate_snapshot
from backend.twin.scenario import move_plan, throttled_reassign


def ranged(values: dict[str, list[float]]) -> pd.DataFrame:
    rows = [{"broker": b, "timestamp": pd.Timestamp(1_700_000_000 + 15 * i, unit="s", tz="UTC"),
             "value": v} for b, vs in values.items() for i, v in enumerate(vs)]
    return pd.DataFrame(rows)


def test_series_per_label_total_and_one_broker():
    frame = ranged({"1": [1, 2], "2": [0, 0], "3": [5, 7]})
    per = monitoring.series(frame, "broker", drop_zero=True)
    assert sorted(per["series"].unique()) == ["1", "3"]  # a broker that never moved is left out
    total = monitoring.series(frame, None, "urp")
    assert total["value"].tolist() == [6, 9] and set(total["series"]) == {"urp"}
    one = monitoring.series(frame, "broker", "bytes in", only="3")
    assert one["value"].tolist() == [5, 7]
    missing = MetricMissing("no series")
    assert monitoring.series(missing, "broker") is missing


def test_fullest_keeps_the_brokers_with_the_highest_last_value():
    frame = monitoring.series(ranged({"1": [9, 1], "2": [1, 5], "3": [1, 3]}), "broker")
    assert sorted(monitoring.fullest(frame, 2)["series"].unique()) == ["2", "3"]
    assert monitoring.fullest(frame, 5) is frame


def one(value: float) -> pd.DataFrame:
    return pd.DataFrame({"value": [value]})


def test_observed_eta_is_remaining_bytes_over_the_observed_rate():
    eta = monitoring.observed_eta(one(3e9), pd.DataFrame({"value": [1e6, 2e6]}), one(150))
    assert eta["eta_seconds"] == pytest.approx(1000) and eta["moving"] == 150
    stalled = monitoring.observed_eta(one(3e9), one(0.0), one(2))
    assert stalled["eta_seconds"] is None and stalled["moving"] == 2  # never, at this rate
    # moving, nothing measured behind yet (a move's first seconds on Apache Kafka: the
    # new replicas not yet scraped): no ETA, not "0 s"
    starting = monitoring.observed_eta(one(0.0), one(2.9e5), one(5))
    assert starting["eta_seconds"] is None and starting["remaining_bytes"] == 0
    idle = monitoring.observed_eta(one(0.0), one(0.0), one(0))
    assert idle["moving"] == 0 and idle["eta_seconds"] is None
    err = monitoring.observed_eta(MetricMissing("no series for x"), one(1), one(1))
    assert err["error"] == "no series for x"


def behind(**replicas: float) -> pd.DataFrame:
    """Bytes behind per moving replica, as replica_bytes_behind_in answers: p0_b9=5e8 is
    partition 0's replica on broker 9."""
    rows = [(k.split("_b")[1], "t", k.split("_b")[0][1:], v) for k, v in replicas.items()]
    return pd.DataFrame(rows, columns=["broker", "topic", "partition", "value"])


def test_observed_eta_is_how_fast_the_bytes_behind_shrink_not_the_copy_rate():
    """The demo's move: 997 MB left, copied at 1 MB/s, but the moving partitions take new
    writes, so the replicas get only 0.46 MB/s closer (KIP-73: a follower catches up at
    its throttle less its keep-up writes). The card said 17 min; it took 36."""
    now = behind(p0_b9=5.0e8, p1_b9=4.97e8)
    before = behind(p0_b9=5.3e8, p1_b9=5.226e8)  # 55.6 MB closer in 120 s
    copied = one(1e6)
    eta = monitoring.observed_eta(now, copied, one(150), before)
    assert monitoring.PROGRESS_SECONDS == 120
    assert eta["rate"] == pytest.approx(5.56e7 / 120)  # 0.463 MB/s
    assert eta["eta_seconds"] == pytest.approx(9.97e8 / (5.56e7 / 120))  # 2152 s, not 997
    assert not eta["bound"] and not eta["measuring"]
    # a replica added since has no earlier figure: it counts as left, not as progress
    added = behind(p0_b9=5.0e8, p1_b9=4.97e8, p2_b9=3e8)
    grown = monitoring.observed_eta(added, copied, one(150), before)
    assert grown["remaining_bytes"] == pytest.approx(1.297e9)
    assert grown["rate"] == pytest.approx(eta["rate"])
    # copying at 1 MB/s while writes arrive as fast: never done, whatever the copy rate
    stalled = monitoring.observed_eta(now, copied, one(150), now)
    assert stalled["eta_seconds"] is None and not stalled["measuring"]
    # moves younger than 2 min: nothing to compare yet, which is not "stalled"
    for young in (behind(p7_b4=1e8), MetricMissing("no series yet")):
        new = monitoring.observed_eta(now, copied, one(150), young)
        assert new["measuring"] and new["eta_seconds"] is None
    # a past window (every partition, one sum): the copy rate, said to be a lower bound
    past = monitoring.observed_eta(one(9.97e8), copied, one(150))
    assert past["bound"] and past["eta_seconds"] == pytest.approx(997)


def test_a_slow_bytes_query_does_not_hide_how_many_partitions_move():
    """The bytes-behind join timed out (issue 14: 4.4-5.9 s against a 5 s timeout) while
    ReassigningPartitions answered 150: the count stands, the ETA says why it is missing."""
    slow = PrometheusSlow("Prometheus at http://p is slow (timed out after 5 s)")
    eta = monitoring.observed_eta(slow, one(1e6), pd.DataFrame({"value": [50, 50, 50]}))
    assert eta["moving"] == 150 and eta["eta_seconds"] is None
    assert eta["why"] == "Prometheus slow" and "timed out after 5 s" in eta["error"]
    # the count itself unreadable: which failure it was, never a bare "-"
    down = PrometheusUnavailable("Prometheus at http://p is not answering (ConnectionError)")
    for error, why in ((slow, "Prometheus slow"), (down, "Prometheus unreachable"),
                       (MetricMissing("no series"), "no data")):
        eta = monitoring.observed_eta(one(0.0), one(0.0), error)
        assert eta["moving"] is None and eta["moving_why"] == why and eta["error"] == str(error)


def test_principal_names():
    assert [monitoring.principal(*p) for p in (("a", ""), ("a", "c"), ("", "c"))] == \
        ["a", "a/c", "/c"]


@pytest.fixture
def twin() -> TwinCluster:
    return TwinCluster(generate_snapshot(6, 3, 10, 120, 3, seed=3, limits=Limits(100)),
                       TwinSettings(seed=2, traffic_noise=0.0))


def test_bursts_from_the_gateway_quotas_resolved_as_kafka(twin):
    twin.set_mutation_quota("tenant", None, 2.0)
    gw = TwinGateway(twin)
    assert gw.describe_client_quotas() == [
        {"user": "tenant", "client_id": None, "controller_mutation_rate": 2.0}]
    source = ClusterSource("t", None, Limits(), gateway=gw)
    frame = pd.DataFrame({"user": ["tenant", "other"], "client_id": ["", "app"]})
    assert monitoring.principal_bursts(source, frame) == [22.0, None]  # 2/s x 11 windows x 1 s
    default = ClusterSource("t", None, Limits(), default_mutation_rate=5.0,
                            quota_window_num=10)
    # a default-user quota gives every user its own bucket, tagged (user, "")
    users = pd.DataFrame({"user": ["tenant", "other"], "client_id": ["", ""]})
    assert monitoring.principal_bursts(default, users) == [50.0, 50.0]


def test_predicted_eta_of_the_moves_in_flight(twin):
    throttled_reassign(TwinGateway(twin), move_plan(twin.snap, 1, 6, 4), 2e4)
    twin.advance(3)
    source = ClusterSource("p", None, Limits(), gateway=TwinGateway(twin))
    eta = monitoring.predicted_eta(source)
    assert eta["moving"] == 4 and eta["throttle"] == 2e4
    assert eta["eta_seconds"] is None or eta["eta_seconds"] > 0
    assert monitoring.configured_rates(source)["6"] == {"leader": 2e4, "follower": 2e4}


def test_an_unrelated_brokers_low_rate_does_not_set_the_predicted_eta(twin):
    """/throttles said "17 min at 1.00 MB/s" while the moving brokers ran at 20 MB/s: the
    lowest rate configured anywhere paced the prediction. Each broker's own rate does."""
    gw = TwinGateway(twin)
    throttled_reassign(gw, move_plan(twin.snap, 1, 6, 4), 2e7)
    twin.advance(1)
    source = ClusterSource("before", None, Limits(), gateway=TwinGateway(twin))
    before = monitoring.predicted_eta(source)["eta_seconds"]
    moving = {b for m in gw.list_reassignments() for b in m["replicas"]}
    idle = next(str(b) for b in map(int, twin.snap.broker_ids) if b not in moving)
    twin.alter_configs("broker", idle, {monitoring.LEADER_RATE: "1000",
                                        monitoring.FOLLOWER_RATE: "1000"})
    after = monitoring.predicted_eta(ClusterSource("after", None, Limits(),
                                                   gateway=TwinGateway(twin)))
    assert before is not None and after["eta_seconds"] == pytest.approx(before)


def test_the_predicted_eta_counts_from_what_the_new_replicas_still_lack(twin):
    """The card timed the moves from their start at the logs' sizes now: on the demo it
    read 61 min with 29 left. With each new replica's bytes behind (Prometheus) it counts
    from now; a new replica Prometheus has no figure for yet lacks its whole log. Worked
    out here move by move: a destination receives at its follower rate and a leader sends
    at its leader rate, each less the writes it keeps up with (KIP-73)."""
    gw = TwinGateway(twin)
    throttled_reassign(gw, move_plan(twin.snap, 1, 6, 4), 2e7)
    twin.advance(1)
    source = ClusterSource("now", None, Limits(), gateway=TwinGateway(twin))
    snap, moves = cluster_snapshot(source), gw.list_reassignments()
    rates = monitoring.configured_rates(source)
    rows = []  # (topic, partition, new replica's broker, bytes behind) Prometheus answers
    load: dict[tuple[str, str], list[float]] = {}  # (side, broker) -> [bytes, keep-up]
    for i, m in enumerate(moves):
        row = snap.partition_row(m["topic"], m["partition"])
        [new] = m["adding"]
        leader = next(b for b in m["replicas"] if b not in m["adding"])
        left = float(snap.part_size[row]) / (i + 2)
        if i:  # the first one: no log-size series yet
            rows.append((str(new), m["topic"], str(m["partition"]), left))
        else:
            left = float(snap.part_size[row])
        for key in (("follower", str(new)), ("leader", str(leader))):
            load.setdefault(key, [0.0, 0.0])
            load[key][0] += left
            load[key][1] += float(snap.part_rate[row])
    expected = max(nbytes / (rates[b][side] - keep) for (side, b), (nbytes, keep)
                   in load.items() if rates.get(b, {}).get(side))
    behind = pd.DataFrame(rows, columns=["broker", "topic", "partition", "value"])
    now = monitoring.predicted_eta(source, behind)
    assert now["from_now"] and now["moving"] == 4
    assert now["eta_seconds"] == pytest.approx(expected, rel=1e-12)
    # no per-replica answer: from the start, as before, and the card says so
    start = monitoring.predicted_eta(source, MetricMissing("no series"))
    assert not start["from_now"] and start["eta_seconds"] > now["eta_seconds"]
    assert monitoring.predicted_eta(source)["eta_seconds"] == start["eta_seconds"]


def test_a_throttle_below_the_writes_names_each_broker_and_both_figures(twin):
    """"never" alone left the reader guessing: on Apache Kafka a CI run saw it for a whole
    move that then finished, a burst of writes inside Prometheus' one-minute rate. Each
    broker that never catches up is named, with its rate and the writes it keeps up with
    (KIP-73), the figures worked out here move by move."""
    gw = TwinGateway(twin)
    throttled_reassign(gw, move_plan(twin.snap, 1, 6, 4), 1.0)  # 1 B/s
    twin.advance(1)
    source = ClusterSource("slow", None, Limits(), gateway=TwinGateway(twin))
    snap, moves = cluster_snapshot(source), gw.list_reassignments()
    writes: dict[tuple[str, str], float] = {}  # (side, broker) -> bytes/s to keep up with
    for m in moves:
        row = snap.partition_row(m["topic"], m["partition"])
        leader = next(b for b in m["replicas"] if b not in m["adding"])
        for key in [("follower", str(b)) for b in m["adding"]] + [
                ("leader", str(leader))] * len(m["adding"]):
            writes[key] = writes.get(key, 0.0) + float(snap.part_rate[row])
    assert all(w > 1.0 for w in writes.values())  # every one of them never catches up
    eta = monitoring.predicted_eta(source)
    assert eta["eta_seconds"] is None and eta["moving"] == 4
    named = [f"broker {b}'s {side} rate 1 B/s is at or below the {w:,.0f} B/s written to "
             f"its moving partitions" for (side, b), w in writes.items()]
    shown = [n for n in named if n in eta["diagnosis"]]
    assert len(shown) == min(len(named), monitoring.NAMED)
    assert len(named) <= monitoring.NAMED or \
        f"; and {len(named) - monitoring.NAMED} more" in eta["diagnosis"]


def test_bytes_behind_asks_only_for_the_topics_in_flight():
    moves = [{"topic": "orders.v2", "partition": 1}, {"topic": "a", "partition": 0},
             {"topic": "a", "partition": 3}]
    assert monitoring._behind_job(moves) == {  # now, and 2 min before (the progress)
        "behind": ("now", "replica_bytes_behind_in", "a|orders[.]v2"),
        "before": ("before", "replica_bytes_behind_in", "a|orders[.]v2")}
    assert monitoring._behind_job([]) == {}  # nothing moving: no query at all
    down = Unavailable("Twin", "down")  # no list: every partition's, when any is moving
    assert monitoring._behind_job(down) == {}
    per_replica = pd.DataFrame({"topic": ["a", "a", "a", "orders.v2", "b"],
                                "partition": ["0", "3", "4", "1", "0"],
                                "value": [5.0, 7.0, 100.0, 11.0, 1000.0]})
    kept = monitoring._moving_only(per_replica, moves)
    assert kept["value"].sum() == 23.0  # a-4 and b-0 are not moving
    assert monitoring._moving_only(None, [])["value"].sum() == 0
    assert monitoring._moving_only(per_replica, down) is per_replica


def test_bytes_behind_everywhere_only_when_prometheus_counts_moves():
    """Without the gateway's list the join reads every replica's log size (a minute at
    200k partitions): not asked when nothing is being reassigned."""
    source = ClusterSource("c", None, Limits(), prometheus_url=None)  # asking would raise
    assert monitoring._behind_everywhere(source, None, one(0.0)) is None
    assert monitoring._behind_everywhere(source, None, MetricMissing("x")) is None
    with pytest.raises(Unavailable):
        monitoring._behind_everywhere(source, None, one(3.0))



def test_quotas_count_what_the_cluster_has_to_meter(twin, monkeypatch):
    """On the Apache Kafka demo (no quota set) the Quotas page read "no data yet ... or
    Prometheus has not scraped them yet" after half an hour: Kafka makes no mutation
    sensors without a quota (ControllerMutationQuotaManager.quotasEnabled). The answer
    counts the quotas the cluster has (None: no gateway to ask)."""
    from datetime import UTC, datetime

    from components import timerange

    monkeypatch.setattr(monitoring, "_query", lambda _s, _span, jobs: dict.fromkeys(
        jobs, MetricMissing("no series")))
    window = timerange.window("live", None, None, now=datetime(2024, 1, 1, tzinfo=UTC).timestamp())
    assert monitoring.quotas(ClusterSource("t", None, Limits(), gateway=TwinGateway(twin)),
                             window)["quotas_set"] == 0
    twin.set_mutation_quota("tenant", None, 2.0)
    assert monitoring.quotas(ClusterSource("t2", None, Limits(), gateway=TwinGateway(twin)),
                             window)["quotas_set"] == 1
    assert monitoring.quotas(ClusterSource("t3", None, Limits()), window)["quotas_set"] \
        is None


def test_a_new_gateway_never_gets_a_collected_ones_answers(twin):
    """cluster_read kept answers under id(gateway): once a gateway was collected, a new
    one of the same cluster name could get its id and its answers (CI: a quota counted
    that this twin never had). Gateways made and dropped one after another, each asked
    once, are each asked afresh."""
    import gc

    from backend.services.cluster import cluster_read

    answers = []
    for n in range(30):
        source = ClusterSource("same-name", None, Limits(), gateway=TwinGateway(twin))
        answers.append(cluster_read(source, "question", lambda n=n: n))
        del source
        gc.collect()
    assert answers == list(range(30))
