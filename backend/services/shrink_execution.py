"""Executing approved shrinks: the delete-partitions KIP's stages where the cluster can
delete partitions, the migration checklist where it cannot (docs/executor.md#shrinks).

The gateway says which (gateways.base.can_delete_partitions): Execute runs the stages on a
cluster that can, and is refused in one line on one that cannot, where "Run the migration"
starts the plan's migration instead: Railyard creates the new topic with the frozen
placement, the operator checks the rest off step by step. Both are executions like a
reassignment's (the executor thread runs them under the cluster's lease, every step an
audit entry), with their own executors (backend/executor/shrink.py, migration.py).
"""

from __future__ import annotations

import time
from datetime import datetime

from backend.engines.shrink import CHECK_INTERVAL_MS
from backend.engines.shrink_stages import READ_ONLY, READ_WRITE, REMOVED, observe
from backend.errors import BadInput, Conflict
from backend.executor.journal import at
from backend.executor.shrink import REQUEST, mode_on
from backend.gateways.base import ClusterReader
from backend.services import plans
from backend.store.executions import MIGRATION, STAGES, Execution, ExecutionRecords
from backend.store.store import Plan, Store
from backend.store.workflow import Actor, authorize


def what_happens(gw: ClusterReader | None) -> str:
    """The /shrinks page's sentence on what executing a shrink does on this cluster."""
    mode = mode_on(gw)
    if mode == STAGES:
        return ("This cluster implements the delete-partitions KIP: an approved shrink's "
                "Execute sends DeletePartitions and follows its stages (ReadOnly, None after "
                "the delay, Removed) on the plan's page.")
    if mode == MIGRATION:
        return ("This cluster cannot delete partitions (Apache Kafka has no DeletePartitions"
                " API): an approved shrink runs as its migration: Railyard creates the new "
                "topic with the placement below, under the controller mutation quota, and "
                "operators check off the producer and consumer steps on the plan's page.")
    return ("This cluster is read through a read-only gateway: a shrink can be proposed and "
            "approved here, and executed where Railyard can change the cluster.")


def request_execute(store: Store, actor: Actor, plan_id: int, *, gateway: ClusterReader | None,
                    topics_of: plans.TopicsOf, configs_of=None, migration: bool = False,
                    now: datetime | None = None) -> Plan:
    """approved -> executing, for any plan (the API's and the plan page's Execute); a
    shrink only if this cluster can run it the way asked: the stages need a cluster that
    deletes partitions, the migration (``migration``) one that does not."""
    plan = plans.get(store, plan_id)
    if plan.kind != "shrink":
        if migration:
            raise BadInput(f"migration: plan {plan_id} is a {plan.kind}; only a shrink has one")
        return plans.request_execute(store, actor, plan_id, topics_of=topics_of,
                                     configs_of=configs_of, now=now)
    mode = mode_on(gateway)
    if mode is None:
        raise Conflict(f"cluster '{plan.cluster}' is read-only here: nothing can execute "
                       "this shrink")
    if mode == MIGRATION and not migration:
        raise Conflict(f"cluster '{plan.cluster}' cannot delete partitions (Apache Kafka has "
                       "no DeletePartitions API): run the migration to "
                       f"'{plan.content['migration']['new_topic']}' instead")
    if mode == STAGES and migration:
        raise Conflict(f"cluster '{plan.cluster}' deletes partitions itself: Execute runs the "
                       "KIP's stages")
    if mode == MIGRATION and not plan.content["migration"]["ok"]:
        raise Conflict(f"the migration cannot be placed: {plan.content['migration']['error']}")
    return plans.request_execute(store, actor, plan_id, topics_of=topics_of,
                                 configs_of=configs_of, now=now)


def check_step(store: Store, actor: Actor, plan_id: int, step: int,
               now: float | None = None) -> dict:
    """An operator checks off migration step ``step`` (1..): done, in order, audited."""
    now = time.time() if now is None else now
    plan = plans.get(store, plan_id)
    authorize(actor, "execute", plan.author)
    records = ExecutionRecords(store)
    ex = records.get(plan_id)
    if ex is None or records.mode(plan_id) != MIGRATION:
        raise Conflict(f"plan {plan_id} is not running a migration")
    if ex.state != "running":
        raise Conflict(f"plan {plan_id}'s migration is {ex.state}: nothing to check off")
    steps = records.batches(plan_id)
    if not 1 <= step < len(steps):
        raise Conflict(f"step {step + 1}: the migration has steps 2 to {len(steps)} to check "
                       "(step 1 is Railyard's)")
    if steps[step]["state"] == "done":
        raise Conflict(f"step {step + 1} is already checked off")
    if steps[step - 1]["state"] != "done":
        raise Conflict(f"step {step + 1} comes after step {step}, which is not done yet")
    records.save_batch(plan_id, step, state="done", started_at=now, ended_at=now, done=1)
    text = plan.content["migration"]["steps"][step]
    plans.record(store, actor, plan_id, "migration_step_done",
                 detail={"step": step + 1, "text": text}, now=at(now))
    return progress(records, ex, now)


def progress(records: ExecutionRecords, ex: Execution, now: float) -> dict | None:
    """A shrink's own progress: the stage, the partitions in each state and when the next
    stage comes (stages), or the checklist (migration). None for a reassignment."""
    mode = records.mode(ex.plan_id)
    if mode not in (STAGES, MIGRATION):
        return None
    c = records.content(ex.plan_id)["shrink"]
    batches = records.batches(ex.plan_id)
    if mode == MIGRATION:
        return {"mode": mode, "new_topic": c["migration"]["new_topic"], "steps": [
            {"step": i + 1, "text": text, "done": b["state"] == "done", "at": b["ended_at"]}
            for i, (text, b) in enumerate(zip(c["migration"]["steps"], batches, strict=True))]}
    removed = c["removed_partitions"]
    requested = batches[0]["started_at"]
    stage = ex.phase
    if stage == REQUEST:
        modes = dict.fromkeys(removed, READ_WRITE)
    else:  # the controller moves them together: the stage and the count removed say all
        n_removed = ex.partitions_done
        modes = {p: stage for p in removed[n_removed:]}
    view = observe(modes, removed, 0, c["delay_ms"], CHECK_INTERVAL_MS)
    out = {"mode": mode, "topic": c["topic"], "from": c["from"], "to": c["to"],
           "delay_ms": c["delay_ms"], **view.to_dict(), "requested_at": requested,
           "next_in_seconds": None, "next_latest_in_seconds": None,
           "check_interval_ms": CHECK_INTERVAL_MS}
    if view.stage == READ_ONLY and requested is not None:
        out["next_in_seconds"] = max(requested + view.next_earliest_ms / 1000 - now, 0.0)
        out["next_latest_in_seconds"] = max(requested + view.next_latest_ms / 1000 - now, 0.0)
    if stage == REQUEST:
        out["stage"] = "requesting"
    out["removed"] = view.counts[REMOVED]
    return out
