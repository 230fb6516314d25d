"""/capacity in a browser against a Prometheus holding 30 days of partition history: the
page draws the forecast, a knob changes the URL and the answer, and the three exports
arrive as files (the HTML opens with no server, the PDF's first page is not blank); the
What-if page's fleet sweep forecasts every cluster from the same history on Spark."""

from __future__ import annotations

import shutil
import subprocess
import time

import numpy as np
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from tests.e2e.conftest import (
    SCREENSHOTS,
    choose,
    console_errors,
    screenshot,
    start_dashboard,
    stop,
    wait,
    wait_download,
)
from tests.integration.test_capacity_history import prometheus  # noqa: F401 (fixture)

pytestmark = pytest.mark.e2e
VIEW = "/capacity?cluster=history&end=2024-01-30T23%3A00"


@pytest.fixture(scope="module")
def dashboard(prometheus, tmp_path_factory):  # noqa: F811 (the imported fixture)
    d = start_dashboard(tmp_path_factory.mktemp("capacity-e2e"), {"clusters": [{
        "name": "history", "gateway": {"type": "twin", "url": "http://127.0.0.1:9"},
        "prometheus": {"url": prometheus},
        "limits": {"max.broker.partitions": 1200, "max.partitions": 5000}}, {
        "name": "gone", "gateway": {"type": "twin", "url": "http://127.0.0.1:9"},
        "prometheus": {"url": "http://127.0.0.1:9"}}], "spark": {"master": "local[1]"}})
    try:
        yield d
    finally:
        stop(d.proc)


def answer_text(driver) -> str:
    return driver.find_element(By.ID, "cap-answer").text


def test_capacity_page_knobs_and_exports(browser, dashboard, downloads):
    browser.get(dashboard.url + VIEW)
    waiter = wait(browser, 60)
    waiter.until(lambda d: answer_text(d).startswith("By "))
    rows = browser.find_elements(By.CSS_SELECTOR, "#cap-table .ag-row")
    assert len(rows) >= 6  # 4 brokers, the cluster, the balanced cluster
    assert len(browser.find_elements(By.CSS_SELECTOR, ".js-plotly-plot")) == 2
    before = answer_text(browser)
    knob = browser.find_element(By.ID, "cap-add")
    knob.send_keys(Keys.CONTROL, "a")
    knob.send_keys("2", Keys.ENTER)
    waiter.until(lambda d: "add=2" in d.current_url and answer_text(d) != before)
    assert "on 6 brokers" in answer_text(browser)
    screenshot(browser, "capacity")
    assert not console_errors(browser)

    browser.find_element(By.ID, "cap-export-csv").click()
    csv = wait_download(downloads, ".csv", timeout=60).read_text()
    assert csv.startswith("# Cluster: history") and "# Scenario: 2 brokers added" in csv

    browser.find_element(By.ID, "cap-export-html").click()
    html = wait_download(downloads, ".html", timeout=60)
    browser.get(html.as_uri())  # the file alone, no dashboard behind it
    waiter.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".js-plotly-plot .main-svg")) >= 2)
    assert "Capacity review: history" in browser.title

    # a limit a century off reads so (the grid took the dates for dates, and drew the
    # text as an empty cell); 2.5 brokers is refused by name, not read as 0
    browser.get(dashboard.url + VIEW + "&mbp=2000000000")
    waiter.until(lambda d: answer_text(d).startswith("By "))
    dates = [c.text for c in browser.find_elements(By.CSS_SELECTOR,
                                                   "#cap-table .ag-row [col-id=date]")]
    assert any(d.startswith("after ") for d in dates), dates
    knob = browser.find_element(By.ID, "cap-add")
    knob.send_keys(Keys.CONTROL, "a")
    knob.send_keys("2.5", Keys.ENTER)
    waiter.until(lambda d: "add brokers: give a whole number from 0 to 1,000, got 2.5"
               in d.find_element(By.ID, "cap-banners").text)

    if not shutil.which("pdftoppm"):
        pytest.skip("pdftoppm (poppler-utils) is not installed")
    browser.get(dashboard.url + VIEW)
    waiter.until(lambda d: answer_text(d).startswith("By "))
    browser.find_element(By.ID, "cap-export-pdf").click()
    pdf = wait_download(downloads, ".pdf", timeout=120)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    subprocess.run(["pdftoppm", "-png", "-r", "60", "-f", "1", "-l", "1", "-singlefile",
                    str(pdf), str(SCREENSHOTS / "capacity-pdf-page1")], check=True)
    gray = subprocess.run(["pdftoppm", "-gray", "-r", "30", "-f", "1", "-l", "1",
                           "-singlefile", str(pdf)], capture_output=True, check=True).stdout
    pixels = np.frombuffer(gray.split(b"\n", 3)[3], np.uint8)  # P5 header: 3 lines
    assert (pixels < 200).mean() > 0.01  # text and charts, not a blank page


# the day before Prometheus's history begins (2024-01-01): no partition counts up to it
NO_HISTORY = "/capacity?cluster=history&end=2023-12-01T00%3A00"
EXPORTS = ("cap-export-html", "cap-export-pdf", "cap-export-csv")
FETCH = """
const done = arguments[arguments.length - 1];
fetch(arguments[0], {credentials: "same-origin"})
  .then(r => r.text().then(t => done([r.status, t])), e => done([0, String(e)]));
"""


def test_exports_show_disabled_while_the_cluster_has_no_history(browser, dashboard,
                                                                 downloads):
    """A cluster with no history had export links that looked ready and answered one line
    once clicked: they show disabled, say why on hover, and a click fetches nothing; the
    server still refuses the export on its own."""
    browser.get(dashboard.url + NO_HISTORY)
    waiter = wait(browser, 60)
    waiter.until(lambda d: "Partition history" in d.find_element(By.ID, "cap-banners").text)
    waiter.until(lambda d: all(d.find_element(By.ID, i).get_attribute("aria-disabled") == "true"
                             for i in EXPORTS))
    csv = browser.find_element(By.ID, "cap-export-csv")
    title = csv.get_attribute("title")
    assert title.startswith("No history for cluster history yet: exports need a forecast")
    assert "has no partition counts from 2023-11-02 to 2023-12-01" in title, title
    # drawn as disabled: greyed, not the blue of a live link
    assert csv.value_of_css_property("cursor") == "not-allowed"
    assert csv.value_of_css_property("color") == "rgba(154, 165, 177, 1)"
    screenshot(browser, "capacity-no-history")
    for link in EXPORTS:
        browser.find_element(By.ID, link).click()
    time.sleep(3)  # what a click would have started: a status line, a file
    assert browser.find_element(By.ID, "cap-export-status").text == ""
    assert list(downloads.iterdir()) == []
    assert "/capacity?" in browser.current_url
    assert not console_errors(browser)  # no request was made
    # the server refuses the same export on its own, in one line (the console logs its 503)
    browser.set_script_timeout(60)
    status, body = browser.execute_async_script(FETCH, csv.get_attribute("href"))
    assert status == 503 and body.count("\n") == 1 and "has no partition counts" in body, body
    console_errors(browser)

    browser.get(dashboard.url + VIEW)  # history: the exports are live again
    waiter.until(lambda d: answer_text(d).startswith("By "))
    waiter.until(lambda d: all(d.find_element(By.ID, i).get_attribute("aria-disabled") == "false"
                             for i in EXPORTS))
    assert not browser.find_element(By.ID, "cap-export-csv").get_attribute("title")
    browser.find_element(By.ID, "cap-export-csv").click()
    assert wait_download(downloads, ".csv", timeout=60).read_text().startswith(
        "# Cluster: history")


def test_monitoring_pages_link_the_incident_report_of_their_window(browser, dashboard):
    browser.get(dashboard.url + "/brokers?cluster=history&range=abs&from=2024-01-30T00%3A00"
                "&to=2024-01-30T06%3A00")
    link = wait(browser, 30).until(
        lambda d: d.find_element(By.ID, "incident-report"))
    href = link.get_attribute("href")
    assert "/reports/incident.html?" in href and "range=abs" in href and "cluster=history" in href


def test_fleet_sweep_forecasts_every_cluster_and_names_the_one_left_out(browser, dashboard,
                                                                         downloads):
    browser.get(dashboard.url + "/what-if?cluster=history&tab=sweeps")
    waiter = wait(browser, 60)
    waiter.until(lambda d: d.find_element(By.ID, "wi-sw-kind"))
    choose(browser, "wi-sw-kind", "fleet")
    waiter.until(lambda d: d.find_element(By.ID, "wi-sw-end").is_displayed())
    assert browser.find_element(By.ID, "wi-sw-grid").get_attribute("value") == \
        "growth_pct_month=0,10; add_brokers=0,2"
    browser.find_element(By.ID, "wi-sw-end").send_keys("2024-01-30T23:00")
    browser.find_element(By.ID, "wi-sw-run").click()
    result = wait(browser, 300).until(
        lambda d: d.find_element(By.ID, "wi-sw-result").text
        or d.find_element(By.ID, "wi-sw-error").text)
    assert "rows in" in result, result
    assert "left out gone: Prometheus at http://127.0.0.1:9" in result
    bars = browser.execute_script(
        "return document.getElementById('wi-sw-chart').querySelector('.js-plotly-plot')"
        ".data.map(t => [t.type, t.name, t.x.length])")
    assert [b[0] for b in bars] == ["bar"] * 4, bars  # 2 growths x 2 added broker counts
    assert {b[1] for b in bars} == {f"growth_pct_month={g}, add_brokers={a}"
                                    for g in (0.0, 10.0) for a in (0, 2)}
    browser.find_element(By.ID, "wi-sw-download-button").click()
    lines = wait_download(downloads, ".csv").read_text().splitlines()
    header = lines[0].split(",")
    assert {"cluster", "scope", "days", "brokers_to_add", "growth_pct_month"} <= set(header)
    clusters = {line.split(",")[header.index("cluster")] for line in lines[1:]}
    assert clusters == {"history"}
    screenshot(browser, "what-if-fleet-sweep")
    assert not console_errors(browser)
