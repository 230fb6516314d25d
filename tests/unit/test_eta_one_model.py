"""One ETA model (issue 26 item 3): a plan's predicted ETA is the executor's, batch after
batch under the per-broker cap (engines.batches.PER_BROKER moves a broker takes part in
at once), on the preview card and while it runs; bytes copied never read above the
plan's total."""

import pytest

from backend.engines.batches import PER_BROKER, execution_batches
from backend.engines.throttle import batched_eta_seconds
from backend.model.reassignment import reassignment_from_dict
from backend.services import plan_preview
from components.tables import duration
from dashboard.plan_views.preview import reassignment_cards
from tests.unit.test_plan_view import text_of
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
        batched_eta_seconds(snap, plan, batches, 1_000_000.0))
    assert plan_preview.predicted_eta(p) == p["batched_eta_seconds"]
    # the card shows that figure, said to be batch after batch
    cards = text_of(reassignment_cards(p))
    assert f"Predicted ETA {duration(p['batched_eta_seconds'])}" in cards
    assert "batch after batch" in cards


def test_a_plan_stored_before_the_batched_figure_keeps_its_eta():
    assert plan_preview.predicted_eta({"eta_seconds": 42.0}) == 42.0
    assert plan_preview.predicted_eta({"eta_seconds": 42.0, "batched_eta_seconds": None}) \
        is None  # batched: a batch never catches up
