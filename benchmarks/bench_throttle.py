"""Throttle plan speed: a 100,000-move reassignment on a 200k-partition cluster (target 2 s).

``random_reassignment`` is the generic reassignment the throttle tests use too: each
chosen partition swaps one replica for a broker it does not have yet, the way a
rebalance moves data, without depending on any planner.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from backend.engines.throttle import ThrottleParams, plan_throttle
from backend.model.csr import gather_index, offsets_from_lengths
from backend.model.io import save_snapshot
from backend.model.reassignment import Reassignment, load_reassignment
from backend.model.snapshot import Snapshot
from backend.twin.generate import generate_snapshot
from benchmarks.common import Figure, best_of

TARGET_SECONDS = 2.0


def random_reassignment(snap: Snapshot, moves: int, seed: int = 0) -> Reassignment:
    """``moves`` distinct partitions, each with one replica moved to a broker it lacks.

    Partitions whose replicas already span every broker are never chosen.
    """
    rng = np.random.default_rng(seed)
    rf = snap.replication_factors
    movable = np.flatnonzero(rf < snap.n_brokers)
    rows = np.sort(rng.choice(movable, size=min(moves, len(movable)), replace=False))
    idx = gather_index(snap.replica_offsets, rows)
    current = snap.replica_broker[idx]
    owner = np.repeat(np.arange(len(rows)), rf[rows])
    new = np.empty(len(rows), dtype=np.int32)
    todo = np.arange(len(rows))
    while len(todo):  # rejection sampling: a few rounds, each vectorised
        cand = rng.integers(0, snap.n_brokers, size=len(todo), dtype=np.int32)
        pick = np.full(len(rows), -1, dtype=np.int32)
        pick[todo] = cand
        clash = np.bincount(owner, weights=current == pick[owner], minlength=len(rows)) > 0
        ok = todo[~clash[todo]]
        new[ok] = pick[ok]
        todo = todo[clash[todo]]
    offsets = offsets_from_lengths(rf[rows])
    slot = (rng.random(len(rows)) * rf[rows]).astype(np.int64)
    brokers = current.copy()
    brokers[offsets[:-1] + slot] = new
    return Reassignment(rows=rows.astype(np.int64), offsets=offsets, brokers=brokers)


def run() -> list[Figure]:
    snap = generate_snapshot(100, 4, 2000, 200_000, 3, seed=7)
    plan = random_reassignment(snap, 100_000, seed=1)
    params = ThrottleParams(50_000_000, 1.25e9)
    engine_s, result = best_of(lambda: plan_throttle(snap, plan, params).to_dict())
    figures = [Figure("throttle plan, 100k moves / 200k partitions (engine + JSON dict)",
                      engine_s, "s", TARGET_SECONDS,
                      note=f"{result['moved_partitions']} moves, "
                           f"{len(result['leader_throttled_replicas'])} topics")]
    with tempfile.TemporaryDirectory() as tmp:
        snap_path, plan_path = os.path.join(tmp, "s.parquet"), os.path.join(tmp, "p.json")
        save_snapshot(snap, snap_path)
        with open(plan_path, "w") as f:
            json.dump(plan.to_kafka_json(snap), f)
        load_s, _ = best_of(lambda: load_reassignment(plan_path, snap), repeat=1)
        exe = os.path.join(os.path.dirname(sys.executable), "railyard")
        cmd = [exe, "throttle", "plan", "--snapshot", snap_path, "--reassignment", plan_path,
               "--throttle", "50000000"]
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        cli_s = time.perf_counter() - t0
    figures.append(Figure("load the 100k-entry Kafka plan (backend.model.reassignment)", load_s,
                          "s", TARGET_SECONDS, note="validated as kafka-reassign-partitions does"))
    figures.append(Figure("railyard throttle plan CLI end to end (start, load, plan, print)",
                          cli_s, "s", TARGET_SECONDS, note="parquet snapshot, Kafka plan JSON"))
    return figures
