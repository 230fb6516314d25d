"""Pause and Resume on the plan page, in the browser, against a twin whose clock runs: the
operator pauses a plan while a refresh is on its way; the result line says what pausing
does and stays after the page's two-second refreshes (they wrote "" over it), the badge
says "executing · pausing" and then "executing · paused" once the batch in flight is done
(it said "executing"), the line "Paused: ..." then (it kept "Pausing: ..."), and nothing
moves; Resume says so while the plan executes, the
badge is "executing" again, and the plan completes: then the line says when it completed
(it still said "Resumed: ..." on the completed plan). The server answers each click
later than the next refresh is due, as a slow one would: the line still says what the
click did (a refresh sent meanwhile once made dash-renderer drop the click's answer, and
the line never said "Resumed")."""

from __future__ import annotations

import time
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec

from backend.gateways.twin_http import TwinHttpGateway
from backend.model.snapshot import Snapshot
from dashboard.auth import csrf_cookie_name
from tests.e2e.conftest import (
    click_during_a_refresh,
    console_errors,
    hold_answers,
    olga_and_arne,
    screenshot,
    serve_on_running_twin,
    shown_text,
    slow_timer_answers,
)
from tests.e2e.test_execution_browser import approve, execute, throttles, wait
from tests.plan_helpers import api_call

pytestmark = pytest.mark.e2e

MB = 1_000_000
USERS = {"olga": ("operator", "o-pass-4"), "arne": ("approver", "a-pass-4")}
PARTITIONS = 20  # four batches of five under the per-broker limit
CLICK_ANSWER_S = 3  # a click's answer is held this long: the page's timer fires every 2 s


def cluster() -> Snapshot:
    """Brokers 1-4, RF 2; orders: 20 partitions of 4 MB on [1, 2]."""
    reps = [[1, 2]] * PARTITIONS
    return Snapshot.build("paused", [1, 2, 3, 4], [None] * 4, ["orders"], [0] * PARTITIONS,
                          np.arange(0, 2 * PARTITIONS + 1, 2), [b - 1 for r in reps for b in r],
                          part_size=[4 * MB] * PARTITIONS, part_rate=[100.0] * PARTITIONS)


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    tmp: Path = tmp_path_factory.mktemp("pause-browser")
    with serve_on_running_twin(tmp, cluster(), {"name": "paused"}, USERS) as (twin, dashboard):
        yield {"url": dashboard.url, "gw": TwinHttpGateway(twin.api.url)}


def propose(url: str, to: tuple[int, int] = (3, 4)) -> int:
    body = {"cluster": "paused", "kind": "reassignment", "throttle": MB,
            "title": f"move orders to {list(to)}",
            "plan": {"version": 1, "partitions": [
                {"topic": "orders", "partition": p, "replicas": list(to)}
                for p in range(PARTITIONS)]}}
    return api_call(url + "/api/v1", "olga", USERS["olga"][1], "POST", "/plans", body)["id"]


def result(driver) -> str:
    return shown_text(driver, "pv-exec-result")


def badge(driver) -> str:
    return shown_text(driver, "pv-state")


def shown(driver, element_id: str) -> bool:
    found = driver.find_elements(By.ID, element_id)
    return bool(found) and found[0].is_displayed()


def test_pause_says_so_on_the_result_line_and_the_badge_then_resume(browser, second_browser,
                                                                    stack):
    url, gw = stack["url"], stack["gw"]
    operator, approver = olga_and_arne(browser, second_browser, url, USERS)
    plan_id = propose(url)
    approve(approver, url, plan_id)
    execute(operator, url, plan_id)
    wait(operator).until(lambda d: shown(d, "pv-pause"))
    slow_timer_answers(operator, "pv-tick", 1.5)
    for button in ("pv-pause", "pv-resume"):  # answered after the next refresh is due
        hold_answers(operator, f"{button}.n_clicks", CLICK_ANSWER_S, button)
    click_during_a_refresh(operator, lambda d: d.find_element(By.ID, "pv-pause"))
    wait(operator, 30).until(lambda d: result(d).startswith("Pausing: "))
    assert "no new batch starts until Resume." in result(operator)
    wait(operator, 30).until(lambda d: badge(d) in ("executing · pausing",
                                                    "executing · paused"))
    # once the batch in flight is done: paused, nothing moving, and the answer says so
    # (it said "Pausing: ..." under the paused badge; a refresh once wrote "" over it)
    wait(operator, 120).until(lambda d: badge(d) == "executing · paused")
    assert "state-paused" in operator.find_element(By.ID, "pv-state").get_attribute("class")
    time.sleep(5)  # two refreshes and more
    assert result(operator) == "Paused: no new batch starts until Resume."
    assert badge(operator) == "executing · paused" and gw.list_reassignments() == []
    assert "batch" in shown_text(operator, "pv-progress")
    screenshot(operator, "pause-1-paused")
    assert shown(operator, "pv-resume") and not shown(operator, "pv-pause")

    operator.find_element(By.ID, "pv-resume").click()
    wait(operator, 30).until(lambda d: result(d).startswith("Resumed: "))
    wait(operator, 30).until(lambda d: badge(d) in ("executing", "completed"))
    time.sleep(5)  # two refreshes and more: while it executes, the answer stays
    answer = result(operator)
    if badge(operator) == "executing":  # read after the answer: it executed then too
        assert answer.startswith("Resumed: ")
    wait(operator, 180).until(ec.text_to_be_present_in_element((By.ID, "pv-state"),
                                                               "completed"))
    # once completed, "Resumed: the next batch starts..." is no longer true: the line
    # says how the plan ended (it said "Resumed: ..." on the completed plan)
    assert result(operator).startswith("Completed at ") and result(operator).endswith(" UTC.")
    assert "Resumed" not in result(operator)
    assert throttles(gw) == {"broker": {}, "topic": {}}
    assert console_errors(operator) == []


def test_a_click_the_server_refused_leaves_the_page_following_the_plan(browser, second_browser,
                                                                       stack):
    """A click stops the page's two-second refresh until its answer lands (pages/plan.py),
    and the answer starts it again. A click the server failed on (here refused: the
    request lost its CSRF token, a 403) has no such answer: the page stood still, the bar
    and the badge where they were, until it was loaded again. Now the refresh goes on
    after the failure and the page follows the plan to its end."""
    url, gw = stack["url"], stack["gw"]
    operator, approver = olga_and_arne(browser, second_browser, url, USERS)
    assert gw.list_reassignments() == []  # the plans before have ended
    plan_id = propose(url, (1, 2) if twin_replicas(gw) == [3, 4] else (3, 4))
    approve(approver, url, plan_id)
    execute(operator, url, plan_id)
    wait(operator).until(lambda d: shown(d, "pv-pause"))
    hold_answers(operator, "pv-tick.n_intervals", 0, "refreshing")  # counted, not held
    hold_answers(operator, "pv-pause.n_clicks", 0, "pausing")
    # the token gone just for the click: the server refuses it (its answer hands the
    # cookie back, so the requests after it carry the token again)
    operator.execute_script(
        "document.cookie = arguments[0] + '=; max-age=0; path=/';"
        "document.getElementById('pv-pause').click();",
        csrf_cookie_name(urlsplit(url).port))
    wait(operator, 30).until(lambda d: d.execute_script("return window.pausingLanded") == 1)
    assert not result(operator).startswith("Pausing"), result(operator)  # refused
    landed = operator.execute_script("return window.refreshingLanded")
    wait(operator, 20).until(
        lambda d: d.execute_script("return window.refreshingLanded") >= landed + 2)
    wait(operator, 180).until(ec.text_to_be_present_in_element((By.ID, "pv-state"),
                                                               "completed"))
    assert result(operator).startswith("Completed at ")
    screenshot(operator, "pause-2-refused-click-then-completed")


def twin_replicas(gw: TwinHttpGateway) -> list[int]:
    """orders-0's replicas on the twin now (the tests move all 20 partitions together)."""
    snap = gw.assignment()
    return snap.replicas_of(snap.partition_row("orders", 0))
