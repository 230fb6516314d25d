"""A stale plan in a browser: a shrink proposed on a twin cluster whose topic then gains a
partition is marked stale in the queue (its title, the reason Approve gives in its
tooltip, left out of "needs my approval"), and the nav counts it apart from the plans
that still wait."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By

from tests.e2e.conftest import (
    console_errors,
    propose_move,
    serve_on_twin,
    sign_in,
    signed_in_config,
    twin_snapshot,
    wait,
)
from tests.plan_helpers import api_call

pytestmark = pytest.mark.e2e

USERS = {"olga": ("operator", "o-pass-1"), "arne": ("approver", "a-pass-1")}


def test_a_stale_plan_is_marked_in_the_queue_and_counted_apart_in_the_nav(browser, tmp_path):
    snap = twin_snapshot("east")
    topic, count = str(snap.topic_names[0]), snap.topic_partition_count(0)
    with serve_on_twin(tmp_path, snap, "east", signed_in_config(tmp_path, USERS)) as d:
        api = d.url + "/api/v1"
        shrink = api_call(api, "olga", USERS["olga"][1], "POST", "/plans", {
            "cluster": "east", "kind": "shrink", "topic": topic, "partitions": count - 1,
            "title": "shrink it"})
        propose_move(api, "olga", USERS["olga"][1], "east", "move it", 0)
        assert d.twin.twin.create_partitions(topic, count + 1)["error"] is None
        browser.delete_all_cookies()
        console_errors(browser)
        sign_in(browser, d.url, "arne", USERS["arne"][1])
        browser.get(d.url + "/queue")
        title = f".ag-center-cols-container .ag-row[row-id='{shrink['id']}'] [col-id='title']"
        # the dashboard's cached read of the cluster is seconds old at most: a refresh shows it
        wait(browser, 60).until(lambda b: [
            e.text for e in b.find_elements(By.CSS_SELECTOR, title)] == ["stale: shrink it"])
        ActionChains(browser).move_to_element(
            browser.find_element(By.CSS_SELECTOR, title)).perform()
        tip = wait(browser, 10).until(lambda b: [
            e.text for e in b.find_elements(By.CSS_SELECTOR, ".ag-tooltip") if e.text])[0]
        assert tip.splitlines()[1] == (
            f"cluster east changed since plan {shrink['id']} was proposed: {topic} "
            f"partition count {count} -> {count + 1}: re-propose"), tip
        assert "1 needs your approval; 1 stale" in browser.find_element(By.ID, "qu-count").text
        browser.get(d.url + "/queue?mine=1")
        wait(browser, 60).until(lambda b: [
            e.text for e in b.find_elements(By.CSS_SELECTOR, ".ag-row [col-id='title']")]
            == ["move it"])
        assert browser.find_element(By.ID, "nav-plans").text == "Plans (1 for you, 1 stale)"
    assert console_errors(browser) == []
