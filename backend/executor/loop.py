"""The executor loop: one ``tick`` at a time, with the clock passed in.

Each tick observes the cluster (list_reassignments), then takes at most one step:
- the batch in flight: throttles follow the moves still in flight (a broker's rates come
  off as soon as it has no move in flight, a topic's replica lists shrink with its moves);
  when none is left the batch is checked against its targets and marked done;
- pausing: the batch in flight finishes, nothing new starts;
- otherwise the next batch starts: throttles first (prior values booked), then
  AlterPartitionReassignments; after the last batch every booked config is restored;
- cancelling / failing: the plan's in-flight moves are cancelled (AlterPartitionReassignments
  with no target) and every booked config is restored.

Every decision comes from the engines: the batches are frozen in the plan
(engines.batches), the throttle lists and brokers are engines.throttle's. The state is in
the store after every step, so a killed executor resumes where it was: a batch marked
"starting" restarts only the entries neither in flight nor at their target, so nothing
moves twice. Gateway errors are retried with backoff; past the budget the plan fails
(with the cause in words), its moves are cancelled and its throttles restored. Putting
configs back has its own budget; past it the plan ends naming every config it could not
put back (in its cause and an audit entry), and their records stay in the store.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from backend.engines.throttle import proposed_moves, throttle_configs
from backend.errors import BadInput, Unavailable
from backend.executor.adaptive import ThrottleControl
from backend.executor.book import ConfigBook, Configs, in_words
from backend.executor.freeze import ExecutionSpec, spec_from_dict
from backend.executor.guards import Watch
from backend.executor.journal import Journal
from backend.executor.retry import RetryPolicy
from backend.gateways.base import METADATA_LAG_SECONDS, ClusterGateway, GatewayError
from backend.model.reassignment import before_moves, reassignment_from_dict
from backend.model.snapshot import Snapshot
from backend.store.executions import (
    WINDING_DOWN,
    Execution,
    ExecutionRecords,
    LostRace,
    saving,
)

Key = tuple[str, int]  # (topic, partition)


@dataclass
class _Batch:
    """What the executor knows in memory about the batch in flight (rebuilt after a
    restart from the store and the cluster)."""

    idx: int
    entries: dict[Key, dict]  # plan entries by partition
    view: Snapshot  # the assignment with in-flight moves at their original replicas
    moving: list[Key]  # entries whose replica set changes
    entry_bytes: dict[Key, int]  # bytes each moving entry copies
    bytes_total: int  # the batch's bytes to copy, as estimated when it started
    in_flight: frozenset[Key] | None = None  # at the last sync
    rate: int | None = None  # the throttle at the last sync (a guard may lower it)
    off_since: float | None = None  # when entries out of flight were first seen off target


class Executor:
    """Runs the executions of one cluster through its gateway."""

    def __init__(self, records: ExecutionRecords, gateway: ClusterGateway, journal: Journal,
                 retry: RetryPolicy | None = None, watch: Watch | None = None,
                 control: ThrottleControl | None = None) -> None:
        """``watch``: the cluster's guard-rail stops and execution windows, if any;
        ``control``: the adaptive throttle (backend/executor/adaptive.py); without one,
        adaptive plans see no traffic (they hold, then run at their floor)."""
        self.records, self.gw, self.journal = records, gateway, journal
        self.retry = retry or RetryPolicy()
        self.watch = watch
        self.control = control or ThrottleControl(records, journal)
        self._batches: dict[int, _Batch] = {}
        self._plans: dict[int, tuple[list[dict], ExecutionSpec]] = {}  # frozen, read once
        self._now = 0.0  # the tick's time, for the book's audit entries

    # ---- the tick ----------------------------------------------------------------------
    def tick(self, plan_id: int, now: float) -> Execution:
        """One step of one execution; the execution row as it is afterwards."""
        self._now = now
        ex = self.records.get(plan_id)
        if ex is None or not ex.active:
            return ex
        if ex.retry_at is not None and now < ex.retry_at:
            return ex
        try:
            ex = self._step(ex, now)
            if ex.attempts or ex.retry_at is not None:
                ex = self.records.save(ex, attempts=0, retry_at=None, error=None,
                                       updated_at=now)
        except LostRace:
            self._batches.pop(plan_id, None)
            return self.records.get(plan_id)
        except (GatewayError, Unavailable, BadInput) as e:
            self._batches.pop(plan_id, None)
            ex = self._failed_attempt(self.records.get(plan_id), e, now)
        return ex

    def _failed_attempt(self, ex: Execution, e: Exception, now: float) -> Execution:
        attempt = ex.attempts + 1
        verdict = self.retry.judge(attempt, e, restoring=ex.state in WINDING_DOWN
                                   or self._at_the_end(ex))
        if verdict.abandon:
            return self._abandon(ex, e, attempt, now)
        if verdict.retry_in is not None:
            self.journal.record(ex.plan_id, "execution_retry", {
                "attempt": attempt, "error": str(e), "retry_in": verdict.retry_in}, now)
            return self.records.save(ex, attempts=attempt, retry_at=now + verdict.retry_in,
                                     error=str(e), updated_at=now)
        self.journal.record(ex.plan_id, "execution_failing", {"cause": verdict.cause}, now)
        return self.records.save(ex, state="failing", cause=verdict.cause, attempts=0,
                                 retry_at=None, error=str(e), updated_at=now)

    def _at_the_end(self, ex: Execution) -> bool:
        """Every batch is done and what is left is putting the configs back."""
        if ex.state != "running" or ex.phase != "idle":
            return False
        try:
            return ex.batch + 1 >= len(self._plan_of(ex.plan_id)[1].batches)
        except BadInput:  # a spec that does not read: not at any end
            return False

    def _abandon(self, ex: Execution, e: Exception, attempt: int, now: float) -> Execution:
        """Past the restore budget: end the plan, naming in words (the cause, an audit
        entry) every config still booked, so nothing changed is left without a record;
        the records stay booked for an operator (or a later plan) to clear."""
        left = self._book(ex).records()
        what = (f"could not put back {len(left)} config(s) after {attempt} attempts "
                f"({e}): {in_words(left)}" if left
                else f"could not finish winding down after {attempt} attempts ({e})")
        if ex.phase != "idle" and ex.batch >= 0:
            what += f"; the reassignments of batch {ex.batch + 1} may still be in flight"
        self.journal.record(ex.plan_id, "configs_not_restored", {
            "attempts": attempt, "error": str(e), "text": what,
            "configs": [{k: r[k] for k in ("entity_type", "name", "key", "value", "prior")}
                        for r in left]}, now)
        moved = "every move is done, but " if self._at_the_end(ex) else ""
        cause = f"{ex.cause}; {what}" if ex.cause else moved + what
        self._batches.pop(ex.plan_id, None)
        ex = self.records.save(ex, cause=cause, attempts=attempt, retry_at=None,
                               error=str(e), updated_at=now)
        return self._end(ex, "cancelled" if ex.state == "cancelling" else "failed",
                         cause, now)

    def _step(self, ex: Execution, now: float) -> Execution:
        flight = {(r["topic"], r["partition"]): r for r in self.gw.list_reassignments()}
        if ex.state in WINDING_DOWN:
            return self._wind_down(ex, flight, now)
        plan, spec = self._plan_of(ex.plan_id)
        if self.watch is not None:  # a guard or a window may hold it (executor/guards.py)
            ex = self.watch.review(self.records, self.journal, ex, spec, plan, flight, now)
        snap = None
        if ex.phase != "idle":
            batch = self._batch(ex, spec, flight)
            if ex.phase == "starting":
                return self._start(ex, spec, batch, flight, now)
            ex, busy, snap = self._follow(ex, spec, batch, flight, now)
            if busy:
                return ex
            snap = snap if snap is not None else self.gw.assignment()
            off = _off_target(batch, snap)
            if self._settling(batch, off, now):
                return ex
            ex = self._finish_batch(ex, batch, snap, off, now)
            if ex.state == "failing":
                return ex
        if ex.state == "pausing":
            self.journal.record(ex.plan_id, "execution_paused", {}, now)
            return self.records.save(ex, state="paused", updated_at=now)
        if ex.state == "paused":
            return ex
        if ex.batch + 1 < len(spec.batches):
            ex = self.records.save(ex, batch=ex.batch + 1, phase="starting", updated_at=now)
            batch = self._batch(ex, spec, flight, snap)
            return self._start(ex, spec, batch, flight, now)
        self._book(ex).restore_all()
        return self._end(ex, "completed", None, now)

    def _plan_of(self, plan_id: int) -> tuple[list[dict], ExecutionSpec]:
        """The plan's entries and its frozen spec."""
        if plan_id not in self._plans:
            content = self.records.content(plan_id)
            entries = content["reassignment"]["partitions"]
            self._plans[plan_id] = (entries, spec_from_dict(content["execution"], len(entries)))
        return self._plans[plan_id]

    # ---- batches -----------------------------------------------------------------------
    def _batch(self, ex: Execution, spec: ExecutionSpec, flight: dict,
               snap: Snapshot | None = None) -> _Batch:
        """The current batch, from memory or rebuilt from the plan and the cluster
        (``snap``: the assignment when the caller has just read it)."""
        cached = self._batches.get(ex.plan_id)
        if cached is not None and cached.idx == ex.batch:
            return cached
        plan, _ = self._plan_of(ex.plan_id)
        entries = {(e["topic"], e["partition"]): e
                   for e in (plan[i] for i in spec.batches[ex.batch])}
        view = before_moves(snap if snap is not None else self.gw.assignment(),
                            [{"topic": t, "partition": p, **r}
                             for (t, p), r in flight.items()])
        parsed = reassignment_from_dict(_plan(entries.values()), view, "plan")
        moves = proposed_moves(view, parsed)
        names, pids = view.topic_names, view.part_id
        moving = [(str(names[view.part_topic[r]]), int(pids[r])) for r in moves.rows.tolist()]
        sizes = view.part_size[moves.rows] * moves.n_destinations
        entry_bytes = dict(zip(moving, sizes.tolist(), strict=True))
        started = self.records.batch(ex.plan_id, ex.batch)["bytes_total"]
        batch = _Batch(ex.batch, entries, view, moving, entry_bytes,
                       started if ex.phase == "running" else sum(entry_bytes.values()))
        self._batches[ex.plan_id] = batch
        return batch

    def _start(self, ex: Execution, spec: ExecutionSpec, batch: _Batch, flight: dict,
               now: float) -> Execution:
        """Throttles for the batch, then its reassignments; only entries neither in flight
        nor already at their target are sent (after a restart, some may be)."""
        view = batch.view
        pending = [e for k, e in batch.entries.items() if k not in flight
                   and view.replicas_of(view.partition_row(*k)) != list(e["replicas"])]
        pending_keys = {(e["topic"], e["partition"]) for e in pending}
        throttled = [k for k in batch.moving if k in flight or k in pending_keys]
        self._book(ex).sync(self._throttles(ex, spec, batch, throttled), now)
        self._look(ex, spec, batch, throttled, now)
        if pending:
            self.gw.alter_reassignments(_plan(pending))
        self.records.save_batch(ex.plan_id, batch.idx, state="running", started_at=now,
                                bytes_total=batch.bytes_total)
        self.journal.record(ex.plan_id, "batch_started", {
            "batch": batch.idx, "partitions": len(batch.entries), "started": len(pending),
            "bytes": batch.bytes_total, "throttle": spec.throttle}, now)
        batch.in_flight = frozenset(throttled)
        return self.records.save(ex, phase="running", updated_at=now)

    def _follow(self, ex: Execution, spec: ExecutionSpec, batch: _Batch, flight: dict,
                now: float) -> tuple[Execution, bool, Snapshot | None]:
        """Keep the throttles on what is still in flight; (execution, still busy, the
        assignment when it was read this tick). A partition counts as done only once it is
        out of flight and at its target (KIP-455: its replicas are the target replicas), so
        one cancelled or retargeted outside Railyard is never counted, and the figure never
        drops when the batch is checked at its end."""
        ours = frozenset(k for k in batch.moving if k in flight)
        snap = None
        if ours != batch.in_flight or self._rate(ex, spec) != batch.rate:
            self._book(ex).sync(self._throttles(ex, spec, batch, sorted(ours)), now)
            snap = self.gw.assignment()
            off = _off_target(batch, snap, skip=ours)
            self.records.save_batch(ex.plan_id, batch.idx,
                                    done=len(batch.entries) - len(ours) - len(off),
                                    bytes_done=_bytes_done(batch, ours | set(off)))
            batch.in_flight = ours
        if ours:
            self._check_brokers(batch, ours)
        self._look(ex, spec, batch, ours, now)
        return ex, bool(ours), snap

    def _look(self, ex: Execution, spec: ExecutionSpec, batch: _Batch,
              moving: Collection[Key], now: float) -> None:
        """The adaptive controller's look (when due) while moves are throttled: at a batch's
        start too, as a batch may end within the tick that started it (a look only while
        following one would then never come); none while a guard holds it at the floor."""
        if moving and batch.rate == spec.throttle:
            self.control.tick(ex.plan_id, spec, self._book(ex), now,
                              ex.bytes_total - ex.bytes_done - _bytes_done(batch, moving))

    def _check_brokers(self, batch: _Batch, ours: frozenset[Key]) -> None:
        """A broker a move needs is down: a retriable error, so the plan fails when it
        stays down past the retry budget."""
        dead = {b["id"] for b in self.gw.describe_cluster()["brokers"] if not b["alive"]}
        if not dead:
            return
        for k in sorted(ours):
            e = batch.entries[k]
            source = batch.view.replicas_of(batch.view.partition_row(*k))
            down = sorted(dead & (set(e["replicas"]) | set(source)))
            if down:
                raise GatewayError("BROKER_NOT_AVAILABLE",
                                   f"broker {down[0]} is down while {k[0]}-{k[1]} moves to it "
                                   f"or from it")

    @staticmethod
    def _settling(batch: _Batch, off: list[Key], now: float) -> bool:
        """Entries out of flight but not at their target yet: the broker that answered
        Metadata may not have applied the controller's last records (ListPartitionReassignments
        is the controller's answer), so the batch is judged only once they stay off target
        for METADATA_LAG_SECONDS, the assignment read again on every tick meanwhile."""
        if not off:
            return False
        if batch.off_since is None:
            batch.off_since = now
        return now - batch.off_since < METADATA_LAG_SECONDS

    def _finish_batch(self, ex: Execution, batch: _Batch, snap: Snapshot, off: list[Key],
                      now: float) -> Execution:
        """Every entry of a batch with nothing in flight must be at its target in ``snap``
        (the assignment now); those ``off`` it past the wait were cancelled or changed
        outside Railyard, and the plan fails."""
        done = len(batch.entries) - len(off)
        moved = _bytes_done(batch, off)
        ex = self.records.finish_batch(ex, batch.idx, done, moved, now)
        self.journal.record(ex.plan_id, "batch_finished",
                            {"batch": batch.idx, "partitions": done, "bytes": moved}, now)
        self._batches.pop(ex.plan_id, None)
        if off:
            k = off[0]
            now_at = snap.replicas_of(snap.partition_row(*k))
            cause = (f"{k[0]}-{k[1]} is not at its target {batch.entries[k]['replicas']} "
                     f"(replicas {now_at}): its reassignment was cancelled or changed "
                     f"outside Railyard")
            self.journal.record(ex.plan_id, "execution_failing", {"cause": cause}, now)
            return self.records.save(ex, state="failing", cause=cause, updated_at=now)
        return ex

    def _throttles(self, ex: Execution, spec: ExecutionSpec, batch: _Batch,
                   keys: list[Key]) -> Configs:
        """The configs kafka-reassign-partitions --execute --throttle would set for the
        moves ``keys`` (engines.throttle.throttle_configs), at the rate of the moment: an
        adaptive plan's broker rates as its controller set them, the guards' floor while
        one holds the plan."""
        batch.rate = rate = self._rate(ex, spec)
        if rate is None or not keys:
            return {}
        plan = reassignment_from_dict(_plan(batch.entries[k] for k in keys), batch.view, "plan")
        configs = throttle_configs(batch.view, plan, rate)
        if rate != spec.throttle:  # held at the floor: the controller waits
            return configs
        return self.control.shape(ex.plan_id, spec, configs, self._book(ex))

    def _rate(self, ex: Execution, spec: ExecutionSpec) -> int | None:
        """The plan's throttle, or the guards' floor while one holds the plan."""
        return spec.throttle if self.watch is None else self.watch.rate(ex, spec)

    # ---- the end -------------------------------------------------------------------------
    def _wind_down(self, ex: Execution, flight: dict, now: float) -> Execution:
        """Cancel this plan's moves in flight, restore every booked config, and end."""
        if ex.phase != "idle" and ex.batch >= 0:
            plan, spec = self._plan_of(ex.plan_id)
            keys = [(plan[i]["topic"], plan[i]["partition"]) for i in spec.batches[ex.batch]]
            ours = [k for k in keys if k in flight]
            if ours:
                self.gw.cancel_reassignments(ours)
                self.journal.record(ex.plan_id, "reassignments_cancelled",
                                    {"batch": ex.batch,
                                     "partitions": [f"{t}-{p}" for t, p in ours]}, now)
            self.records.save_batch(ex.plan_id, ex.batch, state="cancelled",
                                    ended_at=now)
            ex = self.records.save(ex, phase="idle", updated_at=now)  # nothing left flying
        self._book(ex).restore_all()
        self._batches.pop(ex.plan_id, None)
        ended = "cancelled" if ex.state == "cancelling" else "failed"
        return self._end(ex, ended, ex.cause, now)

    def _end(self, ex: Execution, state: str, cause: str | None, now: float,
             phase: str = "idle") -> Execution:
        ended, write = saving(ex, state=state, phase=phase, ended_at=now, updated_at=now)
        self.journal.record(ex.plan_id, f"execution_{state}",
                            {"cause": cause} if cause else {}, now)
        self.journal.ended(ex.plan_id, state, cause, now, also=write)
        if self.watch is not None:
            self.watch.forget(ex.plan_id)
        self.control.forget(ex.plan_id)
        return ended

    def _book(self, ex: Execution) -> ConfigBook:
        plan_id = ex.plan_id
        return ConfigBook(self.records, plan_id, self.gw,
                          lambda action, detail: self.journal.record(plan_id, action, detail,
                                                                     self._now))


def _plan(entries) -> Execution:
    return {"version": 1, "partitions": [{"topic": e["topic"], "partition": e["partition"],
                                          "replicas": list(e["replicas"])} for e in entries]}


def _off_target(batch: _Batch, snap: Snapshot, skip: frozenset[Key] = frozenset()) -> list[Key]:
    """The batch's entries (those in ``skip`` aside) whose replicas in ``snap`` are not
    their target's (KIP-455: a reassignment is complete when they are)."""
    return [k for k, e in batch.entries.items() if k not in skip
            and set(snap.replicas_of(snap.partition_row(*k))) != set(e["replicas"])]


def _bytes_done(batch: _Batch, not_done) -> int:
    """The batch's bytes copied, the entries ``not_done`` (in flight or off target) aside."""
    return max(batch.bytes_total - sum(batch.entry_bytes.get(k, 0) for k in not_done), 0)
