"""Executor figures: its own time per step on a 100,000-move plan (target 50 ms, the
gateway's time left out: on a real cluster that is network time), a crash-resume campaign
of 100 seeded runs (targets: nothing moved twice, no throttle left, every operator
throttle back), and the demo drain (broker 3 of the demo cluster, throttled) run to
completion on the twin's clock (at speed 100 the twin's minutes are seconds).
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from backend.engines.batches import CLUSTER, PER_BROKER
from backend.services import execution, plan_preview
from backend.store.store import open_store
from backend.store.workflow import Actor
from backend.twin.examples import demo_snapshot
from backend.twin.generate import generate_snapshot
from benchmarks.bench_throttle import random_reassignment
from benchmarks.common import Figure
from tests.executor_rig import TEST_KEYS, Rig, crash_campaign

STEP_TARGET_MS = 50.0
ETA_TARGET_PCT = 15.0  # issue 26: a plan's predicted ETA within 15% of what it takes
DEMO_THROTTLE = 50_000_000  # bytes/s
SPEED = 100.0


class _Timed:
    """Adds up the time spent inside gateway calls."""

    def __init__(self, gw) -> None:
        self.spent = 0.0
        for name in ("describe_cluster", "describe_topics", "assignment", "describe_configs",
                     "list_reassignments", "alter_configs", "alter_reassignments",
                     "cancel_reassignments"):
            setattr(gw, name, self._wrap(getattr(gw, name)))

    def _wrap(self, fn):
        def call(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.spent += time.perf_counter() - t0
        return call


def step_overhead(tmp: Path, ticks: int = 30) -> tuple[list[float], float]:
    """Executor time per tick (ms, gateway time excluded) after the first, and the first
    tick's (it reads the 100k-entry plan and builds its spec once)."""
    snap = generate_snapshot(100, 4, 2000, 200_000, 3, seed=7)
    # megabytes per partition: every tick finishes a batch and starts the next (the
    # busiest kind of step)
    snap = replace(snap, part_size=(snap.part_size * 1e-3).astype(np.int64),
                   part_rate=snap.part_rate * 1e-3)
    plan = random_reassignment(snap, 100_000, seed=1).to_kafka_json(snap)
    rig = Rig(snap, tmp / "step.db")
    rig.start(1, plan, DEMO_THROTTLE, per_broker=5, cluster=1250)
    timed = _Timed(rig.gw)
    out = []
    for _ in range(ticks + 1):
        timed.spent = 0.0
        t0 = time.perf_counter()
        rig.executor.tick(1, rig.now)
        out.append((time.perf_counter() - t0 - timed.spent) * 1000)
        rig.twin.advance(1.0)
    return out[1:], out[0]


def demo_drain(tmp: Path) -> tuple[dict, float, float, int, float | None]:
    """(execution, simulated seconds, wall seconds, moves, predicted ETA) of draining
    broker 3."""
    snap = demo_snapshot()
    draft = plan_preview.from_goal(snap, {"goal": "drain", "brokers": [3]},
                                   throttle=DEMO_THROTTLE)
    rig = Rig(snap, tmp / "demo.db")
    rig.start(1, draft.content, DEMO_THROTTLE, per_broker=PER_BROKER, cluster=CLUSTER)
    t0 = time.perf_counter()
    ex = rig.run(1, dt=1.0, limit=100_000)
    return (ex, rig.now, time.perf_counter() - t0, draft.preview["replica_moves"],
            plan_preview.predicted_eta(draft.preview))


def demo_plan_one(tmp: Path) -> tuple[float | None, float]:
    """(predicted, taken) seconds of `railyard demo`'s plan 1 (300 replicas from broker 1
    to 4 at its throttle), run on the twin's clock as the executor runs it."""
    snap = demo_snapshot()
    store = open_store(f"sqlite:///{tmp / 'plan-one.db'}", keys=TEST_KEYS)
    try:
        plan = execution.propose_demo_plan(store, snap, Actor("olivia", "operator"))
    finally:
        store.close()
    rig = Rig(snap, tmp / "plan-one-run.db")
    rig.start(1, plan.content, plan.throttle, per_broker=PER_BROKER, cluster=CLUSTER)
    ex = rig.run(1, dt=1.0, limit=100_000)
    return plan_preview.predicted_eta(plan.preview), ex.ended_at - ex.started_at


def eta_error(predicted: float | None, taken: float) -> float:
    """How far the prediction was from what it took, as a share of what it took."""
    return float("inf") if predicted is None else abs(taken - predicted) / taken


def run() -> list[Figure]:
    load = f"load {os.getloadavg()[0]:.2f}"
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        steps, first = step_overhead(tmp)
        t0 = time.perf_counter()
        camp = crash_campaign(runs=100, seed=2026, tmp=tmp)
        camp_s = time.perf_counter() - t0
        ex, sim, wall, moves, drain_predicted = demo_drain(tmp)
        one_predicted, one_taken = demo_plan_one(tmp)
    ended = camp.completed + camp.cancelled
    camp_note = (f"{camp.runs} runs, {camp.crashes} kills, {camp.completed} completed, "
                 f"{camp.cancelled} cancelled, {camp_s:.0f} s; {load}")
    return [
        Figure("executor step on a 100k-move plan, p50 (gateway time excluded)",
               float(np.percentile(steps, 50)), "ms", STEP_TARGET_MS,
               note=f"p95 {np.percentile(steps, 95):.0f} ms, max {max(steps):.0f} ms over "
                    f"{len(steps)} batch-changing steps; first step {first:.0f} ms (reads "
                    f"the plan once); {load}"),
        Figure("crash-resume runs ending completed or cancelled", ended, "runs", camp.runs,
               higher_is_better=True, note=camp_note),
        Figure("crash-resume: partitions moved twice", camp.moved_twice, "partitions", 0),
        Figure("crash-resume: throttle configs left behind", camp.throttles_left, "configs", 0),
        Figure("crash-resume: operator throttles not put back", camp.operator_not_restored,
               "configs", 0),
        Figure(f"demo drain (broker 3, {moves:,} moves, {DEMO_THROTTLE / 1e6:g} MB/s) at "
               f"speed {SPEED:g}", sim / SPEED, "s", 600.0,
               note=f"{ex.state}; {sim:,.0f} s of twin time, {wall:.0f} s to simulate "
                    f"here; {load}"),
        Figure("demo plan 1: predicted ETA vs the time it took on the twin",
               100 * eta_error(one_predicted, one_taken), "%", ETA_TARGET_PCT,
               note=f"predicted {one_predicted or 0:,.0f} s (batch after batch, the plan "
                    f"page's figure), took {one_taken:,.0f} s of twin time"),
        Figure("demo drain: predicted ETA vs the time it took on the twin",
               100 * eta_error(drain_predicted, ex.ended_at - ex.started_at), "%",
               ETA_TARGET_PCT,
               note=f"predicted {drain_predicted or 0:,.0f} s, took "
                    f"{ex.ended_at - ex.started_at:,.0f} s of twin time"),
    ]
