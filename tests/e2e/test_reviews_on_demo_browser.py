"""A capacity review and an incident review on `railyard demo` in headless chromium, as a
new user would hold them. Capacity:
the demo's 90 days of backfilled history give every broker a forecast and a time to its
limit, each export arrives as a file when clicked, an export that cannot be made (the
incident cluster has no daily history) says why on the page instead of nothing, and the
What-if page's fleet sweep forecasts the demo from the same history. Incident: the
monitoring page's report link of the recorded hour opens a report that shows the partition
health (broker 5 down at 00:40), says why throttled sent exceeds fetched, reads as
numbers, and downloads under the window's name."""

from __future__ import annotations

from pathlib import Path

import pytest
from selenium.webdriver.common.by import By

from tests.e2e.conftest import (
    choose,
    console_errors,
    screenshot,
    sign_in,
    start_demo,
    stop_demo,
    wait,
    wait_download,
)

pytestmark = pytest.mark.e2e
TITLES = "return Array.from(document.querySelectorAll('.js-plotly-plot')).map(g => " \
         "g.layout.title.text)"


@pytest.fixture(scope="module")
def demo(tmp_path_factory, browser):
    tmp: Path = tmp_path_factory.mktemp("capacity-demo")
    d = start_demo(tmp)
    try:
        sign_in(browser, d.url, *d.user("operator"))
        yield d
    finally:
        stop_demo(d)


def answer_text(driver) -> str:
    return driver.find_element(By.ID, "cap-answer").text


def status_text(driver) -> str:
    return driver.find_element(By.ID, "cap-export-status").text


def test_the_demo_holds_a_capacity_review(browser, demo, downloads):
    browser.get(demo.url + "/capacity?cluster=demo")
    waiter = wait(browser, 90)
    waiter.until(lambda d: answer_text(d).startswith("By "))
    rows = browser.find_elements(By.CSS_SELECTOR, "#cap-table .ag-center-cols-container .ag-row")
    days = [r.find_element(By.CSS_SELECTOR, "[col-id='days']").text for r in rows]
    assert len(rows) >= 10  # 9 brokers, the cluster, the balanced cluster
    assert days[0] and float(days[0].replace(",", "")) < 90  # the fullest broker: weeks
    titles = browser.execute_script(TITLES)
    assert len(titles) == 2 and all(t.startswith("Partition replicas") for t in titles)
    screenshot(browser, "capacity-demo")
    assert not console_errors(browser)

    for link, suffix in (("cap-export-csv", ".csv"), ("cap-export-html", ".html"),
                         ("cap-export-pdf", ".pdf")):
        browser.find_element(By.ID, link).click()
        got = wait_download(downloads, suffix, timeout=120)
        assert got.name.startswith("capacity-demo-") and got.stat().st_size > 1000
        waiter.until(lambda d: "saved as capacity-demo-" in status_text(d))
    assert wait_download(downloads, ".csv").read_text().startswith("# Cluster: demo")


def test_a_failed_export_says_why_on_the_page(browser, demo, downloads):
    browser.get(demo.url + "/capacity?cluster=incident")  # one recorded hour, no days
    waiter = wait(browser, 60)
    # too short a history: an amber caveat (116a8a6), not a red alarm
    waiter.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#cap-banners .banner-warning"))
    assert not browser.find_elements(By.CSS_SELECTOR, "#cap-banners .banner-error")
    titles = browser.execute_script(TITLES)
    assert titles == ["Partition replicas in the cluster", "Partition replicas per broker"]
    link = browser.find_element(By.ID, "cap-export-csv")
    # the page knows the export would be refused: the link is shown disabled, and why
    waiter.until(lambda _d: link.get_attribute("aria-disabled") == "true")
    assert "has no partition counts from" in link.get_attribute("title")
    # a page drawn while the forecast still worked (the history gone since): the server
    # refuses the export on its own, and the page says why where the click was
    browser.execute_script("arguments[0].setAttribute('aria-disabled', 'false')", link)
    link.click()
    waiter.until(lambda d: "CSV export failed: " in status_text(d))
    assert "has no partition counts from" in status_text(browser)
    status = browser.find_element(By.ID, "cap-export-status")
    assert status.get_attribute("role") == "alert" and "banner-error" in \
        status.get_attribute("class")
    screenshot(browser, "capacity-export-failed")
    assert list(downloads.iterdir()) == []  # nothing saved
    [logged] = console_errors(browser)  # the browser logs the answer it fetched: 503
    assert "capacity.csv?cluster=incident" in logged and "503" in logged


def test_the_fleet_sweep_forecasts_the_demo_from_its_history(browser, demo):
    browser.get(demo.url + "/what-if?cluster=demo&tab=sweeps")
    waiter = wait(browser, 60)
    waiter.until(lambda d: d.find_element(By.ID, "wi-sw-kind"))
    choose(browser, "wi-sw-kind", "fleet")
    waiter.until(lambda d: d.find_element(By.ID, "wi-sw-end").is_displayed())
    browser.find_element(By.ID, "wi-sw-run").click()
    result = wait(browser, 400).until(
        lambda d: d.find_element(By.ID, "wi-sw-result").text
        or d.find_element(By.ID, "wi-sw-error").text)
    assert "rows in" in result, result
    assert "left out incident" in result  # one recorded hour: no daily history
    bars = browser.execute_script(
        "return document.getElementById('wi-sw-chart').querySelector('.js-plotly-plot')"
        ".data.map(t => t.type)")
    assert bars and set(bars) == {"bar"}
    screenshot(browser, "what-if-fleet-sweep-demo")


INCIDENT = "cluster=incident&range=abs&from=2024-01-01T00%3A00&to=2024-01-01T01%3A00"


FETCH = ("const r = await fetch(arguments[0]); return [r.status, r.headers.get('Content-Type'),"
         " r.headers.get('Content-Disposition'), await r.text()];")


def test_the_incident_report_of_the_recorded_hour(browser, demo, tmp_path):
    browser.get(demo.url + "/brokers?" + INCIDENT)
    link = wait(browser, 60).until(lambda d: d.find_element(By.ID, "incident-report"))
    href = link.get_attribute("href")
    status, kind, disposition, page = browser.execute_script(FETCH, href)
    assert (status, kind) == (200, "text/html; charset=utf-8")
    assert disposition == ('attachment; filename='
                           '"incident-incident-20240101T0000Z-20240101T0100Z.html"')
    status, kind, disposition, csv = browser.execute_script(
        FETCH, href.replace("incident.html", "incident.csv"))
    assert (status, kind) == (200, "text/csv; charset=utf-8")
    assert disposition.endswith('"incident-incident-20240101T0000Z-20240101T0100Z.csv"')
    assert "# partition health" in csv.splitlines()
    saved = tmp_path / "incident.html"
    saved.write_text(page)
    browser.get(saved.as_uri())  # the file as a postmortem attaches it: no dashboard behind
    wait(browser, 60).until(
        lambda d: len(d.find_elements(By.CSS_SELECTOR, ".js-plotly-plot .main-svg")) >= 9)
    text = browser.find_element(By.TAG_NAME, "body").text
    headings = [h.text for h in browser.find_elements(By.TAG_NAME, "h2")]
    assert headings[0] == "Partition health: when partitions were under-replicated"
    assert "2024-01-01 00:40:00" in text and "keep-up traffic used the leaders' throttle" in text
    cells = [td.text for td in browser.find_elements(By.CSS_SELECTOR, "table.report td")]
    assert not [c for c in cells if c.endswith(".0") or c in ("True", "False", "None")]
    screenshot(browser, "incident-report-demo")
