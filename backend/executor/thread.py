"""The executor thread of `railyard serve` (or a worker): runs the executing plans of the
configured clusters, one cluster at a time under the cluster's lease, one tick per
interval. Every step is an audit entry of the plan (user "railyard"); the end moves the
plan to completed, failed or cancelled (backend/executor/journal.py)."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Protocol

from backend.errors import Conflict, NotFound, Unavailable
from backend.executor.adaptive import ControlSettings, ThrottleControl, TrafficReader
from backend.executor.guards import Watch
from backend.executor.journal import StoreJournal
from backend.executor.loop import Executor
from backend.executor.migration import MigrationExecutor
from backend.executor.retry import RetryPolicy
from backend.executor.runs import Site, Start
from backend.executor.shrink import ShrinkExecutor
from backend.gateways.base import ClusterGateway
from backend.model.snapshot import Snapshot
from backend.store.executions import BATCHES, ENDED, LIVE, MIGRATION, STAGES, ExecutionRecords
from backend.store.store import Plan, Store, load_plan, query_plans

log = logging.getLogger(__name__)

LEASE_SECONDS = 30.0  # a lease not renewed for this long is taken over
GatewayOf = Callable[[str], ClusterGateway]  # cluster name -> its gateway
# cluster name -> where its adaptive throttle reads traffic, and its knobs
TrafficOf = Callable[[str], tuple[TrafficReader | None, ControlSettings]]


class Doubt(Protocol):
    """Why a plan may not start (services.plans.execution_doubt answers one)."""

    cause: str
    unsealed: bool  # only because an audit row is not sealed yet (PostgreSQL, a moment)


# (plan loaded with its content, whether to read its audit trail) -> why it may not
# start, None when what would run is what its sealed audit trail shows approved
DoubtOf = Callable[[Plan, bool], Doubt | None]
INTERVAL = 1.0  # seconds between the executor's looks at each executing plan
SEAL_WAIT = 30.0  # seconds a start waits for its plan's audit rows to be sealed
# the executor that ticks an execution, by the mode its row was started in
EXECUTORS: dict[str, type[Executor]] = {BATCHES: Executor, STAGES: ShrinkExecutor,
                                        MIGRATION: MigrationExecutor}


class ExecutorThread(threading.Thread):
    """Runs the executing plans of the configured clusters, one tick per interval.

    Per cluster: take (or renew) the cluster's lease; start executions for plans that
    just became executing (one plan at a time per cluster, oldest first; one whose content
    or sealed audit trail does not show it approved ends failed instead), pass cancel
    requests on, tick the running one, and finish plans whose execution ended.
    """

    def __init__(self, store: Store, clusters: list[str], gateways: GatewayOf,
                 snapshot_of: Callable[[str], Snapshot], interval: float = INTERVAL,
                 clock: Callable[[], float] = time.time, holder: str | None = None,
                 retry: RetryPolicy | None = None, *, starts: Mapping[str, Start],
                 doubt_of: DoubtOf, watches: Callable[[str], Watch | None] | None = None,
                 traffic: TrafficOf | None = None) -> None:
        """``starts``: how each kind of plan starts (the plan kinds' registry,
        backend/services/plan_kinds, hands them over: services.execution.executor_thread);
        ``doubt_of``: the check every start passes first (services.plans.execution_doubt);
        ``watches``: each cluster's guard-rail stops and windows (services.guards);
        ``traffic``: each cluster's traffic reader for adaptive throttles (none: adaptive
        plans hold, then run at their floor)."""
        super().__init__(daemon=True, name="railyard-executor")
        self.store, self.clusters, self.gateways = store, clusters, gateways
        self.snapshot_of, self.interval, self.clock = snapshot_of, interval, clock
        self.holder = holder or f"executor-{uuid.uuid4().hex[:12]}"
        self.records = ExecutionRecords(store)
        self.retry = retry or RetryPolicy()
        self.starts, self.doubt_of = starts, doubt_of
        self.watches = watches
        self.traffic = traffic
        self.journal = StoreJournal(store)
        self._executors: dict[tuple[str, str], Executor] = {}  # (cluster, mode)
        self._modes: dict[int, str] = {}  # plan -> batches | stages | migration
        self._tries: dict[int, tuple[int, float]] = {}  # one-go runs: (attempts, retry at)
        self._unsealed: dict[int, float] = {}  # plan -> when its start first met an unsealed row
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
        with self.store.read() as conn:
            executing = sorted(query_plans(conn, cluster=cluster, state="executing"),
                           key=lambda p: p.id)
        if not executing and not self.records.active(cluster):
            return
        if not self.records.acquire(cluster, self.holder, now, LEASE_SECONDS):
            return
        self._pass_requests_on(cluster, executing, now)
        active = self.records.active(cluster)
        if not active:
            if not self._start_next(cluster, executing, now):
                return
            active = self.records.active(cluster)
        plan_id = active[0].plan_id
        if plan_id not in self._modes:
            self._modes[plan_id] = self.records.mode(plan_id)
        mode = self._modes[plan_id]
        executor = self._executors.get((cluster, mode))
        if executor is None:
            watch = self.watches(cluster) if self.watches and mode == BATCHES else None
            control = None if self.traffic is None else ThrottleControl(
                self.records, self.journal, *self.traffic(cluster))
            executor = self._executors[(cluster, mode)] = EXECUTORS[mode](
                self.records, self.gateways(cluster), self.journal, self.retry,
                **({"watch": watch} if watch else {}), control=control)
        executor.tick(plan_id, now)

    def _pass_requests_on(self, cluster: str, executing: list, now: float) -> None:
        """Finish plans whose execution ended apart from them (in stores written before the
        two ends were one transaction), and turn cancel requests, and plans ended outside
        the executor, into cancelling executions (their moves stop, their throttles are
        put back)."""
        for plan in executing:
            ex = self.records.get(plan.id)
            if ex is not None and ex.state in ENDED:
                self.journal.ended(plan.id, ex.state, ex.cause, now)
            elif ex is not None and plan.cancel_requested_at is not None and ex.state in LIVE:
                self.records.request(plan.id, LIVE, "cancelling", now)
        ids = {p.id for p in executing}
        for ex in self.records.active(cluster):
            if ex.plan_id not in ids and ex.state in LIVE:
                self.records.request(ex.plan_id, LIVE, "cancelling", now)

    def _start_next(self, cluster: str, executing: list, now: float) -> bool:
        """Start the oldest executing plan without an execution; True when there is now
        an execution to tick."""
        waiting = [p for p in executing if self.records.get(p.id) is None]
        if not waiting:
            return False
        with self.store.read() as conn:
            plan = load_plan(conn, waiting[0].id)
        if plan is None:
            raise NotFound(f"no plan {waiting[0].id}")
        if not self._trusted(plan, now):
            return False
        site = Site(self.records, self.journal, lambda: self.gateways(cluster),
                    lambda: self.snapshot_of(cluster), self.retry, self._tries)
        if not self.starts[plan.kind](site, plan, now):
            return False
        if plan.cancel_requested_at is not None:  # cancelled before it started
            self.records.request(plan.id, ("running",), "cancelling", now)
        return True

    def _trusted(self, plan: Plan, now: float) -> bool:
        """Whether ``plan`` may start: what runs is what its sealed audit trail shows
        approved (services.plans.execution_doubt), checked here, where every start goes
        through, as the database can be written past the services. A one-go run's
        retries re-check only its content. A plan that fails is ended as failed with
        the cause; one whose audit rows PostgreSQL has not sealed yet (Store.write seals
        just after the commit) waits up to SEAL_WAIT first."""
        doubt = self.doubt_of(plan, plan.id not in self._tries)
        if doubt is not None and doubt.unsealed and \
                now < self._unsealed.setdefault(plan.id, now) + SEAL_WAIT:
            return False
        self._unsealed.pop(plan.id, None)
        if doubt is None:
            return True
        log.warning("executor: not starting plan %s: %s", plan.id, doubt.cause)
        self.journal.ended(plan.id, "failed", doubt.cause, now)
        return False
