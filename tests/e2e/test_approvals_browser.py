"""Three people and a rule that asks for two approvers: an operator proposes a plan in
the browser; the first approver approves it and it stays proposed, the page saying
"1 of 2 so far"; the second approver still finds Approve, approves, and the plan is
approved for all three (issue 29, approval policies)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec

from backend.services import plans
from backend.store.store import open_store
from backend.twin.examples import demo_snapshot
from tests.e2e.conftest import (
    console_errors,
    screenshot,
    serve_on_twin,
    sign_in,
    signed_in_config,
    wait,
)

pytestmark = pytest.mark.e2e

USERS = {"olga": ("operator", "o-pass-1"), "arne": ("approver", "a-pass-1"),
         "bea": ("approver", "b-pass-1")}
RULE = {"name": "two for every plan", "require": {"approvers": 2}}


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory):
    tmp: Path = tmp_path_factory.mktemp("approvals")
    extra = {**signed_in_config(tmp, USERS), "approval": {"rules": [RULE]}}
    with serve_on_twin(tmp, demo_snapshot(), "demo", extra) as d:
        d.store_url = extra["store"]["url"]
        yield d



def text_of(driver, element_id: str) -> str:
    return driver.find_element(By.ID, element_id).text


def approve_as(driver, url: str, plan_url: str, user: str) -> None:
    """``user`` signs in, opens the plan and clicks Approve (which must be shown)."""
    driver.delete_all_cookies()
    sign_in(driver, url, user, USERS[user][1])
    driver.get(plan_url)
    wait(driver).until(lambda d: d.find_elements(By.ID, "pv-approve"))
    assert driver.find_element(By.ID, "pv-approve").is_displayed()
    assert text_of(driver, "pv-state") == "proposed"
    driver.find_element(By.ID, "pv-approve").click()
    wait(driver).until(lambda d: text_of(d, "pv-result").startswith("Done: plan"))


def test_two_approvers_meet_a_two_approver_rule(browser, second_browser, dashboard):
    operator, approver = browser, second_browser
    operator.delete_all_cookies()
    console_errors(operator)
    sign_in(operator, dashboard.url, "olga", USERS["olga"][1])
    operator.get(dashboard.url + "/reassignments?cluster=demo")
    wait(operator).until(lambda d: d.find_elements(By.ID, "ra-run"))
    operator.find_element(By.ID, "ra-run").click()
    wait(operator).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#plan-grid .ag-row"))
    operator.find_element(By.ID, "plan-propose").click()
    wait(operator).until(ec.url_matches(r"/plans/\d+$"))
    plan_url = operator.current_url
    plan_id = int(re.search(r"/plans/(\d+)$", plan_url).group(1))
    wait(operator).until(lambda d: d.find_elements(By.ID, "pv-approvals"))
    assert text_of(operator, "pv-approvals") == \
        "needs 2 approvers: 0 of 2 so far (rule 'two for every plan')"

    approve_as(approver, dashboard.url, plan_url, "arne")
    assert text_of(approver, "pv-state") == "proposed"  # one of two
    assert "needs 2 approvers: 1 of 2 so far: arne" in text_of(approver, "pv-result")
    assert text_of(approver, "pv-approvals").startswith("needs 2 approvers: 1 of 2 so far: arne")
    assert not approver.find_element(By.ID, "pv-approve").is_displayed()  # arne is done
    assert not approver.find_element(By.ID, "pv-comment").is_displayed()  # nor its comment
    # the note says so at once, as it does after a reload (it no longer asks him to
    # approve "0 of 2 so far")
    assert text_of(approver, "pv-note").startswith("arne already approved this plan: ")
    approver.get(plan_url)  # and after a reload too: his approval counts once
    wait(approver).until(lambda d: d.find_elements(By.ID, "pv-approvals"))
    assert not approver.find_element(By.ID, "pv-approve").is_displayed()
    assert "arne already approved this plan" in approver.find_element(
        By.CSS_SELECTOR, "main").text
    screenshot(approver, "approvals-1-first-of-two")

    approve_as(approver, dashboard.url, plan_url, "bea")
    wait(approver).until(ec.text_to_be_present_in_element((By.ID, "pv-state"), "approved"))
    assert text_of(approver, "pv-approvals").startswith(
        "needs 2 approvers: 2 of 2 so far: arne, bea")
    screenshot(approver, "approvals-2-second-of-two")

    store = open_store(dashboard.store_url)
    try:
        plan = plans.get(store, plan_id)
        approved = [(e.user, e.before, e.after) for e in plans.audit_entries(store, plan=plan_id)
                    if e.action == "approve"]
    finally:
        store.engine.dispose()
    assert plan.state == "approved" and plan.approval["rule"] == "two for every plan"
    assert [(d.user, d.role, d.decision) for d in plan.decisions] == [
        ("arne", "approver", "approve"), ("bea", "approver", "approve")]
    assert approved == [("arne", "proposed", "proposed"), ("bea", "proposed", "approved")]
    operator.get(plan_url)
    wait(operator).until(lambda d: d.find_elements(By.ID, "pv-state"))
    assert text_of(operator, "pv-state") == "approved"
    assert console_errors(operator) == [] and console_errors(approver) == []
