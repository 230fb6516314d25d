"""An approved shrink on a real Kafka-protocol broker (Tansu 0.6, one broker, id 111), which
like Apache Kafka cannot delete partitions: Execute is refused in one line naming the
migration; the migration then sends CreateTopics with the plan's replica assignment
through the Kafka gateway (Tansu has no DescribeClientQuotas, so the KIP-599 forecast
says it is unknown). Tansu does not follow a replica assignment (it makes its default 3
partitions): the executor checks what was created and fails the plan saying so, rather
than let operators move producers to a topic that is not the one approved. The checklist
itself runs on the twin with deletion off (tests/unit/test_shrink_execution.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from backend.errors import Conflict
from backend.gateways.base import can_delete_partitions
from backend.services import execution, plan_preview, plans, shrink_execution
from backend.store.store import open_store
from tests.plan_helpers import APPROVER, OPERATOR


def test_refused_then_the_migration_runs_as_a_checklist(gw, tmp_path):
    assert not can_delete_partitions(gw)
    assert gw.create_topics([{"name": "orders", "partitions": 4, "rf": 1}])[0]["error"] is None
    store = open_store(f"sqlite:///{tmp_path}/plans.db")
    now = datetime.now(UTC)
    snap = gw.assignment()
    draft = plan_preview.from_shrink(snap, "orders", 2, delay_ms=0)
    plan = plans.propose(store, OPERATOR, cluster="tansu", kind="shrink",
                         content=draft.content, preview=draft.preview, snapshot=snap, now=now)
    plans.approve(store, APPROVER, plan.id, sha256=plan.sha256,
                  topics_of=lambda *_: gw.assignment(), now=now + timedelta(seconds=1))
    with pytest.raises(Conflict) as e:
        plans.execute(store, OPERATOR, plan.id, gateway=gw,
                      topics_of=lambda *_: gw.assignment())
    assert str(e.value) == ("cluster 'tansu' cannot delete partitions (Apache Kafka has no "
                            "DeletePartitions API): run the migration to 'orders.p2' instead")
    assert plans.get(store, plan.id).state == "approved"
    plans.execute(store, OPERATOR, plan.id, gateway=gw, migration=True,
                  topics_of=lambda *_: gw.assignment())
    thread = execution.executor_thread(store, ["tansu"], lambda _c: gw,
                                      lambda _c: gw.assignment(), holder="tansu-test")
    for _ in range(3):
        thread.cycle(now.timestamp() + 5)
    assert len(gw.describe_topics(["orders.p2"])[0]["partitions"]) == 3  # Tansu's default
    created = next(e.detail for e in plans.audit_entries(store, plan=plan.id)
                   if e.action == "migration_topic_created")
    assert created["throttle_time_ms"] == 0 and created["placement_as_planned"] is False
    assert "DescribeClientQuotas" in created["quota"]["unknown"]
    assert created["quota"]["charged_to"] == {"user": "ANONYMOUS", "client_id": "railyard"}
    assert plans.get(store, plan.id).state == "failed"
    cause = execution.progress(store, plan.id)["cause"]
    assert cause.startswith("the cluster refused: INVALID_REPLICA_ASSIGNMENT: topic "
                            "'orders.p2' was created with 3 partitions")
    assert "did not follow the replica assignment" in cause
    with pytest.raises(Conflict, match=r"not running a migration|is failed"):
        shrink_execution.check_step(store, OPERATOR, plan.id, 1,
                                    topics_of=lambda *_: gw.assignment())
    thread.stop()
    store.close()
