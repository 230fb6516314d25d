"""An approved shrink executed from its page in a browser, on a twin served over HTTP with
its write token (the twin implements the delete-partitions KIP): the operator clicks
Execute and watches the stage advance as the twin's clock runs: ReadOnly, None at the
controller's check after the delay (delete.topic.partition.interval.delay.ms = 300,000 ms),
Removed, and the plan completes with the topic's partition count down."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By

from backend.services import plan_preview
from backend.services import plans as plan_service
from backend.store.store import open_store
from backend.store.workflow import Actor
from backend.twin.api import TwinApi
from backend.twin.cluster import TwinCluster, TwinSettings
from backend.twin.gateway import TwinGateway
from backend.twin.generate import generate_snapshot
from tests.e2e.conftest import (
    console_errors,
    screenshot,
    sign_in,
    signed_in_config,
    start_dashboard,
    stop,
    wait,
)

pytestmark = pytest.mark.e2e

TOKEN = "shrink-browser-token"
USERS = {"olga": ("operator", "o-pass-1"), "arne": ("approver", "a-pass-1")}
DELAY_MS = 60_000  # requested at twin second 0: due at 60 s, run by the check at 300 s


@contextlib.contextmanager
def served_twin_dashboard(tmp: Path, settings: TwinSettings):
    """(dashboard, twin, store URL): a twin served with a token and a dashboard on it."""
    twin = TwinCluster(generate_snapshot(6, 3, 3, 30, 3, seed=7, cluster="demo"), settings)
    api = TwinApi(TwinGateway(twin), token=TOKEN).start()
    (tmp / "token").write_text(TOKEN + "\n")
    config = {"clusters": [{"name": "demo", "gateway": {
                  "type": "twin", "url": api.url, "token_file": str(tmp / "token")}}],
              **signed_in_config(tmp, USERS)}
    try:
        d = start_dashboard(tmp, config)
        try:
            yield d, twin, config["store"]["url"]
        finally:
            stop(d.proc)
    finally:
        api.stop()


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with served_twin_dashboard(tmp_path_factory.mktemp("shrink"),
                               TwinSettings(traffic_noise=0.0)) as w:
        yield w


def approved_shrink(store_url: str, twin: TwinCluster, topic: str, keep: int) -> int:
    """Proposed by the operator and approved by the approver, through the services (the
    two-person flow in a browser is tests/e2e/test_plans_browser.py)."""
    store = open_store(store_url)
    try:
        snap = twin.assignment()
        draft = plan_preview.from_shrink(snap, topic, keep, delay_ms=DELAY_MS)
        plan = plan_service.propose(store, Actor("olga", "operator"), cluster="demo",
                                    kind="shrink", content=draft.content,
                                    preview=draft.preview, snapshot=snap)
        plan_service.approve(store, Actor("arne", "approver"), plan.id, sha256=plan.sha256,
                             topics_of=lambda *_: twin.assignment())
        return plan.id
    finally:
        store.close()


def progress_text(driver) -> str:
    return driver.find_element(By.ID, "pv-progress").text


def test_execute_a_shrink_and_watch_its_stage_advance(browser, world):
    d, twin, store_url = world
    topic = str(twin.snap.topic_names[2])
    t = twin.snap.topic_index(topic)
    before = twin.snap.topic_partition_count(t)
    plan_id = approved_shrink(store_url, twin, topic, before - 4)
    console_errors(browser)  # drop what earlier tests' pages logged in this browser
    sign_in(browser, d.url, "olga", "o-pass-1")
    browser.get(f"{d.url}/plans/{plan_id}")
    waiter = wait(browser, 60)
    waiter.until(lambda b: b.find_element(By.ID, "pv-state").text == "approved")
    assert "implements the delete-partitions KIP" in browser.find_element(
        By.ID, "pv-execution").text
    browser.find_element(By.ID, "pv-execute").click()
    waiter.until(lambda b: b.find_element(By.ID, "pv-state").text == "executing")
    waiter.until(lambda b: "stage ReadOnly" in progress_text(b))
    assert "removed partitions: ReadOnly 4" in progress_text(browser)
    assert "next: None in" in progress_text(browser)
    assert twin.partition_modes(topic)[-4:] == ["ReadOnly"] * 4
    screenshot(browser, "shrink-read-only")
    twin.advance(300)  # the controller's check at 300 s: the delay (60 s) is over
    waiter.until(lambda b: "stage None" in progress_text(b))
    assert "removed partitions: None 4" in progress_text(browser)
    twin.advance(1)  # every broker deleted its replicas
    waiter.until(lambda b: b.find_element(By.ID, "pv-state").text == "completed")
    assert "stage Removed" in progress_text(browser)
    assert twin.snap.topic_partition_count(t) == before - 4
    assert console_errors(browser) == []
