"""The dashboard against a real stack: `railyard demo` (the twin at x10 with the demo
scenario, its exporters, Prometheus scraping them every second, a second Prometheus
serving the backfilled incident hour) in headless chromium. The fixture stops the stack
and checks nothing it started is left running."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By

from backend.twin.examples import demo_snapshot
from tests.e2e.conftest import (
    console_errors,
    figure_view,
    inside,
    screenshot,
    sign_in,
    start_demo,
    stop_demo,
    wait,
)

pytestmark = pytest.mark.e2e

ROUTES = {"overview": "/", "brokers": "/brokers", "throttles": "/throttles",
          "quotas": "/quotas", "what-if": "/what-if"}
INCIDENT = "cluster=incident&range=abs&from=2024-01-01T00:00&to=2024-01-01T01:00"

# what a plotly chart shows: its traces' first x value and the x-axis range
CHART = """
const g = document.querySelector(arguments[0] + ' .js-plotly-plot');
if (!g || !g.data || !g.layout || !g.layout.xaxis) { return null; }
const xs = g.data.filter(t => t.x && t.x.length).map(t => String(t.x[0]));
return {traces: xs.length, first_x: xs.sort()[0] || null, range: g.layout.xaxis.range,
        title: g.layout.title ? g.layout.title.text : ''};
"""


@pytest.fixture(scope="module")
def demo(tmp_path_factory, browser):
    tmp: Path = tmp_path_factory.mktemp("demo")
    d = start_demo(tmp)
    try:
        sign_in(browser, d.url, *d.user("operator"))  # the demo runs with sign-in on
        yield d
    finally:
        stop_demo(d)


def chart(browser, css: str) -> dict | None:
    return browser.execute_script(CHART, css)


def wait_chart(browser, css: str, predicate, timeout: float = 60) -> dict:
    """Wait until the chart's state satisfies ``predicate``; return that state."""
    seen = {}

    def ok(b):
        seen["c"] = chart(b, css)
        return seen["c"] is not None and predicate(seen["c"])
    try:
        wait(browser, timeout, poll_frequency=0.2).until(ok)
    except Exception:
        raise AssertionError(f"{css}: chart never matched, last seen {seen.get('c')}") from None
    return seen["c"]


def card_value(browser, label: str) -> str:
    """The value of the card with this label, read in one step in the page: the cards are
    drawn again on every refresh, and an element found first and read after could be gone
    (StaleElementReferenceException). "" while no such card is shown."""
    xpath = f"//div[contains(concat(' ', @class, ' '), ' card ')]" \
            f"[.//div[@class='card-label'][contains(., '{label}')]]//div[@class='card-value']"
    return browser.execute_script(
        "const e = document.evaluate(arguments[0], document, null, "
        "XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue;"
        "return e ? e.innerText.trim() : '';", xpath)


def test_a_plan_marker_at_the_right_edge_is_drawn_whole(browser, demo):
    """The demo proposes plan 1 as it starts: its marker sits at the right edge of the
    last hour, and its label reads leftwards instead of running off the chart."""
    browser.get(demo.url + "/?cluster=demo&range=1h")
    wait_chart(browser, "#ov-health-series", lambda c: c["traces"] > 0)
    drawn = wait(browser, 30, poll_frequency=0.5).until(
        lambda b: [n for n in figure_view(b, "#ov-health-series")["notes"]
                   if n["text"] == "#1 proposed"] and figure_view(b, "#ov-health-series"))
    [label] = [n for n in drawn["notes"] if n["text"] == "#1 proposed"]
    assert inside(label["box"], drawn["svg"]), drawn


def test_the_incident_cluster_live_says_why_its_cards_are_empty(browser, demo):
    """Its metrics end at 2024-01-01 01:00: every health card says so, as the banner does,
    instead of guessing that the brokers do not export the metric."""
    browser.get(demo.url + "/?cluster=incident")
    wait(browser, 60, poll_frequency=0.5).until(
        lambda b: "metrics end at 2024-01-01 01:00 UTC" in b.find_element(
            By.ID, "ov-health").text)
    cards = browser.find_element(By.ID, "ov-health").text
    assert "do not export" not in cards
    assert cards.count("the cluster's metrics end at 2024-01-01 01:00 UTC") == 7, cards
    assert "Throttles in force (brokers)" in cards
    browser.find_element(By.ID, "jump-to-data").click()  # the banner's link: real figures
    # the cards are drawn again as the new range's figures arrive: one found just before
    # may be gone, and is looked up afresh
    wait(browser, 60).until(
        lambda b: "metrics end" not in b.find_element(By.ID, "ov-health").text
        and card_value(b, "Under-replicated") not in ("", "no data"))


def test_the_demos_throttled_move_is_not_listed_as_leftover(browser, demo):
    """The demo scenario's move (kafka-reassign-partitions --throttle, broker 3 to 9)
    holds its throttles while it moves: shown apart, with their unit, not as leftovers."""
    browser.get(demo.url + "/?cluster=demo")
    wait(browser, 60, poll_frequency=0.5).until(
        lambda b: card_value(b, "Reassigning") not in ("", "-", "0", "no data"))
    panel = wait(browser, 60, poll_frequency=0.5).until(
        lambda b: [e for e in b.find_elements(By.ID, "ov-leftovers") if "reassignment in "
                   "flight that Railyard did not start" in e.text])[0]
    apart = panel.text.split("reassignment in flight that Railyard did not start")[1]
    assert "broker 9" in apart and "leader.replication.throttled.rate" in apart
    assert "1000000 (1 MB/s)" in apart
    for table in browser.find_elements(By.ID, "ov-leftover-table"):
        assert "broker 9" not in table.text and "broker 3" not in table.text


@pytest.mark.parametrize("name", list(ROUTES))
def test_every_route_on_the_live_stack_without_console_errors(browser, demo, name):
    console_errors(browser)
    browser.get(demo.url + ROUTES[name])
    wait(browser, 30).until(lambda b: b.find_elements(By.CSS_SELECTOR, "h1"))
    if name != "what-if":  # monitoring pages: wait for their first chart with data
        first = {"overview": "#ov-health-series", "brokers": "#br-bytes",
                 "throttles": "#th-rates-series", "quotas": "#qu-tokens-series"}[name]
        wait_chart(browser, first, lambda c: c["traces"] > 0)
    time.sleep(1)
    screenshot(browser, name)
    assert "Traceback" not in browser.page_source
    assert console_errors(browser) == []


def test_live_guard_rails_show_the_scenario(browser, demo):
    """The demo's move of 150 partitions under a 1 MB/s throttle shows on the overview and
    /throttles; tenant-a's quota shows on /quotas."""
    browser.get(demo.url + "/")
    wait(browser, 60, poll_frequency=0.5).until(
        lambda b: card_value(b, "Reassigning") not in ("", "-", "0", "no data"))
    assert 0 < int(card_value(browser, "Reassigning")) <= 150
    assert card_value(browser, "Throttles in force") != "0"
    browser.get(demo.url + "/throttles")
    # predicted (throttle engine, from the gateway) and observed (Prometheus) side by side;
    # the observed one, in the move's first 2 min, measuring how fast the bytes left shrink
    wait(browser, 60, poll_frequency=0.5).until(
        lambda b: all(s in b.find_element(By.ID, "th-eta").text
                      for s in ("moves at 1.00 MB/s", "Observed ETA", "MB left")))
    # both KIP-73 rates the move set (--throttle sets leader and follower) are drawn, and
    # the legend says their value
    rates = figure_view(browser, "#th-rates")
    ticks = {t["name"]: max(v for v in t["y"] if v is not None) for t in rates["traces"]
             if "replication.throttled.rate" in t["name"]}
    assert ticks == {"leader.replication.throttled.rate = 1 MB/s": 1e6,
                     "follower.replication.throttled.rate = 1 MB/s": 1e6}, rates
    browser.get(demo.url + "/quotas")
    wait_chart(browser, "#qu-tokens", lambda c: True)
    wait(browser, 60, poll_frequency=0.5).until(
        lambda b: "tenant-a" in b.find_element(By.ID, "qu-throttled-now").text)
    assert console_errors(browser) == []


def test_time_range_change_changes_what_the_charts_show(browser, demo):
    # live on the demo: the last 15 minutes; then 1 h: the axis spans an hour, in place
    browser.get(demo.url + "/?cluster=demo")
    live = wait_chart(browser, "#ov-health-series", lambda c: c["traces"] > 0)
    assert "last 15 min" in live["title"]
    browser.find_element(By.CSS_SELECTOR, "#range input[value='1h']").click()
    hour = wait_chart(browser, "#ov-health-series", lambda c: "last 1 h" in c["title"], 30)
    assert hour["range"] != live["range"]
    assert "range=1h" in browser.current_url
    # the incident cluster live: nothing recorded now; an absolute range over the
    # backfilled hour: the recorded incident, broker 3 crossing its limit
    browser.get(demo.url + "/?cluster=incident")
    wait_chart(browser, "#ov-partitions-series", lambda c: c["traces"] == 0)
    # ... and the page says where the data is, with a link that goes there
    jump = wait(browser, 60, poll_frequency=0.5).until(
        lambda b: b.find_elements(By.ID, "jump-to-data"))[0]
    assert "metrics end at 2024-01-01" in jump.find_element(By.XPATH, "..").text
    jump.click()
    wait_chart(browser, "#ov-partitions-series",
               lambda c: c["traces"] == 6 and c["first_x"].startswith("2024-01-01"))
    assert "range=abs" in browser.current_url
    browser.get(demo.url + "/?cluster=incident")  # and by hand, typing the range
    wait_chart(browser, "#ov-partitions-series", lambda c: c["traces"] == 0)
    browser.find_element(By.CSS_SELECTOR, "#range input[value='abs']").click()
    start = browser.find_element(By.ID, "range-from")
    end = browser.find_element(By.ID, "range-to")
    for element, text in ((start, "2024-01-01T00:00"), (end, "2024-01-01T01:00")):
        element.clear()
        element.send_keys(text)
    browser.find_element(By.ID, "range-apply").click()
    incident = wait_chart(browser, "#ov-partitions-series",
                          lambda c: c["traces"] == 6 and c["first_x"].startswith("2024-01-01"))
    assert incident["range"][0].startswith("2024-01-01 00:00")
    assert "from=2024-01-01T00%3A00" in browser.current_url or \
        "from=2024-01-01T00:00" in browser.current_url
    # every figure is of the window's end: broker 3 holds 190 of 180 at 01:00, so the
    # limit cards and bars say so, and say where they come from
    wait(browser, 60, poll_frequency=0.5).until(
        lambda b: card_value(b, "Brokers over the limit") == "1")
    bars = wait_chart(browser, "#ov-broker-bars", lambda c: c["traces"] > 0)
    assert "from Prometheus at 2024-01-01 01:00" in bars["title"], bars
    screenshot(browser, "overview-incident-review")
    # a link to the view reproduces it
    browser.get(demo.url + "/throttles?" + INCIDENT)
    wait_chart(browser, "#th-lag", lambda c: c["traces"] > 0
               and c["first_x"].startswith("2024-01-01"))
    screenshot(browser, "throttles-incident-review")
    browser.get(demo.url + "/quotas?" + INCIDENT)
    wait_chart(browser, "#qu-tokens-series", lambda c: c["traces"] > 0
               and c["first_x"].startswith("2024-01-01"))
    screenshot(browser, "quotas-incident-review")
    assert console_errors(browser) == []


def test_every_limit_line_says_its_value(browser, demo):
    """A dashed line an operator has to hover to identify is no guard rail: the limit line
    over the replicas series says which limit it is and its value, on every page."""
    limit = f"max.broker.partitions = {demo_snapshot().limits.max_broker_partitions:,}"
    for path, css in (("/brokers", "#br-partitions"), ("/", "#ov-partitions-series")):
        browser.get(demo.url + path)
        wait_chart(browser, css, lambda c: c["traces"] > 0)
        assert limit in figure_view(browser, css)["annotations"], (path, limit)
    # the configured throttle rates (1 MB/s in the demo) are written beside their lines
    browser.get(demo.url + "/throttles")
    wait_chart(browser, "#th-rates", lambda c: c["traces"] > 0)
    rates = figure_view(browser, "#th-rates")
    written = rates["annotations"] + [t["name"] for t in rates["traces"]] + [
        t for tr in rates["traces"] for t in (tr["text"] or []) if isinstance(t, str)]
    assert any("throttled.rate = 1 MB/s" in t for t in written), rates


RANGE_SHOWN = """
const picked = document.querySelector('#range input:checked');
return {range: picked ? picked.value : null,
        from: document.getElementById('range-from').value,
        to: document.getElementById('range-to').value,
        abs_hidden: document.getElementById('range-abs').hidden,
        nav: document.getElementById('nav-overview').getAttribute('href')};
"""


def test_back_brings_the_time_control_and_charts_back_to_the_urls_window(browser, demo):
    """The time control writes the URL with pushState and the page follows its view store:
    Back to the window the page was opened with left the control on "6 h" and the charts
    titled "last 6 h" (no data) under the URL of the incident hour, until a reload."""
    hour = "2024-01-01 00:00 to 2024-01-01 01:00 UTC"
    browser.get(demo.url + "/throttles?" + INCIDENT)
    wait_chart(browser, "#th-lag", lambda c: hour in c["title"] and c["traces"] > 0)
    browser.find_element(By.CSS_SELECTOR, "#range input[value='6h']").click()
    wait_chart(browser, "#th-lag", lambda c: "last 6 h" in c["title"], 30)
    assert "range=6h" in browser.current_url
    browser.back()
    wait(browser, 10).until(lambda b: "range=abs" in b.current_url)
    back = wait_chart(browser, "#th-lag", lambda c: hour in c["title"] and c["traces"] > 0, 30)
    assert back["first_x"].startswith("2024-01-01"), back
    shown = browser.execute_script(RANGE_SHOWN)
    assert shown["range"] == "abs" and not shown["abs_hidden"], shown
    assert (shown["from"], shown["to"]) == ("2024-01-01T00:00", "2024-01-01T01:00"), shown
    assert "range=abs" in shown["nav"] and "cluster=incident" in shown["nav"], shown
    browser.forward()  # and Forward to the 6 h again
    wait(browser, 10).until(lambda b: "range=6h" in b.current_url)
    wait_chart(browser, "#th-lag", lambda c: "last 6 h" in c["title"], 30)
    assert browser.execute_script(RANGE_SHOWN)["range"] == "6h"
    assert console_errors(browser) == []


# header words drawn over two lines ("replic|as") or cut off, and cells whose value is cut
# ("4.21 ..."), in the grid under arguments[0]; columns in arguments[1] are free text,
# cut when long and shown whole on hover
GRID_CUT = """
const grid = arguments[0], free = arguments[1], cut = [];
for (const e of document.querySelectorAll(grid + ' .ag-header-cell-text')) {
  if (e.scrollWidth > e.clientWidth + 1) { cut.push('header cut: ' + e.textContent); }
  const text = e.firstChild;
  if (!text || text.nodeType !== Node.TEXT_NODE) { continue; }
  for (const m of text.data.matchAll(/\\S+/g)) {
    const r = document.createRange();
    r.setStart(text, m.index);
    r.setEnd(text, m.index + m[0].length);
    const lines = new Set(Array.from(r.getClientRects()).map(b => Math.round(b.top)));
    if (lines.size > 1) { cut.push('word broken: ' + m[0]); }
  }
}
for (const c of document.querySelectorAll(grid + ' .ag-center-cols-container .ag-cell')) {
  if (!free.includes(c.getAttribute('col-id')) && c.scrollWidth > c.clientWidth + 1) {
    cut.push('value cut: ' + c.getAttribute('col-id') + ' ' + c.textContent);
  }
}
const view = document.querySelector(grid + ' .ag-center-cols-viewport');
if (view.scrollWidth > view.clientWidth + 1) { cut.push('scrolls sideways'); }
return cut;
"""


def test_grids_keep_header_words_and_values_whole(browser, demo):
    """At 1024 px the brokers grid broke its headers mid-word ("replic as", "headr oom")
    and cut its byte rates ("4.21 ..."); at 1400 px the queue's last column ran off the
    grid ("pause reas"). Now every header wraps between words, even with a column sorted,
    and every value shows whole, the grid as wide as the page."""
    size = browser.get_window_size()
    try:
        browser.set_window_size(1024, 768)
        browser.get(demo.url + "/brokers?cluster=demo")
        wait(browser, 60, poll_frequency=0.5).until(lambda b: all(
            "B/s" in e.text for e in b.find_elements(
                By.CSS_SELECTOR, "#br-grid .ag-center-cols-container [col-id='bytes_in']"))
            and b.find_elements(By.CSS_SELECTOR, "#br-grid .ag-row"))
        time.sleep(0.5)  # the grid sizes its columns to the panel once its rows are in
        assert browser.execute_script(GRID_CUT, "#br-grid", []) == []
        screenshot(browser, "brokers-grid-1024")
        browser.find_element(By.CSS_SELECTOR, "#br-grid .ag-header-cell[col-id='headroom'] "
                                              ".ag-header-cell-label").click()
        wait(browser, 10).until(lambda b: b.find_elements(
            By.CSS_SELECTOR, "#br-grid .ag-header-cell[col-id='headroom'] .ag-icon-asc"))
        time.sleep(0.3)
        assert browser.execute_script(GRID_CUT, "#br-grid", []) == []
        browser.set_window_size(1400, 900)
        browser.get(demo.url + "/queue")  # the demo proposes plan 1 as it starts
        wait(browser, 60, poll_frequency=0.5).until(lambda b: b.find_elements(
            By.CSS_SELECTOR, "#qu-grid .ag-center-cols-container .ag-row"))
        time.sleep(0.5)
        free = ["title", "schedule", "execution", "pause_reason"]
        assert browser.execute_script(GRID_CUT, "#qu-grid", free) == []
        screenshot(browser, "queue-grid-1400")
    finally:
        browser.set_window_size(size["width"], size["height"])
    assert console_errors(browser) == []
