"""KIP-578 engine and snapshot figures (issue 2 targets, 2-core machine). Placement speed
against Kafka's own code is bench_placement, measured in the same run."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from backend.engines.limits import TopicRequest, create_topics
from backend.model.io import save_snapshot
from backend.model.snapshot import Limits
from backend.twin.generate import generate_snapshot
from benchmarks.common import Figure, best_of


def binding_topic() -> Figure:
    snap = generate_snapshot(100, 3, 2000, 200_000, 3, seed=11)
    counts = snap.broker_replica_counts()
    limit = int(np.percentile(counts, 60))  # 40% of brokers at or over their limit
    request = [TopicRequest("new", 10_000, 3)]
    seconds, res = best_of(lambda: create_topics(snap, request, Limits(limit), start_index=0), 5)
    assert res.ok and not res.topics[0].kafka_compatible
    return Figure("10k-partition RF 3 topic, 200k-partition cluster, binding limits",
                  seconds * 1000, "ms", 20, note=f"limit {limit}, rack-aware "
                  f"{res.topics[0].rack_aware}")


LOAD_SCRIPT = """
import json, sys, time
t0 = time.perf_counter()
from backend.model.io import load_snapshot
t1 = time.perf_counter()
snap = load_snapshot(sys.argv[1])
counts = snap.broker_replica_counts()
t2 = time.perf_counter()
from benchmarks.common import own_peak_rss_mb
print(json.dumps({"load_s": t2 - t1, "rss_mb": own_peak_rss_mb(), "partitions": snap.n_partitions}))
"""


def load_figures() -> list[Figure]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "1m.parquet"
        save_snapshot(generate_snapshot(1000, 3, 10_000, 1_000_000, 3, seed=5), path)
        p = subprocess.run([sys.executable, "-c", LOAD_SCRIPT, str(path)], capture_output=True,
                           text=True, check=True)
        out = json.loads(p.stdout)
    return [Figure("load 1M-partition snapshot (Parquet)", out["load_s"], "s", 2.0),
            Figure("peak RSS loading it (whole process)", out["rss_mb"], "MB", 1024)]


def run() -> list[Figure]:
    return [binding_topic(), *load_figures()]
