"""The executor against a twin served over HTTP (the twin's API with its token, the HTTP
gateway), faults injected by a scenario file: Kafka errors travel over HTTP and are
retried, then fail the plan with the cause, exactly as in-process; nothing left behind."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from backend.engines.throttle import LEADER_REPLICAS
from backend.executor.retry import RetryPolicy
from backend.gateways.config import Secret
from backend.gateways.twin_http import TwinHttpWriter
from backend.twin.api import TwinApi
from backend.twin.scenario import ScenarioRunner, load_scenario
from tests.executor_rig import Rig
from tests.unit.test_executor import MB, plan, small_cluster

TOKEN = "executor-twin-token"


class HttpRig(Rig):
    """Rig whose executor reaches the twin only through its HTTP API; the twin's time
    runs through a scenario file, so its faults fire when their time comes."""

    def __init__(self, tmp: Path, events: list[dict], sizes: dict | None = None,
                 retry: RetryPolicy | None = None) -> None:
        super().__init__(small_cluster(sizes), tmp / "store.db", retry=retry)
        scenario = tmp / "faults.yaml"
        scenario.write_text(yaml.safe_dump({"name": "faults", "events": events}))
        self.runner = ScenarioRunner(self.twin, load_scenario(scenario))
        self.runner.advance_to(0)  # as TwinService.start: events at 0 s before anything
        self.api = TwinApi(self.gw, token=TOKEN).start()
        (tmp / "token").write_text(TOKEN + "\n")
        self.client = TwinHttpWriter(self.api.url, Secret(file=str(tmp / "token")))
        self.executor = self.new_executor()

    def step(self, plan_id: int, dt: float = 1.0) -> dict:
        ex = self.executor.tick(plan_id, self.now)
        self.runner.advance_to(self.now + dt)
        return ex


@pytest.fixture
def http_rig(tmp_path, request):
    rigs = []

    def make(events: list[dict], **kw) -> HttpRig:
        rigs.append(HttpRig(tmp_path, events, **kw))
        return rigs[-1]
    yield make
    for r in rigs:
        r.api.stop()


def _retries(rig: Rig) -> list[dict]:
    return [d for _, a, d, _ in rig.journal.entries if a == "execution_retry"]


def test_kafka_errors_over_http_are_retried_with_backoff(http_rig):
    rig = http_rig([{"at": 0, "action": "gateway_fault", "op": "alter_reassignments",
                     "error": "REASSIGNMENT_IN_PROGRESS", "calls": 2}])
    rig.start(1, plan(("a", 0, [3, 2])), 4 * MB)
    assert rig.run(1).state == "completed"
    retries = _retries(rig)
    assert [r["retry_in"] for r in retries] == [1.0, 2.0]
    assert all(r["error"].startswith("REASSIGNMENT_IN_PROGRESS: ") for r in retries)
    assert rig.twin.faults.injected == 2
    assert rig.throttle_configs() == {} and dict(rig.gw.starts) == {"a-0": 1}


def test_past_the_budget_over_http_the_plan_fails_with_the_cause_and_nothing_left(http_rig):
    rig = http_rig([{"at": 0, "action": "gateway_fault", "op": "*", "error": "NOT_CONTROLLER",
                     "for": "60s"}], retry=RetryPolicy(budget=3))
    rig.twin.alter_configs("topic", "a", {LEADER_REPLICAS: "3:4"})  # an operator's own
    before = rig.throttle_configs()
    rig.start(1, plan(("a", 0, [3, 2])), 4 * MB)
    ex = rig.run(1)
    assert ex.state == "failed"
    # the first call to fail is a read (a banner's Unavailable, naming Kafka's error)
    assert ex.cause.startswith(f"gave up after 3 attempts: Twin at {rig.client.url}: "
                                  "list_reassignments refused: NOT_CONTROLLER: injected")
    assert rig.throttle_configs() == before and rig.twin.list_reassignments() == []
    assert rig.journal.ends == [(1, "failed", ex.cause)]


def test_a_refusal_over_http_fails_at_once(http_rig):
    rig = http_rig([{"at": 0, "action": "gateway_fault", "op": "alter_reassignments",
                     "error": "POLICY_VIOLATION", "calls": 1}])
    rig.start(1, plan(("a", 0, [3, 2])), 4 * MB)
    ex = rig.run(1)
    assert ex.state == "failed" and "refused: POLICY_VIOLATION" in ex.cause
    assert _retries(rig) == [] and rig.throttle_configs() == {}


def test_a_broker_the_scenario_fails_mid_move_fails_the_plan(http_rig):
    rig = http_rig([{"at": "3s", "action": "fail_broker", "broker": 3}],
                   sizes={("a", 0): 50 * MB}, retry=RetryPolicy(budget=3))
    rig.start(1, plan(("a", 0, [3, 2])), 1 * MB)
    ex = rig.run(1)
    assert ex.state == "failed" and "broker 3 is down" in ex.cause
    assert rig.throttle_configs() == {} and rig.twin.list_reassignments() == []


def test_throttles_the_twin_will_not_take_back_are_named_on_the_plan(http_rig):
    rig = http_rig([{"at": "2s", "action": "gateway_fault", "op": "alter_configs",
                     "error": "REQUEST_TIMED_OUT", "for": "1h"}],
                   sizes={("a", 0): 50 * MB}, retry=RetryPolicy(budget=2, restore_budget=3))
    rig.start(1, plan(("a", 0, [3, 2])), 4 * MB)
    ex = rig.run(1)
    assert ex.state == "failed"
    assert "could not put back 8 config(s) after 3 attempts (REQUEST_TIMED_OUT: " in ex.cause
    (note,) = [d for _, a, d, _ in rig.journal.entries if a == "configs_not_restored"]
    assert {(c["entity_type"], c["name"]) for c in note["configs"]} == set(
        rig.throttle_configs()) == {("broker", "1"), ("broker", "2"), ("broker", "3"),
                                    ("topic", "a")}


def test_a_twin_that_stops_answering_mid_move_is_waited_for(http_rig):
    """Its API gone (connection refused: Unavailable, retriable) for a few attempts, back
    on the same port before the budget runs out: the plan completes, nothing left."""
    rig = http_rig([], sizes={("a", 0): 20 * MB})
    rig.start(1, plan(("a", 0, [3, 2])), 4 * MB)
    rig.step(1)
    port = rig.api.server.server_address[1]
    rig.api.stop()
    for _ in range(3):
        rig.step(1)
    retries = _retries(rig)
    assert [r["retry_in"] for r in retries] == [1.0, 2.0] and "unreachable" in retries[0]["error"]
    rig.api = TwinApi(rig.gw, port, token=TOKEN).start()
    assert rig.run(1).state == "completed"
    assert rig.throttle_configs() == {} and dict(rig.gw.starts) == {"a-0": 1}


@pytest.mark.parametrize("event, message", [
    ({"op": "bogus", "error": "NOT_CONTROLLER", "calls": 1}, "operation must be one of"),
    ({"op": "*", "error": "not controller", "calls": 1}, "a Kafka error name"),
    ({"op": "*", "error": "NOT_CONTROLLER"}, "give 'calls'"),
    ({"op": "*", "error": "NOT_CONTROLLER", "calls": 0}, "whole number >= 1"),
    ({"op": "*", "error": "NOT_CONTROLLER", "for": "soon"}, r"events\[0\]\.for"),
])
def test_a_bad_fault_is_refused_when_the_file_loads(tmp_path, event, message):
    from backend.errors import BadInput

    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({"events": [{"at": 5, "action": "gateway_fault",
                                                **event}]}))
    with pytest.raises(BadInput, match=message) as e:
        load_scenario(path)
    assert str(e.value).startswith(f"{path}: events[0]") and "\n" not in str(e.value)
