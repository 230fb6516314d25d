"""A throttle above the network capacity is never reached: with N = 1000 B/s and a
50 MB/s throttle the what-if page said "Predicted ETA 2 min" and "Suggested throttle
10.0 MB/s", 10,000 times what the link carries. Each broker copies at min(T, N) (KIP-73
Q&A 4 and 5 bound the throttle by N), and the suggested throttle is never above N."""

import pytest

from backend.engines.throttle import ThrottleParams, plan_throttle
from backend.services import plan_preview
from tests.unit.test_throttle_lists import cluster, plan_for


def one_move():
    """a-0 copies 1,000,000 bytes from broker 1 to broker 3 (10 B/s of writes)."""
    snap = cluster([1, 2, 3], {"a": [[1, 2]]}, size=1_000_000, rate=10.0)
    return snap, plan_for(snap, [("a", 0, [3, 2])])


def test_eta_is_paced_by_the_network_when_the_throttle_is_above_it():
    snap, plan = one_move()
    out = plan_throttle(snap, plan, ThrottleParams(50e6, 1000.0)).to_dict()
    # 1,000,000 bytes over (1000 - 10) B/s, not over (50 MB/s - 10)
    assert out["eta_seconds"] == pytest.approx(1_000_000 / 990)
    assert {b["id"]: b["eta_seconds"] for b in out["brokers"]} == {
        1: pytest.approx(1_000_000 / 990), 2: 0.0, 3: pytest.approx(1_000_000 / 990)}
    assert out["replication_rate"] == 1000.0
    assert out["network_diagnosis"] == ("the throttle 50000000 B/s is more than the network "
                                        "carries (1000 B/s): each broker copies at most "
                                        "1000 B/s")
    assert out["kip73_move_time_seconds"] > 1_000_000 / 1000  # at N, not at T
    # below N the throttle paces it, as before
    below = plan_throttle(snap, plan, ThrottleParams(510.0, 1000.0)).to_dict()
    assert below["eta_seconds"] == pytest.approx(1_000_000 / 500)
    assert below["network_diagnosis"] is None and below["replication_rate"] == 510.0


def test_raising_the_throttle_past_the_network_changes_nothing():
    snap, plan = one_move()
    at = plan_throttle(snap, plan, ThrottleParams(1000.0, 1000.0)).to_dict()
    for t in (1001.0, 50e6, 1e12):
        out = plan_throttle(snap, plan, ThrottleParams(t, 1000.0)).to_dict()
        assert out["eta_seconds"] == pytest.approx(at["eta_seconds"]), t


def test_a_network_below_the_keep_up_writes_never_finishes_and_says_why():
    snap = cluster([1, 2, 3], {"a": [[1, 2]]}, size=1_000_000, rate=2000.0)
    out = plan_throttle(snap, plan_for(snap, [("a", 0, [3, 2])]),
                        ThrottleParams(50e6, 1000.0)).to_dict()
    assert out["eta_seconds"] is None
    assert out["diagnosis"].startswith("never finishes: on brokers 1, 3 the network capacity "
                                       "1000 B/s is at or below the keep-up writes")
    assert out["diagnosis"].endswith("a faster network, not a higher throttle, would end it")
    assert "use the whole network capacity 1000 B/s" in out["brokers"][0]["diagnosis"]


def test_the_suggested_throttle_is_never_above_the_network():
    """kafka-kit's headroom has a 10 MB/s floor (minRate), more than a 1 kB/s link."""
    snap, plan = one_move()
    out = plan_throttle(snap, plan, ThrottleParams(50e6, 1000.0)).to_dict()
    assert out["suggested_throttle"] == 1000
    assert all(b["suggested_throttle"] <= 1000 for b in out["brokers"])
    # on 1 GbE the floor is below N and stays kafka-kit's
    gbe = plan_throttle(snap, plan, ThrottleParams(50e6)).to_dict()
    assert gbe["suggested_throttle"] > 10e6


def test_a_preview_at_a_throttle_above_the_network_runs_at_the_network():
    """The reassignments preview's every-move-at-once and batched ETAs alike."""
    snap, plan = one_move()
    fast = plan_preview.throttle_figures(snap, plan, 50e6, 1000.0)
    at = plan_preview.throttle_figures(snap, plan, 1000.0, 1000.0)
    assert fast["eta_seconds"] == pytest.approx(at["eta_seconds"])
    assert fast["batched_eta_seconds"] == pytest.approx(at["batched_eta_seconds"])
    suggested = plan_preview.throttle_figures(snap, plan, None, 1000.0)
    assert suggested["throttle"] <= 1000


def test_a_throttle_sweep_row_above_the_network_runs_at_the_network():
    """The Sweeps tab's throttle rows: both ETAs at min(T, N), and a suggestion within N."""
    from backend.spark.spec import ThrottleSpec
    from backend.spark.sweeps import throttle_row

    snap, plan = one_move()
    spec = ThrottleSpec("s.json", "plan.json", {}, network_capacity=1000.0)
    at, fast = (throttle_row(snap, plan, spec, {"throttle": t, "window_num": 11})
                for t in (1000.0, 50e6))
    assert fast["eta_seconds"] == pytest.approx(at["eta_seconds"])
    assert fast["batched_eta_seconds"] == pytest.approx(at["batched_eta_seconds"])
    assert fast["suggested_throttle"] <= 1000
