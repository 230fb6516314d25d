"""Issue 26 in headless chromium, on the demo twin (over HTTP) 60 s into its scenario, while
150 partitions move off broker 3 to broker 9 under a 1 MB/s throttle:

- item 1: /reassignments, goal drain, brokers 9, Preview: the moving partitions are left
  out (the grid has none of them, none with 4 replicas) and the words say which and why;
- item 11: that drain cannot empty broker 9, so its title says partial, and the fullest
  broker left at its limit (headroom 0) is an amber card, not a normal one;
- item 10: the what-if sweep's "Workload (limits)" field shows for limits sweeps only."""

from __future__ import annotations

from pathlib import Path

import pytest
from selenium.webdriver.common.by import By

from backend.model.io import save_snapshot
from backend.twin.api import TwinApi
from backend.twin.cluster import TwinCluster
from backend.twin.examples import DEMO_SCENARIO, demo_snapshot
from backend.twin.gateway import TwinGateway
from backend.twin.scenario import ScenarioRunner, load_scenario
from tests.e2e.conftest import choose, console_errors, screenshot, start_dashboard, stop, wait

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def moving_twin():
    sc = load_scenario(DEMO_SCENARIO)
    twin = TwinCluster(demo_snapshot(), sc.settings)
    ScenarioRunner(twin, sc).advance_to(60)  # the throttled move 3 -> 9 is in flight
    api = TwinApi(TwinGateway(twin)).start()
    try:
        yield twin, api.url
    finally:
        api.stop()


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory, moving_twin):
    tmp: Path = tmp_path_factory.mktemp("in-flight")
    save_snapshot(demo_snapshot(), tmp / "demo.parquet")
    config = {"clusters": [{"name": "demo", "gateway": {"type": "twin", "url": moving_twin[1]},
                            "snapshot": str(tmp / "demo.parquet")}]}
    d = start_dashboard(tmp, config)
    try:
        yield d
    finally:
        stop(d.proc)



def test_a_drain_preview_leaves_the_moving_partitions_out(browser, dashboard, moving_twin):
    twin, _ = moving_twin
    moving = twin.list_reassignments()
    assert len(moving) == 150
    console_errors(browser)
    browser.get(dashboard.url + "/reassignments?cluster=demo")
    wait(browser).until(lambda d: d.find_elements(By.ID, "ra-run"))
    choose(browser, "ra-goal", "drain")
    browser.find_element(By.ID, "ra-brokers").send_keys("9")
    browser.find_element(By.ID, "ra-run").click()
    wait(browser).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#plan-grid .ag-row"))
    title = browser.find_element(By.CSS_SELECTOR, "#ra-preview .plan-title").text
    assert title.startswith("partial drain 9: ") and title.endswith(" moves on demo"), title
    words = browser.find_element(By.ID, "plan-words").text
    assert "Left out, already moving: 150 partitions, counted at their targets" in words
    first = moving[0]
    name = f"{first['topic']}-{first['partition']}"
    shown = ",".join(map(str, first["replicas"]))
    target = ",".join(map(str, [b for b in first["replicas"] if b not in first["removing"]]))
    assert f"{name} {shown} -> {target}" in words, words
    assert "broker 9 keeps" in words and "150 in partitions already moving" in words, words
    # no grid row for a moving partition, and no row with 4 replicas
    rows = browser.find_elements(By.CSS_SELECTOR, "#plan-grid .ag-row")
    befores = [r.find_element(By.CSS_SELECTOR, "[col-id='before']").text for r in rows]
    assert befores and all(len(b.split(", ")) == 3 for b in befores), befores
    browser.find_element(By.ID, "plan-filter").send_keys(name)

    def filtered(d) -> tuple[list[str]] | None:  # the grid once the filter applied
        parts = [e.text for e in d.find_elements(
            By.CSS_SELECTOR, "#plan-grid .ag-row [col-id='partition']")]
        return (parts,) if all(name in p for p in parts) else None
    (parts,) = wait(browser, 30).until(filtered)
    assert name not in parts, parts
    # headroom 0 on the fullest broker: an amber card
    cards = browser.find_elements(By.CSS_SELECTOR, "#plan-cards .card")
    headroom = next(c for c in cards if "Headroom after" in c.text)
    assert "0 replicas" in headroom.text and "card-near" in headroom.get_attribute("class")
    screenshot(browser, "issue26-partial-drain-in-flight")
    assert console_errors(browser) == []


def test_the_workload_field_is_for_limits_sweeps_only(browser, dashboard):
    browser.get(dashboard.url + "/what-if?tab=sweeps&cluster=demo")
    field = wait(browser).until(lambda d: d.find_element(By.ID, "wi-sw-workload-field"))
    assert field.is_displayed()
    choose(browser, "wi-sw-kind", "throttle")
    wait(browser, 20).until(lambda d: not d.find_element(By.ID,
                                                         "wi-sw-workload-field").is_displayed())
    assert "throttle=" in browser.find_element(By.ID, "wi-sw-grid").get_attribute("value")
    choose(browser, "wi-sw-kind", "limits")
    wait(browser, 20).until(lambda d: d.find_element(By.ID,
                                                     "wi-sw-workload-field").is_displayed())
    assert console_errors(browser) == []
