"""The ETA of a plan run in batches, as the executor runs it: each batch lasts as long as
its slowest broker at the KIP-73 rate (each broker's rate bounds it), batches run one
after another, so batching that loads brokers unevenly stretches the whole plan's ETA."""

import math

import numpy as np
import pytest

from backend.engines.batches import execution_batches
from backend.engines.throttle import ThrottleParams, batched_eta_seconds, plan_throttle
from backend.twin.generate import generate_snapshot
from benchmarks.bench_throttle import random_reassignment
from tests.unit.test_throttle_lists import cluster, plan_for


def two_moves():
    """a-0 copies 1000 bytes from broker 1 to 3, a-1 copies 1000 from broker 2 to 4:
    no broker takes part in both."""
    snap = cluster([1, 2, 3, 4], {"a": [[1, 2], [2, 1]]}, size=1000, rate=10.0)
    return snap, plan_for(snap, [("a", 0, [3, 2]), ("a", 1, [2, 4])])


def test_moves_in_one_batch_overlap_and_in_two_batches_add_up():
    snap, plan = two_moves()
    # one batch: both copies at once; each broker sends or receives 1000 bytes while its
    # partition's 10 bytes/s keep coming: 1000 / (110 - 10) = 10 s
    one = batched_eta_seconds(snap, plan, [np.array([0, 1])], 110.0)
    assert one == pytest.approx(10.0)
    assert one == pytest.approx(plan_throttle(snap, plan, ThrottleParams(110.0)).eta.max())
    # two batches: 10 s, then 10 s
    assert batched_eta_seconds(snap, plan, [np.array([0]), np.array([1])], 110.0) \
        == pytest.approx(20.0)


def test_a_batch_that_never_catches_up_makes_the_plan_never_finish():
    snap, plan = two_moves()
    assert math.isinf(batched_eta_seconds(snap, plan, [np.array([0]), np.array([1])], 10.0))


def test_nothing_to_move_takes_no_time():
    snap = cluster([1, 2], {"a": [[1, 2]]}, size=1000)
    assert batched_eta_seconds(snap, plan_for(snap, [("a", 0, [1, 2])]),
                               [np.array([0])], 100.0) == 0.0


def test_the_executors_batches_take_at_least_the_whole_plans_eta():
    snap = generate_snapshot(12, 3, 40, 2000, 3, seed=3)
    plan = random_reassignment(snap, 400, seed=5)
    whole = float(plan_throttle(snap, plan, ThrottleParams(5e6)).eta.max())
    batches = execution_batches(snap, plan, per_broker=2, cluster=50)
    assert len(batches) > 1
    batched = batched_eta_seconds(snap, plan, batches, 5e6)
    assert batched >= whole * (1 - 1e-9)
    # and one batch holding everything is the whole plan's ETA
    everything = [np.concatenate(batches)]
    assert batched_eta_seconds(snap, plan, everything, 5e6) == pytest.approx(whole)


def test_a_batch_lasts_whole_executor_ticks():
    """The executor looks once per tick: a 10 s batch with 3 s ticks ends at its 4th look
    (12 s), and a batch with nothing to copy still takes one tick."""
    snap, plan = two_moves()
    assert batched_eta_seconds(snap, plan, [np.array([0]), np.array([1])], 110.0,
                               tick=3.0) == pytest.approx(24.0)
    assert batched_eta_seconds(snap, plan, [np.array([0, 1])], 1e12, tick=1.0) == 1.0
