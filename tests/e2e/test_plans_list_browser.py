"""Plans are easy to find (issue 26 item 9): "Plans" is in the navigation, with how many
plans wait for the signed-in user's approval; /plans lists them first and every plan
after, filtered by state in the URL. Three users: the operator proposes (its author: not
waiting for them), the approver sees the count, opens the plan from the list and approves
it, and the count is gone."""

from __future__ import annotations

from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec

from backend.twin.examples import demo_snapshot
from tests.e2e.conftest import (
    console_errors,
    screenshot,
    serve_on_twin,
    sign_in,
    signed_in_config,
    wait,
)
from tests.plan_helpers import api_call

pytestmark = pytest.mark.e2e

USERS = {"olga": ("operator", "o-pass-1"), "arne": ("approver", "a-pass-1"),
         "vera": ("viewer", "v-pass-1")}


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory):
    tmp: Path = tmp_path_factory.mktemp("plans-list")
    with serve_on_twin(tmp, demo_snapshot(), "demo", signed_in_config(tmp, USERS)) as d:
        yield d


def nav_plans(driver) -> str:
    return driver.find_element(By.ID, "nav-plans").text


def test_an_approver_finds_the_plan_that_waits_for_them(browser, dashboard):
    api = dashboard.url + "/api/v1"
    plan = api_call(api, "olga", USERS["olga"][1], "POST", "/plans", {
        "cluster": "demo", "kind": "reassignment", "title": "balance demo",
        "generate": {"goal": "balance"}})
    browser.delete_all_cookies()
    console_errors(browser)
    sign_in(browser, dashboard.url, "olga", USERS["olga"][1])
    wait(browser, 60).until(lambda d: d.find_elements(By.ID, "nav-plans"))
    assert nav_plans(browser) == "Plans"  # her own plan waits for someone else

    browser.delete_all_cookies()
    sign_in(browser, dashboard.url, "arne", USERS["arne"][1])
    wait(browser, 60).until(lambda d: nav_plans(d) == "Plans (1 for you)")
    browser.find_element(By.ID, "nav-plans").click()
    wait(browser, 60).until(ec.url_contains("/plans"))
    main = browser.find_element(By.CSS_SELECTOR, "main")
    wait(browser, 60).until(
        lambda d: "Waiting for your approval (1)" in main.text)
    screenshot(browser, "plans-list-waiting")
    browser.find_element(By.LINK_TEXT, f"#{plan['id']}").click()
    wait(browser, 60).until(ec.url_matches(rf"/plans/{plan['id']}$"))
    wait(browser, 60).until(lambda d: d.find_element(By.ID, "pv-approve")
                                     .is_displayed())
    browser.find_element(By.ID, "pv-approve").click()
    wait(browser, 60).until(ec.text_to_be_present_in_element((By.ID, "pv-state"),
                                                                      "approved"))
    browser.find_element(By.ID, "nav-plans").click()
    wait(browser, 60).until(lambda d: "No plan waits for your approval"
                                     in d.find_element(By.CSS_SELECTOR, "main").text)
    assert nav_plans(browser) == "Plans"
    # the filter is the URL: approved plans only, then proposed ones (none left)
    browser.find_element(By.LINK_TEXT, "approved").click()
    wait(browser, 60).until(ec.url_contains("/plans?state=approved"))
    wait(browser, 60).until(
        lambda d: "Approved plans (newest 1)" in d.find_element(By.CSS_SELECTOR, "main").text)
    browser.get(dashboard.url + "/plans?state=proposed")
    wait(browser, 60).until(
        lambda d: "No proposed plans." in d.find_element(By.CSS_SELECTOR, "main").text)
    assert api_call(api, "arne", USERS["arne"][1], "GET",
                    f"/plans/{plan['id']}")["state"] == "approved"
    assert console_errors(browser) == []
