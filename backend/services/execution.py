"""Executing approved plans: what the API, the pages and the executor thread ask.

The plan workflow (backend/services/plans.py) moves a plan to executing and records a
cancel request; the ExecutorThread of `railyard serve` (or a worker) picks executing plans
up, one cluster at a time under the cluster's lease, and runs them with the executor
(backend/executor). Pause and resume act on the execution itself. Every executor step is
an audit entry of the plan (user "railyard"); the end moves the plan to completed, failed
or cancelled.

What runs is what was approved: the throttle is in the plan's sha256, the batches are
computed from the approved content on the cluster as the approval checked it (its basis),
with the default concurrency limits, and the spec that runs is stored with the execution.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime

import numpy as np

from backend.errors import Conflict, NotFound, Unavailable
from backend.executor.clear import clear_configs
from backend.executor.freeze import executable_content, spec_from_dict
from backend.executor.loop import Executor, RetryPolicy
from backend.executor.records import ACTIVE, ENDED, ExecutionRecords
from backend.gateways.base import ClusterGateway, GatewayError
from backend.model.snapshot import Snapshot
from backend.services import plan_preview, plans, shrink_execution
from backend.store.engine import writer
from backend.store.store import Plan, Store
from backend.store.workflow import SYSTEM, Actor, authorize

log = logging.getLogger(__name__)

LEASE_SECONDS = 30.0  # a lease not renewed for this long is taken over
GatewayOf = Callable[[str], ClusterGateway]  # cluster name -> its gateway


def records_of(store: Store) -> ExecutionRecords:

    return ExecutionRecords(store.engine, writer(store.engine))


def _at(now: float) -> datetime:
    return datetime.fromtimestamp(now, UTC)


class StoreJournal:
    """The executor's reports as the plan's audit entries and its final transition."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def record(self, plan_id: int, action: str, detail: dict, now: float) -> None:
        plans.record(self.store, SYSTEM, plan_id, action, detail=detail, now=_at(now))

    def ended(self, plan_id: int, state: str, cause: str | None, now: float) -> None:
        if plans.get(self.store, plan_id).state == "executing":
            plans.finish(self.store, SYSTEM, plan_id, state,
                         detail={"cause": cause} if cause else None, now=_at(now))


# ---- user requests -----------------------------------------------------------------------
def pause(store: Store, actor: Actor, plan_id: int, now: float | None = None) -> dict:
    """Finish the batch in flight and start nothing new."""
    return _request(store, actor, plan_id, "pause", ("running",), "pausing", now)


def resume(store: Store, actor: Actor, plan_id: int, now: float | None = None) -> dict:
    return _request(store, actor, plan_id, "resume", ("pausing", "paused"), "running", now)


def _request(store: Store, actor: Actor, plan_id: int, action: str, allowed: tuple[str, ...],
             state: str, now: float | None) -> dict:
    now = time.time() if now is None else now
    plan = plans.get(store, plan_id)
    authorize(actor, "execute", plan.author)
    if plan.kind == "shrink":
        raise Conflict(f"plan {plan_id} is a shrink: it cannot {action}, its stages run on "
                       "the cluster's clock (cancel stops it before DeletePartitions is sent)")
    records = records_of(store)
    if records.get(plan_id) is None:
        raise Conflict(f"plan {plan_id} is {plan.state}: it is not running, so it cannot "
                       f"{action}")
    if not records.request(plan_id, allowed, state, now):
        current = records.get(plan_id)["state"]
        raise Conflict(f"plan {plan_id}'s execution is {current}: it can {action} only when "
                       f"{' or '.join(allowed)}")
    plans.record(store, actor, plan_id, f"execution_{action}", detail=None, now=_at(now))
    return progress(store, plan_id, now)


# ---- progress ------------------------------------------------------------------------------
def progress(store: Store, plan_id: int, now: float | None = None) -> dict | None:
    """Where an execution is: per batch and overall, partitions and bytes done, the rate
    observed against the throttle, and predicted and observed ETAs. None before it starts."""
    now = time.time() if now is None else now
    records = records_of(store)
    ex = records.get(plan_id)
    if ex is None:
        return None
    batches = records.batches(plan_id)
    throttle = ex["throttle"]
    end = ex["ended_at"] or now
    elapsed = max(end - ex["started_at"], 1e-9)
    done, total = ex["bytes_done"], ex["bytes_total"]
    # the finished batches are in the execution's totals; the batch in flight, or the one
    # a cancel or a failure stopped, adds what it finished (progress never goes back)
    unfinished = [b for b in batches if b["state"] in ("running", "cancelled")]
    done += sum(b["bytes_done"] for b in unfinished)
    remaining = max(total - done, 0)
    rate = done / elapsed if done else None
    per_batch = [{
        "batch": b["idx"], "state": _batch_state(b), "partitions": b["partitions"],
        "done": b["done"], "bytes_total": b["bytes_total"], "bytes_done": b["bytes_done"],
        "started_at": b["started_at"], "ended_at": b["ended_at"],
        "observed_rate": (b["bytes_done"] / (b["ended_at"] - b["started_at"])
                          if b["ended_at"] and b["ended_at"] > b["started_at"] else None),
    } for b in batches]
    partitions_done = ex["partitions_done"] + sum(b["done"] for b in unfinished)
    eta = 0.0 if ex["state"] == "completed" else None  # no ETA once failed or cancelled
    return {
        "plan_id": plan_id, "state": ex["state"], "cause": ex["cause"], "error": ex["error"],
        "retry_at": ex["retry_at"], "attempts": ex["attempts"],
        "started_at": ex["started_at"], "ended_at": ex["ended_at"],
        "batch": ex["batch"], "batches": len(batches),
        "partitions_done": partitions_done, "partitions_total": ex["partitions_total"],
        "bytes_done": done, "bytes_total": total,
        "fraction": partitions_done / ex["partitions_total"] if ex["partitions_total"] else 1.0,
        "throttle": throttle, "observed_rate": rate,
        "predicted_eta_seconds": (remaining / throttle if throttle else None)
        if ex["state"] in ACTIVE else eta,
        "observed_eta_seconds": (remaining / rate if rate else None)
        if ex["state"] in ACTIVE else eta,
        "per_batch": per_batch,
        "shrink": shrink_execution.progress(records, ex, now),
    }


def _batch_state(b: dict) -> str:
    """A batch the executor closed with partitions off their target failed (the plan
    fails with it), though its record says done."""
    return "failed" if b["state"] == "done" and b["done"] < b["partitions"] else b["state"]


def batch_markers(store: Store, cluster: str, start: float, end: float) -> list[dict]:
    """Batch starts and ends on ``cluster`` between ``start`` and ``end`` (epoch s), as
    markers for the time series in plan_events.events' shape ("batch 2 started"), oldest
    first: a chart shows which batch of which plan was moving data when."""
    records = records_of(store)
    runs = [ex for ex in records.on_cluster(cluster, start) if ex["started_at"] <= end]
    titles = {p.id: p.title for p in plans.list_plans(store, cluster=cluster)} if runs else {}
    out = []
    for ex in runs:
        for b in records.batches(ex["plan_id"]):
            for key, what in (("started_at", "started"), ("ended_at", "ended")):
                if b[key] is not None and start <= b[key] <= end:
                    out.append({"at": b[key], "plan_id": ex["plan_id"], "kind": "batch",
                                "state": f"batch {b['idx'] + 1} {what}", "user": SYSTEM.name,
                                "title": titles.get(ex["plan_id"], "")})
    return sorted(out, key=lambda m: m["at"])


# ---- the executor thread --------------------------------------------------------------------
def start_execution(store: Store, plan: Plan, snap: Snapshot, now: float) -> None:
    """The execution row of an executing plan: the spec computed from the approved content
    and throttle on the cluster as approved (request_execute re-checked its basis)."""
    content = plan.content if "execution" in plan.content else executable_content(
        snap, plan.content, plan.throttle)
    spec = spec_from_dict(content["execution"], len(content["reassignment"]["partitions"]))
    records_of(store).create(plan.id, plan.cluster, content, plan.sha256,
                             [len(b) for b in spec.batches], plan.author, now,
                             bytes_total=int(plan.preview.get("bytes_to_move") or 0))
    plans.record(store, SYSTEM, plan.id, "execution_started",
                 detail={"batches": len(spec.batches), "throttle": spec.throttle,
                         "per_broker": spec.per_broker, "cluster": spec.cluster},
                 now=_at(now))


class ExecutorThread(threading.Thread):
    """Runs the executing plans of the configured clusters, one tick per interval.

    Per cluster: take (or renew) the cluster's lease; start executions for plans that
    just became executing (one plan at a time per cluster, oldest first), pass cancel
    requests on, tick the running one, and finish plans whose execution ended.
    """

    def __init__(self, store: Store, clusters: list[str], gateways: GatewayOf,
                 snapshot_of: Callable[[str], Snapshot], interval: float = 1.0,
                 clock: Callable[[], float] = time.time, holder: str | None = None,
                 retry: RetryPolicy | None = None) -> None:
        super().__init__(daemon=True, name="railyard-executor")
        self.store, self.clusters, self.gateways = store, clusters, gateways
        self.snapshot_of, self.interval, self.clock = snapshot_of, interval, clock
        self.holder = holder or f"executor-{uuid.uuid4().hex[:12]}"
        self.records = records_of(store)
        self.retry = retry
        self._executors: dict[tuple[str, str], Executor] = {}  # (cluster, mode)
        self._modes: dict[int, str] = {}  # plan -> batches | stages | migration
        self._clear_tries: dict[int, tuple[int, float]] = {}  # plan -> (attempts, retry at)
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.wait(self.interval):
            self.cycle(self.clock())

    def stop(self) -> None:
        self._halt.set()
        if self.is_alive():
            self.join(timeout=30)
        for cluster in self.clusters:
            self.records.release(cluster, self.holder)

    def cycle(self, now: float) -> None:
        """One pass over every cluster; an unreachable store or cluster waits a pass."""
        for cluster in self.clusters:
            try:
                self.cycle_cluster(cluster, now)
            except (Unavailable, NotFound, Conflict) as e:
                log.warning("executor: cluster %s: %s", cluster, e)
            except Exception:  # a bug must not stop the other clusters' plans
                log.exception("executor: cluster %s", cluster)

    def cycle_cluster(self, cluster: str, now: float) -> None:
        executing = plans.list_plans(self.store, cluster=cluster, state="executing")
        if not executing and not self.records.active(cluster):
            return
        if not self.records.acquire(cluster, self.holder, now, LEASE_SECONDS):
            return
        journal = StoreJournal(self.store)
        for plan in sorted(executing, key=lambda p: p.id):
            ex = self.records.get(plan.id)
            if ex is not None and ex["state"] in ENDED:
                journal.ended(plan.id, ex["state"], ex["cause"], now)  # finish a lost end
            elif ex is not None and plan.cancel_requested_at is not None \
                    and ex["state"] in ("running", "pausing", "paused"):
                self.records.request(plan.id, ("running", "pausing", "paused"),
                                     "cancelling", now)
        ids = {p.id for p in executing}
        for ex in self.records.active(cluster):
            if ex["plan_id"] not in ids and ex["state"] in ("running", "pausing", "paused"):
                # the plan was ended outside the executor: stop its moves, restore throttles
                self.records.request(ex["plan_id"], ("running", "pausing", "paused"),
                                     "cancelling", now)
        active = self.records.active(cluster)
        if not active:
            waiting = [p for p in sorted(executing, key=lambda p: p.id)
                       if self.records.get(p.id) is None]
            if not waiting:
                return
            plan = plans.get(self.store, waiting[0].id)
            if plan.kind == plans.CLEAR:
                self._clear(plan, journal, now)
                return
            if plan.kind == "shrink":
                shrink_execution.start(self.store, self.records, plan, self.gateways(cluster),
                                       now)
            else:
                start_execution(self.store, plan, self.snapshot_of(cluster), now)
            if plan.cancel_requested_at is not None:  # cancelled before it started
                self.records.request(plan.id, ("running",), "cancelling", now)
            active = self.records.active(cluster)
        plan_id = active[0]["plan_id"]
        if plan_id not in self._modes:
            self._modes[plan_id] = shrink_execution.mode_of(self.records, plan_id)
        mode = self._modes[plan_id]
        executor = self._executors.get((cluster, mode))
        if executor is None:
            executor = self._executors[(cluster, mode)] = (
                Executor(self.records, self.gateways(cluster), journal, self.retry)
                if mode == "batches" else shrink_execution.executor_for(
                    mode, self.records, self.gateways(cluster), journal, self.retry))
        executor.tick(plan_id, now)


    def _clear(self, plan: Plan, journal: StoreJournal, now: float) -> None:
        """Run a clear-throttles plan in one go (backend/executor/clear.py): it holds no
        execution row, as deleting is idempotent and a restart simply runs it again.
        Gateway errors are retried with the executor's backoff, in memory."""
        if plan.cancel_requested_at is not None:
            journal.ended(plan.id, "cancelled", "cancelled before it ran", now)
            return
        attempts, retry_at = self._clear_tries.get(plan.id, (0, 0.0))
        if now < retry_at:
            return
        policy = self.retry or RetryPolicy()
        try:
            changed = clear_configs(self.gateways(plan.cluster), plan.content["configs"],
                                    lambda action, detail: journal.record(plan.id, action,
                                                                          detail, now))
        except (GatewayError, Unavailable) as e:
            retriable = isinstance(e, Unavailable) or e.retriable
            if retriable and attempts + 1 < policy.budget:
                delay = policy.delay(attempts + 1)
                self._clear_tries[plan.id] = (attempts + 1, now + delay)
                journal.record(plan.id, "execution_retry", {"attempt": attempts + 1,
                                                            "error": str(e), "retry_in": delay},
                               now)
                return
            self._clear_tries.pop(plan.id, None)
            journal.ended(plan.id, "failed", f"gave up after {attempts + 1} attempts: {e}"
                          if retriable else f"the cluster refused: {e}", now)
            return
        self._clear_tries.pop(plan.id, None)
        if changed:
            journal.ended(plan.id, "failed", "changed since approval, nothing cleared: "
                          f"{'; '.join(changed[:5])}: re-propose", now)
            return
        journal.record(plan.id, "execution_completed",
                       {"cleared": len(plan.content["configs"])}, now)
        journal.ended(plan.id, "completed", None, now)


# ---- the demo ---------------------------------------------------------------------------------
DEMO_THROTTLE = 20_000_000  # bytes/s


def propose_demo_plan(store: Store, snap: Snapshot, author: Actor) -> Plan | None:
    """`railyard demo` starts with one plan waiting for the demo approver: 300 replicas
    from broker 1 to broker 4 (same rack), throttled, on partitions the demo scenario
    leaves alone (it moves partitions off broker 3 to broker 9), so the approval's basis
    check passes. None when a plan is already proposed."""
    if plans.list_plans(store, cluster=snap.cluster, state="proposed", limit=1):
        return None
    on = {}
    for b in (1, 4, 3, 9):
        on[b] = np.zeros(snap.n_partitions, bool)
        on[b][snap.replica_partition[snap.replica_broker == snap.broker_positions([b])[0]]] = True
    rows = np.flatnonzero(on[1] & ~on[4] & ~on[3] & ~on[9] & ~snap.part_internal)[:300]
    content = {"version": 1, "partitions": [
        {"topic": str(snap.topic_names[snap.part_topic[r]]), "partition": int(snap.part_id[r]),
         "replicas": [4 if b == 1 else b for b in snap.replicas_of(r)]} for r in rows.tolist()]}
    draft = plan_preview.from_kafka_json(snap, content, throttle=DEMO_THROTTLE)
    return plans.propose(store, author, cluster=snap.cluster, kind="reassignment",
                         content=draft.content, preview=draft.preview, snapshot=snap,
                         title="Move 300 replicas from broker 1 to broker 4 (demo)",
                         throttle=DEMO_THROTTLE)
