"""One ETA model (issue 26 item 3): a plan's predicted ETA is the executor's, batch after
batch under the per-broker cap (engines.batches.PER_BROKER moves a broker takes part in
at once), on the preview card and while it runs; bytes_done never reads above the
plan's total (bytes_copied does, when logs grew: tests/unit/test_progress_copied.py)."""

from dataclasses import replace
from datetime import timedelta

import pytest

from backend.engines.batches import PER_BROKER, execution_batches
from backend.engines.throttle import batched_eta_seconds
from backend.executor.thread import INTERVAL
from backend.model.reassignment import reassignment_from_dict
from backend.services import execution, plan_preview, plans
from backend.store.executions import ExecutionRecords
from components.tables import duration
from dashboard.plan_views.preview import reassignment_cards
from dashboard.plan_views.progress import progress_view
from tests.plan_helpers import APPROVER, OPERATOR, T0
from tests.unit.test_execution_service import MB, world  # noqa: F401 (fixture)
from tests.unit.test_plan_view import text_of
from tests.unit.test_progress_failure import TWO, one_done
from tests.unit.test_throttle_lists import cluster


def uneven():
    """Broker 1 leads 2 * PER_BROKER + 1 partitions of 1 MB, broker 2 leads one of 8 MB,
    all moving to broker 3 or 4: the cap splits broker 1's moves over three batches."""
    n = 2 * PER_BROKER + 1
    snap = cluster([1, 2, 3, 4], {"t": [[1, 4]] * n, "big": [[2, 4]]}, size=1_000_000,
                   rate=0.0)
    body = {"version": 1, "partitions": [
        *({"topic": "t", "partition": p, "replicas": [3, 4]} for p in range(n)),
        {"topic": "big", "partition": 0, "replicas": [3, 4]}]}
    return snap, body


def test_the_preview_predicts_the_batches_the_executor_runs():
    snap, body = uneven()
    p = plan_preview.from_kafka_json(snap, body, throttle=1_000_000.0).preview
    plan = reassignment_from_dict(body, snap)
    batches = execution_batches(snap, plan)
    assert len(batches) == 3
    assert p["batched_eta_seconds"] == pytest.approx(
        batched_eta_seconds(snap, plan, batches, 1_000_000.0, tick=INTERVAL))
    assert plan_preview.predicted_eta(p) == p["batched_eta_seconds"]
    # the card shows that figure, said to be batch after batch
    cards = text_of(reassignment_cards(p))
    assert f"Predicted ETA {duration(p['batched_eta_seconds'])}" in cards
    assert "batch after batch" in cards


def test_a_plan_stored_before_the_batched_figure_keeps_its_eta():
    assert plan_preview.predicted_eta({"eta_seconds": 42.0}) == 42.0
    assert plan_preview.predicted_eta({"eta_seconds": 42.0, "batched_eta_seconds": None}) \
        is None  # batched: a batch never catches up


def test_while_it_runs_the_predicted_eta_is_the_previews_for_what_is_left(world, monkeypatch):  # noqa: F811
    """The plan page's progress said remaining bytes over one broker's throttle, which
    disagreed with the preview (2m19s predicted, about 5 minutes taken); now it is the
    preview's figure for the share still to do, and bytes_done stops at the total."""
    snap = world.twin.assignment()
    draft = plan_preview.from_kafka_json(snap, TWO, throttle=MB)
    plan = plans.propose(world.store, OPERATOR, cluster="small", kind="reassignment",
                         content=draft.content, preview=draft.preview, snapshot=snap,
                         throttle=MB, now=T0)
    plans.approve(world.store, APPROVER, plan.id, sha256=plan.sha256,
                  topics_of=lambda *_: snap, now=T0 + timedelta(seconds=1))
    plans.request_execute(world.store, OPERATOR, plan.id, topics_of=lambda *_: snap,
                          now=T0 + timedelta(seconds=2))
    p = one_done(world, plan.id)
    whole = plan_preview.predicted_eta(draft.preview)
    left = 1 - min(p["bytes_done"] / p["bytes_total"],
                   p["partitions_done"] / p["partitions_total"])
    assert 0 < left < 1
    assert p["predicted_eta_seconds"] == pytest.approx(whole * left)
    # /throttles shows the same figure for the plan as its page
    assert execution.executing_etas(world.store, "small") == [
        {"plan_id": plan.id, "title": plan.title, "state": "running",
         "predicted_eta_seconds": p["predicted_eta_seconds"]}]
    # producers grew the logs: the sizes at completion add up past the plan's total
    real = ExecutionRecords.get
    monkeypatch.setattr(ExecutionRecords, "get", lambda self, i: replace(
        real(self, i), bytes_done=3 * p["bytes_total"]))
    grown = execution.progress(world.store, plan.id)
    assert grown["bytes_done"] == grown["bytes_total"]
    assert grown["predicted_eta_seconds"] is not None  # partitions are still moving
    assert "0m 0s" not in str(progress_view(grown, "bar"))


def test_the_cards_write_rates_as_the_charts_do():
    """A safe band's low end is the busiest moving broker's client writes: 67 kB/s on the
    Apache Kafka demo, which the card wrote as "0.0 MB/s" (every rate in MB/s)."""
    snap, body = uneven()
    p = plan_preview.from_kafka_json(snap, body, throttle=2_000_000.0).preview
    cards = text_of(reassignment_cards({**p, "safe_band": {"low": 67_200.0,
                                                           "high": 125_000_000.0}}))
    assert "Safe band 67.2 kB/s .. 125 MB/s" in cards
    assert "at a throttle of 2 MB/s (given)" in cards
