"""A plan's re-check on a real Kafka-protocol broker (Tansu, one broker, id 111): the Kafka
gateway reads the named topics alone (one Metadata request for them, not the cluster), a
missing one is left out, and approving names a topic deleted since the proposal."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from backend.errors import Conflict
from backend.model.snapshot import Limits
from backend.services import plans
from backend.services.cluster import ClusterSource, touched_snapshot
from backend.store.store import open_store
from tests.plan_helpers import APPROVER, OPERATOR, moves

TOPICS = {"basis.a": 3, "basis.b": 2, "basis.other": 4}


@pytest.fixture(scope="module")
def made(gw):
    got = gw.create_topics([{"name": n, "partitions": c, "rf": 1} for n, c in TOPICS.items()])
    assert [r["error"] for r in got] == [None] * len(TOPICS)
    return gw


def test_named_topics_are_read_alone_and_a_missing_one_is_left_out(made):
    got = made.describe_topics(["basis.b", "basis.a", "basis.never"], missing_ok=True)
    assert got == [{"name": n, "internal": False, "partitions": [
        {"partition": p, "leader": 111, "replicas": [111], "isr": [111]}
        for p in range(TOPICS[n])]} for n in ("basis.a", "basis.b")]
    snap = made.topics_assignment(["basis.b", "basis.never", "basis.a"])
    assert list(snap.topic_names) == ["basis.a", "basis.b"] and snap.n_partitions == 5
    assert [snap.replicas_of(r) for r in range(5)] == [[111]] * 5
    assert list(snap.broker_ids) == [111] and snap.cluster == "tansu"


def test_approve_names_a_topic_deleted_since_the_proposal(made, tmp_path):
    source = ClusterSource("tansu", None, Limits(), gateway=made)
    store = open_store(f"sqlite:///{tmp_path}/plans.db")
    try:
        now = datetime.now(UTC)
        content = moves(("basis.b", 1, [111]), ("basis.other", 0, [111]))
        plan = plans.propose(store, OPERATOR, cluster="tansu", kind="reassignment",
                             content=content, preview={}, snapshot=made.assignment(),
                             now=now)
        assert made.delete_topics(["basis.b"])[0]["error"] is None
        with pytest.raises(Conflict, match=r": basis\.b-1 no longer exists: re-propose"):
            plans.approve(store, APPROVER, plan.id, sha256=plan.sha256, now=now,
                          topics_of=lambda _c, topics: touched_snapshot(source, topics))
    finally:
        store.close()
