"""The observed ETA on a plan's page: the bytes left at the rate so far, and, once the copy
reached the plan's estimated total while partitions still move (producers grew the logs),
the partitions left at the pace of those done. The demo's plan 1 said 'observed unknown'
at batch 59 of 60 (2.8 GB of about 2.8 GB copied, 290 of 300 partitions done)."""

from __future__ import annotations

import pytest

from backend.services.execution import observed_left
from tests.unit.test_execution_service import world  # noqa: F401 (fixture)


def test_the_bytes_left_at_the_rate_so_far():
    # 1.0 GB of 2.8 GB copied in 62 s: 1.8 GB left at 16.1 MB/s
    rate = 1_000_000_000 / 62
    assert observed_left(62, 1_800_000_000, rate, 100, 300) == pytest.approx(111.6)


def test_past_the_estimated_bytes_the_partitions_left_at_their_pace():
    assert observed_left(181.0, 0, 15.5e6, 290, 300) == pytest.approx(181.0 * 10 / 290)


def test_every_partition_done_is_nothing_left_and_nothing_done_is_unknown():
    assert observed_left(200.0, 0, 15.5e6, 300, 300) == 0.0
    # retention shrank a log while it moved: bytes the estimate counted will never come
    assert observed_left(200.0, 40_000_000, 15.5e6, 300, 300) == 0.0
    assert observed_left(3.0, 2_800_000_000, None, 0, 300) is None


def test_the_rate_counts_the_batches_time_and_the_eta_the_share_left(world, monkeypatch):  # noqa: F811
    """The demo's plan near its end, after a pause between its batches (found on plan 5:
    "observed 21.5 MB/s", then 10.7 MB/s and an ETA of 48m after a 25 s pause; and on
    plan 1: "55 of 300 partitions left ... observed 0m 2s", the finished partitions having
    grown past the sizes the plan was proposed with)."""
    from dataclasses import replace

    from backend.services import execution
    from backend.store.executions import ExecutionRecords
    from tests.unit.test_progress_failure import TWO

    plan_id = world.executing(TWO)
    world.cycle()
    real = ExecutionRecords.get
    monkeypatch.setattr(ExecutionRecords, "get", lambda self, i: replace(
        real(self, i), state="running", started_at=0.0, ended_at=None,
        bytes_total=2_800_000_000, bytes_done=2_770_000_000, partitions_total=300,
        partitions_done=245))
    monkeypatch.setattr(ExecutionRecords, "batches", lambda self, i: [
        {"idx": 0, "state": "done", "partitions": 245, "done": 245,
         "bytes_total": 2_300_000_000, "bytes_done": 2_770_000_000, "started_at": 0.0,
         "ended_at": 100.0},
        # paused from 100 s to 400 s: nothing in flight
        {"idx": 1, "state": "running", "partitions": 55, "done": 0,
         "bytes_total": 500_000_000, "bytes_done": 0, "started_at": 400.0, "ended_at": None}])
    p = execution.progress(world.store, plan_id, now=450.0)
    assert p["observed_rate"] == pytest.approx(2_770_000_000 / 150)  # 100 s + 50 s moving
    share_left = 55 / 300  # the partitions' share: more than the bytes' (30 MB of 2.8 GB)
    assert p["observed_eta_seconds"] == pytest.approx(
        2_800_000_000 * share_left / (2_770_000_000 / 150))  # 27.8 s, not 4.9 s
