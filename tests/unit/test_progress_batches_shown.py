"""The batch table under an execution's bar shows the last 50 batches started, newest first
(the running batch on top of a table three rows high: oldest first, it sat below 20 done
ones on the demo's plan), and says so when there were more (the demo's 60-batch plan began
its table at batch 11 unexplained)."""

from __future__ import annotations

from dashboard.plan_views.progress import SHOWN_BATCHES, progress_view


def running(started: int, total: int) -> dict:
    return {
        "state": "running", "status": "running", "cause": None, "error": None,
        "hold": None, "shrink": None, "batch": started - 1, "batches": total,
        "partitions_done": 5 * (started - 1), "partitions_total": 5 * total,
        "bytes_done": 1_000, "bytes_copied": 1_000, "bytes_total": 9_000,
        "fraction": (started - 1) / total,
        "throttle": 20_000_000, "observed_rate": 16e6,
        "predicted_eta_seconds": 30.0, "observed_eta_seconds": 31.0,
        "per_batch": [{"batch": i, "state": "done" if i < started - 1 else "running",
                       "partitions": 5, "done": 5, "bytes_done": 10, "observed_rate": 1.0}
                      for i in range(started)] + [
                      {"batch": i, "state": "pending", "partitions": 5, "done": 0,
                       "bytes_done": 0, "observed_rate": None} for i in range(started, total)],
    }


def rows_and_hint(view) -> tuple[list[int], str]:
    grid = next(c for c in view.children if getattr(c, "rowData", None) is not None)
    hints = [c.children for c in view.children
             if getattr(c, "className", None) == "hint"]
    return [r["batch"] for r in grid.rowData], " ".join(hints)


def test_past_fifty_batches_the_table_says_it_shows_the_last_fifty():
    rows, hint = rows_and_hint(progress_view(running(60, 60), "bar"))
    assert SHOWN_BATCHES == 50 and rows == list(range(60, 10, -1))
    assert hint == "The last 50 of the 60 batches started, newest first."


def test_up_to_fifty_batches_every_started_one_is_shown_without_a_note():
    rows, hint = rows_and_hint(progress_view(running(12, 60), "bar"))
    assert rows == list(range(12, 0, -1)) and hint == ""


def test_the_running_batch_is_the_first_row_and_its_count_reads_as_a_number():
    view = progress_view(running(27, 60), "bar")
    grid = next(c for c in view.children if getattr(c, "rowData", None) is not None)
    assert grid.rowData[0] == {"batch": 27, "state": "running", "partitions": 5, "done": 5,
                               "copied": "10 B", "rate": "1 B/s"}
    numeric = {d["field"] for d in grid.columnDefs if d.get("type") == "numericColumn"}
    assert numeric == {"batch", "partitions", "done"}
