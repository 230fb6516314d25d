"""A goal's numbers in a JSON body are refused in the reassignments page's words, written
as a person writes them: a JSON 1e18 balance threshold was refused as "balance threshold
must be from 1 to 2, got 1e+18" (Python's float repr, and the planner's words), where the
page says "balance threshold: give a number from 1 to 2, got 1e18". The service checks
both against one set of ranges (services.plan_preview.GOAL_RANGES)."""

from __future__ import annotations

import json

import pytest

from tests.unit import test_api
from tests.unit.test_api import basic, count
from tests.unit.test_plan_pages import page

env = test_api.env  # the API tests' app on a twin, with a user per role


def propose(env, generate: dict | str, **extra) -> tuple[int, str]:
    """POST /api/v1/plans for a balance goal; ``generate`` as text keeps its numbers'
    bytes (json.dumps writes 1e18 as 1e+18)."""
    goal = generate if isinstance(generate, str) else json.dumps(generate)
    text = json.dumps({"cluster": "demo", "kind": "reassignment", "generate": "@goal",
                       **extra}).replace('"@goal"', goal)
    before = count(env)
    answer = env["client"].post("/api/v1/plans", data=text, content_type="application/json",
                                headers=basic("operator1"))
    assert count(env) == before  # a refusal stores nothing
    return answer.status_code, answer.get_json()["error"]


def page_refusal(env, threshold: str, utilization: str = "1") -> str:
    """What the reassignments page says for the same numbers typed into its form."""
    with env["app"].server.test_request_context("/"):
        out = page("/reassignments").preview(1, "generate", "balance", None, utilization,
                                             threshold, None, None, "")
    return out[2]


def test_a_threshold_of_1e18_reads_as_the_pages_refusal(env):
    status, error = propose(env, '{"goal": "balance", "threshold": 1e18}')
    assert status == 400
    page_says = page_refusal(env, "1e18")
    assert page_says == "balance threshold: give a number from 1 to 2, got 1e18"
    assert error == "generate.threshold: give a number from 1 to 2, got 1e18"
    assert error.split(": ", 1)[1] == page_says.split(": ", 1)[1]  # the API names its field


@pytest.mark.parametrize(("goal", "error"), [
    ('{"goal": "balance", "threshold": 1E+18}', "generate.threshold: give a number from 1 to "
                                                "2, got 1e18"),
    ('{"goal": "balance", "threshold": 2.50000001}', "generate.threshold: give a number from "
                                                     "1 to 2, got 2.50000001"),
    ('{"goal": "balance", "threshold": 0}', "generate.threshold: give a number from 1 to 2, "
                                            "got 0"),
    ('{"goal": "balance", "threshold": -1.0e-300}', "generate.threshold: give a number from 1 "
                                                    "to 2, got -1e-300"),
    ('{"goal": "limits", "target_utilization": 1.5e300}', "generate.target_utilization: give "
     "a number larger than 0 and at most 1, got 1.5e300"),
])
def test_a_goal_number_is_named_as_a_person_writes_it(env, goal, error):
    assert propose(env, goal) == (400, error)


def test_the_utilisation_reads_as_the_pages_refusal_too(env):
    status, error = propose(env, '{"goal": "limits", "target_utilization": 0}')
    page_says = page_refusal(env, "1.1", utilization="0")
    assert page_says == "target utilisation: give a number larger than 0 and at most 1, got 0"
    assert (status, error.split(": ", 1)[1]) == (400, page_says.split(": ", 1)[1])


@pytest.mark.parametrize(("body", "error"), [
    # not a JSON number: the service's refusal, as before
    ({"generate": {"goal": "balance", "threshold": "1e18"}},
     "generate.threshold: expected a number, got '1e18'"),
    # the goal is not read, or not known: what is wrong is said instead
    ({"generate": {"goal": "spread", "threshold": 1e18}},
     "generate.goal: must be one of limits, drain, add, balance, got 'spread'"),
    ({"generate": {"goal": "balance", "threshold": 1e18}, "plan": {}},
     "kind reassignment: give exactly one of plan (Kafka's reassignment JSON) or generate "
     "(a planner goal)"),
])
def test_what_the_goal_check_leaves_to_the_service(env, body, error):
    status, said = propose(env, json.dumps(body.pop("generate")), **body)
    assert (status, said) == (400, error)


def test_numbers_in_range_are_not_refused(env):
    answer = env["client"].post("/api/v1/plans", json={
        "cluster": "demo", "kind": "reassignment",
        "generate": {"goal": "drain", "brokers": [1], "threshold": 1.5,
                     "target_utilization": 1}}, headers=basic("operator1"))
    assert answer.status_code == 201, answer.get_json()
