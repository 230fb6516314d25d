"""The `railyard` CLI end to end, as automation runs it: one process per answer, wall time
from exec to exit (start-up, imports, load, compute, JSON on stdout). Issue 16's targets:
--help and light verbs <= 0.3 s, 1M partitions through `limits create-topics` <= 1.5 s,
the 100k-move `throttle plan` <= 1.0 s. The machine is shared, so each figure is the best
of several runs and carries the load average it was taken under."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time

from backend.model.io import save_snapshot
from backend.twin.generate import generate_snapshot
from benchmarks.bench_throttle import random_reassignment
from benchmarks.common import Figure

# exactly what the `railyard` console script runs
RAILYARD = [sys.executable, "-c", "import sys; from backend.cli import main; sys.exit(main())"]
LIGHT_SECONDS, CREATE_1M_SECONDS, THROTTLE_100K_SECONDS = 0.3, 1.5, 1.0


def _wall(args: list[str], repeat: int) -> tuple[float, str]:
    """Fastest wall time of ``repeat`` runs of `railyard ARGS` (stdout discarded), and a
    note with the fastest CPU time (user + sys, which load inflates less) and the load."""
    best, cpu = float("inf"), float("inf")
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([*RAILYARD, *args], check=True, stdout=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = min(cpu, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return best, f"min of {repeat}, cpu {cpu:.3f} s, load avg {load}"


def _inputs(tmp: str) -> dict[str, str]:
    paths = {k: os.path.join(tmp, f) for k, f in (
        ("small", "small.json"), ("big", "big.json"), ("wide", "wide.parquet"),
        ("plan", "plan.json"), ("requests", "requests.jsonl"))}
    save_snapshot(generate_snapshot(6, 3, 20, 1_000, 3, seed=1), paths["small"])
    save_snapshot(generate_snapshot(1_000, 3, 100, 10_000, 3, seed=2), paths["big"])
    wide = generate_snapshot(100, 4, 2000, 200_000, 3, seed=7)
    save_snapshot(wide, paths["wide"])
    with open(paths["plan"], "w") as f:
        json.dump(random_reassignment(wide, 100_000, seed=1).to_kafka_json(wide), f)
    with open(paths["requests"], "w") as f:
        for i in range(100):
            f.write(json.dumps({"t": i * 0.1, "user": f"u{i % 3}", "client_id": "c",
                                "op": "create_topics", "partitions": 5}) + "\n")
    return paths


def run() -> list[Figure]:
    with tempfile.TemporaryDirectory() as tmp:
        p = _inputs(tmp)
        light = [
            ("railyard --help", ["--help"]),
            ("railyard snapshot describe (1,000 partitions, JSON)",
             ["snapshot", "describe", p["small"]]),
            ("railyard quota replay (100 requests)",
             ["quota", "replay", "--requests", p["requests"], "--rate", "5"]),
            ("railyard limits create-topics (1,000-partition cluster)",
             ["limits", "create-topics", "--snapshot", p["small"], "--topic", "t:30:3"]),
        ]
        runs = [(name, args, 5, LIGHT_SECONDS) for name, args in light] + [
            ("railyard limits create-topics, 1M partitions x RF 3 on 1,000 brokers, 3 racks",
             ["limits", "create-topics", "--snapshot", p["big"], "--topic", "huge:1000000:3",
              "--start-index", "0"], 3, CREATE_1M_SECONDS),
            ("railyard throttle plan, 100k moves / 200k partitions (Parquet snapshot)",
             ["throttle", "plan", "--snapshot", p["wide"], "--reassignment", p["plan"],
              "--throttle", "50000000"], 3, THROTTLE_100K_SECONDS),
        ]
        figures = []
        for name, args, repeat, target in runs:
            wall, note = _wall(args, repeat)
            figures.append(Figure(name, wall, "s", target, note=note))
    return figures
