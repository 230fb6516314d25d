"""The bytes an execution copied, as they are (the demo's plan 1 said "2.8 GB of about
2.8 GB copied" with the bar at 72% and 83 partitions left, its batches adding to about
5 GB): a partition counts at its size when it finished, and producers write to the
partitions while they move, so the copy passes the plan's figure. The page says so, the
API gives the bytes copied beside bytes_done (which stops at the plan's total), and the
share done stays the partitions'."""

from __future__ import annotations

from dataclasses import replace

from backend.services import execution
from backend.store.executions import ExecutionRecords
from dashboard.plan_views.progress import copied_text, progress_view
from tests.unit.test_execution_service import world  # noqa: F401 (fixture)
from tests.unit.test_plan_view import text_of
from tests.unit.test_progress_failure import TWO, one_done

GB = 1_000_000_000


def demo(copied: float, moved: int = 217, state: str = "running") -> dict:
    """The demo's plan 1 near its end: 300 partitions, 2.8 GB by the plan."""
    return {
        "state": state, "status": state, "cause": None, "error": None, "hold": None,
        "shrink": None, "batch": 43, "batches": 60, "partitions_done": moved,
        "partitions_total": 300, "bytes_done": min(copied, 2.8 * GB),
        "bytes_copied": copied, "bytes_total": 2.8 * GB, "fraction": moved / 300,
        "throttle": 20_000_000, "observed_rate": 16e6, "predicted_eta_seconds": 30.0,
        "observed_eta_seconds": 31.0, "per_batch": [], "started_at": 0.0,
        "ended_at": 331.0 if state == "completed" else None,
    }


def test_past_the_plans_figure_it_says_what_was_copied_and_what_is_left():
    text = text_of(progress_view(demo(3.4 * GB), "bar"))
    assert ("3.4 GB copied so far (the plan counted 2.8 GB when it was proposed: producers "
            "have written to the partitions since); 83 of 300 partitions left") in text
    assert "of about" not in text
    bar = progress_view(demo(3.4 * GB), "bar").children[0]
    assert bar.value == "72.3"  # the partitions' share, as before


def test_never_x_of_about_x_with_partitions_left():
    # below the plan's figure, but the same in words: the partitions left say how far
    said = copied_text(demo(2.79 * GB))
    assert said == ("2.8 GB copied so far, about as much as the plan counted; 83 of 300 "
                    "partitions left")


def test_below_the_plans_figure_it_reads_as_before():
    assert copied_text(demo(1.0 * GB, moved=100)) == \
        "100 of 300 partitions, 1.0 GB of about 2.8 GB copied"


def test_a_completed_plan_says_what_it_copied_against_the_plan():
    said = copied_text(demo(5.0 * GB, moved=300, state="completed"))
    assert said == ("5.0 GB copied (the plan counted 2.8 GB when it was proposed: producers "
                    "have written to the partitions since); all 300 partitions moved")


def test_the_api_gives_the_bytes_copied_beside_the_plans_share(world, monkeypatch):  # noqa: F811
    plan_id = world.executing(TWO)
    p = one_done(world, plan_id)
    assert p["bytes_copied"] == p["bytes_done"] <= p["bytes_total"]
    # producers grew the logs: the sizes at completion add up past the plan's total
    real = ExecutionRecords.get
    monkeypatch.setattr(ExecutionRecords, "get", lambda self, i: replace(
        real(self, i), bytes_done=2 * p["bytes_total"]))
    grown = execution.progress(world.store, plan_id, now=world.now())
    assert grown["bytes_copied"] == 2 * p["bytes_total"] + p["bytes_copied"]
    assert grown["bytes_done"] == grown["bytes_total"]  # the plan's bytes, as it was
    assert grown["fraction"] == p["fraction"] == 0.5  # 1 of 2 partitions
    elapsed = world.now() - grown["started_at"]
    assert grown["observed_rate"] == grown["bytes_copied"] / elapsed  # what really moved
    assert "copied so far (the plan counted" in text_of(progress_view(grown, "bar"))


def test_a_finished_migration_asks_for_no_next_step():
    """A completed migration on the Apache Kafka demo read "4 of 4 steps done (check the
    next one off below once it is)"."""
    from dashboard.plan_views.progress import shrink_view
    from tests.unit.test_plan_view import text_of

    def said(state: str, done: list[bool]) -> str:
        p = {"state": state, "cause": None, "error": None, "shrink": {
            "mode": "migration", "new_topic": "clicks.p4",
            "steps": [{"done": d} for d in done]}}
        return text_of(shrink_view(p, "bar"))

    assert "check the next one off" in said("running", [True, True, False, False])
    assert "4 of 4 steps done" in said("completed", [True] * 4)
    assert "check the next one off" not in said("completed", [True] * 4)
    assert "check the next one off" not in said("cancelled", [True, False, False, False])
