"""Approving a 50-move plan on a 200k-partition cluster: the basis re-check reads only the
plan's topics (backend.services.cluster.touched_snapshot), not the whole assignment.

Both reads are timed through services.plans.approve as the API calls it, on a 200k-
partition twin (100 brokers, 2000 topics) reached in process and over its HTTP API on
loopback (the API and its client share this process, so both ends' work is counted):
"whole" is what approve read before (``cluster_snapshot(fresh=True)``, the assignment of
every partition), "touched" what it reads now. Target: the issue's approve p95 of 50 ms
for the touched read of a 50-move plan; a 100k-move plan touching every topic must not
approve slower than with the whole read (its names exceed one URL: the twin's client then
reads the whole Parquet and slices it). The machine is shared: the load average is printed beside.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time

from backend.gateways.twin_http import TwinHttpGateway
from backend.model.snapshot import Limits
from backend.services import plans
from backend.services.cluster import ClusterSource, cluster_snapshot, touched_snapshot
from backend.store.store import open_store
from backend.store.workflow import Actor
from backend.twin.api import TwinApi
from backend.twin.cluster import TwinCluster
from backend.twin.gateway import TwinGateway
from backend.twin.generate import generate_snapshot
from benchmarks.common import Figure

MOVES = 50
ROUNDS = 7
TARGET_MS = 50.0
NO_WORSE = 1.1  # times the whole read's approve: equal but for the noise of one run
OPERATOR = Actor("olga", "operator", "127.0.0.1")
APPROVER = Actor("anna", "approver", "127.0.0.1")


def _content(snap, rows: range) -> dict:
    """Those partitions' leader and follower swapped."""
    return {"version": 1, "partitions": [
        {"topic": str(snap.topic_names[snap.part_topic[r]]), "partition": int(snap.part_id[r]),
         "replicas": list(reversed(snap.replicas_of(r)))} for r in rows]}


def _approve_ms(store, snap, source: ClusterSource, read, plans_rows: list[range]
                ) -> list[float]:
    took = []
    for rows in plans_rows:
        plan = plans.propose(store, OPERATOR, cluster="bench", kind="reassignment",
                             content=_content(snap, rows), preview={}, snapshot=snap)
        t0 = time.perf_counter()
        plans.approve(store, APPROVER, plan.id, sha256=plan.sha256,
                      topics_of=lambda _c, topics: read(source, topics))
        took.append((time.perf_counter() - t0) * 1000)
    return took


def _whole(source: ClusterSource, _topics: list[str]):
    return cluster_snapshot(source, fresh=True)


def run() -> list[Figure]:
    twin = TwinCluster(generate_snapshot(100, 10, 2000, 200_000, 3, seed=7, cluster="bench"))
    snap = twin.assignment()
    api = TwinApi(TwinGateway(twin)).start()
    figures = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            store = open_store(f"sqlite:///{tmp}/bench.db")
            try:
                for where, gw in (("twin in process", TwinGateway(twin)),
                                  ("twin over HTTP", TwinHttpGateway(api.url, timeout=60))):
                    source = ClusterSource("bench", None, Limits(), gateway=gw)
                    small = [range(1000 * i, 1000 * i + MOVES) for i in range(ROUNDS)]
                    before = statistics.median(_approve_ms(store, snap, source, _whole, small))
                    after = _approve_ms(store, snap, source, touched_snapshot, small)
                    load = "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
                    figures.append(Figure(
                        f"approve a {MOVES}-move plan, 200k partitions, {where}",
                        statistics.median(after), "ms", TARGET_MS,
                        note=f"median of {ROUNDS}, max {max(after):.1f} ms; reading the "
                             f"whole assignment instead: {before:.1f} ms; {load}"))
                # a plan touching every topic: the named read must not cost more than
                # the whole one it replaces (the twin slices arrays, no per-partition JSON)
                every = [range(0, 200_000, 2)]
                before = _approve_ms(store, snap, source, _whole, every)[0]
                after = _approve_ms(store, snap, source, touched_snapshot, every)[0]
                load = "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
                figures.append(Figure(
                    "approve a 100k-move plan touching every topic, 200k partitions, twin "
                    "over HTTP, against reading the whole assignment", after / before, "x",
                    NO_WORSE, note=f"{after:.0f} ms against {before:.0f} ms; {load}"))
            finally:
                store.close()
    finally:
        api.stop()
    return figures
