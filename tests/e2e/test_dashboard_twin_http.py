"""`railyard serve` reading a twin that `railyard twin serve` runs in another process, over
the twin's HTTP API (gateway: {type: twin, url}), with no snapshot file to fall back on."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By

from backend.twin.examples import demo_snapshot
from tests.e2e.conftest import console_errors, start_dashboard, stop
from tests.e2e.test_dashboard_browser import wait_for, wait_text

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def twin_dashboard(tmp_path_factory):
    tmp: Path = tmp_path_factory.mktemp("twin-http")
    twin = subprocess.Popen(
        [str(Path(sys.executable).parent / "railyard"), "twin", "serve", "--snapshot", "demo",
         "--port-base", "0", "--api-port", "0", "--targets-file", str(tmp / "targets.json")],
        stdout=subprocess.PIPE, stderr=(tmp / "twin.log").open("w"), text=True)
    try:
        api = json.loads(twin.stdout.readline())["serving"]["api"]
        d = start_dashboard(tmp, {"clusters": [
            {"name": "rehearsal", "gateway": {"type": "twin", "url": api}}]})
        try:
            yield d
        finally:
            stop(d.proc)
    finally:
        stop(twin)


def test_overview_reads_the_twin_over_http(browser, twin_dashboard):
    browser.get("about:blank")  # the last module's page stops polling its stopped server
    console_errors(browser)
    browser.get(twin_dashboard.url + "/")
    wait_for(browser, "#ov-broker-bars g.point", timeout=60)
    snap = demo_snapshot()
    limit = snap.limits.max_broker_partitions
    assert f"max.broker.partitions = {limit:,}" in browser.find_element(
        By.ID, "ov-broker-bars").text
    wait_text(browser, "#ov-cards", f"{snap.n_partitions:,}")  # topics / partitions card
    banners = browser.find_element(By.ID, "ov-banners").text
    assert "Twin at" not in banners and "showing the assignment in" not in banners
    assert console_errors(browser) == []
