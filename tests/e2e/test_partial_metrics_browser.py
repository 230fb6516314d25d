"""A Prometheus that answers some questions and not others (issue 14: the bytes-behind
join timed out while ReassigningPartitions answered 150): each card shows what it can and
says why for the rest, never a bare dash. The Prometheus is real, serving an hour
backfilled with promtool that holds the reassignment count and nothing about bytes."""

from __future__ import annotations

from pathlib import Path

import pytest
from selenium.webdriver.common.by import By

from backend.metrics.dialects import STRIMZI
from backend.model.io import save_snapshot
from backend.twin.examples import demo_snapshot
from tests.e2e.conftest import console_errors, screenshot, start_dashboard, stop, wait
from tests.servers import history_prometheus

pytestmark = pytest.mark.e2e
EPOCH = 1_704_067_200  # 2024-01-01T00:00:00Z
WINDOW = "range=abs&from=2024-01-01T00:00&to=2024-01-01T01:00"
MOVING = {"1": 50, "2": 60, "3": 40}  # partitions being reassigned, by leader: 150


def openmetrics() -> str:
    """An hour of samples every 30 s: brokers up, partitions reassigning, no byte figures."""
    lines = [f"# TYPE {STRIMZI.reassigning} gauge"]
    lines += [f'{STRIMZI.reassigning}{{broker="{b}"}} {n} {EPOCH + t}'
              for b, n in MOVING.items() for t in range(0, 3601, 30)]
    lines += ["# TYPE up gauge"]
    lines += [f'up{{broker="{b}"}} 1 {EPOCH + t}' for b in MOVING for t in range(0, 3601, 30)]
    return "\n".join([*lines, "# EOF", ""])


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory):
    tmp: Path = tmp_path_factory.mktemp("partial")
    (tmp / "hour.om").write_text(openmetrics())
    save_snapshot(demo_snapshot(), tmp / "demo.parquet")
    with history_prometheus(tmp / "hour.om") as prom:
        d = start_dashboard(tmp, {"clusters": [
            {"name": "partial", "gateway": {"type": "twin", "url": "http://127.0.0.1:9"},
             "snapshot": str(tmp / "demo.parquet"),
             "prometheus": {"url": prom.url, "dialect": "strimzi"}}]})
        try:
            yield d
        finally:
            stop(d.proc)


def card(browser, label: str) -> tuple[str, str]:
    """(value, note) of the card whose label is ``label``."""
    xpath = f"//div[contains(concat(' ', @class, ' '), ' card ')]" \
            f"[.//div[@class='card-label'][contains(., '{label}')]]"
    found = browser.find_element(By.XPATH, xpath)
    notes = found.find_elements(By.CLASS_NAME, "card-note")
    return found.find_element(By.CLASS_NAME, "card-value").text, notes[0].text if notes else ""


def test_reassigning_count_shows_when_the_bytes_figures_do_not(browser, dashboard):
    browser.get("about:blank")  # off an earlier module's (stopped) dashboard, and drain
    console_errors(browser)  # what its page logged
    browser.get(f"{dashboard.url}/throttles?cluster=partial&{WINDOW}")
    wait(browser, 60, poll_frequency=0.5).until(
        lambda b: b.find_elements(By.CSS_SELECTOR, "#th-eta .card"))
    value, note = card(browser, "Reassigning")
    assert value == f"{sum(MOVING.values()):,} partitions", (value, note)  # 150
    # the ETA cannot be worked out without the bytes still to copy: it says why
    eta, why = card(browser, "Observed ETA")
    assert eta == "no data" and "bytes replicas still have to copy" in why, (eta, why)
    # the overview's count is the same answer
    browser.get(f"{dashboard.url}/?cluster=partial&{WINDOW}")
    wait(browser, 60, poll_frequency=0.5).until(
        lambda b: b.find_elements(By.CSS_SELECTOR, "#ov-health .card"))
    assert card(browser, "Reassigning")[0] == "150"
    # a figure this Prometheus has no series for says so instead of "-"
    value, note = card(browser, "Under-replicated")
    assert value == "no data" and note, (value, note)
    screenshot(browser, "overview-partial-metrics")
    assert console_errors(browser) == []
