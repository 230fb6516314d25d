"""Scenario files: validated on load, events fired at their times, the shipped ones run."""

from __future__ import annotations

import itertools
import re

import pytest

from backend.errors import BadInput
from backend.twin.cluster import TwinCluster
from backend.twin.examples import DEMO_SCENARIO, INCIDENT_SCENARIO, demo_snapshot, incident_snapshot
from backend.twin.scenario import (
    ScenarioRunner,
    load_scenario,
    parse_seconds,
    scenario_from_dict,
)


def test_durations():
    assert parse_seconds("1h30m", "x") == 5400
    assert parse_seconds("90s", "x") == 90
    assert parse_seconds(12, "x") == 12
    with pytest.raises(BadInput, match="duration"):
        parse_seconds("soon", "x")


@pytest.mark.parametrize("doc, message", [
    ({"events": [{"action": "explode"}]}, "action"),
    ({"events": [{"action": "fail_broker", "brokr": 1}]}, "brokr"),
    ({"settings": {"warp": 9}}, "warp"),
    ({"events": [{"at": "later", "action": "fail_broker", "broker": 1}]}, "events\\[0\\].at"),
])
def test_bad_scenarios_are_refused_before_anything_runs(doc, message):
    with pytest.raises(BadInput, match=message):
        scenario_from_dict(doc)


def test_yaml_errors_name_the_file(tmp_path):
    bad = tmp_path / "s.yaml"
    bad.write_text("events: [\n")
    with pytest.raises(BadInput, match=r"s\.yaml: not valid YAML"):
        load_scenario(bad)


def test_a_scenario_key_given_twice_is_refused(tmp_path):
    bad = tmp_path / "s.yaml"
    bad.write_text("name: a\nseed: 1\nseed: 2\nevents: []\n")
    with pytest.raises(BadInput, match=r"s\.yaml: not valid YAML: line 3: seed given twice"):
        load_scenario(bad)


def test_events_fire_in_time_order():
    sc = scenario_from_dict({"events": [
        {"at": "20s", "action": "recover_broker", "broker": 2},
        {"at": "10s", "action": "fail_broker", "broker": 2},
    ]})
    twin = TwinCluster(incident_snapshot(), sc.settings)
    runner = ScenarioRunner(twin, sc)
    runner.advance_to(15)
    assert not twin.state.alive[1]
    runner.advance_to(25)
    assert twin.state.alive[1]
    assert [e["at"] for e in runner.log] == [10.0, 20.0]


def test_demo_scenario_has_what_the_demo_needs():
    sc = load_scenario(DEMO_SCENARIO)
    snap = demo_snapshot()
    counts = snap.broker_replica_counts()
    limit = snap.limits.max_broker_partitions
    assert snap.n_brokers == 9 and len(snap.rack_names) == 3 and snap.n_partitions == 30_000
    assert (counts > 0.9 * limit).sum() == 2 and (counts <= limit).all()
    twin = TwinCluster(snap, sc.settings)
    runner = ScenarioRunner(twin, sc)
    runner.advance_to(60)
    assert twin.moves and twin.topic_configs  # a throttled reassignment is running
    created = next(e for e in runner.log if e["action"] == "create_topics")["result"]
    assert any(r["error"] == "THROTTLING_QUOTA_EXCEEDED" for r in created)


def test_incident_scenario_story():
    sc = load_scenario(INCIDENT_SCENARIO)
    twin = TwinCluster(incident_snapshot(), sc.settings)
    runner = ScenarioRunner(twin, sc)
    runner.advance_to(30 * 60)
    assert not any("error" in e for e in runner.log)
    counts = twin.snap.broker_replica_counts()
    assert counts[2] > twin.snap.limits.max_broker_partitions  # broker 3 over its limit
    lag_then = twin.state.lag[twin.state.adding].sum()
    runner.advance_to(50 * 60)
    assert len(twin.moves) == 2 and twin.state.lag[twin.state.adding].sum() > lag_then


def test_a_repeating_event_happens_times_every_apart_with_its_number():
    sc = scenario_from_dict({"events": [
        {"at": "1m", "every": "30s", "times": 3, "action": "create_topics", "user": "t",
         "topics": {"prefix": "batch{n}-", "count": 2, "partitions": 1, "rf": 1}}]})
    assert [e.at for e in sc.events] == [60.0, 90.0, 120.0]
    assert [e.args["topics"]["prefix"] for e in sc.events] == ["batch0-", "batch1-", "batch2-"]
    assert sc.events[0].args["user"] == "t"


@pytest.mark.parametrize(("event", "message"), [
    ({"every": "30s"}, "needs 'every' (a duration) and 'times'"),
    ({"times": 2}, "needs 'every' (a duration) and 'times'"),
    ({"every": "30s", "times": 0}, "needs 'every' (a duration) and 'times'"),
    ({"every": 0, "times": 2}, "events[0].every: must be longer than 0 s"),
])
def test_bad_repeats_are_one_line_errors(event, message):
    with pytest.raises(BadInput, match=re.escape(message)):
        scenario_from_dict({"events": [{"action": "remove_throttles", **event}]}, "sc")


def test_the_demo_tenant_keeps_tripping_its_quota():
    """The demo's provisioner asks for more than its KIP-599 quota allows for hours, so the
    quotas page always has a throttled principal to show."""
    sc = load_scenario(DEMO_SCENARIO)
    creates = [e.at for e in sc.events if e.action == "create_topics"]
    assert len(creates) > 50 and max(creates) >= 3 * 3600
    assert max(b - a for a, b in itertools.pairwise(creates)) <= 180
