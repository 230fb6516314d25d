"""Sweep specs: every kind's defaults and grid order, and bad specs refused with one line."""

import json

import numpy as np
import pytest

from backend.errors import BadInput
from backend.spark.spec import (
    SNAPSHOT_LIMIT,
    FleetSpec,
    LimitsSpec,
    QuotaSpec,
    ThrottleSpec,
    count_scenarios,
    load_spec,
    parse_spec,
    scenarios,
)

LIMITS = {"kind": "limits", "snapshot": "c.json",
          "workload": [{"topic": "a", "partitions": 3, "rf": 2}],
          "grid": {"max.broker.partitions": [10, None], "add_brokers": [0, 1, 2]}}


def test_limits_spec_defaults_and_scenario_order(tmp_path):
    spec = parse_spec(LIMITS, tmp_path)
    assert isinstance(spec, LimitsSpec)
    assert spec.snapshot == str(tmp_path / "c.json")
    assert spec.grid["max.partitions"] == [SNAPSHOT_LIMIT]  # absent: the snapshot's own
    assert (spec.seed, spec.start_index, spec.detail) == (0, None, False)
    assert count_scenarios(spec) == 6
    assert scenarios(spec)[:4] == [
        {"max.broker.partitions": 10, "max.partitions": SNAPSHOT_LIMIT, "add_brokers": a}
        for a in (0, 1, 2)] + [
        {"max.broker.partitions": None, "max.partitions": SNAPSHOT_LIMIT, "add_brokers": 0}]


def test_throttle_and_quota_defaults():
    t = parse_spec({"kind": "throttle", "snapshot": "s.json", "reassignment": "p.json",
                    "grid": {"throttle": [1e6, 5e7]}})
    assert isinstance(t, ThrottleSpec)
    assert t.grid == {"throttle": [1e6, 5e7], "window_num": [11]}
    assert (t.network_capacity, t.fetch_response_max_bytes, t.window_seconds) == (
        None, 10 * 1024 * 1024, 1)
    q = parse_spec({"kind": "quota", "requests": "r.jsonl", "grid": {"rate": [5]}})
    assert isinstance(q, QuotaSpec)
    assert (q.grid, q.mode, q.window_seconds) == ({"rate": [5], "samples": [11]}, "strict", 1)


HISTORY = {"times": [0, 86400], "brokers": ["1"], "broker_values": [[1, None]],
           "cluster_values": [1, 2], "limits": {"max.broker.partitions": 10}}


def test_a_fleet_spec_of_histories_takes_the_forecast_knobs_and_reads_missing_days_as_nan():
    spec = parse_spec({"kind": "fleet", "clusters": [{"name": "a", "history": HISTORY}],
                       "grid": {"add_brokers": [0, 2]}, "by_days": 30})
    assert spec.forecasts and spec.by_days == 30
    assert spec.grid == {"max.broker.partitions": ["snapshot"], "max.partitions": ["snapshot"],
                         "growth_pct_month": [0.0], "add_brokers": [0, 2],
                         "topic_partitions": [0], "topic_rf": [1]}
    h = spec.clusters[0].history
    assert (h.max_broker_partitions, h.max_partitions) == (10, None)
    assert h.broker_values.shape == (1, 2) and np.isnan(h.broker_values[0, 1])


def test_fleet_spec_sorts_snapshots_by_time_and_reads_iso_times(tmp_path):
    spec = parse_spec({"kind": "fleet", "clusters": [
        {"name": "east", "snapshots": [{"file": "b.json", "taken_at": "2025-01-11T00:00:00Z"},
                                       {"file": "a.json", "taken_at": "2025-01-01T00:00:00Z"}]},
        {"name": "west", "snapshots": ["w.json"], "growth_per_day": 2.5}]}, tmp_path)
    assert isinstance(spec, FleetSpec)
    east, west = spec.clusters
    assert [s.file for s in east.snapshots] == [str(tmp_path / "a.json"),
                                                str(tmp_path / "b.json")]
    assert east.snapshots[1].taken_at - east.snapshots[0].taken_at == 10 * 86400
    assert (west.snapshots[0].taken_at, west.growth_per_day) == (None, 2.5)
    assert scenarios(spec) == [{"max.broker.partitions": SNAPSHOT_LIMIT,
                                "max.partitions": SNAPSHOT_LIMIT}]


def test_load_spec_resolves_files_next_to_the_spec(tmp_path):
    (tmp_path / "spec.json").write_text(json.dumps(LIMITS))
    assert load_spec(tmp_path / "spec.json").snapshot == str(tmp_path / "c.json")


@pytest.mark.parametrize("change, message", [
    ({"kind": "shrink"}, "'kind' must be one of"),
    ({"surprise": 1}, "unknown key 'surprise'"),
    ({"snapshot": None}, "'snapshot' is required"),
    ({"workload": []}, "at least one topic"),
    ({"workload": [{"topic": "a", "partitions": 0, "rf": 1}]}, r"workload\[0\].partitions"),
    ({"workload": [{"topic": "a", "partitions": 1, "rf": 1}] * 2}, "listed twice"),
    ({"workload": [{"topic": "a", "partitions": 1, "rf": 1, "x": 1}]}, r"workload\[0\]"),
    ({"grid": {"max.broker.partitions": []}}, "non-empty list"),
    ({"grid": {"max.broker.partitions": [-1]}}, r"grid.max.broker.partitions\[0\]"),
    ({"grid": {"max.broker.partitions": [5, 5]}}, "lists a value twice"),
    ({"grid": {"add_brokers": [True]}}, "expected an integer"),
    ({"grid": {"brokers": [1]}}, "unknown grid key 'brokers'"),
    ({"seed": "x"}, "'seed' has the wrong type"),
    ({"detail": 1}, "'detail' has the wrong type"),
    ({"start_index": -1}, "start_index: must be at least 0"),
])
def test_bad_limit_specs_say_what_and_where(change, message):
    with pytest.raises(BadInput, match=message):
        parse_spec({**LIMITS, **change}, source="spec.json")


@pytest.mark.parametrize("spec, message", [
    ({"kind": "throttle", "snapshot": "s", "reassignment": "p", "grid": {}},
     "grid.throttle is required"),
    ({"kind": "throttle", "snapshot": "s", "reassignment": "p", "grid": {"throttle": [0]}},
     "must be larger than 0"),
    ({"kind": "throttle", "snapshot": "s", "reassignment": "p",
      "grid": {"throttle": [1], "window_num": [0]}}, "must be at least 1"),
    ({"kind": "throttle", "snapshot": "s", "grid": {"throttle": [1]}},
     "'reassignment' is required"),
    ({"kind": "quota", "requests": "r", "grid": {"rate": [float("inf")]}}, "number >= 0"),
    ({"kind": "quota", "requests": "r", "grid": {"rate": [1]}, "mode": "lenient"},
     "'strict' or 'permissive'"),
    ({"kind": "quota", "requests": "r", "grid": {"rate": [1]}, "quotas": "q.json"},
     "unknown key 'quotas'"),
    ({"kind": "fleet", "clusters": []}, "at least one cluster"),
    ({"kind": "fleet", "clusters": [{"name": "a", "snapshots": ["x", "y"]}]},
     "each needs 'taken_at'"),
    ({"kind": "fleet", "clusters": [{"name": "a", "snapshots": [
        {"file": "x", "taken_at": 5}, {"file": "y", "taken_at": 5}]}]}, "same 'taken_at'"),
    ({"kind": "fleet", "clusters": [{"name": "a", "snapshots": [
        {"file": "x", "taken_at": "2025-01-01"}]}]}, "give a time zone"),
    ({"kind": "fleet", "clusters": [{"name": "a", "snapshots": [
        {"file": "x", "taken_at": "yesterday"}]}]}, "not an ISO-8601 time"),
    ({"kind": "fleet", "clusters": [{"name": "a", "snapshots": ["x"]},
                                    {"name": "a", "snapshots": ["y"]}]}, "listed twice"),
    ({"kind": "fleet", "clusters": [{"name": "a", "snapshots": ["x"],
                                     "growth_per_day": -1}]}, "growth_per_day"),
    ({"kind": "fleet", "clusters": [{"name": "a", "snapshots": ["x"]}],
      "grid": {"add_brokers": [1]}}, "unknown grid key"),
    ({"kind": "fleet", "clusters": [{"name": "a", "history": HISTORY},
                                    {"name": "b", "snapshots": ["x"]}]}, "or none"),
    ({"kind": "fleet", "clusters": [{"name": "a", "history": HISTORY, "snapshots": ["x"]}]},
     "not both"),
    ({"kind": "fleet", "clusters": [{"name": "a", "history": {**HISTORY, "brokers": [1]}}]},
     "broker ids as strings"),
    ({"kind": "fleet", "clusters": [{"name": "a", "history": {
        **HISTORY, "broker_values": [[1, 2, 3]]}}]}, r"broker_values\[0\]: expected a list of 2"),
    ({"kind": "fleet", "clusters": [{"name": "a", "history": {
        **HISTORY, "cluster_values": [1, -2]}}]}, r"cluster_values\[1\]: expected a number"),
    ({"kind": "fleet", "clusters": [{"name": "a", "history": HISTORY}],
      "grid": {"max.broker.partitions": [None]}}, "unlimited limit is never reached"),
    ({"kind": "fleet", "clusters": [{"name": "a", "history": HISTORY}],
      "grid": {"topic_rf": [0]}}, "at least 1"),
    ({"kind": "fleet", "clusters": [{"name": "a", "history": HISTORY}], "by_days": 0},
     "by_days: must be larger than 0"),
    ([1, 2], "a sweep spec is a JSON object"),
])
def test_bad_specs_of_other_kinds(spec, message):
    with pytest.raises(BadInput, match=message):
        parse_spec(spec, source="spec.json")


def test_too_many_scenarios_refused_before_anything_runs():
    grid = {"max.broker.partitions": list(range(1001)), "max.partitions": list(range(1001)),
            "add_brokers": [0, 1]}
    with pytest.raises(BadInput, match="more than 1,000,000"):
        parse_spec({**LIMITS, "grid": grid})


def test_missing_spec_file_is_one_line(tmp_path):
    with pytest.raises(BadInput, match="no such sweep spec"):
        load_spec(tmp_path / "nope.json")


def test_cli_refuses_bad_specs_before_spark_starts(tmp_path, capsys):
    from backend.cli import main

    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({**LIMITS, "grid": {"add_brokers": [-1]}}))
    assert main(["whatif", "sweep", "--spec", str(spec)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "grid.add_brokers[0]: must be at least 0" in err
    spec.write_text(json.dumps(LIMITS))
    assert main(["whatif", "sweep", "--spec", str(spec), "--out", "rows.csv"]) == 2
    assert "expected a .parquet or .json file name" in capsys.readouterr().err
    assert main(["whatif", "sweep", "--spec", str(spec)]) == 2  # c.json does not exist
    assert "c.json: no such snapshot file" in capsys.readouterr().err
