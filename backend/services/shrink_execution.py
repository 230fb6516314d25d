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
from collections.abc import Callable

from backend.errors import Conflict, Unavailable
from backend.executor.journal import at
from backend.executor.shrink import mode_on
from backend.gateways.base import ClusterReader
from backend.model.snapshot import Snapshot
from backend.services import migration_checks, plans
from backend.services.cluster import ClusterSource
from backend.services.plan_kinds import shrink as shrink_kind
from backend.store.executions import MIGRATION, STAGES, ExecutionRecords, checking_off
from backend.store.store import Store
from backend.store.workflow import Actor, authorize


def runs_as_migration(gw: ClusterReader | None) -> bool:
    """Whether an approved shrink runs as its migration on this cluster (Apache Kafka has
    no DeletePartitions), so a preview leads with it; False when the cluster does not
    answer or cannot execute (the KIP's stages first, as where they run)."""
    try:
        return mode_on(gw) == MIGRATION
    except Unavailable:
        return False


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


# the migration's steps (services/shrink.py writes their words): 0 is Railyard's, creating
# the new topic; the operator checks the others off in turn
PRODUCERS, CONSUMERS = 1, 2


@plans.audits_refusal("check_step")
def check_step(store: Store, actor: Actor, plan_id: int, step: int, *,
               topics_of: Callable[[str, list[str]], Snapshot],
               source_of: Callable[[str], ClusterSource | None] | None = None,
               now: float | None = None) -> dict:
    """An operator checks off migration step ``step`` (1..): done, in order, audited with
    what the cluster said (its progress, with ``checked``: that step and those words).
    Each is refused while the cluster shows it is not done: producers still writing to
    the old topic (services.migration_checks, through ``source_of``'s Prometheus), a
    consumer group behind on it (through its gateway), and, last, the old topic still
    there (``topics_of``: the named topics as the cluster has them now), so the plan never
    reads completed, its replicas "freed", beside a topic still written to."""
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
        raise _checked_already(step)
    if steps[step - 1]["state"] != "done":
        raise Conflict(f"step {step + 1} comes after step {step}, which is not done yet")
    old, new = str(plan.content["topic"]), str(plan.content["migration"]["new_topic"])
    source = None if source_of is None else source_of(plan.cluster)
    said = "confirmed: the topic is gone"
    if step == PRODUCERS:
        said = migration_checks.producers_switched(source, old, new, step + 1)
    elif step == CONSUMERS:
        said = migration_checks.consumers_drained(source, old, new, step + 1)
    elif step == len(steps) - 1 and topics_of(plan.cluster, [old]).has_topic(old):
        raise Conflict(f"step {step + 1}: topic '{old}' is still on cluster {plan.cluster}: "
                       f"delete it (once no group reads it), then check this step off (a "
                       f"deletion takes a few seconds to reach every broker)")
    text = plan.content["migration"]["steps"][step]
    if not plans.record(store, actor, plan_id, "migration_step_done",
                        detail={"step": step + 1, "text": text, "cluster": said}, now=at(now),
                        also=checking_off(plan_id, step, now)):
        raise _checked_already(step)  # by another operator since it was read
    return {**shrink_kind.progress(records, ex, now),
            "checked": {"step": step + 1, "cluster": said}}


def _checked_already(step: int) -> Conflict:
    """One refusal for a step checked twice, seen at the read or at the write."""
    return Conflict(f"step {step + 1} is already checked off")
