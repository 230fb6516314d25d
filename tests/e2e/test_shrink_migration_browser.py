"""An approved shrink on a cluster that cannot delete partitions (the twin over HTTP with
delete.topic.partition.enable off, as Apache Kafka): Execute is refused in one line naming
the migration; "Run the migration instead" creates the new topic with the plan's placement;
the operator checks the remaining steps off one by one (the last, deleting the old topic,
only once the cluster no longer has it) and the plan completes."""

from __future__ import annotations

import pytest
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By

from backend.twin.cluster import TwinSettings
from tests.e2e.conftest import (
    click_during_a_refresh,
    console_errors,
    refreshes_landed,
    screenshot,
    shown_text,
    sign_in,
    slow_timer_answers,
    wait,
)
from tests.e2e.test_shrink_browser import approved_shrink, served_twin_dashboard

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with served_twin_dashboard(tmp_path_factory.mktemp("migration"), TwinSettings(
            traffic_noise=0.0, delete_partition_enable=False)) as w:
        yield w


def ticked(driver) -> list[bool]:
    """Which of the migration's steps the page shows done."""
    return [" step-done " in f" {li.get_attribute('class')} "
            for li in driver.find_elements(By.CSS_SELECTOR, "#pv-steps li")]


def next_step(driver):
    return driver.find_element(By.ID, "pv-check-next")


def test_refused_then_the_migration_checked_off_step_by_step(browser, world):
    d, twin, store_url = world
    topic = str(twin.snap.topic_names[2])
    keep = twin.snap.topic_partition_count(twin.snap.topic_index(topic)) - 4
    plan_id = approved_shrink(store_url, twin, topic, keep)
    console_errors(browser)  # drop what earlier tests' pages logged in this browser
    sign_in(browser, d.url, "olga", "o-pass-1")
    browser.get(f"{d.url}/plans/{plan_id}")
    waiter = wait(browser, 60)
    waiter.until(lambda b: b.find_element(By.ID, "pv-state").text == "approved")
    assert "cannot delete partitions" in browser.find_element(By.ID, "pv-execution").text
    browser.find_element(By.ID, "pv-execute").click()
    waiter.until(lambda b: b.find_element(By.ID, "pv-exec-result").text.startswith("Refused"))
    assert browser.find_element(By.ID, "pv-exec-result").text == (
        f"Refused: cluster 'demo' cannot delete partitions (Apache Kafka has no "
        f"DeletePartitions API): run the migration to '{topic}.p{keep}' instead")
    assert browser.find_element(By.ID, "pv-state").text == "approved"
    browser.find_element(By.ID, "pv-migrate").click()
    waiter.until(lambda b: b.find_element(By.ID, "pv-state").text == "executing")
    waiter.until(lambda b: "1 of 4 steps done" in b.find_element(By.ID, "pv-progress").text)
    assert twin.snap.has_topic(f"{topic}.p{keep}")
    assert ticked(browser) == [True, False, False, False]
    screenshot(browser, "shrink-migration-checklist")
    slow_timer_answers(browser, "pv-tick", 1.5)  # each click lands while a refresh is out
    # what the cluster said of each step: this dashboard has no Prometheus and the twin no
    # consumer groups, so steps 2 and 3 are checked off unconfirmed, step 4 on the metadata
    said = {2: "not confirmed: no Prometheus configured for the cluster, so Railyard cannot "
               f"read what producers write to '{topic}'",
            3: "not confirmed: Railyard cannot read this cluster's consumer groups (Apache "
               "Kafka's ListGroups and OffsetFetch)",
            4: "confirmed: the topic is gone"}
    for step in (2, 3, 4):
        waiter.until(lambda b, s=step: next_step(b).is_displayed() and next_step(b).text
                   == f"Step {s} is done: check it off")
        if step == 4:  # the old topic is still there: refused, nothing ticked, then deleted
            click_during_a_refresh(browser, next_step)
            waiter.until(lambda b: b.find_element(By.ID, "pv-check-result").text.startswith(
                f"Refused: step 4: topic '{topic}' is still on cluster demo: delete it"))
            refreshes_landed(browser)  # a refresh out at the clicks draws no older steps
            assert ticked(browser) == [True, True, True, False]
            twin.delete_topics([topic])
        click_during_a_refresh(browser, next_step)
        try:
            waiter.until(lambda b, s=step: b.find_element(By.ID, "pv-check-result").text
                       == f"Done: step {s} checked off ({said[s]}).")
        except TimeoutException:  # what the page showed instead
            raise AssertionError(
                f"no answer to step {step}'s click; result "
                f"{shown_text(browser, 'pv-check-result')!r}, steps done {ticked(browser)}, "
                f"progress {shown_text(browser, 'pv-progress')!r}") from None
        waiter.until(lambda b, s=step: ticked(b) == [n <= s for n in (1, 2, 3, 4)])
    waiter.until(lambda b: b.find_element(By.ID, "pv-state").text == "completed")
    waiter.until(lambda b: ticked(b) == [True] * 4 and not next_step(b).is_displayed())
    assert console_errors(browser) == []
