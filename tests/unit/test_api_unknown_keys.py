"""A key the API does not read is refused, naming it, and so is a key given twice: a
misspelt "throtle" or "notbefore" was ignored and the plan proposed at the suggested rate
and with no start time, and of {"throttle": 1000000, "throttle": 2000000} the last won
unseen. Nothing is stored or changed by a refused request."""

from __future__ import annotations

import json

import pytest

from backend.services import plans as plan_service
from tests.unit import test_api
from tests.unit.test_api import basic, count, make_plan

env = test_api.env  # the API tests' app on a twin, with a user per role

PROPOSE_KNOWN = "cluster, generate, kind, not_before, outside_windows, plan, throttle, " \
                "throttle_mode, title"


def _post(env, path: str, text: str, user: str = "operator1"):
    return env["client"].post(path, data=text, content_type="application/json",
                              headers=basic(user))


@pytest.mark.parametrize(("extra", "error"), [
    ({"throtle": 1000}, f"a reassignment request: unknown key 'throtle' (known: "
                        f"{PROPOSE_KNOWN})"),
    ({"notbefore": "2030-01-01T00:00Z"}, f"a reassignment request: unknown key "
                                         f"'notbefore' (known: {PROPOSE_KNOWN})"),
])
def test_a_misspelt_key_of_a_proposal_is_400(env, extra, error):
    before = count(env)
    answer = _post(env, "/api/v1/plans", json.dumps({**env["body"], **extra}))
    assert (answer.status_code, answer.get_json()) == (400, {"error": error})
    assert count(env) == before


def test_a_goal_key_the_planner_does_not_read_is_400(env):
    body = {"cluster": "demo", "kind": "reassignment",
            "generate": {"goal": "balance", "throttle": 5}}
    answer = _post(env, "/api/v1/plans", json.dumps(body))
    assert (answer.status_code, answer.get_json()) == (400, {
        "error": "generate: unknown key 'throttle' (known: brokers, goal, target_utilization, "
                 "threshold)"})


def test_a_shrink_takes_no_throttle(env):
    body = {"cluster": "demo", "kind": "shrink", "topic": "topic-1", "partitions": 1,
            "throttle": 1000000}
    answer = _post(env, "/api/v1/plans", json.dumps(body))
    assert (answer.status_code, answer.get_json()) == (400, {
        "error": "a shrink request: unknown key 'throttle' (known: cluster, delay_ms, kind, "
                 "partitions, title, topic)"})


def test_a_key_given_twice_is_400(env):
    text = json.dumps({**env["body"], "throttle": 1000000})[:-1] + ', "throttle": 2000000}'
    before = count(env)
    answer = _post(env, "/api/v1/plans", text)
    assert (answer.status_code, answer.get_json()) == (400, {
        "error": "body: the key 'throttle' is given twice in one object"})
    assert count(env) == before


@pytest.mark.parametrize(("action", "body", "known"), [
    ("approve", {"sha256": "@sha", "coment": "ok"}, "comment, sha256"),
    ("reject", {"coment": "no"}, "comment, sha256"),
    ("withdraw", {"why": "no"}, "comment"),
    ("execute", {"migrate": True}, "migration"),
    ("cancel", {"now": True}, ""),
])
def test_an_action_with_a_key_it_does_not_read_is_400_and_changes_nothing(env, action, body,
                                                                          known):
    plan_id = make_plan(env, "operator1", "executing" if action == "cancel" else
                        "approved" if action == "execute" else "proposed")
    plan = plan_service.get(env["store"], plan_id)
    body = {k: plan.sha256 if v == "@sha" else v for k, v in body.items()}
    user = "operator1" if action in ("withdraw", "execute", "cancel") else "approver1"
    before = count(env)
    answer = _post(env, f"/api/v1/plans/{plan_id}/{action}", json.dumps(body), user)
    unknown = next(iter(body.keys() - {"sha256"}))
    assert (answer.status_code, answer.get_json()) == (400, {
        "error": f"body: unknown key '{unknown}' (known: {known})"})
    assert count(env) == before
    assert plan_service.get(env["store"], plan_id).state == plan.state


def test_a_reject_names_the_bytes_it_was_about(env):
    plan_id = make_plan(env, "operator1", "proposed")
    sha = plan_service.get(env["store"], plan_id).sha256
    answer = _post(env, f"/api/v1/plans/{plan_id}/reject", json.dumps({"sha256": "bad"}),
                   "approver1")
    assert (answer.status_code, answer.get_json()) == (409, {
        "error": f"the sha256 you rejected (bad...) is not plan {plan_id}'s ({sha[:12]}...): "
                 f"reload the plan and review it"})
    assert plan_service.get(env["store"], plan_id).state == "proposed"
    answer = _post(env, f"/api/v1/plans/{plan_id}/reject",
                   json.dumps({"sha256": sha, "comment": "too big"}), "approver1")
    assert (answer.status_code, answer.get_json()["state"]) == (200, "rejected")
