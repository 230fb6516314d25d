"""How the executor starts each kind of plan.

A plan that became executing is started once: its ``start`` writes the execution row
(the frozen content that runs, one row per batch or step) for the executor to tick, or,
for a plan with no execution row (clear-throttles), runs it in one go. The executor that
ticks an execution is chosen by the row's mode (batches, stages, migration), not its kind
(backend/executor/thread.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from backend.errors import Unavailable
from backend.executor.clear import clear_configs
from backend.executor.freeze import executable_content
from backend.executor.journal import Journal
from backend.executor.migration import migration_content
from backend.executor.retry import RetryPolicy
from backend.executor.shrink import mode_on, stages_content
from backend.gateways.base import ClusterGateway, GatewayError
from backend.model.snapshot import Snapshot
from backend.store.executions import MIGRATION, STAGES, ExecutionRecords
from backend.store.store import Plan

MOST_NAMED = 5  # changed configs a failed clear names


@dataclass
class Site:
    """One cluster as the executor thread sees it in a cycle."""

    records: ExecutionRecords
    journal: Journal
    gateway: Callable[[], ClusterGateway]
    snapshot: Callable[[], Snapshot]  # the assignment now
    retry: RetryPolicy
    tries: dict[int, tuple[int, float]] = field(default_factory=dict)  # one-go runs' retries


def start_batches(site: Site, plan: Plan, now: float) -> bool:
    """A reassignment: the spec computed from the approved content and throttle on the
    cluster as approved (the execute request re-checked its basis)."""
    content = executable_content(site.snapshot(), plan.content, plan.throttle,
                                 throttle_mode=plan.throttle_mode)
    spec = content["execution"]
    site.records.create(plan.id, plan.cluster, content, plan.sha256,
                        [len(b) for b in spec["batches"]], plan.author, now,
                        bytes_total=int(plan.preview.get("bytes_to_move") or 0))
    site.journal.record(plan.id, "execution_started", {
        "batches": len(spec["batches"]), "throttle": spec["throttle"],
        "per_broker": spec["per_broker"], "cluster": spec["cluster"],
        **({"throttle_mode": spec["throttle_mode"]} if "throttle_mode" in spec else {})}, now)
    return True


def start_shrink(site: Site, plan: Plan, now: float) -> bool:
    """A shrink, in the mode this cluster runs it: the KIP's stages or the migration."""
    mode = mode_on(site.gateway()) or MIGRATION
    c = plan.content
    if mode == STAGES:
        content, sizes = stages_content(c), [len(c["removed_partitions"])]
        detail = {"mode": mode, "topic": c["topic"], "keep": c["to"],
                  "delay_ms": c["delay_ms"]}
    else:
        content, sizes = migration_content(c), [1] * len(c["migration"]["steps"])
        detail = {"mode": mode, "new_topic": c["migration"]["new_topic"]}
    site.records.create(plan.id, plan.cluster, content, plan.sha256, sizes, plan.author, now)
    site.journal.record(plan.id, "execution_started", detail, now)
    return True


def run_clear(site: Site, plan: Plan, now: float) -> bool:
    """A clear-throttles plan in one go (backend/executor/clear.py): it holds no execution
    row, as deleting is idempotent and a restart simply runs it again. Gateway errors are
    retried under the one retry policy, the attempts kept in memory. False: no row."""
    journal = site.journal
    if plan.cancel_requested_at is not None:
        journal.ended(plan.id, "cancelled", "cancelled before it ran", now)
        return False
    attempts, retry_at = site.tries.get(plan.id, (0, 0.0))
    if now < retry_at:
        return False
    try:
        changed = clear_configs(site.gateway(), plan.content["configs"],
                                lambda action, detail: journal.record(plan.id, action,
                                                                      detail, now))
    except (GatewayError, Unavailable) as e:
        return _clear_failed(site, plan, attempts + 1, e, now)
    site.tries.pop(plan.id, None)
    if changed:
        journal.ended(plan.id, "failed", "changed since approval, nothing cleared: "
                      f"{'; '.join(changed[:MOST_NAMED])}: re-propose", now)
        return False
    journal.record(plan.id, "execution_completed", {"cleared": len(plan.content["configs"])},
                   now)
    journal.ended(plan.id, "completed", None, now)
    return False


def _clear_failed(site: Site, plan: Plan, attempt: int, e: Exception, now: float) -> bool:
    verdict = site.retry.judge(attempt, e)
    if verdict.retry_in is not None:
        site.tries[plan.id] = (attempt, now + verdict.retry_in)
        site.journal.record(plan.id, "execution_retry", {
            "attempt": attempt, "error": str(e), "retry_in": verdict.retry_in}, now)
        return False
    site.tries.pop(plan.id, None)
    site.journal.ended(plan.id, "failed", verdict.cause, now)
    return False


Start = Callable[[Site, Plan, float], bool]  # True: it wrote an execution row to tick
