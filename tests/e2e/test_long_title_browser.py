"""A plan titled with 200 characters and no spaces (issue 27 item 13) wraps on its page
instead of pushing the whole page sideways; a 2,000-character comment stays in its grid."""

from __future__ import annotations

from pathlib import Path

import pytest
from selenium.webdriver.common.by import By

from backend.services import plan_preview, plans
from backend.store.store import open_store
from tests.e2e.conftest import screenshot, serve_on_twin, wait
from tests.plan_helpers import APPROVER, OPERATOR, moves, orders_cluster

pytestmark = pytest.mark.e2e

TITLE = "drain-" + "x" * 194  # 200 characters, nowhere to break


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory):
    tmp: Path = tmp_path_factory.mktemp("long-title")
    snap = orders_cluster()
    store = open_store(f"sqlite:///{tmp / 'railyard.db'}")
    draft = plan_preview.from_kafka_json(snap, moves(("orders", 0, [3, 4])))
    plan = plans.propose(store, OPERATOR, cluster="c1", kind="reassignment",
                         content=draft.content, preview=draft.preview, snapshot=snap,
                         title=TITLE)
    plans.reject(store, APPROVER, plan.id, comment="y" * 2000)
    store.close()
    with serve_on_twin(tmp, snap, "c1",
                       {"store": {"url": f"sqlite:///{tmp / 'railyard.db'}"}}) as d:
        d.plan_id = plan.id
        yield d


def test_a_long_title_without_spaces_wraps_on_the_plan_page(browser, dashboard):
    browser.get(f"{dashboard.url}/plans/{dashboard.plan_id}")
    heading = wait(browser, 60).until(
        lambda d: [h for h in d.find_elements(By.TAG_NAME, "h1") if TITLE[:20] in h.text])[0]
    wait(browser, 30).until(lambda d: "y" * 40 in d.page_source)  # the decisions
    screenshot(browser, "plan-long-title")
    page_width, view_width = browser.execute_script(
        "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert page_width <= view_width, "the page scrolls sideways"
    assert heading.size["width"] <= view_width
    font = float(heading.value_of_css_property("font-size").removesuffix("px"))
    assert heading.size["height"] > 2 * font  # the title wrapped onto more lines
