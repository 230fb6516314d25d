"""/audit in a browser (issue 26 items 4 and 12): a plan that wrote more than 1,000 audit
rows opens at its proposal, each batch's config changes are one row that opens to list
them, Next page reaches the last row, and the "at" column shows whole times."""

from __future__ import annotations

from pathlib import Path

import pytest
from selenium.webdriver.common.by import By

from backend.model.io import save_snapshot
from backend.store.store import open_store
from dashboard import ids
from tests.e2e.conftest import screenshot, start_dashboard, stop, wait
from tests.plan_helpers import orders_cluster
from tests.unit.test_audit_pages import CONFIGS_PER_BATCH, seed

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory):
    tmp: Path = tmp_path_factory.mktemp("audit-browser")
    save_snapshot(orders_cluster(), tmp / "c1.parquet")
    store_cfg = {"url": f"sqlite:///{tmp / 'railyard.db'}",
                 "audit_key_file": str(tmp / "audit_keys")}
    store = open_store(store_cfg["url"], key_file=store_cfg["audit_key_file"])
    plan_id, rows = seed(store)
    store.close()
    d = start_dashboard(tmp, {"clusters": [{
        "name": "c1", "gateway": {"type": "twin", "url": "http://127.0.0.1:9"},
        "snapshot": str(tmp / "c1.parquet")}], "store": store_cfg})
    d.plan_id, d.rows = plan_id, rows
    try:
        yield d
    finally:
        stop(d.proc)


def count_text(browser) -> str:
    return browser.find_element(By.ID, ids.AU_COUNT).text


def test_a_long_plans_trail_from_its_proposal_page_by_page(browser, dashboard):
    browser.get(f"{dashboard.url}/audit?plan={dashboard.plan_id}")
    waiter = wait(browser, 60)
    waiter.until(lambda d: count_text(d).startswith("Rows 1 to 1,000"))
    assert count_text(browser) == (f"Rows 1 to 1,000 of {dashboard.rows:,} (oldest first, "
                                   f"from the proposal)")
    table = browser.find_element(By.CSS_SELECTOR, f"#{ids.AU_GRID} table.audit-log")
    first = table.find_element(By.CSS_SELECTOR, "tbody > tr")
    assert first.find_elements(By.TAG_NAME, "td")[3].text == "propose"
    at = first.find_elements(By.TAG_NAME, "td")[1]
    assert at.text == "2026-03-01 09:00:00"
    assert browser.execute_script("return arguments[0].scrollWidth <= arguments[0]"
                                  ".clientWidth", at), "the at column is cut"
    group = table.find_element(By.CSS_SELECTOR, "details.config-group")
    summary = group.find_element(By.TAG_NAME, "summary")
    assert summary.text.startswith(f"batch 1: {CONFIGS_PER_BATCH} config changes")
    assert not group.find_element(By.CSS_SELECTOR, "table tr").is_displayed()
    screenshot(browser, "audit-plan-trail")
    summary.click()
    waiter.until(lambda d: group.find_element(By.CSS_SELECTOR, "table tr").is_displayed())
    assert len(group.find_elements(By.CSS_SELECTOR, "table tr")) == CONFIGS_PER_BATCH
    browser.find_element(By.ID, ids.AU_NEXT).click()
    waiter.until(lambda d: count_text(d).startswith("Rows 1,001 to"))
    assert count_text(browser).startswith(f"Rows 1,001 to {dashboard.rows:,} of "
                                          f"{dashboard.rows:,}")
    last = browser.find_elements(By.CSS_SELECTOR,
                                 f"#{ids.AU_GRID} table.audit-log > tbody > tr")[-1]
    assert last.find_elements(By.TAG_NAME, "td")[3].text == "batch_finished"
    assert not browser.find_element(By.ID, ids.AU_NEXT).is_displayed()


def test_show_writes_the_filters_into_the_url_so_a_reload_keeps_them(browser, dashboard):
    """After Show with a user the URL stayed /audit and a reload dropped the filter: Show
    now writes the filters it checked (the name as sign-in reads it) into the URL, beside
    what the URL already held, and the page's link says the same."""
    browser.get(f"{dashboard.url}/audit?cluster=c1")
    waiter = wait(browser, 60)
    waiter.until(lambda d: count_text(d).startswith("Rows 1 to"))
    field = browser.find_element(By.ID, ids.AU_USER)
    field.clear()
    field.send_keys("ANNA ")
    browser.find_element(By.ID, ids.AU_APPLY).click()
    waiter.until(lambda d: d.current_url.endswith("/audit?cluster=c1&user=anna"))
    waiter.until(lambda d: count_text(d) == "Rows 1 to 1 of 1 (newest first)")
    link = browser.find_element(By.ID, ids.AU_LINK).get_attribute("href")
    assert link == f"{dashboard.url}/audit?cluster=c1&user=anna"
    browser.refresh()
    waiter.until(lambda d: count_text(d) == "Rows 1 to 1 of 1 (newest first)")
    assert browser.find_element(By.ID, ids.AU_USER).get_attribute("value") == "anna"
