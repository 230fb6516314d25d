"""Drained brokers stay drained: a broker a completed drain emptied (Goal.keep_empty)
takes nothing under any later goal, loses what it holds again, and is left out of the
averages; naming it in add takes it back."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from backend.engines.planner import Goal, balance_bounds, plan
from backend.errors import BadInput
from backend.model.snapshot import Limits
from tests.unit.test_planner import make
from tests.unit.test_planner_props import SETTINGS, check_invariants, clusters


def drained_cluster():
    """Brokers 1-4 hold 9 replicas each (RF 3, 12 partitions); broker 5 was drained."""
    parts = [[1 + (p + k) % 4 for k in range(3)] for p in range(12)]
    return make({"t": parts}, [1, 2, 3, 4, 5])


def test_a_balance_refills_a_drained_broker_unless_it_is_kept_empty():
    snap = drained_cluster()
    refilled = plan(snap, Goal("balance")).after.broker_replica_counts()
    assert refilled[4] > 0  # the defect: the empty broker is "below the band"
    result = plan(snap, Goal("balance", keep_empty=(5,)))
    assert result.ok and not len(result.reassignment)  # 9 each is the band over brokers 1-4
    assert result.after.broker_replica_counts().tolist() == [9, 9, 9, 9, 0]


def test_what_a_kept_empty_broker_holds_again_is_moved_off_under_every_goal():
    parts = [[1 + (p + k) % 4 for k in range(3)] for p in range(12)]
    parts += [[5, 1, 2], [5, 3, 4]]  # a new topic's replicas, placed by Kafka on broker 5
    snap = make({"t": parts}, [1, 2, 3, 4, 5])
    for goal in (Goal("balance", keep_empty=(5,)), Goal("limits", keep_empty=(5,)),
                 Goal("add", (4,), keep_empty=(5,)), Goal("drain", (4,), keep_empty=(5,))):
        result = plan(snap, goal, Limits(20, None))
        counts = result.after.broker_replica_counts()
        assert counts[4] == 0, goal
        assert not [u for u in result.unresolved if u["kind"] == "not_drained"], goal


def test_a_drain_does_not_move_replicas_onto_a_kept_empty_broker_internal_ones_included():
    parts = [[1 + (p + k) % 4 for k in range(3)] for p in range(12)]
    snap = make({"t": parts, "__consumer_offsets": [[4, 1, 2], [4, 2, 3]]}, [1, 2, 3, 4, 5])
    result = plan(snap, Goal("drain", (4,), keep_empty=(5,)))
    assert result.ok
    on = np.bincount(result.after.replica_broker, minlength=5)
    assert on[3] == 0 and on[4] == 0  # broker 4 drained, broker 5 given nothing


def test_naming_a_kept_empty_broker_in_add_takes_it_back():
    result = plan(drained_cluster(), Goal("add", (5,), keep_empty=(5,)))
    counts = result.after.broker_replica_counts()
    assert result.ok and counts[4] == 36 // 5  # filled to the floor of the average of five


def test_the_capacity_check_leaves_kept_empty_brokers_out():
    snap = drained_cluster()  # 36 replicas; 4 open brokers x 8 = 32 < 36
    result = plan(snap, Goal("balance", keep_empty=(5,)), Limits(8, None))
    assert [u["kind"] for u in result.unresolved] == ["under_provisioned"]
    assert result.unresolved[0]["eligible_brokers"] == 4
    assert plan(snap, Goal("balance"), Limits(8, None)).ok  # five brokers x 8 hold them


@pytest.mark.parametrize("racks", [None, ["a", "a", "b", "b", "b"]])
def test_leaders_are_balanced_over_the_brokers_that_may_take(racks):
    parts = [[1 + (p + k) % 4 for k in range(2)] for p in range(12)]
    snap = make({"t": parts}, [1, 2, 3, 4, 5], racks)
    result = plan(snap, Goal("balance", keep_empty=(5,)))
    leaders = np.bincount(result.after.leaders, minlength=5)
    assert leaders[4] == 0 and result.after.broker_replica_counts()[4] == 0
    low, high = balance_bounds(12 / 4, 1.10)
    assert ((leaders[:4] >= low) & (leaders[:4] <= high)).all() or result.unresolved


@SETTINGS
@given(clusters(), st.sampled_from(["limits", "balance", "add"]), st.integers(0, 3))
def test_no_goal_gives_a_kept_empty_broker_anything(snap, kind, seed):
    kept = int(snap.broker_ids[0])
    if snap.n_brokers - 1 < int(snap.replication_factors.max()):
        return
    limits = Limits(int(snap.broker_replica_counts().max()) + 5, None)
    goal = Goal(kind, (int(snap.broker_ids[-1]),) if kind == "add" else (), keep_empty=(kept,))
    result = plan(snap, goal, limits, seed=seed)
    check_invariants(snap, result, None)
    refused = [u for u in result.unresolved if u["kind"] == "under_provisioned"]
    event(f"under-provisioned={bool(refused)}, moves={len(result.reassignment) > 0}")
    if refused:
        assert not len(result.reassignment)  # refused before any search: nothing moves
        return
    left = sum(u["replicas"] for u in result.unresolved if u["kind"] == "not_drained")
    assert int((result.after.replica_broker == 0).sum()) == left


def test_the_cli_keeps_named_brokers_empty(tmp_path, capsys):
    from backend.cli import main
    from backend.model.io import save_snapshot

    save_snapshot(drained_cluster(), tmp_path / "snap.json")
    argv = ["reassign", "generate", "--snapshot", str(tmp_path / "snap.json"),
            "--goal", "balance"]
    assert main(argv) == 0
    assert "5" in capsys.readouterr().out  # broker 5 refilled without the flag
    assert main([*argv, "--keep-empty", "5"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] and out["plan"]["partitions"] == []
    assert main([*argv, "--keep-empty", "9"]) == 2
    assert capsys.readouterr().err.strip().endswith(
        "broker 9 is not in cluster 't' (--keep-empty)")


def test_a_goal_with_every_broker_kept_empty_is_refused_in_one_line():
    snap = drained_cluster()
    with pytest.raises(BadInput, match=r"^every broker is kept empty \(--keep-empty: "
                                       r"drained\); name the ones to use again in an add"):
        plan(snap, Goal("balance", keep_empty=(1, 2, 3, 4, 5)))
    assert plan(snap, Goal("add", (5,), keep_empty=(1, 2, 3, 4, 5))).reassignment is not None
