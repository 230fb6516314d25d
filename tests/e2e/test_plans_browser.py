"""Two people, two browser sessions: an operator generates a reassignment, previews it and
proposes it; an approver opens the plan's URL and approves exactly the sha256 it shows;
the plan is approved for both of them. A viewer sees no Propose, and the author no
Approve on their own plan."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec

from backend.store.store import open_store
from backend.twin.examples import demo_snapshot
from dashboard.plan_views.stored import STALE_NOTE
from tests.e2e.conftest import (
    console_errors,
    screenshot,
    serve_on_twin,
    sign_in,
    signed_in_config,
    type_into,
    wait,
)

pytestmark = pytest.mark.e2e

USERS = {"olga": ("operator", "o-pass-1"), "arne": ("approver", "a-pass-1"),
         "vera": ("viewer", "v-pass-1")}


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory):
    tmp: Path = tmp_path_factory.mktemp("plans")
    # the live cluster proposals and approvals are checked against: a twin over HTTP
    extra = signed_in_config(tmp, USERS)
    with serve_on_twin(tmp, demo_snapshot(), "demo", extra) as d:
        d.store_url = extra["store"]["url"]
        yield d



def state_of(driver) -> str:
    return driver.find_element(By.ID, "pv-state").text


def test_operator_proposes_approver_approves(browser, second_browser, dashboard):
    operator, approver = browser, second_browser
    operator.delete_all_cookies()
    console_errors(operator)
    sign_in(operator, dashboard.url, "olga", USERS["olga"][1])
    operator.get(dashboard.url + "/reassignments?cluster=demo")
    wait(operator).until(lambda d: d.find_elements(By.ID, "ra-run"))
    operator.find_element(By.ID, "ra-run").click()  # the balance goal, suggested throttle
    wait(operator).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#plan-grid .ag-row"))
    moves = operator.find_element(By.ID, "plan-cards").text
    assert "Replica moves" in moves and "Predicted ETA" in moves
    screenshot(operator, "plans-1-operator-preview")
    operator.find_element(By.ID, "plan-propose").click()
    wait(operator).until(ec.url_matches(r"/plans/\d+$"))
    plan_url = operator.current_url
    plan_id = int(re.search(r"/plans/(\d+)$", plan_url).group(1))
    wait(operator).until(lambda d: d.find_elements(By.ID, "pv-state"))
    assert state_of(operator) == "proposed"
    # the author may not approve their own plan: no button, only the reason
    assert not operator.find_element(By.ID, "pv-approve").is_displayed()
    assert operator.find_element(By.ID, "pv-withdraw").is_displayed()
    assert "You wrote this plan" in operator.find_element(By.CSS_SELECTOR, "main").text
    shown_sha = operator.find_element(By.ID, "pv-sha").text
    assert console_errors(operator) == []

    sign_in(approver, dashboard.url, "arne", USERS["arne"][1])
    approver.get(plan_url)
    wait(approver).until(lambda d: d.find_elements(By.ID, "pv-approve"))
    assert approver.find_element(By.ID, "pv-approve").is_displayed()
    assert not approver.find_element(By.ID, "pv-withdraw").is_displayed()
    assert approver.find_element(By.ID, "pv-sha").text == shown_sha
    assert state_of(approver) == "proposed"
    wait(approver).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#plan-grid .ag-row"))
    screenshot(approver, "plans-2-approver-before")
    approver.find_element(By.ID, "pv-comment").send_keys("looks right")
    approver.find_element(By.ID, "pv-approve").click()
    wait(approver).until(ec.text_to_be_present_in_element((By.ID, "pv-state"), "approved"))
    assert "Done: plan" in approver.find_element(By.ID, "pv-result").text
    assert not approver.find_element(By.ID, "pv-approve").is_displayed()
    screenshot(approver, "plans-3-approver-approved")

    # the result, not the buttons: the store says approved, with arne's decision on the
    # sha256 both of them were shown, and the operator's page says so too
    store = open_store(dashboard.store_url)
    try:
        from backend.services import plans

        plan = plans.get(store, plan_id)
    finally:
        store.engine.dispose()
    assert plan.state == "approved" and plan.author == "olga"
    assert [(d.user, d.decision, d.sha256, d.comment) for d in plan.decisions] == [
        ("arne", "approve", shown_sha, "looks right")]
    operator.get(plan_url)
    wait(operator).until(lambda d: d.find_elements(By.ID, "pv-state"))
    assert state_of(operator) == "approved"
    assert "arne" in operator.find_element(By.ID, "pv-decisions").text
    # the exact JSON is read from the store when its panel is opened: the stored bytes
    operator.find_element(By.ID, "pv-json-open").click()
    wait(operator).until(lambda d: d.find_element(By.ID, "pv-json").text.strip())
    shown_json = json.loads(operator.find_element(By.ID, "pv-json").text)
    assert shown_json["partitions"] == plan.content["partitions"][:1000]
    assert console_errors(approver) == []


def preview_shrink(browser, dashboard, user: str, delay_hours: str = "") -> None:
    """Signed in as ``user``, preview shrinking topic-001 to 4 partitions."""
    browser.delete_all_cookies()
    sign_in(browser, dashboard.url, user, USERS[user][1])
    browser.get(dashboard.url + "/shrinks?cluster=demo")
    wait(browser).until(lambda d: d.find_elements(By.ID, "sh-run"))
    browser.find_element(By.ID, "sh-topic").send_keys("topic-001")
    browser.find_element(By.ID, "sh-partitions").send_keys("4")
    browser.find_element(By.ID, "sh-delay").send_keys(delay_hours)
    browser.find_element(By.ID, "sh-run").click()


def test_viewer_sees_no_propose(browser, dashboard):
    preview_shrink(browser, dashboard, "vera")
    wait(browser).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".stages"))
    assert not browser.find_elements(By.ID, "plan-propose")
    assert "only operators and admins propose plans" in browser.find_element(
        By.ID, "sh-preview").text


def test_numbers_out_of_range_are_refused_not_replaced_by_defaults(browser, dashboard):
    """A browser number field sent nothing for -5 or 2.5, and the page used its default
    (the suggested throttle, retention.ms) in silence; now the line says what is wrong."""
    browser.delete_all_cookies()
    sign_in(browser, dashboard.url, "olga", USERS["olga"][1])
    browser.get(dashboard.url + "/reassignments?cluster=demo")
    wait(browser).until(lambda d: d.find_elements(By.ID, "ra-run"))
    browser.find_element(By.ID, "ra-throttle").send_keys("-5")
    browser.find_element(By.ID, "ra-run").click()
    wait(browser).until(lambda d: "got -5" in d.find_element(By.ID, "ra-error").text)
    assert browser.find_element(By.ID, "ra-error").text == (
        "throttle: give a number larger than 0 MB/s, or leave it empty for the suggested "
        "rate, got -5")
    assert not browser.find_element(By.ID, "ra-preview").text  # nothing previewed
    browser.get(dashboard.url + "/shrinks?cluster=demo")
    wait(browser).until(lambda d: d.find_elements(By.ID, "sh-run"))
    browser.find_element(By.ID, "sh-topic").send_keys("topic-001")
    browser.find_element(By.ID, "sh-partitions").send_keys("2.5")
    browser.find_element(By.ID, "sh-run").click()
    wait(browser).until(lambda d: "got 2.5" in d.find_element(By.ID, "sh-error").text)
    type_into(browser.find_element(By.ID, "sh-partitions"), "4")
    browser.find_element(By.ID, "sh-delay").send_keys("-5")
    browser.find_element(By.ID, "sh-run").click()
    wait(browser).until(lambda d: "got -5" in d.find_element(By.ID, "sh-error").text)
    assert browser.find_element(By.ID, "sh-error").text.startswith(
        "delay: give a number of at least 0 hours, or leave it empty for retention.ms")
    assert not browser.find_elements(By.CSS_SELECTOR, ".stages")
    assert console_errors(browser) == []


def test_withdraw_keeps_the_authors_reason(browser, dashboard):
    """The page dropped the comment typed before Withdraw; it is the withdrawal's audit
    row's reason now (a withdrawal is no decision)."""
    preview_shrink(browser, dashboard, "olga", delay_hours="1")
    wait(browser).until(lambda d: d.find_elements(By.ID, "plan-propose"))
    browser.find_element(By.ID, "plan-propose").click()
    wait(browser).until(ec.url_matches(r"/plans/\d+$"))
    plan_id = int(re.search(r"/plans/(\d+)$", browser.current_url).group(1))
    wait(browser).until(lambda d: d.find_element(By.ID, "pv-withdraw").is_displayed())
    browser.find_element(By.ID, "pv-comment").send_keys("wrong topic")
    browser.find_element(By.ID, "pv-withdraw").click()
    wait(browser).until(ec.text_to_be_present_in_element((By.ID, "pv-state"), "withdrawn"))
    store = open_store(dashboard.store_url)
    try:
        from backend.services import plans

        row = plans.audit_page(store, plan=plan_id).entries[-1]
    finally:
        store.engine.dispose()
    assert (row.action, row.user, row.detail) == ("withdraw", "olga", {"comment": "wrong topic"})
    wait(browser).until(lambda d: "wrong topic" in d.find_element(By.ID, "pv-audit").text)


def test_a_plan_on_a_changed_cluster_says_so_before_approve(browser, dashboard):
    """On the Apache Kafka demo an approver read "Breaks nothing" on a plan whose cluster
    had changed, and learnt it only from Approve's refusal: the page says it as it opens,
    in Approve's words, and Approve still refuses."""
    from tests.plan_helpers import api_call

    topic = "topic-005"
    count = demo_snapshot().topic_partition_count(demo_snapshot().topic_index(topic))
    plan = api_call(dashboard.url + "/api/v1", "olga", USERS["olga"][1], "POST", "/plans",
                    {"cluster": "demo", "kind": "shrink", "topic": topic,
                     "partitions": count - 1})
    plan_url = f"{dashboard.url}/plans/{plan['id']}"
    sign_in(browser, dashboard.url, "arne", USERS["arne"][1])
    browser.get(plan_url)
    wait(browser).until(lambda d: d.find_element(By.ID, "pv-approve").is_displayed())
    time.sleep(2)  # the check runs once the page has painted
    assert browser.find_element(By.ID, "pv-banners").text == ""  # as proposed: nothing said
    dashboard.twin.create_partitions(topic, count + 1)
    browser.get(plan_url)
    said = (f"Approve and Execute will be refused: cluster demo changed since plan "
            f"{plan['id']} was proposed: {topic} partition count {count} -> {count + 1}: "
            f"re-propose")
    wait(browser).until(lambda d: d.find_element(By.ID, "pv-banners").text == said)
    # the page found it stale: Approve is disabled and the note under it says why (the
    # demo's kept Approve offered, its note "for the cluster as it is now")
    approve = browser.find_element(By.ID, "pv-approve")
    wait(browser).until(lambda d: not approve.is_enabled())
    assert browser.find_element(By.ID, "pv-note").text == STALE_NOTE
    screenshot(browser, "plans-stale-warning")
    approve.click()  # a disabled button sends nothing
    time.sleep(2)
    assert browser.find_element(By.ID, "pv-result").text == ""
    # Approve still refuses on the server, whatever a page shows
    with pytest.raises(AssertionError, match=r"HTTP 409: .*changed since plan"):
        api_call(dashboard.url + "/api/v1", "arne", USERS["arne"][1], "POST",
                 f"/plans/{plan['id']}/approve", {"sha256": plan["sha256"]})
    browser.refresh()
    wait(browser).until(lambda d: d.find_element(By.ID, "pv-banners").text == said)
    assert state_of(browser) == "proposed"
