"""A drained broker stays drained, in the browser: broker 4 is drained through the API on
a twin the dashboard changes (approved, executed, completed); then the operator previews
a balance on /reassignments. Before, the balance put replicas back on the empty broker;
now it says nothing needs to move and that broker 4 is kept empty by that plan, and an
add naming broker 4 moves replicas back onto it."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from selenium.webdriver.common.by import By

from backend.model.snapshot import Snapshot
from tests.e2e.conftest import choose, screenshot, serve_on_running_twin, sign_in, type_into, wait
from tests.plan_helpers import api_call

pytestmark = pytest.mark.e2e

MB = 1_000_000
USERS = {"olga": ("operator", "o-pass-7"), "arne": ("approver", "a-pass-7")}


def cluster() -> Snapshot:
    """Brokers 1-4, RF 2, 12 partitions of 1 MB, three replicas per broker pair."""
    reps = [[1 + p % 4, 1 + (p + 1) % 4] for p in range(12)]
    return Snapshot.build("retire", [1, 2, 3, 4], [None] * 4, ["orders"], [0] * 12,
                          np.arange(0, 25, 2), [b - 1 for r in reps for b in r],
                          part_size=[MB] * 12, part_rate=[10.0] * 12)


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    tmp: Path = tmp_path_factory.mktemp("drained-browser")
    with serve_on_running_twin(tmp, cluster(), {"name": "retire"}, USERS,
                               speed=20.0) as (_twin, dashboard):
        yield dashboard.url


def drain_broker_4(url: str) -> int:
    api = url + "/api/v1"
    call = {u: (lambda m, p, b=None, u=u: api_call(api, u, USERS[u][1], m, p, b))
            for u in USERS}
    plan = call["olga"]("POST", "/plans", {
        "cluster": "retire", "kind": "reassignment", "title": "retire broker 4",
        "throttle": 50 * MB, "generate": {"goal": "drain", "brokers": [4]}})
    call["arne"]("POST", f"/plans/{plan['id']}/approve", {"sha256": plan["sha256"]})
    call["olga"]("POST", f"/plans/{plan['id']}/execute", {})
    deadline = time.monotonic() + 120
    while call["olga"]("GET", f"/plans/{plan['id']}")["state"] != "completed":
        assert time.monotonic() < deadline, "the drain did not complete"
        time.sleep(1)
    return plan["id"]


def added(driver) -> set[str]:
    """The brokers the previewed plan gives replicas to (none: nothing to move)."""
    return {b for e in driver.find_elements(By.CSS_SELECTOR, "#plan-grid .ag-row [col-id='added']")
            for b in e.text.split(",") if b}


def preview(driver) -> str:
    driver.find_element(By.ID, "ra-run").click()
    wait(driver, 60).until(lambda d: d.find_element(By.ID, "ra-preview").text)
    return driver.find_element(By.ID, "ra-preview").text


def test_a_balance_after_a_drain_keeps_the_broker_empty_and_an_add_takes_it_back(
        browser, stack):
    drained = drain_broker_4(stack)
    browser.delete_all_cookies()
    sign_in(browser, stack, "olga", USERS["olga"][1])
    browser.get(stack + "/reassignments?cluster=retire")
    wait(browser, 60).until(lambda d: d.find_elements(By.ID, "ra-run"))
    shown = preview(browser)  # the goal is balance by default
    assert f"Kept empty: broker 4, drained by plan {drained} (completed " in shown
    wait(browser, 60).until(  # the one move brokers 1-3 need among themselves
        lambda d: d.find_elements(By.CSS_SELECTOR, "#plan-grid .ag-row"))
    # before, broker 4 was "below the band" and refilled
    assert added(browser) and "4" not in added(browser)
    screenshot(browser, "reassignments-kept-empty")

    choose(browser, "ra-goal", "add")
    type_into(browser.find_element(By.ID, "ra-brokers"), "4")
    browser.find_element(By.ID, "ra-run").click()
    wait(browser, 60).until(  # the balance's preview is still shown until then
        lambda d: "add 4:" in d.find_element(By.ID, "ra-preview").text)
    wait(browser, 60).until(lambda d: added(d))
    shown = browser.find_element(By.ID, "ra-preview").text
    assert "Kept empty" not in shown
    assert added(browser) == {"4"}
