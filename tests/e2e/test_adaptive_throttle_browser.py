"""The adaptive throttle in the browser (issue 28): a plan proposed adaptive (ceiling 2 MB/s,
floor 0.5 MB/s) runs on a twin the dashboard changes through its HTTP API; this cluster
has no Prometheus, so its controller looks (every second here) and hears nothing: it holds
the rates, then drops every one to the floor, and says so. The operator opens the plan's
page: a chart per broker of the throttle over time (the ceiling, then the floor) beside
the ETA, the controller's note, and the button that switches the plan to fixed; after
the click the page says fixed, the audit log has the switch, and the twin's rates are the
ceiling again."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec

from backend.gateways.twin_http import TwinHttpGateway
from backend.model.snapshot import Snapshot
from tests.e2e.conftest import (
    click_during_a_refresh,
    console_errors,
    refreshes_landed,
    screenshot,
    serve_on_running_twin,
    shown_text,
    sign_in,
    slow_timer_answers,
)
from tests.e2e.conftest import wait as shared_wait
from tests.plan_helpers import api_call

pytestmark = pytest.mark.e2e

MB = 1_000_000
USERS = {"olga": ("operator", "o-pass-3"), "arne": ("approver", "a-pass-3")}
CEILING, FLOOR = 2 * MB, MB // 2
RATE = "leader.replication.throttled.rate"


def cluster() -> Snapshot:
    """Brokers 1-4, RF 2; orders: 4 partitions of 300 MB on [1, 2] (moved to [3, 4]:
    minutes at these rates)."""
    n = 4
    return Snapshot.build("adapt", [1, 2, 3, 4], [None] * 4, ["orders"], [0] * n,
                          np.arange(0, 2 * n + 1, 2), [0, 1] * n, part_size=[300 * MB] * n,
                          part_rate=[100.0] * n)


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    tmp: Path = tmp_path_factory.mktemp("adaptive-browser")
    with serve_on_running_twin(tmp, cluster(), {"name": "adapt", "adaptive_throttle": {
            "interval_seconds": 1, "hold_seconds": 3}}, USERS) as (twin, dashboard):
        yield {"url": dashboard.url, "gw": TwinHttpGateway(twin.api.url)}


def wait(driver, timeout: float = 90):
    """The panel is drawn again every 2 s while the plan executes: an element found just
    before is then gone, and is looked up afresh."""
    return shared_wait(driver, timeout)


def broker_rates(gw: TwinHttpGateway) -> set[str]:
    return {cfg[RATE] for cfg in gw.find_configs("broker", [RATE]).values() if RATE in cfg}


def test_the_throttle_over_time_chart_and_the_switch_to_fixed(browser, stack):
    api = stack["url"] + "/api/v1"
    call = {u: (lambda m, p, b=None, u=u: api_call(api, u, USERS[u][1], m, p, b))
            for u in USERS}
    plan = call["olga"]("POST", "/plans", {
        "cluster": "adapt", "kind": "reassignment", "title": "adaptive move",
        "throttle": CEILING, "throttle_mode": {"mode": "adaptive", "floor": FLOOR},
        "plan": {"version": 1, "partitions": [
            {"topic": "orders", "partition": p, "replicas": [3, 4]} for p in range(4)]}})
    shown = call["arne"]("GET", f"/plans/{plan['id']}")
    assert shown["throttle_mode"] == {"mode": "adaptive", "floor": FLOOR}
    call["arne"]("POST", f"/plans/{plan['id']}/approve", {"sha256": shown["sha256"]})
    call["olga"]("POST", f"/plans/{plan['id']}/execute", {})
    # no Prometheus on this cluster: held for 3 s, then every rate at the floor
    wait(browser).until(lambda _d: broker_rates(stack["gw"]) == {str(FLOOR)})

    browser.delete_all_cookies()
    console_errors(browser)
    sign_in(browser, stack["url"], "olga", USERS["olga"][1])
    browser.get(f"{stack['url']}/plans/{plan['id']}")
    wait(browser).until(lambda d: d.find_elements(By.CSS_SELECTOR,
                                                  "#pv-throttle-chart .main-svg"))
    panel = browser.find_element(By.ID, "pv-throttle")
    assert "Throttle adaptive: between 500 kB/s and the approved 2 MB/s" in panel.text
    assert "every rate at the floor" in panel.text
    wait(browser, 10).until(lambda d: {"broker 1", "broker 2", "broker 3", "broker 4",
                                       "ETA (min)"} <= {t.text for t in d.find_elements(
                                           By.CSS_SELECTOR, "#pv-throttle-chart .annotation-text")})
    # the leader rate line of broker 1 drew the ceiling, then the floor (MB/s)
    ys = browser.execute_script(
        "const g = document.getElementById('pv-throttle-chart');"
        "const plot = g.querySelector('.js-plotly-plot') || g;"
        "return plot.data.filter(t => t.name === 'leader rate')[0].y;")
    assert max(ys) == pytest.approx(CEILING / MB) and min(ys) == pytest.approx(FLOOR / MB)
    screenshot(browser, "adaptive-throttle-chart")

    wait(browser, 10).until(lambda d: d.find_element(By.ID, "pv-throttle-switch").text
                            == "Switch to fixed")
    slow_timer_answers(browser, "pv-tick", 1.5)  # the click lands while a refresh is out
    click_during_a_refresh(browser, lambda d: d.find_element(By.ID, "pv-throttle-switch"))
    try:
        wait(browser).until(ec.text_to_be_present_in_element(
            (By.ID, "pv-throttle-result"), "Done: the throttle is switched to fixed."))
    except TimeoutException:  # what the page and the server showed instead
        entries = call["arne"]("GET", f"/audit?plan={plan['id']}")["entries"]
        raise AssertionError(
            f"no answer to the click; result {shown_text(browser, 'pv-throttle-result')!r}, "
            f"panel {shown_text(browser, 'pv-throttle')!r}, audit "
            f"{[(e['action'], e['at'][11:22]) for e in entries][-8:]}") from None
    # the refresh that was out at the click, answered before it, leaves the switch alone
    refreshes_landed(browser)
    assert shown_text(browser, "pv-throttle-switch") == "Switch to adaptive"
    wait(browser).until(ec.text_to_be_present_in_element(
        (By.ID, "pv-throttle"), "Throttle fixed at the approved 2 MB/s (switched by olga)"))
    wait(browser).until(lambda _d: broker_rates(stack["gw"]) == {str(CEILING)})
    actions = [e["action"] for e in call["arne"]("GET", f"/audit?plan={plan['id']}")["entries"]]
    assert "throttle_mode_switched" in actions and "throttle_adjusted" in actions
    assert console_errors(browser) == []
    call["olga"]("POST", f"/plans/{plan['id']}/cancel", {})
