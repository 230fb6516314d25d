"""Guard-rail stops and execution windows on the plan page, in the browser, against a
twin the dashboard changes through its HTTP API: a plan proposed with a "not before" an
hour away is executed and its page says it is waiting for its window and when that
opens; it is cancelled. A second plan is executed while a broker its first batch moves
to is down: its page names the guard condition and its value, and once the broker is
back the plan resumes by itself and completes, every throttle put back."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec

from backend.gateways.twin_http import TwinHttpGateway
from backend.model.snapshot import Snapshot
from tests.e2e.conftest import olga_and_arne, screenshot, serve_on_running_twin
from tests.e2e.test_execution_browser import approve, execute, throttles, wait
from tests.plan_helpers import api_call

pytestmark = pytest.mark.e2e

MB = 1_000_000
USERS = {"olga": ("operator", "o-pass-3"), "arne": ("approver", "a-pass-3")}


def cluster() -> Snapshot:
    """Brokers 1-4, RF 2; orders: 6 partitions of 4 MB on [1, 2]."""
    reps = [[1, 2]] * 6
    return Snapshot.build("guarded", [1, 2, 3, 4], [None] * 4, ["orders"], [0] * 6,
                          np.arange(0, 13, 2), [b - 1 for r in reps for b in r],
                          part_size=[4 * MB] * 6, part_rate=[100.0] * 6)


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    tmp: Path = tmp_path_factory.mktemp("guards-browser")
    with serve_on_running_twin(tmp, cluster(), {"name": "guarded", "guards": {
            "resume_after_seconds": 2, "floor": 500000}}, USERS) as (twin, dashboard):
        yield {"url": dashboard.url, "twin": twin, "gw": TwinHttpGateway(twin.api.url)}


def propose(url: str, replicas: list[int], **extra) -> int:
    body = {"cluster": "guarded", "kind": "reassignment", "throttle": 2 * MB,
            "title": f"move orders to {replicas}", **extra,
            "plan": {"version": 1, "partitions": [
                {"topic": "orders", "partition": p, "replicas": replicas} for p in range(6)]}}
    return api_call(url + "/api/v1", "olga", USERS["olga"][1], "POST", "/plans", body)["id"]


def hold(driver) -> str:
    found = driver.find_elements(By.ID, "pv-hold")
    return found[0].text if found else ""


def test_the_plan_page_shows_the_window_state_and_the_pause_reason(browser, second_browser,
                                                                   stack):
    url, gw, twin = stack["url"], stack["gw"], stack["twin"].twin
    operator, approver = olga_and_arne(browser, second_browser, url, USERS)

    opens = int(time.time()) + 3600
    later = propose(url, [3, 4], not_before=opens)
    approve(approver, url, later)
    execute(operator, url, later)
    wait(operator).until(lambda d: "Waiting for window" in hold(d))
    when = datetime.fromtimestamp(opens, UTC).strftime("%a %Y-%m-%d %H:%M")
    assert "not before its start time" in hold(operator) and f"{when} UTC" in hold(operator)
    assert "waiting for window: batch 0 of" in operator.find_element(
        By.ID, "pv-progress").text
    stamp = datetime.fromtimestamp(opens, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    assert f"Not before\n{stamp}" in operator.find_element(By.ID, "pv-facts").text
    screenshot(operator, "guards-1-waiting-for-window")
    operator.find_element(By.ID, "pv-cancel").click()
    wait(operator, 10).until(ec.alert_is_present())
    operator.switch_to.alert.accept()
    wait(operator).until(ec.text_to_be_present_in_element((By.ID, "pv-state"), "cancelled"))

    twin.fail_broker(4)
    guarded = propose(url, [3, 4])
    approve(approver, url, guarded)
    execute(operator, url, guarded)
    wait(operator).until(lambda d: "Paused by a guard" in hold(d))
    assert "broker 4 is down and the next batch moves replicas from or to it" \
        in hold(operator)
    assert "resumes by itself once clear for 0m 2s" in hold(operator)
    assert gw.list_reassignments() == []  # nothing started
    screenshot(operator, "guards-2-paused-by-a-guard")
    approver.get(f"{url}/?cluster=guarded")  # the Overview's banner says it too
    wait(approver).until(lambda d: f"Plan #{guarded} (move orders to [3, 4]) is paused by "
                         "a guard: broker 4 is down" in d.find_element(
                             By.ID, "ov-hold-banners").text)
    twin.recover_broker(4)
    wait(operator, 180).until(ec.text_to_be_present_in_element((By.ID, "pv-state"),
                                                               "completed"))
    assert hold(operator) == ""
    assert throttles(gw) == {"broker": {}, "topic": {}}
