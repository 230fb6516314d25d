"""The top navigation in a laptop's window (a new user at 1024 px): beside the brand, the
cluster picker and who is signed in, its eleven links wrapped to five rows, 185 px of
header before any content. They now take a row of their own under those below 1800 px,
tighter below 1200 px: one row at 1024 px and at 1400 px (two before), every link whole
and in the window, with the longest label a signed-in approver sees ("Plans (1 for you)")
and the cluster picker of a two-cluster config."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from backend.model.io import save_snapshot
from backend.twin.api import TwinApi
from backend.twin.cluster import TwinCluster
from backend.twin.gateway import TwinGateway
from backend.twin.generate import generate_snapshot
from dashboard import ids
from dashboard.shell import NAV_ITEMS
from tests.e2e.conftest import (
    console_errors,
    screenshot,
    sign_in,
    signed_in_config,
    start_dashboard,
)
from tests.plan_helpers import api_call
from tests.servers import stop

pytestmark = pytest.mark.e2e

USERS = {"olga": ("operator", "o-pass-1"), "arne": ("approver", "a-pass-1")}
CLUSTERS = ("east", "west")  # two: the top bar shows its cluster picker

# the nav's links as drawn: how many rows they take, the top bar's height, the links not
# drawn or reaching outside the window, and whether the page scrolls sideways
NAV_DRAWN = """
const links = Array.from(document.querySelectorAll('#nav .nav-link'));
const width = document.documentElement.clientWidth;
return {rows: new Set(links.map(e => Math.round(e.getBoundingClientRect().top))).size,
        header: document.querySelector('.topbar').getBoundingClientRect().height,
        outside: links.filter(e => { const r = e.getBoundingClientRect();
                                     return !r.width || r.left < 0 || r.right > width; })
                      .map(e => e.textContent),
        texts: links.map(e => e.textContent),
        sideways: document.documentElement.scrollWidth > width};
"""


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory):
    """`railyard serve` on two twin clusters; olga proposed a plan that waits for arne."""
    tmp: Path = tmp_path_factory.mktemp("nav")
    with ExitStack() as stack:
        clusters = []
        for name in CLUSTERS:
            snap = generate_snapshot(6, 3, 3, 30, 3, seed=7, cluster=name)
            save_snapshot(snap, tmp / f"{name}.parquet")
            twin = TwinApi(TwinGateway(TwinCluster(snap))).start()
            stack.callback(twin.stop)
            clusters.append({"name": name, "gateway": {"type": "twin", "url": twin.url},
                             "snapshot": str(tmp / f"{name}.parquet")})
        d = start_dashboard(tmp, {"clusters": clusters, **signed_in_config(tmp, USERS)})
        stack.callback(stop, d.proc)
        snap = generate_snapshot(6, 3, 3, 30, 3, seed=7, cluster="east")
        topic = str(snap.topic_names[0])
        replicas = snap.replicas_of(snap.partition_row(topic, 0))
        spare = [b for b in map(int, snap.broker_ids) if b not in replicas][:len(replicas)]
        api_call(d.url + "/api/v1", "olga", USERS["olga"][1], "POST", "/plans", {
            "cluster": "east", "kind": "reassignment", "title": "east-1", "plan": {
                "version": 1, "partitions": [
                    {"topic": topic, "partition": 0, "replicas": spare}]}})
        yield d


@pytest.mark.parametrize(("width", "rows", "header_px"), [(1024, 2, 120), (1400, 1, 90)])
def test_the_nav_fits_a_laptop_s_window(browser, dashboard, width, rows, header_px):
    browser.delete_all_cookies()
    console_errors(browser)
    sign_in(browser, dashboard.url, "arne", USERS["arne"][1])
    size = browser.get_window_size()
    try:
        browser.set_window_size(width, 900)
        browser.get(dashboard.url + "/?cluster=east")
        WebDriverWait(browser, 60).until(lambda d: [
            e for e in d.find_elements(By.ID, ids.nav_link("Plans"))
            if e.text == "Plans (1 for you)"])
        drawn = browser.execute_script(NAV_DRAWN)
        screenshot(browser, f"nav-{width}")
    finally:
        browser.set_window_size(size["width"], size["height"])
    assert drawn["texts"] == ["Plans (1 for you)" if label == "Plans" else label
                              for _, label in NAV_ITEMS]
    assert drawn["rows"] <= rows, drawn
    assert drawn["header"] <= header_px, drawn
    assert drawn["outside"] == [] and not drawn["sideways"], drawn
    assert console_errors(browser) == []
