"""Reassignment planner: goals, minimality, pre-checks, batches and the reassign CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from backend.cli import main
from backend.engines.batches import execution_batches, new_replicas
from backend.engines.plan_summary import summarize
from backend.engines.planner import Goal, balance_bounds, plan
from backend.errors import BadInput
from backend.model.io import save_snapshot
from backend.model.reassignment import load_reassignment
from backend.model.snapshot import Limits, Snapshot
from backend.twin.generate import generate_snapshot


def make(topics: dict[str, list[list[int]]], brokers: list[int], racks: list[str] | None = None,
         sizes: dict[str, list[int]] | None = None, limits: Limits | None = None) -> Snapshot:
    """A snapshot from explicit replica lists (leader first) per topic."""
    names = list(topics)
    part_topic, flat, rf, size = [], [], [], []
    for t, name in enumerate(names):
        for p, reps in enumerate(topics[name]):
            part_topic.append(t)
            flat += [brokers.index(b) for b in reps]
            rf.append(len(reps))
            size.append((sizes or {}).get(name, [1000] * len(topics[name]))[p])
    return Snapshot.build("t", brokers, racks or [None] * len(brokers), names, part_topic,
                          np.concatenate(([0], np.cumsum(rf))), flat, part_size=size,
                          limits=limits)


def moves(result) -> dict:
    return summarize(result.before, result.reassignment, result.limits, result.unresolved)


# ---- goals ----------------------------------------------------------------------------------
def test_limits_goal_moves_exactly_the_excess_with_racks():
    snap = generate_snapshot(12, 3, 40, 2000, 3, seed=3)
    counts = snap.broker_replica_counts()
    limit = int(np.sort(counts)[-4])
    result = plan(snap, Goal("limits"), Limits(limit, None), seed=0)
    assert result.ok
    assert moves(result)["replica_moves"] == int(np.maximum(counts - limit, 0).sum()) > 0
    assert result.after.broker_replica_counts().max() <= limit


def test_target_utilization_lowers_the_ceiling():
    snap = generate_snapshot(8, 2, 10, 800, 2, seed=1, skew=0.6)
    counts = snap.broker_replica_counts()
    limit = int(np.ceil((counts.mean() + counts.max()) / 2 / 0.9))
    result = plan(snap, Goal("limits", target_utilization=0.9), Limits(limit, None))
    ceiling = int(limit * 0.9)
    assert ceiling < counts.max()
    assert result.after.broker_replica_counts().max() <= ceiling
    assert moves(result)["replica_moves"] == int(np.maximum(counts - ceiling, 0).sum())


def test_smallest_partitions_and_followers_move_first():
    # broker 1 holds four partitions; one replica must leave (limit 3).
    topics = {"big": [[1, 2]], "small": [[1, 3], [2, 1], [3, 1]]}
    sizes = {"big": [10_000], "small": [5, 5, 5]}
    snap = make(topics, [1, 2, 3, 4], sizes=sizes)
    result = plan(snap, Goal("limits"), Limits(3, None))
    plan_json = result.reassignment.to_kafka_json(snap)["partitions"]
    assert len(plan_json) == 1
    moved = plan_json[0]
    assert moved["topic"] == "small"  # the small one, not the big one
    assert moved["partition"] in (1, 2)  # a follower replica of broker 1, not its leader
    assert moved["replicas"][0] != 4 and 4 in moved["replicas"]
    assert moves(result)["leader_moves"] == 0


def test_limits_goal_leaves_internal_topics_alone():
    topics = {"__consumer_offsets": [[1], [1], [1]], "data": [[1], [1], [2]]}
    snap = make(topics, [1, 2, 3])
    result = plan(snap, Goal("limits"), Limits(1, None))
    assert result.ok
    changed = {e["topic"] for e in result.reassignment.to_kafka_json(snap)["partitions"]}
    assert changed == {"data"}


def test_drain_moves_internal_replicas_too():
    topics = {"__consumer_offsets": [[1, 2], [2, 1]], "data": [[1, 3], [3, 2], [2, 1]]}
    snap = make(topics, [1, 2, 3, 4])
    result = plan(snap, Goal("drain", (1,)), Limits(), seed=2)
    assert result.ok
    assert 0 not in result.after.replica_broker  # broker 1 is empty
    assert moves(result)["replica_moves"] == 4


def test_drain_reports_what_racks_forbid():
    # RF 3 over racks a, b, c; broker 2 is the only broker in rack b.
    topics = {"t": [[1, 2, 3], [3, 1, 2]]}
    snap = make(topics, [1, 2, 3, 4], racks=["a", "b", "c", "a"])
    result = plan(snap, Goal("drain", (2,)), Limits())
    assert len(result.reassignment) == 0
    assert [(u["kind"], u["broker"], u["replicas"]) for u in result.unresolved] == [
        ("not_drained", 2, 2)]


def joined(snap: Snapshot, rack: str | None) -> Snapshot:
    """``snap`` with an empty broker 7 added (in ``rack``)."""
    return Snapshot.build("t", np.append(snap.broker_ids, 7), [*snap.broker_racks, rack],
                          snap.topic_names, snap.part_topic, snap.replica_offsets,
                          snap.replica_broker, part_size=snap.part_size)


def test_add_fills_the_new_broker_to_the_average():
    snap = joined(generate_snapshot(6, 0, 10, 300, 3, seed=4), None)
    result = plan(snap, Goal("add", (7,)), Limits(), seed=0)
    counts = result.after.broker_replica_counts()
    avg = snap.n_replicas // snap.n_brokers
    assert result.ok and counts[-1] == avg
    assert moves(result)["replica_moves"] == avg


def test_add_gives_the_new_broker_its_share_of_leaders_without_moving_more_data():
    """A broker that only follows takes no produce or fetch traffic: after the replicas,
    it leads its share of leaders (at least the floor of the average), first of the
    partitions the plan moves to it (a leader swap needs no data: the replica moves stay
    the same)."""
    # racks r0-r2 at RF 3: broker 7 (r1) takes only r1's replicas, as they happen to sit
    # in the lists (38 of them first without this pass)
    snap = joined(generate_snapshot(6, 3, 10, 300, 3, seed=5), "r1")
    result = plan(snap, Goal("add", (7,)), Limits(), seed=0)
    leaders = np.bincount(result.after.leaders, minlength=snap.n_brokers)
    share = snap.n_partitions / snap.n_brokers  # 300 / 7 = 42.9; it led none before
    assert np.bincount(snap.leaders, minlength=snap.n_brokers)[-1] == 0
    assert np.floor(share) <= leaders[-1] <= np.ceil(share)
    assert moves(result)["replica_moves"] == 100  # r1's 300 replicas even over 3 brokers
    # every partition it leads is one the plan gave it: no plan entry for leadership alone
    led = np.flatnonzero(result.after.leaders == snap.n_brokers - 1)
    assert np.isin(led, result.reassignment.rows).all()


def test_add_evens_out_the_new_brokers_rack_when_racks_forbid_more():
    # RF 3 over 3 racks: every partition has one replica per rack, so broker 7 (rack r1)
    # can only take replicas from r1's brokers; r1 ends even at 300 / 3 = 100 each.
    snap = joined(generate_snapshot(6, 3, 10, 300, 3, seed=4), "r1")
    result = plan(snap, Goal("add", (7,)), Limits(), seed=0)
    counts = result.after.broker_replica_counts()
    in_r1 = np.array([r == "r1" for r in snap.broker_racks])
    assert counts[in_r1].tolist() == [100, 100, 100]
    assert moves(result)["replica_moves"] == 100
    assert [u["kind"] for u in result.unresolved] == ["under_filled"]
    assert moves(result)["violations"] == []


def test_balance_brings_replicas_and_leaders_into_the_band():
    snap = generate_snapshot(10, 0, 30, 1500, 3, seed=5, skew=0.6)
    result = plan(snap, Goal("balance"), Limits(), seed=1)
    assert result.ok, result.unresolved
    counts = result.after.broker_replica_counts()
    leaders = result.after.broker_leader_counts()
    assert counts.max() <= 1.1 * counts.mean() and counts.min() >= 0.9 * counts.mean()
    assert leaders.max() <= 1.1 * leaders.mean() + 1 and leaders.min() >= 0.9 * leaders.mean() - 1
    before = snap.broker_replica_counts()
    high = int(np.floor(before.mean() * 1.1))
    low = int(np.ceil(before.mean() * 0.9))
    fewest = max(np.maximum(before - high, 0).sum(), np.maximum(low - before, 0).sum())
    assert moves(result)["replica_moves"] == fewest


@pytest.mark.parametrize("goal", [Goal("limits"), Goal("balance"), Goal("drain", (4,)),
                                  Goal("add", (1,))])
def test_a_cluster_that_meets_its_goal_gets_an_empty_plan(goal):
    topics = {"t": [[1, 2], [2, 3], [3, 1], [1, 3], [2, 1], [3, 2]]}
    snap = make(topics, [1, 2, 3, 4] if goal.kind == "drain" else [1, 2, 3])  # 4 is empty
    result = plan(snap, goal, Limits(4, None))
    assert result.ok and len(result.reassignment) == 0
    assert moves(result)["batches"] == []


def test_same_seed_same_plan():
    snap = generate_snapshot(20, 3, 50, 5000, 3, seed=9, skew=0.5)
    one = plan(snap, Goal("balance"), Limits(), seed=7)
    two = plan(snap, Goal("balance"), Limits(), seed=7)
    assert one.reassignment.to_kafka_json(snap) == two.reassignment.to_kafka_json(snap)
    assert moves(one) == moves(two)


# ---- pre-check ------------------------------------------------------------------------------
def test_under_provisioned_says_how_many_brokers_to_add():
    snap = generate_snapshot(6, 0, 5, 200, 3, seed=0)  # 600 replicas
    result = plan(snap, Goal("limits"), Limits(90, None))  # room for 540
    assert len(result.reassignment) == 0
    [u] = result.unresolved
    assert u["kind"] == "under_provisioned"
    assert (u["replicas"], u["capacity"], u["brokers_to_add"]) == (600, 540, 1)
    assert "add at least 1 brokers" in u["message"]


def test_drain_pre_check_counts_only_remaining_brokers():
    snap = generate_snapshot(6, 0, 5, 200, 3, seed=0)
    result = plan(snap, Goal("drain", (1, 2)), Limits(120, None))  # 4 x 120 = 480 < 600
    [u] = result.unresolved
    assert (u["eligible_brokers"], u["capacity"], u["brokers_to_add"]) == (4, 480, 1)


@pytest.mark.parametrize("goal, limits, text", [
    (Goal("limits"), Limits(), "needs max.broker.partitions"),
    (Goal("drain"), Limits(), "needs --brokers"),
    (Goal("balance", (1,)), Limits(), "applies to the drain and add goals"),
    (Goal("drain", (99,)), Limits(), "broker 99 is not in cluster"),
    (Goal("drain", (1, 2, 3)), Limits(), "names every broker"),
    (Goal("limits", target_utilization=1.5), Limits(5, None), "target-utilization"),
])
def test_goals_that_cannot_be_asked(goal, limits, text):
    snap = make({"t": [[1, 2], [2, 3]]}, [1, 2, 3])
    with pytest.raises(BadInput, match=text):
        plan(snap, goal, limits)


# ---- batches --------------------------------------------------------------------------------
@pytest.mark.parametrize("per_broker, cluster", [(5, 1250), (2, 7), (1, 3)])
def test_batches_respect_both_concurrency_limits(per_broker, cluster):
    snap = generate_snapshot(12, 3, 30, 1500, 3, seed=2, skew=0.6)
    result = plan(snap, Goal("balance"), Limits(), seed=0)
    re = result.reassignment
    batches = execution_batches(snap, re, per_broker, cluster)
    flat = np.concatenate(batches)
    assert sorted(flat.tolist()) == list(range(len(re)))  # every entry exactly once
    added = new_replicas(snap, re)
    entry = np.repeat(np.arange(len(re)), np.diff(re.offsets))
    for batch in batches:
        assert len(batch) <= cluster
        in_batch = np.isin(entry, batch) & added
        load = np.bincount(re.brokers[in_batch], minlength=snap.n_brokers)
        moving = np.unique(entry[in_batch])
        load += np.bincount(snap.leaders[re.rows[moving]], minlength=snap.n_brokers)
        assert load.max() <= per_broker


# ---- CLI --------------------------------------------------------------------------------------
@pytest.fixture
def snapshot_file(tmp_path):
    snap = generate_snapshot(6, 3, 10, 200, 3, seed=0, limits=Limits(110, None))
    path = tmp_path / "snap.json"
    save_snapshot(snap, path)
    return snap, str(path)


def run(capsys, *argv) -> tuple[int, dict | None, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else None), err


def test_generate_prints_plan_and_summary_and_writes_the_bare_plan(snapshot_file, tmp_path,
                                                                   capsys):
    snap, path = snapshot_file
    plan_path = str(tmp_path / "plan.json")
    code, out, _ = run(capsys, "reassign", "generate", "--snapshot", path, "--goal", "limits",
                       "--plan-out", plan_path)
    assert code == 0 and out["ok"]
    assert set(out["summary"]) >= {"replica_moves", "leader_moves", "bytes_to_move",
                                   "move_ratio", "brokers", "batches", "unresolved"}
    assert set(out["summary"]["brokers"][0]) == {
        "id", "replicas_before", "replicas_after", "leaders_before", "leaders_after",
        "bytes_before", "bytes_after"}
    counts = snap.broker_replica_counts()
    assert out["summary"]["replica_moves"] == int(np.maximum(counts - 110, 0).sum())
    with open(plan_path) as f:
        bare = json.load(f)
    assert bare == out["plan"] and bare["version"] == 1
    assert len(load_reassignment(plan_path, snap)) == len(bare["partitions"])
    code, diffed, _ = run(capsys, "reassign", "diff", "--snapshot", path,
                          "--reassignment", plan_path)
    assert code == 0 and diffed["ok"]
    assert diffed["summary"] == out["summary"]


def test_diff_reports_a_hand_written_plan_that_breaks_the_limit(snapshot_file, tmp_path,
                                                                capsys):
    snap, path = snapshot_file
    row = int(np.flatnonzero(~np.isin(np.arange(snap.n_partitions),
                                      snap.replica_partition[snap.replica_broker == 0]))[0])
    reps = snap.replicas_of(row)
    bad = {"version": 1, "partitions": [{"topic": str(snap.topic_names[snap.part_topic[row]]),
                                         "partition": int(snap.part_id[row]),
                                         "replicas": [1, *reps[1:]]}]}
    plan_path = tmp_path / "hand.json"
    plan_path.write_text(json.dumps(bad))
    code, out, _ = run(capsys, "reassign", "diff", "--snapshot", path, "--reassignment",
                       str(plan_path), "--max-broker-partitions", "50")
    assert code == 0 and not out["ok"]
    assert any(v["kind"] == "limit" and v["broker"] == 1 for v in out["summary"]["violations"])
    assert out["summary"]["replica_moves"] == 1


@pytest.mark.parametrize("plan_doc, text", [
    ({"version": 1, "partitions": []}, "the partition list is empty"),
    ({"version": 1, "partitions": [{"topic": "topic-00", "partition": 0, "replicas": []}]},
     "non-empty list"),
    ({"version": 1, "partitions": [{"topic": "topic-00", "partition": 0, "replicas": [1, 1]}]},
     "a broker appears twice"),
    ({"version": 1, "partitions": [{"topic": "topic-00", "partition": 0, "replicas": [1]},
                                   {"topic": "topic-00", "partition": 0, "replicas": [2]}]},
     "listed twice"),
    ({"version": 1, "partitions": [{"topic": "topic-00", "partition": 0, "replicas": [9]}]},
     "broker 9 is not in cluster"),
    ({"version": 1, "partitions": [{"topic": "topic-00", "partition": 0, "replicas": [1, 2],
                                    "log_dirs": ["any"]}]}, "log_dirs"),
])
def test_diff_rejects_invalid_plans_in_one_line(snapshot_file, tmp_path, capsys, plan_doc,
                                                text):
    _, path = snapshot_file
    plan_path = tmp_path / "bad.json"
    plan_path.write_text(json.dumps(plan_doc))
    code, out, err = run(capsys, "reassign", "diff", "--snapshot", path, "--reassignment",
                         str(plan_path))
    assert code == 2 and out is None
    assert err.count("\n") == 1 and text in err


def test_generate_rejects_bad_arguments_in_one_line(snapshot_file, capsys):
    _, path = snapshot_file
    with pytest.raises(SystemExit) as exit_info:
        main(["reassign", "generate", "--snapshot", path, "--goal", "drain", "--brokers", "x"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.count("\n") == 1
    code, _, err = run(capsys, "reassign", "generate", "--snapshot", path, "--goal", "add")
    assert code == 2 and "needs --brokers" in err and err.count("\n") == 1


def test_empty_plan_is_not_written(snapshot_file, tmp_path, capsys):
    _, path = snapshot_file
    plan_path = tmp_path / "plan.json"
    code, out, _ = run(capsys, "reassign", "generate", "--snapshot", path, "--goal", "limits",
                       "--max-broker-partitions", "1000", "--plan-out", str(plan_path))
    assert code == 0 and out["plan"]["partitions"] == []
    assert out["plan_out"]["written"] is False and not plan_path.exists()


@pytest.mark.parametrize(("brokers", "racks", "rf", "skew", "seed"), [
    (7, 3, 2, 0.3, 1), (5, 4, 2, 0.3, 1), (7, 2, 3, 0.6, 1), (5, 2, 3, 0.6, 1),
    (5, 3, 2, 0.3, 3)])
def test_balance_with_uneven_racks_makes_the_fewest_moves(brokers, racks, rf, skew, seed):
    """max(excess above the band, deficit below it) is a lower bound on replica moves; on
    these racked clusters (where evening racks first cost 8-47% more) the plan meets it."""
    snap = generate_snapshot(brokers, racks, 6, 300, rf, seed=seed, skew=skew)
    counts = snap.broker_replica_counts()
    low, high = balance_bounds(counts.sum() / brokers, 1.10)
    bound = max(np.maximum(counts - high, 0).sum(), np.maximum(low - counts, 0).sum())
    res = plan(snap, Goal("balance"), Limits(), seed=0)
    assert res.unresolved == []
    assert summarize(snap, res.reassignment, Limits(), res.unresolved)["replica_moves"] == bound


@pytest.mark.parametrize(("brokers", "racks", "rf", "skew", "seed"), [
    (11, 2, 2, 0.3, 2), (11, 2, 2, 0.6, 2), (8, 3, 2, 0.3, 1), (7, 0, 3, 0.6, 1)])
def test_add_moves_exactly_what_the_new_brokers_lack(brokers, racks, rf, skew, seed):
    """New brokers fill to the floor of the average and no further: the moves are what
    they lack of it (filling to the rounded-up average used to cost an extra move)."""
    snap = generate_snapshot(brokers, racks, 6, 300, rf, seed=seed, skew=skew)
    new = (brokers - 1, brokers)
    empty = plan(snap, Goal("drain", new), Limits(), seed=0).after
    counts = empty.broker_replica_counts()
    res = plan(empty, Goal("add", new), Limits(), seed=0)
    assert res.unresolved == []
    lacking = int(np.maximum(counts.sum() // brokers - counts[-2:], 0).sum())
    assert summarize(empty, res.reassignment, Limits(), res.unresolved)["replica_moves"] == lacking
