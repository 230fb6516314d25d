"""Uploading a reassignment plan in a browser (issue 27 item 3): an operator's file is kept
on the server's disk and previews; a viewer's upload is refused with the reason, and
nothing of it is kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By

from backend.twin.examples import demo_snapshot
from tests.e2e.conftest import screenshot, serve_on_twin, sign_in, signed_in_config, wait

pytestmark = pytest.mark.e2e

USERS = {"olga": ("operator", "o-pass-1"), "vera": ("viewer", "v-pass-1")}


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory):
    tmp: Path = tmp_path_factory.mktemp("upload")
    snap = demo_snapshot()
    topic = str(snap.topic_names[0])
    replicas = snap.replicas_of(snap.partition_row(topic, 0))
    spare = [b for b in map(int, snap.broker_ids) if b not in replicas][:len(replicas)]
    plan = tmp / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": topic, "partition": 0, "replicas": spare}]}))
    with serve_on_twin(tmp, snap, "demo", signed_in_config(tmp, USERS)) as d:
        d.plan_file, d.uploads = plan, tmp / "cache" / "work" / "plans"
        # every replica new: the partition's log copied once per new replica
        d.to_copy = int(snap.part_size[snap.partition_row(topic, 0)]) * len(spare)
        yield d


def upload(driver, dashboard, path: Path | None = None) -> None:
    driver.get(dashboard.url + "/reassignments?cluster=demo")
    wait(driver, 60).until(lambda d: d.find_elements(By.ID, "ra-run"))
    driver.find_element(By.CSS_SELECTOR, "#ra-upload input[type=file]").send_keys(
        str(path or dashboard.plan_file))


def test_an_operator_uploads_and_previews(browser, dashboard):
    browser.delete_all_cookies()
    sign_in(browser, dashboard.url, "olga", USERS["olga"][1])
    upload(browser, dashboard)
    wait(browser, 30).until(
        lambda d: d.find_element(By.ID, "ra-upload-name").text == "uploaded: plan.json")
    assert len(list(dashboard.uploads.glob("upload-*.json"))) == 1  # on disk
    browser.find_element(By.ID, "ra-run").click()
    wait(browser, 60).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#plan-grid .ag-row"))
    assert "Replica moves" in browser.find_element(By.ID, "plan-cards").text
    # a size in three figures, as the cards write sizes ("15.6 MB", not "15,593,712")
    cell = browser.find_element(By.CSS_SELECTOR, "#plan-grid .ag-row [col-id='bytes']").text
    assert cell == f"{float(f'{dashboard.to_copy / 1e6:.3g}'):g} MB", (cell, dashboard.to_copy)
    assert browser.find_element(By.ID, "ra-error").text == ""
    screenshot(browser, "upload-operator-preview")


def test_a_viewer_is_told_why_they_cannot_upload(browser, dashboard):
    browser.delete_all_cookies()
    sign_in(browser, dashboard.url, "vera", USERS["vera"][1])
    kept = set(dashboard.uploads.glob("upload-*.json"))
    upload(browser, dashboard)
    wait(browser, 30).until(lambda d: d.find_element(By.ID, "ra-error").text)
    assert browser.find_element(By.ID, "ra-error").text.startswith(
        "upload: the viewer role may not propose: it needs the operator or admin role")
    assert browser.find_element(By.ID, "ra-upload-name").text == ""
    assert set(dashboard.uploads.glob("upload-*.json")) == kept
    screenshot(browser, "upload-viewer-refused")


def test_a_file_not_named_json_is_read_not_silently_dropped(browser, dashboard, tmp_path):
    """A browser filter on ".json" dropped any other file without a word; now the server
    reads it: JSON under another name previews, anything else is refused in one line."""
    browser.delete_all_cookies()
    sign_in(browser, dashboard.url, "olga", USERS["olga"][1])
    saved = tmp_path / "plan.txt"  # e.g. a plan saved from kafka-reassign-partitions' output
    saved.write_text(dashboard.plan_file.read_text())
    upload(browser, dashboard, saved)
    wait(browser, 30).until(
        lambda d: d.find_element(By.ID, "ra-upload-name").text == "uploaded: plan.txt")
    notes = tmp_path / "notes.log"
    notes.write_text("Current partition replica assignment\n")
    upload(browser, dashboard, notes)
    wait(browser, 30).until(lambda d: d.find_element(By.ID, "ra-error").text)
    assert browser.find_element(By.ID, "ra-error").text == "notes.log: not a JSON file"


def test_the_form_shows_the_fields_of_the_chosen_source(browser, dashboard):
    """The planner's fields for "generate", the upload button for "upload" (the button sat
    beside the planner's fields, and the goal beside an uploaded file)."""
    browser.delete_all_cookies()
    sign_in(browser, dashboard.url, "olga", USERS["olga"][1])
    browser.get(dashboard.url + "/reassignments?cluster=demo")
    wait(browser, 60).until(lambda d: d.find_elements(By.ID, "ra-run"))

    def shown(element_id: str) -> bool:
        return browser.find_element(By.ID, element_id).is_displayed()

    wait(browser, 10).until(lambda _d: shown("ra-goal") and not shown("ra-upload"))
    browser.find_element(By.CSS_SELECTOR, "#ra-source input[value='upload']").click()
    wait(browser, 10).until(lambda _d: shown("ra-upload") and not shown("ra-goal"))
    assert not shown("ra-brokers") and not shown("ra-threshold")
    browser.find_element(By.CSS_SELECTOR, "#ra-source input[value='generate']").click()
    wait(browser, 10).until(lambda _d: shown("ra-goal") and not shown("ra-upload"))
    upload(browser, dashboard)  # a file chosen while "generate" was on switches to it
    wait(browser, 30).until(lambda _d: shown("ra-upload") and not shown("ra-goal"))
    assert browser.find_element(By.ID, "ra-upload-name").text == "uploaded: plan.json"
