"""KIP-599 replay speed: 1M requests across 1,000 principals (issue 3's target: 3M req/s).

The engine (entity resolution + lockstep buckets) is timed apart from parsing the JSON
Lines file, because the sweeps replay one parsed workload hundreds of times.
"""

from __future__ import annotations

import os
import tempfile

import numpy as np
import pandas as pd

from backend.engines import quota as engine
from backend.services import quota as service
from benchmarks.common import Figure, best_of

N_REQUESTS = 1_000_000
N_PRINCIPALS = 1_000


def workload(n: int = N_REQUESTS, principals: int = N_PRINCIPALS, seed: int = 7) -> pd.DataFrame:
    """Requests in time order from ``principals`` (user, client-id) pairs, bursty sizes."""
    rng = np.random.default_rng(seed)
    who = rng.integers(0, principals, n)
    return pd.DataFrame({
        "t": np.round(np.cumsum(rng.exponential(0.001, n)), 3),
        "user": np.char.add("user-", (who % 250).astype(str)).astype(object),
        "client_id": np.char.add("app-", (who // 250).astype(str)).astype(object),
        "op": rng.choice(np.array(service.OPS, dtype=object), n),
        "partitions": rng.geometric(0.1, n),
        "validate_only": rng.random(n) < 0.05,
    })


def run() -> list[Figure]:
    df = workload()
    note = f"{N_REQUESTS:,} requests, {N_PRINCIPALS:,} principals"
    engine_s, _ = best_of(lambda: engine.replay_frame(df, rate=5.0, samples=100))
    bucket = pd.factorize(df["user"] + "/" + df["client_id"])[0]
    prepared = engine.prepare(bucket, engine.java_ms(df["t"].to_numpy()),
                              df["partitions"].to_numpy(), df["validate_only"].to_numpy(),
                              bucket.max() + 1)
    rates = np.full(bucket.max() + 1, 5.0)
    steps_s, _ = best_of(lambda: engine.run(prepared, rates, 100))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "requests.jsonl")
        df.to_json(path, orient="records", lines=True)
        parse_s, _ = best_of(lambda: service.load_requests(path), repeat=2)
    return [
        Figure("quota replay engine", N_REQUESTS / engine_s, "requests/s", 3_000_000,
               higher_is_better=True, note=note + ", entity resolution + lockstep buckets"),
        Figure("quota replay of a prepared workload (sweep step)", N_REQUESTS / steps_s,
               "requests/s", 3_000_000, higher_is_better=True, note=note),
        Figure("quota workload parse + validation (pyarrow JSONL)", N_REQUESTS / parse_s,
               "requests/s", 1_000_000, higher_is_better=True, note=note),
    ]
