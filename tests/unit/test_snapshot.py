"""Snapshot files: the documented JSON form, Parquet, validation, Kafka's plan JSON."""

import json

import numpy as np
import pytest

from backend.errors import BadInput
from backend.model.io import load_snapshot, save_snapshot, snapshot_from_dict, snapshot_to_dict
from backend.model.reassignment import reassignment_between, reassignment_from_dict
from backend.services.snapshots import describe
from backend.twin.generate import generate_snapshot

DOC = {
    "cluster": "prod-eu",
    "brokers": [{"id": 3, "rack": "r2"}, {"id": 1, "rack": "r1"}, {"id": 2, "rack": "r1"}],
    "topics": [
        {"name": "orders", "keyed": True, "partitions": [
            {"partition": 1, "replicas": [2, 3], "size_bytes": 10, "bytes_in_per_sec": 1.5},
            {"partition": 0, "replicas": [1, 3]}]},
        {"name": "__consumer_offsets", "partitions": [{"partition": 0, "replicas": [3, 1, 2]}]},
    ],
    "limits": {"max.broker.partitions": 4000, "max.partitions": 200000},
}


def test_json_form_and_defaults():
    snap = snapshot_from_dict(DOC)
    assert snap.broker_ids.tolist() == [1, 2, 3] and list(snap.broker_racks) == ["r1", "r1", "r2"]
    assert snap.replicas_of(snap.partition_row("orders", 0)) == [1, 3]  # rows sorted by number
    assert snap.replicas_of(snap.partition_row("orders", 1)) == [2, 3]
    assert snap.topic_internal.tolist() == [False, True]  # "__" means internal by default
    assert snap.topic_keyed.tolist() == [True, False]
    assert snap.part_size.tolist() == [0, 10, 0]
    assert snap.broker_replica_counts().tolist() == [1, 1, 2]  # internal topics not counted
    assert snap.broker_replica_counts(counted_only=False).tolist() == [2, 2, 3]
    assert snap.limits.max_broker_partitions == 4000 and snap.limits.max_partitions == 200000
    again = snapshot_from_dict(snapshot_to_dict(snap))
    assert again.replica_broker.tolist() == snap.replica_broker.tolist()


@pytest.mark.parametrize("mutate,message", [
    (lambda d: d["brokers"].append({"id": 1}), "broker 1 is listed twice"),
    (lambda d: d["topics"][0]["partitions"][0].update(replicas=[2, 2]), "appears twice"),
    (lambda d: d["topics"][0]["partitions"][0].update(replicas=[9]), "broker 9"),
    (lambda d: d["topics"][0]["partitions"][0].update(partition=5), "partition 1 is missing"),
    (lambda d: d["topics"].append({"name": "orders"}), "'orders' is listed twice"),
    (lambda d: d["limits"].update({"max.brokers": 1}), "unknown limit"),
    (lambda d: d["topics"][0]["partitions"][0].update(size_bytes=-1), "size_bytes"),
])
def test_validation_names_what_and_where(mutate, message):
    doc = json.loads(json.dumps(DOC))
    mutate(doc)
    with pytest.raises(BadInput, match=message):
        snapshot_from_dict(doc, "s.json")


def test_unreadable_files(tmp_path):
    with pytest.raises(BadInput, match="no such"):
        load_snapshot(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{\n  nope")
    with pytest.raises(BadInput, match="line 2"):
        load_snapshot(bad)


@pytest.mark.parametrize("suffix", ["json", "parquet"])
def test_round_trip(tmp_path, suffix):
    snap = generate_snapshot(12, 3, 20, 500, 3, seed=7)
    path = tmp_path / f"s.{suffix}"
    save_snapshot(snap, path)
    back = load_snapshot(path)
    for field in ("broker_ids", "part_topic", "part_size", "replica_offsets", "replica_broker"):
        assert np.array_equal(getattr(back, field), getattr(snap, field)), field
    assert list(back.broker_racks) == list(snap.broker_racks)
    assert list(back.topic_names) == list(snap.topic_names)


def test_generate_is_reproducible_and_realistic():
    a = generate_snapshot(30, 3, 50, 3000, 3, seed=1, skew=0.5)
    b = generate_snapshot(30, 3, 50, 3000, 3, seed=1, skew=0.5)
    assert np.array_equal(a.replica_broker, b.replica_broker)
    counts = a.broker_replica_counts()
    assert counts.sum() == 9000 and counts.max() > counts.min()  # uneven per broker
    sizes = np.bincount(a.part_topic, weights=a.part_size)
    assert sizes.max() > 10 * np.median(sizes)  # a few huge topics, a long tail
    racks = a.broker_rack_index[a.replica_broker].reshape(-1, 3)
    assert (np.sort(racks, axis=1)[:, 1:] != np.sort(racks, axis=1)[:, :-1]).all()


def test_reassignment_plan_validation():
    snap = snapshot_from_dict(DOC)

    def plan(*entries):
        return {"version": 1, "partitions": list(entries)}

    ok = reassignment_from_dict(plan({"topic": "orders", "partition": 1, "replicas": [1, 2],
                                      "log_dirs": ["any", "any"]}), snap)
    assert ok.target(snap).replicas_of(snap.partition_row("orders", 1)) == [1, 2]
    cases = [
        (plan(), "empty"),
        (plan({"topic": "orders", "partition": 0, "replicas": []}), "non-empty"),
        (plan({"topic": "orders", "partition": 0, "replicas": [1, 1]}), "appears twice"),
        (plan({"topic": "orders", "partition": 0, "replicas": [1]},
              {"topic": "orders", "partition": 0, "replicas": [2]}), "listed twice"),
        (plan({"topic": "nope", "partition": 0, "replicas": [1]}), "'nope' is not in"),
        (plan({"topic": "orders", "partition": 7, "replicas": [1]}), "orders-7 does not exist"),
        (plan({"topic": "orders", "partition": 0, "replicas": [8]}), "broker 8"),
        (plan({"topic": "orders", "partition": 0, "replicas": [1], "log_dirs": []}), "log_dirs"),
    ]
    for doc, message in cases:
        with pytest.raises(BadInput, match=message):
            reassignment_from_dict(doc, snap, "p.json")


def test_reassignment_between_lists_only_changes():
    snap = generate_snapshot(6, 0, 3, 30, 2, seed=3)
    plan = reassignment_from_dict({"version": 1, "partitions": [
        {"topic": "topic-0", "partition": 0, "replicas": snap.replicas_of(0)[::-1]},
        {"topic": "topic-1", "partition": 0, "replicas": snap.replicas_of(
            snap.partition_row("topic-1", 0))}]}, snap)
    diff = reassignment_between(snap, plan.target(snap))
    assert diff.rows.tolist() == [0]  # a leader swap is a change; a no-op is not


def test_describe_headroom():
    out = describe(snapshot_from_dict(DOC))
    assert [b["replicas"] for b in out["brokers"]] == [1, 1, 2]
    assert out["brokers"][0]["capacity"] == 3999
    assert out["cluster_partitions"] == 4 and out["cluster_capacity"] == 199996


def test_fast_and_validating_plan_parsers_agree():
    from backend.model.reassignment import _parse_fast, _parse_validating

    snap = generate_snapshot(8, 2, 5, 60, 3, seed=4)
    rng = np.random.default_rng(0)
    entries = []
    for row in rng.choice(snap.n_partitions, 25, replace=False).tolist():
        reps = rng.choice(snap.broker_ids, int(rng.integers(1, 4)), replace=False).tolist()
        entries.append({"topic": snap.topic_names[snap.part_topic[row]],
                        "partition": int(snap.part_id[row]), "replicas": reps,
                        "log_dirs": ["any"] * len(reps)})
    fast, slow = _parse_fast(entries, snap), _parse_validating(entries, snap, "p")
    for a, b in zip(fast[:3], slow[:3], strict=True):
        assert np.array_equal(a, b)
    assert fast[3] == slow[3]
    entries[3]["replicas"] = [True]  # JSON true is not a broker id
    assert _parse_fast(entries, snap) is None


def test_only_topics_keeps_those_topics_rows_as_they_are():
    """What a twin answers a plan's basis re-check: the named topics it has, sliced."""
    snap = snapshot_from_dict(DOC)
    only = snap.only_topics(["orders", "gone"])
    assert list(only.topic_names) == ["orders"] and list(only.topic_keyed) == [True]
    assert [only.replicas_of(r) for r in range(only.n_partitions)] == [[1, 3], [2, 3]]
    assert list(only.part_size) == [0, 10] and list(only.part_rate) == [0.0, 1.5]
    assert np.array_equal(only.broker_ids, snap.broker_ids) and only.limits == snap.limits
    big = generate_snapshot(12, 3, 40, 2000, 3, seed=4)
    names = [str(big.topic_names[t]) for t in (31, 2, 17)]
    part = big.only_topics(names)
    assert list(part.topic_names) == sorted(names, key=lambda n: big.topic_index(n))
    for t in names:
        first, n = big.topic_starts[big.topic_index(t)], part.topic_partition_count(
            part.topic_index(t))
        assert n == big.topic_partition_count(big.topic_index(t))
        assert [part.replicas_of(part.partition_row(t, p)) for p in range(n)] == \
            [big.replicas_of(int(first) + p) for p in range(n)]
    assert big.only_topics([]).n_partitions == 0


@pytest.mark.parametrize("mutate,message", [
    (lambda d: d["topics"][0].update(internal="no"),
     r"s.json: topic 'orders' internal: expected true or false, got \"no\""),
    (lambda d: d["topics"][0].update(keyed="false"),
     r"s.json: topic 'orders' keyed: expected true or false, got \"false\""),
    (lambda d: d["topics"][0].update(keyed=0), "keyed: expected true or false, got 0"),
    (lambda d: d["topics"][0]["partitions"][0].update(size_bytes=2.5),
     "s.json: partition orders-1 size_bytes: expected a whole number of bytes >= 0, got 2.5"),
    (lambda d: d["topics"][0].pop("partitions"),
     "s.json: topic 'orders': missing 'partitions'"),
    (lambda d: d.update(cluster=""), "s.json: 'cluster' must be a non-empty string"),
])
def test_strict_fields_refused_in_one_line(mutate, message):
    """'"internal": "no"' read by truthiness made a user topic internal (its replicas not
    counted against the limits); 2.5 bytes was truncated; a topic without partitions
    crashed add-partitions later."""
    doc = json.loads(json.dumps(DOC))
    mutate(doc)
    with pytest.raises(BadInput, match=message):
        snapshot_from_dict(doc, "s.json")


def test_whole_float_sizes_still_load():
    doc = json.loads(json.dumps(DOC))
    doc["topics"][0]["partitions"][0]["size_bytes"] = 1e9
    assert snapshot_from_dict(doc).part_size.tolist() == [0, 1_000_000_000, 0]


@pytest.mark.parametrize("suffix", [".json", ".parquet"])
def test_generate_refuses_an_empty_cluster_name(tmp_path, capsys, suffix):
    """`--cluster ""` wrote a file `snapshot describe` then refused (.json), or that
    loaded with no name (.parquet)."""
    from tests.unit.helpers import run_cli
    out = tmp_path / f"e{suffix}"
    code, _, err = run_cli(capsys, "snapshot", "generate", "--brokers", 3, "--topics", 1,
                           "--partitions", 3, "--cluster", "", "--out", out)
    assert code == 2 and err.count("\n") == 1 and "--cluster" in err and "empty" in err
    assert not out.exists()


def test_parquet_loader_refuses_an_empty_cluster_name_as_json_does(tmp_path):
    from dataclasses import replace
    snap = replace(generate_snapshot(3, 0, 1, 3, 3, seed=0), cluster="")
    save_snapshot(snap, tmp_path / "e.parquet")
    with pytest.raises(BadInput, match=r"e\.parquet: 'cluster' must be a non-empty string"):
        load_snapshot(tmp_path / "e.parquet")


@pytest.mark.parametrize("verb,message", [
    (["limits", "add-partitions", "--total", 2], "topic 'new' has no partitions in the snapshot"),
    (["shrink", "plan", "--partitions", 1], "topic 'new' has no partitions in the snapshot"),
])
def test_a_topic_with_no_partitions_loads_and_the_verbs_say_so(tmp_path, capsys, verb, message):
    """A topic Kafka was still creating ([] partitions, as a capture can see one): grown, it
    was an IndexError traceback; shrunk, 'needs 1 <= --partitions < 0'."""
    from tests.unit.helpers import run_cli
    doc = json.loads(json.dumps(DOC))
    doc["topics"].append({"name": "new", "partitions": []})
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    code, out, err = run_cli(capsys, *verb, "--snapshot", path, "--topic", "new")
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err
