"""The top navigation in a laptop's window (a new user at 1024 px): beside the brand, the
cluster picker and who is signed in, its eleven links wrapped to five rows, 185 px of
header before any content. They now take a row of their own under those below 1800 px,
tighter below 1200 px: one row at 1024 px and at 1400 px (two before), every link whole
and in the window, with the longest label a signed-in approver sees ("Plans (1 for you)")
and the cluster picker of a two-cluster config."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By

from dashboard import ids
from dashboard.shell import NAV_ITEMS
from tests.e2e.conftest import (
    console_errors,
    propose_move,
    screenshot,
    sign_in,
    twin_clusters_dashboard,
    wait,
)

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
    with twin_clusters_dashboard(tmp_path_factory.mktemp("nav"), CLUSTERS, USERS) as d:
        propose_move(d.url + "/api/v1", "olga", USERS["olga"][1], "east", "east-1", 0)
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
        wait(browser, 60).until(lambda d: [
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
