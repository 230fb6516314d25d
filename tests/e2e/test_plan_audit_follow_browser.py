"""The plan page follows a plan as it runs, in the browser (found on the Apache Kafka
demo): after Execute the audit trail kept its propose and approve rows while the plan ran
and completed (the API had them all) until a reload. Now the trail follows on the page's
refresh while the plan executes, and the refresh that sees it end shows the last rows; the
facts then say when the plan completed, not when it would have expired."""

from __future__ import annotations

import time

import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec

from tests.e2e.conftest import console_errors, olga_and_arne, screenshot
from tests.e2e.test_execution_browser import (  # its twin and dashboard: one stack, no copy
    MB,
    ORDERS,
    USERS,
    _audit_actions,
    approve,
    execute,
    propose,
    stack,
    state,
    wait,
)

pytestmark = pytest.mark.e2e
__all__ = ["stack"]  # the fixture, used by name


def audit_rows(driver) -> int | None:
    """Rows in the page's audit grid (its aria-rowcount counts the header row too), None
    while it is being drawn again."""
    try:
        grid = driver.find_elements(By.CSS_SELECTOR, "#pv-audit [role='grid']")
        return int(grid[0].get_attribute("aria-rowcount")) - 1 if grid else None
    except (StaleElementReferenceException, TypeError, ValueError):
        return None


def actions_shown(driver) -> list[str]:
    """The action cells the audit grid has drawn (the first rows: it draws what it shows)."""
    try:
        return [c.text for c in driver.find_elements(
            By.CSS_SELECTOR, "#pv-audit .ag-row [col-id='action']")]
    except StaleElementReferenceException:
        return []


def test_the_audit_trail_follows_an_executing_plan_to_its_end(browser, second_browser,
                                                              stack):
    url = stack["url"]
    operator, approver = olga_and_arne(browser, second_browser, url, USERS)
    plan_id = propose(url, "orders", ORDERS, [3, 4], 2 * MB)
    approve(approver, url, plan_id)
    execute(operator, url, plan_id)  # the page loaded before Execute: propose, approve
    assert len(_audit_actions(url, plan_id)) > 2
    # the execute row comes without a reload, while the plan still executes
    wait(operator, 30).until(lambda d: "execute" in actions_shown(d))
    assert state(operator).startswith("executing"), state(operator)
    screenshot(operator, "plan-audit-follows-1-executing")
    wait(operator, 300).until(ec.text_to_be_present_in_element((By.ID, "pv-state"),
                                                               "completed"))
    every = _audit_actions(url, plan_id)
    assert every[-1] == "complete"
    wait(operator, 30).until(lambda d: audit_rows(d) == len(every))
    time.sleep(5)  # the timer has stopped: nothing is drawn after the last refresh
    assert audit_rows(operator) == len(_audit_actions(url, plan_id)) == len(every)
    screenshot(operator, "plan-audit-follows-2-completed")
    # the facts: when it completed, no expiry to come; on the page that saw it end too
    facts = operator.find_element(By.ID, "pv-facts").text
    assert "Completed" in facts and "Expires" not in facts, facts
    operator.refresh()
    wait(operator).until(lambda d: d.find_elements(By.ID, "pv-facts"))
    assert operator.find_element(By.ID, "pv-facts").text == facts
    assert console_errors(operator) == []
