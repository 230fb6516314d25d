"""Approvals under load: 20 concurrent clients approving plans, on SQLite and PostgreSQL.

Target (issue 11): approve p95 <= 50 ms with 20 concurrent clients. Each client is a
thread calling services.plans.approve exactly as the API does (read the plan, check the
rules and the basis fingerprint against the cluster, one conditional update with its
decision and chained audit row); 20 clients share 400 plans of 50 moves each, so they
race on the database lock and the audit chain, not on one plan. PostgreSQL is a
throwaway server (tests/servers.py) on loopback. The machine is shared: the load average
is printed beside every figure.
"""

from __future__ import annotations

import os
import statistics
import time
from concurrent.futures import ThreadPoolExecutor

from backend.services import plans
from backend.store.store import open_store
from backend.store.workflow import Actor
from backend.twin.generate import generate_snapshot
from benchmarks.common import Figure, on_both_stores

CLIENTS = 20
PLANS = 400
MOVES = 50
TARGET_MS = 50.0
OPERATOR = Actor("olga", "operator", "127.0.0.1")


def _measure(url: str) -> tuple[float, float, int, float]:
    """(p50 ms, p95 ms, approvals, CPU ms of this process per approval) for CLIENTS
    threads approving PLANS plans."""
    snap = generate_snapshot(brokers=12, racks=3, topics=20, partitions=2000, rf=3, seed=5)
    store = open_store(url)
    try:
        ids = []
        for i in range(PLANS):
            rows = range((i * MOVES) % snap.n_partitions, (i * MOVES) % snap.n_partitions
                         + MOVES)
            content = {"version": 1, "partitions": [
                {"topic": str(snap.topic_names[snap.part_topic[r]]),
                 "partition": int(snap.part_id[r]),
                 "replicas": list(reversed(snap.replicas_of(r)))} for r in rows]}
            ids.append(plans.propose(store, OPERATOR, cluster="bench", kind="reassignment",
                                     content=content, preview={}, snapshot=snap).id)
        shas = {i: plans.get(store, i).sha256 for i in ids}

        def client(c: int) -> list[float]:
            actor = Actor(f"approver{c}", "approver", "127.0.0.1")
            took = []
            for plan_id in ids[c::CLIENTS]:
                t0 = time.perf_counter()
                plans.approve(store, actor, plan_id, sha256=shas[plan_id],
                              topics_of=lambda *_: snap)
                took.append((time.perf_counter() - t0) * 1000)
            return took

        cpu = time.process_time()
        with ThreadPoolExecutor(CLIENTS) as pool:
            latencies = [t for ts in pool.map(client, range(CLIENTS)) for t in ts]
        cpu = (time.process_time() - cpu) * 1000 / len(latencies)
        assert store.verify_audit()["intact"]
    finally:
        store.close()
    q = statistics.quantiles(latencies, n=100)
    return q[49], q[94], len(latencies), cpu


def _figure(name: str, url: str) -> Figure:
    p50, p95, n, cpu = _measure(url)
    load = "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    return Figure(f"approve p95, {CLIENTS} concurrent clients, {name}", p95, "ms", TARGET_MS,
                  note=f"p50 {p50:.1f} ms over {n} approvals, {cpu:.1f} ms of Railyard's "
                       f"CPU each (one Python process: {CLIENTS} in flight queue on it); "
                       f"{load}")


def run() -> list[Figure]:
    return on_both_stores(_figure)
