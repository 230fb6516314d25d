"""Builders for plan-store tests (unit, integration, API and pages tests may share them)."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from datetime import UTC, datetime

import numpy as np

from backend.model.snapshot import Snapshot
from backend.store.workflow import Actor

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)  # a fixed clock
OPERATOR = Actor("olga", "operator", "10.0.0.7")
APPROVER = Actor("anna", "approver", "10.0.0.8")
APPROVER2 = Actor("bert", "approver", "10.0.0.9")
ADMIN = Actor("ada", "admin", "10.0.0.10")
VIEWER = Actor("vic", "viewer", "10.0.0.11")


def cluster(assignment: dict[str, list[list[int]]], brokers=(1, 2, 3, 4),
            name: str = "c1") -> Snapshot:
    """A snapshot whose topics hold the given replica lists (broker ids, leader first)."""
    ids = sorted(brokers)
    topics = list(assignment)
    part_topic, flat, rf = [], [], []
    for t, name_ in enumerate(topics):
        for reps in assignment[name_]:
            part_topic.append(t)
            flat += [ids.index(b) for b in reps]
            rf.append(len(reps))
    return Snapshot.build(name, ids, [None] * len(ids), topics,
                          np.array(part_topic, dtype=np.int32),
                          np.concatenate(([0], np.cumsum(rf))), np.array(flat, dtype=np.int32))


ORDERS = {"orders": [[1, 2], [2, 3], [3, 4], [4, 1]], "audit": [[1, 3], [2, 4]]}


def orders_cluster() -> Snapshot:
    return cluster(ORDERS)


def moves(*entries: tuple[str, int, list[int]]) -> dict:
    """Kafka's reassignment JSON for (topic, partition, replicas) entries."""
    return {"version": 1, "partitions": [{"topic": t, "partition": p, "replicas": r}
                                         for t, p, r in entries]}


def shrink_content(topic: str = "orders", to: int = 2, frm: int = 4) -> dict:
    """The parts of services.shrink.shrink_plan's answer the store reads."""
    return {"topic": topic, "from": frm, "to": to,
            "removed_partitions": list(range(to, frm)), "stages": []}


def settle(twin, plan: dict, seconds: int = 600) -> None:
    """Run a reassignment on a twin (backend.twin.cluster.TwinCluster) to its end, as the
    cluster moving partitions under a proposed plan."""
    twin.alter_reassignments(plan)
    for _ in range(seconds):
        if not twin.list_reassignments():
            return
        twin.advance(1.0)
    raise AssertionError(f"the twin did not finish {plan} in {seconds} s")


class Recording:
    """A cluster's gateway, noting which topics the services read through it and how
    often they read every topic."""

    def __init__(self, gw) -> None:
        self.gw, self.asked, self.whole_reads = gw, [], 0

    def topics_assignment(self, names):
        self.asked.append(list(names))
        return self.gw.topics_assignment(names)

    def assignment(self):
        self.whole_reads += 1
        return self.gw.assignment()

    def describe_topics(self, names=None, missing_ok=False):
        self.whole_reads += names is None
        return self.gw.describe_topics(names, missing_ok)

    def __getattr__(self, name):
        return getattr(self.gw, name)


def api_call(api: str, user: str, password: str, method: str, path: str,
             body: dict | None = None) -> dict:
    """One /api/v1 request as ``user`` (HTTP Basic, JSON); an HTTP error fails the test
    with its status and body."""
    auth = base64.b64encode(f"{user}:{password}".encode()).decode()
    req = urllib.request.Request(
        api + path, None if method == "GET" else json.dumps(body or {}).encode(),
        {"Authorization": f"Basic {auth}", "Content-Type": "application/json"},
        method=method)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        raise AssertionError(f"{method} {path}: HTTP {e.code}: {e.read()[:500]!r}") from None
