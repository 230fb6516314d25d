"""KIP-73's numbers: fetch-size bound (Q&A 5), safe band (Q&A 4), MoveTime (Q&A 1), the
KIP's test plan (moves at quota rate, minus the inbound rate under produce load), honest
ETAs, and kafka-kit autothrottle's headroom formula (TestReplicationHeadroom)."""

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from backend.engines.throttle import (
    ThrottleParams,
    autothrottle_rate,
    broker_load,
    max_fetch_response_bytes,
    plan_throttle,
    proposed_moves,
)
from backend.errors import BadInput
from backend.twin.generate import generate_snapshot
from benchmarks.bench_throttle import random_reassignment
from tests.unit.test_throttle_lists import cluster, plan_for

MB = 1024 * 1024


def by_id(out):
    return {b["id"]: b for b in out["brokers"]}


def test_qa5_leader_throttle_dominates_on_5_brokers():
    # "a 5 node cluster, with a leader quota of 1MB/s, and a window of 10s, on a GbE
    # network ... the largest permissible replica.fetch.response.max.bytes would be 10MB"
    assert max_fetch_response_bytes(MB, 125e6, 5, 10) == 10 * MB
    snap = cluster([1, 2, 3, 4, 5], {"x": [[1]]})
    out = plan_throttle(snap, plan_for(snap, [("x", 0, [2])]),
                        ThrottleParams(MB, window_num=10)).to_dict()
    assert out["max_fetch_response_bytes"] == 10 * MB
    assert out["fetch_response_ok"]  # Kafka's default 10 MiB just fits


def test_qa5_follower_network_dominates_on_500_brokers():
    # "10s * 100MB/s / 500 = 2MB"
    assert max_fetch_response_bytes(MB, 100 * MB, 500, 10) == 2 * MB
    snap = cluster(range(1, 501), {"x": [[1, 2]]})
    out = plan_throttle(snap, plan_for(snap, [("x", 0, [2, 3])]),
                        ThrottleParams(MB, 100 * MB, window_num=10)).to_dict()
    assert out["max_fetch_response_bytes"] == 2 * MB
    assert not out["fetch_response_ok"]  # the default 10 MiB is too large there
    ok = plan_throttle(snap, plan_for(snap, [("x", 0, [2, 3])]),
                       ThrottleParams(MB, 100 * MB, 2 * MB, window_num=10)).to_dict()
    assert ok["fetch_response_ok"]


def test_default_window_is_11_seconds():
    snap = cluster([1, 2], {"x": [[1]]})
    out = plan_throttle(snap, plan_for(snap, [("x", 0, [2])]), ThrottleParams(MB)).to_dict()
    assert out["quota_window_seconds"] == 11
    assert out["max_fetch_response_bytes"] == 11 * MB


def test_qa1_move_time_formula():
    # MoveTime = MoveRatio x TotalLogSizePerBroker x #Brokers / (T - max(BytesInPerSec))
    snap = cluster([1, 2, 3, 4], {"a": [[1, 2], [2, 3], [3, 4], [4, 1]]}, size=1000, rate=200)
    plan = plan_for(snap, [("a", 0, [3, 2])])
    out = plan_throttle(snap, plan, ThrottleParams(1000)).to_dict()
    # MoveRatio 1/4, TotalLogSizePerBroker 8000/4 = 2000, 4 brokers, max BytesIn 200.
    assert out["move_ratio"] == 0.25
    assert out["kip73_move_time_seconds"] == pytest.approx(0.25 * 2000 * 4 / (1000 - 200))
    assert out["kip73_diagnosis"] is None
    stuck = plan_throttle(snap, plan, ThrottleParams(200)).to_dict()
    assert stuck["kip73_move_time_seconds"] is None
    assert "never finishes" in stuck["kip73_diagnosis"]


@pytest.mark.parametrize("throttle", [200, 1000])
def test_a_plan_that_only_lowers_the_replication_factor_has_nothing_to_copy(throttle):
    """It said "by the KIP's estimate the move never finishes" (throttle at or below the
    cluster's max BytesInPerSec), or estimated seconds of copying, for no byte to copy."""
    snap = cluster([1, 2, 3, 4], {"a": [[1, 2], [2, 3], [3, 4], [4, 1]]}, size=1000, rate=200)
    out = plan_throttle(snap, plan_for(snap, [("a", 0, [1])]), ThrottleParams(throttle)).to_dict()
    assert out["bytes_to_move"] == 0 and out["moved_partitions"] == 1
    assert out["kip73_move_time_seconds"] == 0.0
    assert out["kip73_diagnosis"].startswith("nothing to copy")
    assert "never finishes" not in out["kip73_diagnosis"]


def test_qa4_safe_band_each_side():
    # IN < T < N - IN/R: IN = 10 MB/s, R = 3, N = 100 MB/s -> (10, 96.67) MB/s
    snap = cluster([1, 2, 3, 4], {"a": [[1, 2, 3]]}, size=10**9, rate=10e6)
    plan = plan_for(snap, [("a", 0, [1, 2, 4])])

    def broker1(t):
        out = plan_throttle(snap, plan, ThrottleParams(t, 100e6)).to_dict()
        assert (1 in out["outside_safe_band"]) != by_id(out)[1]["in_safe_band"]
        return by_id(out)[1]

    inside = broker1(50e6)
    assert inside["in_safe_band"] and inside["diagnosis"] is None
    assert inside["safe_band"] == {"low": 10e6, "high": pytest.approx(100e6 - 10e6 / 3)}
    assert inside["replication_factor"] == 3 and inside["client_bytes_in_per_sec"] == 10e6
    low = broker1(10e6)
    assert not low["in_safe_band"] and "below the safe band" in low["diagnosis"]
    high = broker1(97e6)
    assert not high["in_safe_band"] and "above the safe band" in high["diagnosis"]


def test_a_network_too_small_for_the_client_traffic_has_no_safe_band():
    """--network-capacity 1.5 answered a band whose low end (12.4 MB/s) was above its high
    end (-4.1 MB/s) and said the throttle was above it: with N - IN/R <= IN no throttle
    is safe (KIP-73 Q&A 4), and the diagnosis says so instead."""
    snap = cluster([1, 2, 3, 4], {"a": [[1, 2, 3]]}, size=10**9, rate=10e6)
    plan = plan_for(snap, [("a", 0, [1, 2, 4])])
    out = plan_throttle(snap, plan, ThrottleParams(50e6, 12e6)).to_dict()
    b = by_id(out)[1]
    assert b["safe_band"]["low"] > b["safe_band"]["high"] and not b["in_safe_band"]
    assert b["diagnosis"].startswith("no safe band: BytesInPerSec 10000000 is not below "
                                     "N - IN/R = 8666667")
    assert "above the safe band" not in b["diagnosis"]


def test_kip_test_plan_moves_at_quota_rate_minus_inbound():
    # "three node cluster (p=100, r=2), data moved from one node to the other: replicas
    # move at the quota dictated rate [repeat with produce requests: minus the inbound rate]"
    parts = [[1, 2]] * 100
    quiet = cluster([1, 2, 3], {"t": parts}, size=10**6)
    moves = [("t", p, [3, 2]) for p in range(100)]
    out = plan_throttle(quiet, plan_for(quiet, moves), ThrottleParams(10**6)).to_dict()
    assert out["bytes_to_move"] == 10**8
    assert out["eta_seconds"] == pytest.approx(10**8 / 10**6)
    busy = cluster([1, 2, 3], {"t": parts}, size=10**6, rate=2000.0)  # 200 kB/s in total
    out = plan_throttle(busy, plan_for(busy, moves), ThrottleParams(10**6)).to_dict()
    assert out["eta_seconds"] == pytest.approx(10**8 / (10**6 - 200_000))
    b = by_id(out)
    assert b[3]["bytes_in"] == 10**8 and b[1]["bytes_out"] == 10**8 and b[2]["bytes_out"] == 0
    assert b[1]["client_bytes_in_per_sec"] == pytest.approx(200_000)


def test_per_broker_bytes_and_eta_by_hand():
    snap = cluster([1, 2, 3, 4], {"a": [[1, 2], [2, 3]]}, size=1000, rate=10.0)
    out = plan_throttle(snap, plan_for(snap, [("a", 0, [3, 4])]), ThrottleParams(110)).to_dict()
    b = by_id(out)
    assert out["throttled_brokers"] == [1, 2, 3, 4]
    assert [b[i]["bytes_in"] for i in (1, 2, 3, 4)] == [0, 0, 1000, 1000]
    assert [b[i]["bytes_out"] for i in (1, 2, 3, 4)] == [2000, 0, 0, 0]  # the leader serves both
    assert b[1]["keep_up_out_per_sec"] == 20 and b[3]["keep_up_in_per_sec"] == 10
    assert b[1]["eta_seconds"] == pytest.approx(2000 / (110 - 20))
    assert b[3]["eta_seconds"] == pytest.approx(1000 / (110 - 10))
    assert b[2]["eta_seconds"] == 0.0
    assert out["eta_seconds"] == pytest.approx(2000 / 90)
    assert b[1]["source"] and not b[1]["destination"] and b[4]["destination"]


@pytest.mark.parametrize("throttle", [50.0, 100.0])
def test_throttle_at_or_below_keep_up_never_finishes(throttle):
    # KIP-73 Q&A 1: as T - BytesIn -> 0 the move makes no progress; say so, no huge number.
    snap = cluster([1, 2, 3], {"a": [[1, 2]]}, size=10**6, rate=100.0)
    out = plan_throttle(snap, plan_for(snap, [("a", 0, [1, 3])]),
                        ThrottleParams(throttle)).to_dict()
    assert out["eta_seconds"] is None and "never finishes" in out["diagnosis"]
    assert "on brokers 1, 3 the throttle" in out["diagnosis"]
    b = by_id(out)
    assert b[3]["eta_seconds"] is None and "never finishes" in b[3]["diagnosis"]
    assert b[1]["eta_seconds"] is None and b[2]["eta_seconds"] == 0.0


def test_autothrottle_headroom_matches_kafka_kit():
    # kafka-kit cmd/autothrottle limits_test.go TestReplicationHeadroom: capacity 100,
    # max 80 %, minimum 10; [utilization, previous throttle] -> headroom.
    cases = [(70, 0, 24), (80, 70, 72), (110, 70, 40), (200, 70, 10)]
    for util, prev, expected in cases:
        got = autothrottle_rate(np.array([util], float), 100, prev, max_pct=80, min_rate=10)
        assert got[0] == pytest.approx(expected)


def test_suggested_throttle_from_headroom():
    # Un-throttled traffic today: source 1 sends keep-up for the two partitions it leads
    # (20 MB/s), source 2 for one (10 MB/s); destination 3 receives 30 MB/s (client writes
    # into a-2, keep-up of a-1 and a-3). Capacity 100 MB/s, 90 %, min 10 MB/s.
    snap = cluster([1, 2, 3], {"a": [[1, 2], [1, 3], [3, 2], [2, 3]]}, size=1, rate=10e6)
    out = plan_throttle(snap, plan_for(snap, [("a", 0, [1, 3])]),
                        ThrottleParams(50e6, 100e6)).to_dict()
    b = by_id(out)
    assert b[1]["suggested_throttle"] == round((100e6 - 20e6) * 0.9)  # transmit side
    assert b[3]["suggested_throttle"] == round((100e6 - 30e6) * 0.9)  # receive side
    assert b[2]["suggested_throttle"] == round((100e6 - 10e6) * 0.9)  # source: leads a-3
    assert out["suggested_throttle"] == round(70e6 * 0.9)
    inputs = out["suggested_throttle_inputs"]
    assert inputs["max_pct"] == 90 and inputs["min_rate"] == 10e6 and inputs["capacity"] == 100e6


def test_suggested_throttle_floor_is_min_rate():
    # Destination 2 already takes 500 MB/s of client writes on a 1 GbE default network.
    snap = cluster([1, 2], {"a": [[1], [2]]}, size=1, rate=500e6)
    out = plan_throttle(snap, plan_for(snap, [("a", 0, [2])]), ThrottleParams(1e6)).to_dict()
    assert out["suggested_throttle"] == 10_000_000
    assert out["network_capacity"] == 125e6 and out["network_capacity_source"].startswith("default")


@pytest.mark.parametrize("params,what", [
    (ThrottleParams(0), "throttle"), (ThrottleParams(-5), "throttle"),
    (ThrottleParams(1, 0), "network capacity"), (ThrottleParams(1, window_num=0), "window num"),
    (ThrottleParams(1, fetch_response_max_bytes=0), "fetch response"),
    (ThrottleParams(math.inf), "throttle"),
])
def test_impossible_parameters_are_bad_input(params, what):
    snap = cluster([1, 2], {"a": [[1]]})
    with pytest.raises(BadInput, match=what):
        plan_throttle(snap, plan_for(snap, [("a", 0, [2])]), params)


def eta_or_inf(x):
    return math.inf if x is None else x


@settings(max_examples=40, deadline=None)
@given(brokers=st.integers(3, 12), partitions=st.integers(3, 80), moves=st.integers(1, 40),
       seed=st.integers(0, 10_000), a=st.floats(0.0, 1.0), b=st.floats(0.0, 1.0))
def test_eta_falls_as_throttle_rises_inside_safe_band(brokers, partitions, moves, seed, a, b):
    snap = generate_snapshot(brokers, 0, 3, partitions, min(3, brokers), seed=seed)
    plan = random_reassignment(snap, moves, seed=seed)
    capacity = 1.25e9
    load = broker_load(snap, proposed_moves(snap, plan))
    lo = float(load.client_in.max())
    hi = float((capacity - load.client_in / load.replication_factor).min())
    assume(hi - lo > 1.0)
    t1, t2 = sorted((lo + (hi - lo) * a, lo + (hi - lo) * b))
    assume(lo < t1 < t2 < hi)
    slow = plan_throttle(snap, plan, ThrottleParams(t1, capacity)).to_dict()
    fast = plan_throttle(snap, plan, ThrottleParams(t2, capacity)).to_dict()
    assert all(r["in_safe_band"] for r in slow["brokers"] + fast["brokers"])
    for r1, r2 in zip(slow["brokers"], fast["brokers"], strict=True):
        assert eta_or_inf(r2["eta_seconds"]) <= eta_or_inf(r1["eta_seconds"])
    assert eta_or_inf(fast["eta_seconds"]) <= eta_or_inf(slow["eta_seconds"])
    assert fast["kip73_move_time_seconds"] <= slow["kip73_move_time_seconds"]
    if slow["eta_seconds"] and t2 > t1 * 1.001:
        assert eta_or_inf(fast["eta_seconds"]) < eta_or_inf(slow["eta_seconds"])
