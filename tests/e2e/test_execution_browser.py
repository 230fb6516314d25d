"""Executing plans in the browser, two people in two sessions, against a twin the
dashboard changes through its HTTP API (with the twin's token): the approver approves a
plan, the operator executes it and watches the progress bar move up to 100%; then a
second plan is approved, executed and cancelled midway on its page: the plan ends
cancelled, its moves in flight are undone, and the twin's throttle configs are as they
were before (an operator's own rate on broker 1 is back, nothing else is left), read
through the gateway. Last, an admin proposes clearing the leftover throttles from the
Overview's list, the approver approves, the admin executes: exactly those configs are
gone from the twin, and one set after the proposal is still there."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec

from backend.gateways.twin_http import TwinHttpGateway
from backend.model.snapshot import Snapshot
from backend.twin.cluster import TwinSettings
from backend.twin.runtime import TwinService
from backend.twin.scenario import Scenario
from tests.e2e.conftest import (
    console_errors,
    olga_and_arne,
    screenshot,
    sign_in,
    signed_in_config,
    start_dashboard,
)
from tests.e2e.conftest import wait as shared_wait
from tests.plan_helpers import api_call
from tests.servers import stop

pytestmark = pytest.mark.e2e

MB = 1_000_000
SPEED = 8.0  # simulated seconds per wall second
TOKEN = "e2e-browser-twin-token-51c7"
USERS = {"olga": ("operator", "o-pass-2"), "arne": ("approver", "a-pass-2"),
         "ines": ("admin", "i-pass-2")}
RATE = "leader.replication.throttled.rate"
KEYS = {"broker": [RATE, "follower.replication.throttled.rate"],
        "topic": ["leader.replication.throttled.replicas",
                  "follower.replication.throttled.replicas"]}
ORDERS, EVENTS = 30, 10  # partitions: plan A moves every orders partition, plan B events'


def cluster() -> Snapshot:
    """Brokers 1-4, RF 2. orders: 30 partitions of 4 MB on [1, 2] (plan A moves them to
    [3, 4]: six batches of five under the per-broker limit); events: 10 partitions on
    [3, 4], five of 4 MB then five of 400 MB (plan B moves them to [1, 2] in two batches:
    the small ones finish, the large ones are still copying when it is cancelled)."""
    reps = [[1, 2]] * ORDERS + [[3, 4]] * EVENTS
    sizes = [4 * MB] * ORDERS + [4 * MB] * 5 + [400 * MB] * (EVENTS - 5)
    return Snapshot.build("exec", [1, 2, 3, 4], [None] * 4, ["orders", "events"],
                          [0] * ORDERS + [1] * EVENTS, np.arange(0, 2 * len(reps) + 1, 2),
                          [b - 1 for r in reps for b in r], part_size=sizes,
                          part_rate=[100.0] * len(reps))


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    tmp: Path = tmp_path_factory.mktemp("execute-browser")
    (tmp / "twin.token").write_text(TOKEN + "\n")
    twin = TwinService(cluster(), Scenario(settings=TwinSettings(traffic_noise=0.0)),
                       speed=SPEED, api_port=0, api_token=TOKEN).start()
    dashboard = None
    try:
        config = {"clusters": [{"name": "exec", "gateway": {
                      "type": "twin", "url": twin.api.url,
                      "token_file": str(tmp / "twin.token")}}],
                  **signed_in_config(tmp, USERS)}
        dashboard = start_dashboard(tmp, config)
        yield {"url": dashboard.url, "twin": twin, "gw": TwinHttpGateway(twin.api.url)}
    finally:
        if dashboard is not None:
            stop(dashboard.proc)
        twin.stop()


def propose(url: str, topic: str, count: int, replicas: list[int], throttle: int) -> int:
    """The operator proposes through the API (the browser flow under test starts at
    approval): move partitions 0..count-1 of ``topic`` to ``replicas``."""
    body = {"cluster": "exec", "kind": "reassignment", "throttle": throttle,
            "title": f"move {topic} to {replicas}",
            "plan": {"version": 1, "partitions": [
                {"topic": topic, "partition": p, "replicas": replicas} for p in range(count)]}}
    return api_call(url + "/api/v1", "olga", USERS["olga"][1], "POST", "/plans", body)["id"]


def wait(driver, timeout: float = 90):
    return shared_wait(driver, timeout)


def approve(driver, url: str, plan_id: int) -> None:
    driver.get(f"{url}/plans/{plan_id}")
    wait(driver).until(lambda d: d.find_element(By.ID, "pv-approve").is_displayed())
    driver.find_element(By.ID, "pv-approve").click()
    wait(driver).until(ec.text_to_be_present_in_element((By.ID, "pv-state"), "approved"))


def execute(driver, url: str, plan_id: int) -> None:
    driver.get(f"{url}/plans/{plan_id}")
    wait(driver).until(lambda d: d.find_element(By.ID, "pv-execute").is_displayed())
    driver.find_element(By.ID, "pv-execute").click()
    wait(driver).until(ec.text_to_be_present_in_element((By.ID, "pv-state"), "executing"))


def bar(driver) -> float | None:
    """The progress bar's value as the page shows it (None before it is drawn). The page
    redraws the bar every two seconds: one found just before a redraw is read again."""
    for _ in range(5):
        found = driver.find_elements(By.ID, "pv-progress-bar")
        try:
            return float(found[0].get_attribute("value")) if found else None
        except StaleElementReferenceException:
            continue
    return None


def state(driver) -> str:
    return driver.find_element(By.ID, "pv-state").text


def throttles(gw: TwinHttpGateway) -> dict:
    return {etype: gw.find_configs(etype, keys) for etype, keys in KEYS.items()}


def test_approve_execute_watch_the_bar_then_cancel_a_second_plan(browser, second_browser,
                                                                 stack):
    url, gw = stack["url"], stack["gw"]
    operator, approver = olga_and_arne(browser, second_browser, url, USERS)
    first = propose(url, "orders", ORDERS, [3, 4], 2 * MB)
    second = propose(url, "events", EVENTS, [1, 2], 1 * MB)

    approve(approver, url, first)
    execute(operator, url, first)
    # the note under Approve follows the state shown (it said "approved" while executing)
    wait(operator).until(lambda d: d.find_element(By.ID, "pv-note").text ==
                         f"This plan is {state(d)}: there is nothing left to decide.")
    assert not operator.find_element(By.ID, "pv-comment").is_displayed()  # nothing to say
    seen: list[float] = []
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and state(operator) != "completed":
        value = bar(operator)
        if value is not None and (not seen or value != seen[-1]):
            seen.append(value)
            if len(seen) == 3:
                screenshot(operator, "execution-1-progress")
        time.sleep(0.3)
    assert state(operator) == "completed", operator.find_element(By.ID, "pv-progress").text
    wait(operator).until(lambda d: bar(d) == 100.0)
    seen.append(bar(operator))
    # the bar moved: it went up through values between 0 and 100, never back
    assert seen == sorted(seen) and len({v for v in seen if 0 < v < 100}) >= 2, seen
    assert throttles(gw) == {"broker": {}, "topic": {}}

    # an operator's own throttle on a broker the second plan uses: it must come back
    stack["twin"].twin.alter_configs("broker", "1", {RATE: "777000"})
    before = throttles(gw)
    approve(approver, url, second)
    execute(operator, url, second)
    wait(operator, 180).until(lambda d: (bar(d) or 0) > 0)  # the small partitions are done
    assert gw.list_reassignments(), "nothing in flight to cancel"
    assert throttles(gw) != before  # the plan's throttles are on
    screenshot(operator, "execution-2-before-cancel")
    # Cancel asks first (issue 26 item 12): dismissed, nothing is sent
    operator.find_element(By.ID, "pv-cancel").click()
    wait(operator, 10).until(ec.alert_is_present())
    assert f"Cancel plan {second}?" in operator.switch_to.alert.text
    operator.switch_to.alert.dismiss()
    time.sleep(1)  # a cancel sent would have answered by now
    assert state(operator) == "executing" and gw.list_reassignments()
    assert "cancel sent" not in operator.find_element(By.ID, "pv-exec-result").text
    operator.find_element(By.ID, "pv-cancel").click()
    wait(operator, 10).until(ec.alert_is_present())
    operator.switch_to.alert.accept()
    wait(operator, 120).until(ec.text_to_be_present_in_element((By.ID, "pv-state"),
                                                               "cancelled"))
    assert 0 < bar(operator) < 100
    screenshot(operator, "execution-3-cancelled")
    # the result, read through the gateway: nothing in flight, the throttles as before
    assert gw.list_reassignments() == []
    assert throttles(gw) == before == {"broker": {"1": {RATE: "777000"}}, "topic": {}}
    events = next(t for t in gw.describe_topics(["events"]))["partitions"]
    assert all(sorted(p["replicas"]) == [1, 2] for p in events[:5])  # done before the cancel
    assert all(sorted(p["replicas"]) == [3, 4] for p in events[5:])  # put back
    approver.get(f"{url}/plans/{second}")
    wait(approver).until(ec.text_to_be_present_in_element((By.ID, "pv-state"), "cancelled"))
    assert console_errors(operator) == []


def test_admin_clears_leftover_throttles_from_the_overview(browser, second_browser, stack):
    url, gw, twin = stack["url"], stack["gw"], stack["twin"].twin
    admin, approver = browser, second_browser
    twin.alter_configs("broker", "4", {RATE: "123000"})
    twin.alter_configs("topic", "orders", {KEYS["topic"][0]: "0:3,1:3"})
    leftover = throttles(gw)
    admin.delete_all_cookies()
    sign_in(admin, url, "ines", USERS["ines"][1])
    if not approver.find_elements(By.ID, "account-user"):
        sign_in(approver, url, "arne", USERS["arne"][1])
    admin.get(url + "/?cluster=exec")
    wait(admin).until(lambda d: "broker 4" in d.find_element(By.ID, "ov-leftovers").text)
    words = admin.find_element(By.ID, "ov-leftovers").text
    assert "123000" in words and "first seen by Railyard" in words and "topic orders" in words
    screenshot(admin, "execution-4-leftovers")
    wait(admin).until(lambda d: d.find_element(By.ID, "ov-clear").is_displayed())
    admin.find_element(By.ID, "ov-clear").click()
    wait(admin).until(ec.url_matches(r"/plans/\d+$"))
    plan_id = int(admin.current_url.rsplit("/", 1)[1])
    wait(admin).until(lambda d: d.find_elements(By.ID, "pv-clear-configs"))
    assert "123000" in admin.find_element(By.ID, "pv-clear-configs").text
    screenshot(admin, "execution-5-clear-plan")
    twin.alter_configs("broker", "2", {RATE: "456000"})  # set after: not the plan's
    approve(approver, url, plan_id)
    execute(admin, url, plan_id)
    wait(admin, 120).until(ec.text_to_be_present_in_element((By.ID, "pv-state"),
                                                            "completed"))
    after = throttles(gw)
    assert after == {"broker": {"2": {RATE: "456000"}}, "topic": {}}, (leftover, after)
    actions = _audit_actions(url, plan_id)  # one entry per broker or topic cleared
    assert actions.count("config_cleared") == sum(len(v) for v in leftover.values())
    assert actions[-1] == "complete"
    assert console_errors(admin) == []


def _audit_actions(url: str, plan_id: int) -> list[str]:
    entries = api_call(url + "/api/v1", "arne", USERS["arne"][1], "GET",
                       f"/audit?plan={plan_id}")["entries"]
    return [e["action"] for e in entries]
