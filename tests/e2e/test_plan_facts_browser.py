"""The plan page's facts follow the plan in the browser (a new user's report): every plan
not ended said "Expires <time>", an executing one too, and Approve or Execute on the page
left the line as it was until a reload. Now the facts say when a proposed plan expires,
when an approved one must be started by, when an executing one started (or that the
executor has not started it yet), each as the page sees the plan move on."""

from __future__ import annotations

import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By

from tests.e2e.conftest import console_errors, olga_and_arne, screenshot
from tests.e2e.test_execution_browser import (  # its twin and dashboard: one stack, no copy
    MB,
    ORDERS,
    USERS,
    approve,
    execute,
    propose,
    stack,
    wait,
)
from tests.plan_helpers import api_call

pytestmark = pytest.mark.e2e
__all__ = ["stack"]  # the fixture, used by name


def facts(driver) -> dict[str, str]:
    """The facts the page shows, by name ({} while they are drawn again)."""
    try:
        dl = driver.find_element(By.ID, "pv-facts")
        names = [e.text for e in dl.find_elements(By.TAG_NAME, "dt")]
        values = [e.text for e in dl.find_elements(By.TAG_NAME, "dd")]
    except StaleElementReferenceException:
        return {}
    return dict(zip(names, values, strict=False))


def times(driver) -> set[str]:
    return set(facts(driver)) & {"Expires", "Start by", "Started"}


def started_by_the_executor(driver) -> bool:
    """The facts say when the execution started: read once (two reads can straddle a
    redraw, and the second then finds no facts)."""
    shown = facts(driver)
    return set(shown) & {"Expires", "Start by", "Started"} == {"Started"} and \
        not shown["Started"].startswith("not yet")


def test_the_facts_say_each_states_time_as_the_plan_moves_on(browser, second_browser,
                                                              stack):
    url = stack["url"]
    operator, approver = olga_and_arne(browser, second_browser, url, USERS)
    plan_id = propose(url, "orders", ORDERS, [3, 4], 2 * MB)
    approver.get(f"{url}/plans/{plan_id}")
    wait(approver).until(lambda d: times(d) == {"Expires"})
    proposed_until = facts(approver)["Expires"]
    approve(approver, url, plan_id)  # reloads the page, then clicks Approve on it
    # the page that approved: the time it must be started by, restarted by the approval
    wait(approver, 30).until(lambda d: times(d) == {"Start by"})
    assert facts(approver)["Start by"] >= proposed_until
    execute(operator, url, plan_id)  # the page loaded approved, then Execute
    # "not yet: sent to execute ..." until the executor starts it, then when it did: the
    # page's timer draws the facts again until then
    wait(operator, 60).until(started_by_the_executor)
    screenshot(operator, "plan-facts-started")
    started = facts(operator)["Started"]
    operator.refresh()  # the page drawn afresh says the same
    wait(operator).until(lambda d: times(d) == {"Started"})
    assert facts(operator)["Started"] == started
    assert console_errors(operator) == [] and console_errors(approver) == []
    api_call(url + "/api/v1", "olga", USERS["olga"][1], "POST", f"/plans/{plan_id}/cancel")
