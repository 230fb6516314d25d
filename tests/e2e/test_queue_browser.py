"""/queue in a browser (issue 29, one queue for the fleet): every plan of two clusters in
one grid; an admin filters by cluster, by "needs my approval" and by state, sorts by a
column, and each step shows the rows asked for and writes the view into the URL, which
shows the same rows when opened again; another user's approval arrives on the next
refresh without redrawing the rows that did not change; the Overview links to its
cluster's entries; in a 1024 px window the grid fits without scrolling sideways."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec

from tests.e2e.conftest import (
    choose,
    console_errors,
    propose_move,
    screenshot,
    sign_in,
    twin_clusters_dashboard,
    wait,
)
from tests.e2e.test_dashboard_live import GRID_CUT
from tests.plan_helpers import api_call

pytestmark = pytest.mark.e2e

USERS = {"olga": ("operator", "o-pass-1"), "arne": ("approver", "a-pass-1"),
         "ada": ("admin", "ad-pass-1")}
CLUSTERS = ("east", "west")
ROWS = ".ag-center-cols-container .ag-row"


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory):
    """`railyard serve` on two twin clusters, east and west."""
    with twin_clusters_dashboard(tmp_path_factory.mktemp("queue"), CLUSTERS, USERS) as d:
        yield d


def propose(api: str, user: str, cluster: str, title: str, partition: int) -> dict:
    """A one-partition move on ``cluster`` to brokers that do not hold it."""
    return propose_move(api, user, USERS[user][1], cluster, title, partition)


ROWS_JS = """
return Array.from(document.querySelectorAll(arguments[0]))
    .sort((a, b) => Number(a.getAttribute("row-index")) - Number(b.getAttribute("row-index")))
    .map(r => [r.getAttribute("row-id"), Object.fromEntries(Array.from(
        r.querySelectorAll(".ag-cell")).map(c => [c.getAttribute("col-id"), c.innerText]))]);
"""


def rows_in_order(driver) -> list[tuple[str, dict[str, str]]]:
    """The grid's rows as it shows them, read at one moment: (plan id, {column: text})."""
    return [tuple(r) for r in driver.execute_script(ROWS_JS, ROWS)]


def shown(driver) -> dict[str, dict[str, str]]:
    """The grid's rows: plan id -> {column: text}."""
    return dict(rows_in_order(driver))


def titles(driver) -> list[str]:
    """The titles in the order the grid shows them."""
    return [cells["title"] for _, cells in rows_in_order(driver)]


def wait_titles(driver, expected: set[str]) -> None:
    wait(driver, 30).until(lambda d: set(titles(d)) == expected,
                                    f"rows shown are not {expected}")


def query(driver) -> dict[str, list[str]]:
    return parse_qs(urlparse(driver.current_url).query)


def test_filters_needs_my_approval_sort_and_the_url(browser, dashboard):
    api = dashboard.url + "/api/v1"
    plans = {"east-1": propose(api, "olga", "east", "east-1", 0),
             "west-1": propose(api, "olga", "west", "west-1", 1),
             "west-ada": propose(api, "ada", "west", "west-ada", 2)}
    browser.delete_all_cookies()
    console_errors(browser)
    sign_in(browser, dashboard.url, "ada", USERS["ada"][1])
    browser.find_element(By.ID, "nav-queue").click()
    wait(browser, 60).until(ec.url_matches(r"/queue$"))
    wait_titles(browser, {"east-1", "west-1", "west-ada"})
    rows = shown(browser)
    east = rows[str(plans["east-1"]["id"])]
    assert (east["cluster"], east["state"], east["author"], east["approvals"],
            east["still_needed"], east["schedule"]) == ("east", "proposed", "olga", "0 of 1",
                                                        "1", "—")
    assert east["bytes_to_move"].endswith("B") and east["eta_seconds"] == "—"
    assert "2 need your approval" in browser.find_element(By.ID, "qu-count").text

    # one cluster
    choose(browser, "qu-cluster", "west")
    wait_titles(browser, {"west-1", "west-ada"})
    assert query(browser) == {"cluster": ["west"]}
    # what needs my approval there: not my own plan
    browser.find_element(By.CSS_SELECTOR, "#qu-mine input").click()
    wait_titles(browser, {"west-1"})
    assert query(browser) == {"cluster": ["west"], "mine": ["1"]}
    # every cluster again: olga's two plans wait for me
    choose(browser, "qu-cluster", "*")
    wait_titles(browser, {"east-1", "west-1"})
    assert query(browser) == {"mine": ["1"]}
    browser.find_element(By.CSS_SELECTOR, "#qu-mine input").click()
    wait_titles(browser, {"east-1", "west-1", "west-ada"})
    # a state with none
    choose(browser, "qu-state", "approved")
    wait(browser, 30).until(lambda d: titles(d) == [])
    assert query(browser) == {"state": ["approved"]}
    choose(browser, "qu-state", "proposed")
    wait_titles(browser, {"east-1", "west-1", "west-ada"})

    # sorted by title, ascending: the URL says so, and the link beside the filters
    header = browser.find_element(By.CSS_SELECTOR, ".ag-header-cell[col-id='title']")
    header.find_element(By.CSS_SELECTOR, ".ag-header-cell-label").click()
    wait(browser, 30).until(lambda d: query(d).get("sort") == ["title"])
    assert titles(browser) == ["east-1", "west-1", "west-ada"]
    header.find_element(By.CSS_SELECTOR, ".ag-header-cell-label").click()
    wait(browser, 30).until(lambda d: query(d).get("sort") == ["-title"])
    assert titles(browser) == ["west-ada", "west-1", "east-1"]
    link = browser.find_element(By.ID, "qu-link").get_attribute("href")
    assert parse_qs(urlparse(link).query) == {"state": ["proposed"], "sort": ["-title"]}
    screenshot(browser, "queue-sorted")

    # the URL alone shows the same view (a colleague opening the link)
    browser.get(dashboard.url + "/queue?cluster=west&mine=1&sort=-title")
    wait_titles(browser, {"west-1"})
    assert browser.find_element(By.CSS_SELECTOR, "#qu-mine input").is_selected()
    assert "west" in browser.find_element(By.ID, "qu-cluster").text

    # live: arne approves west-1 and olga's east-1 stays as it was; the next refresh
    # drops west-1 from what waits for me and redraws nothing else
    browser.get(dashboard.url + "/queue?mine=1")
    wait_titles(browser, {"east-1", "west-1"})
    kept = browser.find_element(By.CSS_SELECTOR, f"{ROWS}[row-id='{plans['east-1']['id']}']")
    full = api_call(api, "arne", USERS["arne"][1], "GET", f"/plans/{plans['west-1']['id']}")
    api_call(api, "arne", USERS["arne"][1], "POST", f"/plans/{plans['west-1']['id']}/approve",
             {"sha256": full["sha256"]})
    wait_titles(browser, {"east-1"})
    try:
        assert kept.get_attribute("row-id") == str(plans["east-1"]["id"])
    except StaleElementReferenceException:
        pytest.fail("the refresh redrew a row that did not change")
    browser.get(dashboard.url + "/queue?cluster=west")
    wait_titles(browser, {"west-1", "west-ada"})
    assert shown(browser)[str(plans["west-1"]["id"])]["approvals"] == "1 of 1"
    assert console_errors(browser) == []


def test_the_overview_links_to_its_cluster_s_entries(browser, dashboard):
    propose(dashboard.url + "/api/v1", "olga", "east", "east-2", 3)
    browser.delete_all_cookies()
    sign_in(browser, dashboard.url, "arne", USERS["arne"][1])
    browser.get(dashboard.url + "/?cluster=east")
    link = wait(browser, 60).until(
        lambda d: [e for e in d.find_elements(By.ID, "ov-queue") if "proposed" in e.text])[0]
    assert link.text.startswith("east's plans in the queue (")
    link.click()
    wait(browser, 60).until(ec.url_contains("/queue?cluster=east"))
    wait(browser, 30).until(lambda d: titles(d))
    assert {r["cluster"] for r in shown(browser).values()} == {"east"}
    # the navigation's Queue is the whole fleet's, whichever cluster the page showed
    assert browser.find_element(By.ID, "nav-queue").get_attribute("href") \
        .endswith("/queue")


# what the queue grid shows: its columns (AG Grid draws no header for a hidden one) and
# whether it or the page scrolls sideways
QUEUE_DRAWN = """
const view = document.querySelector('#qu-grid .ag-center-cols-viewport');
const page = document.documentElement;
return {columns: Array.from(document.querySelectorAll('#qu-grid .ag-header-cell'))
                      .map(e => e.getAttribute('col-id')),
        grid: [view.scrollWidth, view.clientWidth], page: [page.scrollWidth, page.clientWidth]};
"""
DECIDED_BY = ["id", "cluster", "state", "title", "author", "approvals"]
FREE = ["title", "schedule", "execution", "pause_reason"]  # cut when long, whole on hover


def fits(driver, what: str) -> dict:
    """Wait until the queue grid shows every value whole and neither it nor the page
    scrolls sideways (its columns follow its width once drawn); what it shows."""
    try:
        wait(driver, 10, poll_frequency=0.2).until(
            lambda d: d.execute_script(GRID_CUT, "#qu-grid", FREE) == []
            and d.execute_script("const p = document.documentElement;"
                                 "return p.scrollWidth <= p.clientWidth"))
    except TimeoutException:
        pytest.fail(f"{what}: {driver.execute_script(GRID_CUT, '#qu-grid', FREE)} "
                    f"{driver.execute_script(QUEUE_DRAWN)}")
    return driver.execute_script(QUEUE_DRAWN)


def test_the_queue_fits_a_1024_px_window(browser, dashboard):
    """At 1024 px the queue's fourteen columns (1305 px) scrolled sideways in a 938 px
    grid. Now the columns an operator decides by stay, the others give way as the grid
    narrows, and the title's tooltip lists the values of those hidden; a wider window
    shows more of them."""
    title = "Move partition 4 of east off its brokers before Thursday's rack swap"
    plan = propose(dashboard.url + "/api/v1", "olga", "east", title, 4)
    browser.delete_all_cookies()
    console_errors(browser)
    sign_in(browser, dashboard.url, "arne", USERS["arne"][1])
    size = browser.get_window_size()
    row = f"{ROWS}[row-id='{plan['id']}']"
    try:
        browser.set_window_size(1024, 900)
        browser.get(dashboard.url + "/queue")
        wait(browser, 60).until(lambda d: d.find_elements(By.CSS_SELECTOR, row))
        narrow = fits(browser, "at 1024 px")
        assert set(DECIDED_BY) <= set(narrow["columns"]), narrow
        assert "kind" not in narrow["columns"], narrow
        cells = shown(browser)[str(plan["id"])]
        assert (cells["cluster"], cells["state"], cells["author"], cells["approvals"]) \
            == ("east", "proposed", "olga", "0 of 1")
        screenshot(browser, "queue-1024")
        ActionChains(browser).move_to_element(browser.find_element(
            By.CSS_SELECTOR, f"{row} [col-id='title']")).perform()
        tip = wait(browser, 10).until(lambda d: [
            e.text for e in d.find_elements(By.CSS_SELECTOR, ".ag-tooltip") if e.text])[0]
        assert tip.splitlines()[0] == title
        assert {"kind: reassignment", "window: \u2014", "still needed: 1"} \
            <= set(tip.splitlines()), tip

        browser.set_window_size(1400, 900)
        wide = fits(browser, "at 1400 px")
        assert "kind" in wide["columns"] and len(wide["columns"]) > len(narrow["columns"])
    finally:
        browser.set_window_size(size["width"], size["height"])
    assert console_errors(browser) == []
