"""Planner invariants as property tests on generated clusters (issue 4)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from backend.engines.plan_summary import summarize
from backend.engines.planner import Goal, balance_bounds, broker_ceiling, plan
from backend.model.csr import gather_index
from backend.model.snapshot import Limits, Snapshot
from backend.twin.generate import generate_snapshot

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def clusters(draw, racks_allowed: bool = True) -> Snapshot:
    brokers = draw(st.integers(4, 12))
    racks = draw(st.sampled_from([0, 2, 3])) if racks_allowed else 0
    rf = draw(st.integers(1, min(3, brokers)))
    topics = draw(st.integers(1, 12))
    partitions = draw(st.integers(max(topics, 20), 400))
    return generate_snapshot(brokers, min(racks, brokers), topics, partitions, rf,
                             seed=draw(st.integers(0, 10_000)),
                             skew=draw(st.sampled_from([0.0, 0.3, 0.6])))


def rack_spread(snap: Snapshot) -> np.ndarray:
    rack = snap.broker_rack_index[snap.replica_broker]
    pairs = np.unique(snap.replica_partition * 1000 + rack)
    return np.bincount(pairs // 1000, minlength=snap.n_partitions)


def check_invariants(before: Snapshot, result, ceiling: int | None) -> None:
    after, re = result.after, result.reassignment
    # replication factors unchanged, no broker twice in a partition
    assert np.array_equal(after.replication_factors, before.replication_factors)
    pairs = after.replica_partition * after.n_brokers + after.replica_broker
    assert len(np.unique(pairs)) == after.n_replicas
    # rack spread never drops
    if before.rack_mode != "none":
        assert (rack_spread(after) >= rack_spread(before)).all()
    # every planned partition really changes, and nothing else does
    old = before.replica_broker[gather_index(before.replica_offsets, re.rows)]
    for i in range(len(re)):
        a, b = re.offsets[i], re.offsets[i + 1]
        assert old[a:b].tolist() != re.brokers[a:b].tolist()
    assert np.array_equal(re.target(before).replica_broker, after.replica_broker)
    # no destination above the ceiling
    if ceiling is not None:
        counts_b, counts_a = before.broker_replica_counts(), after.broker_replica_counts()
        grew = counts_a > counts_b
        assert (counts_a[grew] <= ceiling).all()
    summary = summarize(before, re, result.limits, result.unresolved)
    assert summary["violations"] == []


@SETTINGS
@given(clusters(), st.floats(0.95, 1.3), st.sampled_from([1.0, 0.9]), st.integers(0, 3))
def test_limits_goal_invariants_and_move_count(snap, level, util, seed):
    counts = snap.broker_replica_counts()
    limit = max(1, int(counts.mean() * level + 0.5))
    limits = Limits(limit, None)
    result = plan(snap, Goal("limits", target_utilization=util), limits, seed=seed)
    ceiling = broker_ceiling(limits, util)
    excess = int(np.maximum(counts - ceiling, 0).sum())
    event("under-provisioned" if counts.sum() > ceiling * snap.n_brokers
          else f"excess {'>' if excess else '='} 0")
    if counts.sum() > ceiling * snap.n_brokers:
        assert [u["kind"] for u in result.unresolved] == ["under_provisioned"]
        assert len(result.reassignment) == 0
        return
    check_invariants(snap, result, ceiling)
    moves = summarize(snap, result.reassignment, limits)["replica_moves"]
    left = sum(u["excess"] for u in result.unresolved if u["kind"] == "over_limit")
    # every move removes exactly one replica of excess: moves = excess - what is left
    assert moves == excess - left


@SETTINGS
@given(clusters(racks_allowed=False), st.floats(1.0, 1.1), st.integers(0, 3))
def test_limits_goal_moves_exactly_the_excess_when_there_is_room(snap, level, seed):
    counts = snap.broker_replica_counts()
    rf = int(snap.replication_factors.max())
    limit = int(counts.mean() * level) + 1
    room = np.maximum(limit - counts, 0)
    event("skipped: too few brokers with room" if (room > 0).sum() < rf
          else f"excess {'>' if (counts > limit).any() else '='} 0")
    if (room > 0).sum() < rf:  # fewer than RF brokers with room: not every replica can move
        return
    limits = Limits(limit, None)
    result = plan(snap, Goal("limits"), limits, seed=seed)
    assert result.ok, result.unresolved
    summary = summarize(snap, result.reassignment, limits)
    assert summary["replica_moves"] == int(np.maximum(counts - limit, 0).sum())
    assert result.after.broker_replica_counts().max() <= limit


@SETTINGS
@given(clusters(), st.integers(1, 2), st.integers(0, 3))
def test_drain_goal_moves_exactly_the_drained_replicas(snap, n_drain, seed):
    drained = tuple(int(b) for b in snap.broker_ids[:n_drain])
    if snap.n_brokers - n_drain < int(snap.replication_factors.max()):
        return
    result = plan(snap, Goal("drain", drained), Limits(), seed=seed)
    check_invariants(snap, result, None)
    on_drained = int(np.isin(snap.replica_broker, np.arange(n_drain)).sum())
    left = sum(u["replicas"] for u in result.unresolved)
    moves = summarize(snap, result.reassignment, Limits())["replica_moves"]
    assert moves == on_drained - left
    if snap.rack_mode == "none":
        assert result.ok and moves == on_drained


@SETTINGS
@given(clusters(), st.integers(0, 3))
def test_balance_goal_lands_in_the_band(snap, seed):
    result = plan(snap, Goal("balance"), Limits(), seed=seed)
    check_invariants(snap, result, None)
    counts = result.after.broker_replica_counts()
    low, high = balance_bounds(counts.sum() / snap.n_brokers, 1.10)
    unresolved = {u["broker"] for u in result.unresolved if u["kind"] == "replicas_unbalanced"}
    event(f"moves={len(result.reassignment) > 0}, unresolved={bool(unresolved)}")
    inside = (counts >= low) & (counts <= high)
    assert set(snap.broker_ids[~inside].tolist()) == unresolved
    if snap.rack_mode == "none" and int(snap.replication_factors.max()) < snap.n_brokers:
        assert not unresolved


@SETTINGS
@given(clusters(), st.sampled_from(["limits", "balance", "add"]), st.integers(0, 3))
def test_replanning_the_result_is_a_no_op(snap, kind, seed):
    limits = Limits(int(snap.broker_replica_counts().max()) + 5, None)
    goal = Goal(kind, (int(snap.broker_ids[-1]),) if kind == "add" else ())
    first = plan(snap, goal, limits, seed=seed)
    event(f"first plan {'empty' if not len(first.reassignment) else 'moves'}, ok={first.ok}")
    if not first.ok:
        return
    again = plan(first.after, goal, limits, seed=seed + 1)
    assert len(again.reassignment) == 0
