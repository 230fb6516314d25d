"""The observed ETA on a plan's page: the bytes left at the rate so far, and, once the copy
reached the plan's estimated total while partitions still move (producers grew the logs),
the partitions left at the pace of those done. The demo's plan 1 said 'observed unknown'
at batch 59 of 60 (2.8 GB of about 2.8 GB copied, 290 of 300 partitions done)."""

from __future__ import annotations

import pytest

from backend.services.execution import observed_left


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
