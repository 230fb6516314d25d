"""The dashboard in headless chromium: every route, a what-if round trip, a Spark sweep
with its progress bar, the time range in the URL, and the Prometheus-down banner."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec

from backend.model.io import save_snapshot
from backend.twin.examples import demo_snapshot
from tests.e2e.conftest import (
    console_errors,
    figure_view,
    inside,
    overlap,
    screenshot,
    start_dashboard,
    stop,
    texts_overlapping,
    type_into,
    wait,
    wait_download,
)

pytestmark = pytest.mark.e2e

ROUTES = {"overview": "/", "brokers": "/brokers", "throttles": "/throttles",
          "quotas": "/quotas", "what-if": "/what-if"}


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory):
    tmp: Path = tmp_path_factory.mktemp("dashboard")
    save_snapshot(demo_snapshot(), tmp / "demo.parquet")
    dead = "http://127.0.0.1:9"  # discard port: nothing listens, Prometheus is "down"
    config = {"clusters": [
        {"name": "demo", "gateway": {"type": "twin", "url": "http://127.0.0.1:9"},
         "snapshot": str(tmp / "demo.parquet"),
         "prometheus": {"url": dead, "dialect": "strimzi"}},
        {"name": "staging", "gateway": {"type": "kafka", "timeout_seconds": 2,
                                        "bootstrap_servers": ["127.0.0.1:9"]}},
    ], "spark": {"master": "local[1]"}}
    d = start_dashboard(tmp, config, warm_spark=True)
    try:
        yield d
    finally:
        stop(d.proc)


def wait_for(browser, css: str, timeout: float = 20):
    return wait(browser, timeout).until(
        ec.presence_of_element_located((By.CSS_SELECTOR, css)))


def wait_text(browser, css: str, text: str, timeout: float = 30):
    wait(browser, timeout).until(ec.text_to_be_present_in_element(
        (By.CSS_SELECTOR, css), text))


@pytest.mark.parametrize("name", list(ROUTES))
def test_every_route_loads_without_console_errors(browser, dashboard, name):
    console_errors(browser)
    browser.get(dashboard.url + ROUTES[name])
    wait_for(browser, "h1")
    time.sleep(2)  # let the page's callbacks answer
    screenshot(browser, f"{name}-prometheus-down")
    assert "Traceback" not in browser.page_source
    assert console_errors(browser) == []


def test_prometheus_down_banner(browser, dashboard):
    browser.get(dashboard.url + "/")
    wait_text(browser, "#ov-banners", "Prometheus at http://127.0.0.1:9: unreachable")
    # the page still shows the guard rails it can: the limit bars from the assignment
    wait_for(browser, "#ov-broker-bars .bar, #ov-broker-bars .barlayer")
    limit = demo_snapshot().limits.max_broker_partitions
    assert f"max.broker.partitions = {limit:,}" in browser.find_element(
        By.ID, "ov-broker-bars").text
    # brokers 2 and 3 are within 10% of the limit: their value labels and the limit's own
    # label are all readable, none drawn over another
    drawn = texts_overlapping(browser, "#ov-broker-bars")
    assert drawn["count"] > 9 and drawn["pairs"] == [], drawn
    # nor does the limit line strike through a bar's label
    struck = browser.execute_script("""
        const g = document.querySelector('#ov-broker-bars .js-plotly-plot');
        const line = g.querySelector('.shapelayer path').getBoundingClientRect();
        return Array.from(g.querySelectorAll('.bartext')).filter(t => {
            const r = t.getBoundingClientRect();
            return r.top < line.bottom && line.top < r.bottom; }).map(t => t.textContent);""")
    assert struck == [], struck
    # the twin gateway does not answer either: the assignment comes from the file, and says so
    wait_text(browser, "#ov-banners", "Twin at http://127.0.0.1:9: unreachable")
    assert "showing the assignment in" in browser.find_element(By.ID, "ov-banners").text


def test_cluster_without_sources_says_so(browser, dashboard):
    browser.get(dashboard.url + "/?cluster=staging")
    wait_text(browser, "#ov-banners", "Kafka at 127.0.0.1:9: KafkaTimeoutError: Unable to "
                                      "bootstrap")
    assert "no Prometheus configured" in browser.find_element(By.ID, "ov-banners").text


@pytest.mark.parametrize("route", ["/", "/throttles", "/quotas", "/brokers"])
def test_unknown_cluster_is_an_error_the_page_states(browser, dashboard, route):
    browser.get(dashboard.url + route + "?cluster=nope")
    wait_text(browser, "#unknown-cluster", "No cluster is called 'nope'")
    assert "clusters: demo, staging" in browser.find_element(By.ID, "unknown-cluster").text
    picker = browser.find_element(By.ID, "cluster-picker")
    assert picker.text.strip() == "demo"  # the picker shows the cluster the page does


def test_clicking_a_broker_row_selects_it_and_the_url_keeps_it(browser, dashboard):
    browser.get(dashboard.url + "/brokers?cluster=demo")
    row = wait_for(browser, "#br-grid .ag-row[row-id='5'] .ag-cell", timeout=60)
    row.click()
    wait_text(browser, "#br-selected", "Broker 5 (rack")
    wait(browser, 20).until(lambda b: "broker=5" in b.current_url)
    # the link shows the same broker to whoever opens it
    browser.get(browser.current_url)
    wait_text(browser, "#br-selected", "Broker 5 (rack", timeout=60)
    assert "fullest broker" not in browser.find_element(By.ID, "br-selected").text


def test_an_unreadable_typed_time_is_named(browser, dashboard):
    browser.get(dashboard.url + "/brokers?cluster=demo")
    wait_for(browser, "#range input[value='abs']").click()
    start = wait_for(browser, "#range-from")
    start.clear()
    start.send_keys("yesterday 3am")
    browser.find_element(By.ID, "range-apply").click()
    wait_text(browser, "#range-error", "from: could not read 'yesterday 3am' as a date and time")
    assert "yesterday" not in browser.current_url  # nothing applied
    # a window after now: said once, not "no data yet" on every chart
    type_into(start, "2099-01-01T00:00")
    type_into(browser.find_element(By.ID, "range-to"), "2099-01-02T00:00")
    browser.find_element(By.ID, "range-apply").click()
    wait_text(browser, "#range-error", "from: 2099-01-01T00:00 UTC has not happened yet")
    assert "2099" not in browser.current_url
    # a time before the epoch: the server's words, not "could not read"
    type_into(start, "1960-01-01T00:00")
    browser.find_element(By.ID, "range-apply").click()
    wait_text(browser, "#range-error",
              "from: 1960-01-01T00:00 is not a time between 1970 and 9999 (UTC)")
    # a window of 54 years: refused in the browser with the server's words
    type_into(start, "1970-01-01T00:00")
    type_into(browser.find_element(By.ID, "range-to"), "2024-01-01T00:00")
    browser.find_element(By.ID, "range-apply").click()
    wait_text(browser, "#range-error", "from and to: give a window from 1 minute to 366 days long")
    assert "1970" not in browser.current_url


TYPED_TIMES = ["2024-05-01", "2024-05-01T12:00", "2024-05-01 12:00:30.5", "2024-05-01T12:00Z",
               "2024-05-01T12:00+02:00", "2024-05-01T12:00-0130", "1714564800", "1714564800.25",
               "2024-02-30T00:00", "2023-02-29", "2024-02-29", "2024-13-01", "2024-05-01T24:00",
               "2024-05-01T12:60", "-5", "1e9", "nan", "inf", "1_000",
               "\u0662\u0660\u0662\u0664-05-01",  # Arabic-Indic digits
               "1969-12-31T23:59", "9999-12-31T23:59", "10000-01-01", "99999999999999",
               "2024-05-01T12", "yesterday", " 2024-05-01T12:00 ", ""]


def test_the_browser_reads_typed_times_as_the_server_does(browser, dashboard):
    """The time control checks a range in the browser (assets/railyard.js parseTime) and the
    server reads the URL (components.timerange.parse_time): Date.parse took 2024-02-30 for
    1 March and "-5" for a year, and the server refused what the browser had applied; the
    browser said "could not read" for a year past 9999, the server "not between"."""
    from backend.errors import BadInput
    from components.timerange import parse_time

    browser.get(dashboard.url + "/brokers?cluster=demo")
    wait_for(browser, "#range")
    browser_reads = browser.execute_script(
        "return arguments[0].map(t => { const v = parseTime(t);"
        " return [isNaN(v) ? null : v, timeError('from', t)]; });", TYPED_TIMES)
    for text, (ms, refusal) in zip(TYPED_TIMES, browser_reads, strict=True):
        try:
            server_ms, server_refusal = parse_time(text, "from") * 1000, ""
        except BadInput as e:
            server_ms, server_refusal = None, str(e)
        assert ms == server_ms, text
        assert refusal == server_refusal, text  # and in the same words


def test_time_range_lives_in_the_url(browser, dashboard):
    browser.get(dashboard.url + "/brokers?cluster=demo")
    wait_for(browser, "#br-grid .ag-row", timeout=60)  # the page's callbacks are live
    browser.find_element(By.CSS_SELECTOR, "#range input[value='6h']").click()
    wait(browser, 30).until(lambda b: "range=6h" in b.current_url)
    # the link reproduces the view: open it afresh and the control shows 6 h
    link = browser.current_url
    browser.get(link)
    wait_for(browser, "#range")
    assert browser.find_element(By.CSS_SELECTOR, "#range input[value='6h']").is_selected()
    nav = browser.find_element(By.ID, "nav-overview").get_attribute("href")
    assert "range=6h" in nav and "cluster=demo" in nav


def test_limits_whatif_round_trip(browser, dashboard):
    browser.get(dashboard.url + "/what-if")
    wait_for(browser, "#wi-lim-run")
    type_into(browser.find_element(By.ID, "wi-lim-topic"), "payments-v2")
    browser.find_element(By.ID, "wi-lim-run").click()
    wait_text(browser, "#wi-lim-verdict", "Accepted: payments-v2")
    wait_for(browser, "#wi-lim-placement .ag-row")
    # bad input: one line beside the form, no stack trace
    parts = browser.find_element(By.ID, "wi-lim-partitions")
    type_into(parts, "0")
    browser.find_element(By.ID, "wi-lim-run").click()
    wait_text(browser, "#wi-lim-error", "partitions: give a whole number of at least 1, got 0")
    type_into(parts, "2.5")  # a number field sent None for it: the placement crashed
    browser.find_element(By.ID, "wi-lim-run").click()
    wait_text(browser, "#wi-lim-error", "partitions: give a whole number of at least 1, got 2.5")
    # a name Kafka refuses: the same line, naming the field and the character
    type_into(parts, "24")
    type_into(browser.find_element(By.ID, "wi-lim-topic"), "payments v2")
    browser.find_element(By.ID, "wi-lim-run").click()
    wait_text(browser, "#wi-lim-error", "topic: topic name 'payments v2' contains ' '")
    type_into(browser.find_element(By.ID, "wi-lim-topic"), "payments-v2")
    # a topic the limits refuse
    type_into(parts, "20000")
    browser.find_element(By.ID, "wi-lim-run").click()
    wait_text(browser, "#wi-lim-verdict", "Rejected")
    screenshot(browser, "what-if-limits")
    assert console_errors(browser) == []


def test_throttle_whatif_shows_eta_and_band(browser, dashboard):
    browser.get(dashboard.url + "/what-if?tab=throttle")
    wait_text(browser, "#wi-th-summary", "Predicted ETA", timeout=60)
    wait_text(browser, "#wi-th-plan-name", "balance plan")
    # every throttle tick says its unit (the log axis drew "2M", "5M" between "10MB/s"s)
    ticks = browser.execute_script("""return Array.from(document.querySelectorAll(
        '#wi-th-eta .xtick text')).map(t => t.textContent);""")
    assert len(ticks) >= 3 and all(t.endswith("B/s") for t in ticks), ticks
    screenshot(browser, "what-if-throttle")


def test_throttle_typed_exactly_and_each_eta_says_what_it_assumes(browser, dashboard):
    browser.get(dashboard.url + "/what-if?tab=throttle")
    wait_text(browser, "#wi-th-summary", "Predicted ETA", timeout=60)
    # the slider keeps its width beside the box: its marks and the label readable apart
    drawn = browser.execute_script("""
        const row = document.querySelector('#wi-th-rate').closest('.slider-row');
        const leaves = Array.from(row.querySelectorAll('*')).filter(e =>
            e.children.length === 0 && e.textContent.trim() && e.getClientRects().length);
        const boxes = leaves.map(e => { const r = e.getBoundingClientRect();
            return {text: e.textContent.trim(), box: [r.left, r.top, r.right, r.bottom]}; });
        const slider = document.querySelector('#wi-th-rate').getBoundingClientRect();
        return {boxes: boxes, width: slider.width};""")
    assert drawn["width"] >= 300, drawn
    texts = drawn["boxes"]
    assert len(texts) >= 4, texts  # the label, the marks, the unit
    for i, a in enumerate(texts):
        for b in texts[i + 1:]:
            assert not overlap(a["box"], b["box"]), (a, b)
    box = wait_for(browser, "#wi-th-rate-exact")
    type_into(box, "5")
    box.send_keys(Keys.ENTER)
    # the slider follows the box (log10 of 5,000,000 B/s) and the cards use the exact rate
    wait(browser, 30).until(lambda b: (b.find_element(
        By.CSS_SELECTOR, "#wi-th-rate [role=slider]").get_attribute("aria-valuenow") or "")
        .startswith("6.69"))
    wait_text(browser, "#wi-th-summary", "KIP-73's cluster-wide estimate")
    # the two ETAs differ by design, and the card says why (one broker vs all at once)
    wait_text(browser, "#wi-th-summary", "as if one broker copied it all")
    summary = browser.find_element(By.ID, "wi-th-summary").text
    eta, kip73 = (summary.split(title + "\n", 1)[1].split("\n", 1)[0]
                  for title in ("Predicted ETA", "KIP-73 move time"))
    if kip73 == "never" and eta != "never":  # the two disagree by definition: say why
        assert "counts only the writes into the moving partitions" in summary, summary


def test_sweep_runs_on_spark_with_progress(browser, dashboard, downloads):
    browser.get(dashboard.url + "/what-if?tab=sweeps")
    wait_for(browser, "#wi-sw-run").click()
    # while it runs: Run is disabled, Cancel enabled, the progress bar moves
    wait(browser, 120).until(
        lambda b: b.find_element(By.ID, "wi-sw-cancel").is_enabled())
    seen = set()
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        seen.add(browser.find_element(By.ID, "wi-sw-progress-text").text)
        if "rows in" in browser.find_element(By.ID, "wi-sw-result").text:
            break
        time.sleep(0.3)
    assert any("Spark tasks" in s or "preparing" in s or "starting" in s for s in seen), seen
    # 5 limit values x 3 broker counts
    wait_text(browser, "#wi-sw-result", "15 rows in", timeout=120)
    wait_for(browser, "#wi-sw-table .ag-row")
    browser.find_element(By.ID, "wi-sw-download-button").click()
    rows = wait_download(downloads, ".csv").read_text().splitlines()
    assert len(rows) == 1 + 15, rows  # a header and the 15 scenarios
    assert rows[0].startswith("scenario,max_broker_partitions,"), rows[0]
    # lists of names (rejected topics) as "a, b", not Python's "['orders']" or "[]"
    assert "rejected" in rows[0] and not any("[" in r for r in rows[1:]), rows
    chart = figure_view(browser, "#wi-sw-chart")
    # the chart's title and its y-axis title are both readable (not drawn over each other)
    assert chart["title"] and chart["ytitle"] and not overlap(chart["title"], chart["ytitle"]), \
        chart
    # a line under an equal one still shows: each is wider, with larger markers, than
    # every line drawn over it (add_brokers=0 under add_brokers=1 at the same answers)
    lines = chart["traces"]
    assert len(lines) == 3, lines
    for i, under in enumerate(lines):
        for over in lines[i + 1:]:
            assert under["width"] > over["width"] and under["size"] > over["size"], lines
    # the demo's racks are uneven once brokers are added: at its own limit, adding 2 brokers
    # leaves the fullest broker less room (Kafka's rack-aware round-robin), and the chart
    # says why instead of leaving an operator to guess
    note = next(n for n in chart["notes"] if "Less room with more brokers" in n["text"])
    assert "Each partition keeps one replica per rack" in note["text"], note
    assert "At 12,500:" in note["text"] and "The cluster's total room still grows" in \
        note["text"], note
    assert inside(note["box"], chart["svg"]), chart  # the whole note, not cut off
    for other in (chart["title"], chart["ytitle"], chart["legend"], chart["xtitle"]):
        assert not overlap(note["box"], other), chart
    screenshot(browser, "what-if-sweep")
    assert console_errors(browser) == []


def cancel_a_long_sweep(browser, url: str):
    """Start a 3,000-scenario sweep, cancel it once Spark reports tasks, and see the page
    say so with no result; returns the grid input for the next sweep."""
    browser.get(url + "/what-if?tab=sweeps")
    grid = wait_for(browser, "#wi-sw-grid")
    limits = ",".join(str(v) for v in range(8000, 14000, 20))  # 300 limit values
    type_into(grid, f"max.broker.partitions={limits};add_brokers=0,1,2,3,4,5,6,7,8,9")
    browser.find_element(By.ID, "wi-sw-run").click()
    wait_text(browser, "#wi-sw-progress-text", "Spark tasks", timeout=120)
    browser.find_element(By.ID, "wi-sw-cancel").click()
    wait_text(browser, "#wi-sw-error", "Sweep cancelled.", timeout=60)
    wait(browser, 20).until(lambda b: b.find_element(By.ID, "wi-sw-run").is_enabled())
    assert browser.find_element(By.ID, "wi-sw-result").text == ""
    assert not browser.find_element(By.ID, "wi-sw-download-button").is_enabled()
    return grid


def test_sweep_cancel_stops_the_spark_job(browser, dashboard):
    grid = cancel_a_long_sweep(browser, dashboard.url)
    # the warm session is not left broken: the next sweep runs to the end
    type_into(grid, "max.broker.partitions=12000,13000;add_brokers=0")
    browser.find_element(By.ID, "wi-sw-run").click()
    wait_text(browser, "#wi-sw-result", "2 rows in", timeout=120)
    assert console_errors(browser) == []


def test_quota_replay_writes_each_burst_once_and_names_the_zero_line(browser, dashboard):
    """The example workload's two principals share a burst of 55 (5/s x 11 samples x 1 s,
    KIP-599's defaults): one labelled line names both, and no label sits on another."""
    browser.get(dashboard.url + "/what-if?tab=quota")
    wait_for(browser, "#wi-qu-run").click()
    wait(browser, 60).until(lambda b: any(
        "burst" in t for t in (figure_view(b, "#wi-qu-bucket") or {}).get("annotations", [])))
    chart = figure_view(browser, "#wi-qu-bucket")
    bursts = [t for t in chart["annotations"] if t.startswith("burst")]
    assert len(bursts) == 1 and bursts[0].startswith("burst 55: "), chart["annotations"]
    assert len(bursts[0].split(": ", 1)[1].split(", ")) == 2, bursts
    assert "0 tokens: below it, requests are throttled" in chart["annotations"]
    drawn = chart["notes"]
    assert len(drawn) == len(chart["annotations"]), drawn
    for i, a in enumerate(drawn):
        for b in drawn[i + 1:]:
            assert not overlap(a["box"], b["box"]), (a, b)
    # tenant-a's bucket is drawn refilling after its last admitted request (at 11.8 s, from
    # 0 to -6 tokens), full again 61 / 5 = 12.2 s later, not flat until its next request
    line = browser.execute_script("""
        const d = document.querySelector('#wi-qu-bucket .js-plotly-plot')._fullData
            .find(t => t.name === 'tenant-a/provisioner');
        return [Array.from(d.x), Array.from(d.y)];""")
    refill = [(x, y) for x, y in zip(*line, strict=True) if 11.8 <= x <= 30]
    assert refill == [(11.8, 0), (11.8, -6), (24, 55)], refill
    screenshot(browser, "what-if-quota")
    assert console_errors(browser) == []


HEADERS_CUT = """
return Array.from(document.querySelectorAll(arguments[0] + ' .ag-header-cell-text'))
  .filter(e => e.scrollWidth > e.clientWidth || e.scrollHeight > e.clientHeight)
  .map(e => e.textContent);
"""


def test_broker_grid_headers_whole_and_counts_with_separators(browser, dashboard):
    browser.get(dashboard.url + "/brokers?cluster=demo")
    wait_for(browser, "#br-grid .ag-row[row-id='3'] .ag-cell", timeout=60)
    time.sleep(0.5)  # the grid sizes its columns to the panel once its rows are in
    headers = [e.text for e in browser.find_elements(By.CSS_SELECTOR,
                                                     "#br-grid .ag-header-cell-text")]
    assert "bytes in" in headers and "max lag (messages)" in headers, headers
    assert browser.execute_script(HEADERS_CUT, "#br-grid") == []  # none cut off
    snap = demo_snapshot()
    counts = dict(zip(snap.broker_ids.tolist(), snap.broker_replica_counts().tolist(),
                      strict=True))
    cell = browser.find_element(By.CSS_SELECTOR, "#br-grid .ag-row[row-id='3'] "
                                                 "[col-id='replicas']")
    assert counts[3] >= 1000 and cell.text == f"{counts[3]:,}", cell.text  # "12,104"
    # what it stores, as the plan page writes sizes (three figures: "115 GB", not "100.56")
    stored = dict(zip(snap.broker_ids.tolist(), snap.broker_bytes().tolist(), strict=True))
    size = browser.find_element(By.CSS_SELECTOR, "#br-grid .ag-row[row-id='3'] "
                                                 "[col-id='stored']").text
    assert size == f"{float(f'{stored[3] / 1e9:.3g}'):g} GB", (size, stored[3])
    # no figure from Prometheus here (it is down): the cell says so with a dash
    rate = browser.find_element(By.CSS_SELECTOR, "#br-grid .ag-row[row-id='3'] "
                                                 "[col-id='bytes_in']")
    assert rate.text == "-", rate.text
    screenshot(browser, "brokers-grid")
    assert console_errors(browser) == []


def test_a_chart_that_cannot_draw_says_why_in_full(browser, dashboard):
    """Prometheus is down: each broker chart says so, wrapped inside its panel (one long
    line was cut off at both ends: "rometheus at http://127.0.0.1:9: unreachable ...")."""
    browser.get(dashboard.url + "/brokers?cluster=demo")
    for css in ("#br-bytes", "#br-lag", "#br-partitions"):
        wait(browser, 60).until(lambda b, css=css: any(
            "unreachable" in n["text"] for n in (figure_view(b, css) or {}).get("notes", [])))
        chart = figure_view(browser, css)
        note = next(n for n in chart["notes"] if "unreachable" in n["text"])
        assert "Prometheus at http://127.0.0.1:9" in note["text"], note
        assert inside(note["box"], chart["svg"]), (css, note, chart["svg"])
