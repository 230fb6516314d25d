"""Issue 28's last figure, small: a drain fixed vs adaptive on the same seeded twin under
the same producer burst, through the functions `make bench` runs on the demo drain
(benchmarks/bench_executor.fixed_vs_adaptive)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from backend.executor.adaptive import ControlSettings
from backend.twin.generate import generate_snapshot
from benchmarks.bench_executor import fixed_vs_adaptive, run_under_traffic, traffic_at
from tests.executor_rig import _scaled, drain_plan

MB = 1_000_000
CEILING, FLOOR = 40 * MB, 2 * MB
BURST = ((0.0, 1.0), (30.0, 40.0), (120.0, 1.0))  # producers at 40x for 90 s


def test_the_schedule_steps_at_its_times():
    assert [traffic_at(BURST, t) for t in (0, 29.9, 30, 119, 120, 1e6)] == [1, 1, 40, 40, 1, 1]


def test_fixed_and_adaptive_under_the_same_burst(tmp_path):
    snap = _scaled(generate_snapshot(6, 3, 6, 24, 3, seed=3), 0.1)  # 6.5 GB to move
    fixed, adaptive = fixed_vs_adaptive(
        snap, drain_plan(snap, 1, 4, 12), tmp_path, CEILING, FLOOR, BURST,
        ControlSettings(network_capacity=60 * MB), per_broker=2)
    assert fixed.state == adaptive.state == "completed"
    assert fixed.left == adaptive.left == 0  # no throttle left on the twin
    assert fixed.highest == fixed.lowest == CEILING and fixed.looks == fixed.changes == 0
    # adaptive: every rate on the twin after every tick within [floor, ceiling], and the
    # burst took it below the ceiling
    assert FLOOR <= adaptive.lowest < adaptive.highest <= CEILING
    assert 0 < adaptive.changes <= adaptive.looks and adaptive.rewrites >= adaptive.changes
    # no rate above fixed's at any moment: it cannot finish sooner (a tick's rounding)
    assert adaptive.taken >= fixed.taken - 1


def test_batches_shorter_than_a_tick_are_still_looked_at(tmp_path):
    # each move (~1 MB, no producer of its own) ends within the executor tick that started
    # it, while the other partitions' producers at 40x fill the brokers' links: the
    # controller must look at batch starts too, or it never looks (the demo's balance
    # plan: 175 batches of about a second each) and the plan runs at the ceiling
    full = _scaled(generate_snapshot(6, 3, 6, 24, 3, seed=3), 0.1)
    plan = drain_plan(full, 1, 4, 12)
    moved = np.array([full.partition_row(e["topic"], e["partition"])
                      for e in plan["partitions"]])
    is_moved = np.isin(np.arange(full.n_partitions), moved)
    small = np.where(is_moved, 1_000_000, full.part_size)
    quiet = np.where(is_moved, 0.0, full.part_rate)
    snap = replace(full, part_size=small.astype("int64"), part_rate=quiet)
    run = run_under_traffic(snap, plan, tmp_path / "short.db", CEILING, ((0.0, 40.0),), FLOOR,
                            ControlSettings(network_capacity=60 * MB), per_broker=1)
    assert run.state == "completed" and run.left == 0
    assert run.looks > 0 and FLOOR <= run.lowest < CEILING
