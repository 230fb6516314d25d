"""An execution's progress stays honest when the plan stops early (issue 26 item 1): the
partitions a stopped batch finished still count (progress went back 10 -> 3), a batch that
ends with partitions off their target shows failed, not done, and a failed or cancelled
plan shows no ETA (it said 0m 0s)."""

from __future__ import annotations

from datetime import timedelta

from backend.services import execution, plans
from dashboard.plan_views.progress import progress_view
from tests.plan_helpers import OPERATOR, T0, moves
from tests.unit.test_execution_service import World, world  # noqa: F401 (fixture)

# b-1 (4 MB from broker 2 into broker 1) finishes first; a-0 (6 MB from broker 1 into
# broker 3) is still copying
TWO = moves(("a", 0, [3, 2]), ("b", 1, [2, 1]))


def one_done(w: World, plan_id: int) -> dict:
    for _ in range(60):
        w.cycle()
        p = execution.progress(w.store, plan_id)
        if p is not None and p["partitions_done"] == 1:
            assert w.twin.list_reassignments()  # a-0 still moving
            return p
    raise AssertionError("b-1 never finished")


def test_a_cancel_keeps_what_the_stopped_batch_finished(world):  # noqa: F811
    plan_id = world.executing(TWO)
    before = one_done(world, plan_id)
    plans.request_cancel(world.store, OPERATOR, plan_id, now=T0 + timedelta(seconds=9))
    world.until(plan_id, "cancelled")
    after = execution.progress(world.store, plan_id)
    assert after["state"] == "cancelled"
    assert (after["partitions_done"], after["bytes_done"]) >= \
        (before["partitions_done"], before["bytes_done"])
    assert after["partitions_done"] == 1 and after["per_batch"][0]["state"] == "cancelled"
    assert after["predicted_eta_seconds"] is None and after["observed_eta_seconds"] is None


def test_a_batch_that_fails_shows_failed_and_no_eta(world):  # noqa: F811
    plan_id = world.executing(TWO)
    before = one_done(world, plan_id)
    world.twin.cancel_reassignments([("a", 0)])  # outside Railyard: a-0 never gets there
    world.until(plan_id, "failed")
    p = execution.progress(world.store, plan_id)
    assert p["partitions_done"] == before["partitions_done"] == 1
    assert p["per_batch"][0]["state"] == "failed"
    assert p["predicted_eta_seconds"] is None and p["observed_eta_seconds"] is None
    text = str(progress_view(p, "bar"))
    assert "0m 0s" not in text and "no ETA: failed" in text and "a-0 is not at" in text


def test_a_completed_plan_says_how_long_it_took(world):  # noqa: F811
    plan_id = world.executing(TWO)
    world.until(plan_id, "completed")
    p = execution.progress(world.store, plan_id)
    text = str(progress_view(p, "bar"))
    took = round(p["ended_at"] - p["started_at"])
    assert f"completed in {took // 60}m {took % 60}s" in text and "ETA" not in text
