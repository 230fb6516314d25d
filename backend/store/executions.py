"""Executions in the store: the row an executor keeps per started plan, its batches, the
book of configs it changed, the frozen content it runs, and the per-cluster lease.

Every write goes through ``Store.write`` (the one locking rule: on SQLite writers queue in
turn, on PostgreSQL the conditional updates decide), and an execution row only changes
at the version it was read at: an executor that lost its lease (it stalled past the
expiry and another took over) cannot write over the new holder's progress, its write
raises LostRace and it stops.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    and_,
    bindparam,
    delete,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError

from backend.store.schema import (
    exec_batches,
    exec_configs,
    exec_content,
    exec_leases,
    exec_throttle_mode,
    exec_throttle_ticks,
    executions,
)
from backend.store.store import Store

# the one set of execution states (docs/executor.md): a user pauses, resumes and cancels
# a LIVE execution; the executor winds a cancelling or failing one down to an end
LIVE = ("running", "pausing", "paused")
WINDING_DOWN = ("cancelling", "failing")
ACTIVE = LIVE + WINDING_DOWN
ENDED = ("completed", "failed", "cancelled")
BATCHES, STAGES, MIGRATION = "batches", "stages", "migration"  # how an execution runs


class LostRace(RuntimeError):
    """Someone else changed the execution since it was read (another executor, or a user)."""


@dataclass(frozen=True)
class Execution:
    """One execution row (times in seconds since the epoch, on the executor's clock)."""

    plan_id: int
    cluster: str
    state: str  # one of ACTIVE or ENDED
    sha256: str
    throttle: int | None  # bytes/s, as frozen in the spec
    batch: int  # the current batch, -1 before the first
    phase: str  # idle | starting | running (a shrink's: its stage)
    attempts: int  # failed tries of the current step
    retry_at: float | None
    error: str | None  # the last error, retried
    cause: str | None  # why it failed, in words
    requested_by: str | None
    started_at: float
    updated_at: float
    ended_at: float | None
    partitions_total: int
    partitions_done: int
    bytes_total: int
    bytes_done: int
    version: int  # fences a stale executor
    hold: dict | None = None  # why a guard or a window holds it (backend/executor/guards.py)

    @property
    def active(self) -> bool:
        return self.state in ACTIVE


_EXECUTION_FIELDS = frozenset(f.name for f in fields(Execution))


def _execution(row: Any) -> Execution:
    return Execution(**{k: v for k, v in row._mapping.items() if k in _EXECUTION_FIELDS})


class ExecutionRecords:
    """Reads and conditional writes of executions, batches, booked configs and leases."""

    def __init__(self, store: Store) -> None:
        self.store = store

    # ---- executions ------------------------------------------------------------------
    def create(self, plan_id: int, cluster: str, content: dict, sha256: str,
               batch_sizes: list[int], user: str, now: float, bytes_total: int = 0) -> None:
        """The execution row and one pending row per batch, in one transaction."""
        with self.store.write() as c:
            c.execute(insert(exec_content).values(plan_id=plan_id, content=content))
            c.execute(insert(executions).values(
                plan_id=plan_id, cluster=cluster, state="running",
                throttle=content["execution"]["throttle"], sha256=sha256, batch=-1,
                phase="idle", attempts=0, requested_by=user,
                started_at=now, updated_at=now, partitions_total=sum(batch_sizes),
                partitions_done=0, bytes_total=bytes_total, bytes_done=0, version=0))
            if batch_sizes:
                c.execute(insert(exec_batches), [
                    {"plan_id": plan_id, "idx": i, "state": "pending", "partitions": n,
                     "done": 0, "bytes_total": 0, "bytes_done": 0}
                    for i, n in enumerate(batch_sizes)])

    def get(self, plan_id: int) -> Execution | None:
        with self.store.read() as c:
            row = c.execute(select(executions).where(executions.c.plan_id == plan_id)).first()
        return None if row is None else _execution(row)

    def content(self, plan_id: int) -> dict:
        """The frozen content the execution runs (read once: it never changes)."""
        with self.store.read() as c:
            return c.execute(select(exec_content.c.content)
                             .where(exec_content.c.plan_id == plan_id)).scalar_one()

    def mode(self, plan_id: int) -> str:
        """How an execution runs (BATCHES, STAGES or MIGRATION), read from the stored
        content's one field (a reassignment's content can be megabytes)."""
        with self.store.read() as c:
            mode = c.execute(select(exec_content.c.content["execution"]["mode"].as_string())
                             .where(exec_content.c.plan_id == plan_id)).scalar()
        return mode or BATCHES

    def active(self, cluster: str | None = None) -> list[Execution]:
        """Executions not yet ended, oldest first."""
        q = select(executions).where(executions.c.state.in_(ACTIVE))
        if cluster is not None:
            q = q.where(executions.c.cluster == cluster)
        with self.store.read() as c:
            return [_execution(r) for r in c.execute(q.order_by(executions.c.started_at))]

    def on_cluster(self, cluster: str, since: float) -> list[Execution]:
        """Executions on ``cluster`` running at or after ``since``."""
        q = select(executions).where(executions.c.cluster == cluster, or_(
            executions.c.ended_at.is_(None), executions.c.ended_at >= since))
        with self.store.read() as c:
            return [_execution(r) for r in c.execute(q.order_by(executions.c.started_at))]

    def save(self, ex: Execution, **changes: Any) -> Execution:
        """Write ``changes`` if the row is still at ``ex``'s version; the updated row."""
        saved, write = saving(ex, **changes)
        with self.store.write() as c:
            write(c)
        return saved

    def request(self, plan_id: int, allowed: tuple[str, ...], state: str, now: float) -> bool:
        """A pause, resume or cancel with no audit row in its transaction (the executor's
        own; a user's goes with its row: ``requesting``): ``state`` when the execution is
        in ``allowed``."""
        with self.store.write() as c:
            return requesting(plan_id, allowed, state, now)(c)

    # ---- batches ----------------------------------------------------------------------
    def batches(self, plan_id: int) -> list[dict]:
        with self.store.read() as c:
            rows = c.execute(select(exec_batches).where(exec_batches.c.plan_id == plan_id)
                             .order_by(exec_batches.c.idx))
            return [dict(r._mapping) for r in rows]

    def batch(self, plan_id: int, idx: int) -> dict:
        with self.store.read() as c:
            return dict(c.execute(select(exec_batches).where(
                exec_batches.c.plan_id == plan_id, exec_batches.c.idx == idx)).one()._mapping)

    def finish_batch(self, ex: Execution, idx: int, done: int, bytes_done: int,
                     now: float) -> Execution:
        """Mark batch ``idx`` done and move its figures into the execution's totals in one
        transaction, so a reader never sees the batch in neither (progress never drops)."""
        version = ex.version + 1
        with self.store.write() as c:
            c.execute(update(exec_batches).where(
                exec_batches.c.plan_id == ex.plan_id, exec_batches.c.idx == idx).values(
                state="done", ended_at=now, done=done, bytes_done=bytes_done))
            parts, nbytes = c.execute(select(
                func.coalesce(func.sum(exec_batches.c.done), 0),
                func.coalesce(func.sum(exec_batches.c.bytes_done), 0)).where(
                exec_batches.c.plan_id == ex.plan_id, exec_batches.c.state == "done")).one()
            changes = {"phase": "idle", "updated_at": now, "partitions_done": int(parts),
                       "bytes_done": int(nbytes), "version": version}
            _update_if_unchanged(c, ex, changes)
        return replace(ex, **changes)

    def save_batch(self, plan_id: int, idx: int, **changes: Any) -> None:
        with self.store.write() as c:
            _save_batch(c, plan_id, idx, changes)

    # ---- the book of changed configs (backend/executor/book.py) ---------------------------
    def booked(self, plan_id: int, active_only: bool = True) -> list[dict]:
        """The configs an execution changed: {entity_type, name, key, value, prior,
        active, since}, in entity order."""
        q = select(exec_configs).where(exec_configs.c.plan_id == plan_id)
        if active_only:
            q = q.where(exec_configs.c.active)
        with self.store.read() as c:
            return [dict(r._mapping) for r in c.execute(q.order_by(
                exec_configs.c.entity_type, exec_configs.c.name, exec_configs.c.key))]

    def book(self, plan_id: int, kept: list[dict], fresh: list[dict], now: float) -> None:
        """In one transaction: new values of keys already booked (``kept``: entity_type,
        name, key, value) and keys booked afresh with their prior values (``fresh``: also
        prior); a key restored earlier in the run is booked afresh."""
        if not kept and not fresh:
            return
        with self.store.write() as c:
            if kept:
                c.execute(update(exec_configs).where(*_KEY).values(value=bindparam("v")),
                          [_key(plan_id, r) | {"v": r["value"]} for r in kept])
            if fresh:
                rows = [_key(plan_id, r) | {"value": r["value"], "prior": r["prior"],
                                            "active": True, "since": now} for r in fresh]
                c.execute(delete(exec_configs).where(*_KEY), rows)
                c.execute(insert(exec_configs).values(
                    plan_id=bindparam("p"), entity_type=bindparam("e"), name=bindparam("n"),
                    key=bindparam("k")), rows)

    def restored(self, plan_id: int, rows: list[dict]) -> None:
        """Mark booked configs (entity_type, name, key) put back, in one transaction."""
        if rows:
            with self.store.write() as c:
                c.execute(update(exec_configs).where(*_KEY).values(active=False),
                          [_key(plan_id, r) for r in rows])

    def held_configs(self, cluster: str) -> list[dict]:
        """The configs the cluster's executions hold now (set by the executor and not yet
        put back): {plan_id, entity_type, name, key, value, prior, since}. Their plan
        restores them when it ends, so they are not leftovers."""
        q = select(exec_configs).join(executions,
                                      executions.c.plan_id == exec_configs.c.plan_id).where(
            executions.c.cluster == cluster, executions.c.state.in_(ACTIVE),
            exec_configs.c.active)
        with self.store.read() as c:
            return [dict(r._mapping) for r in c.execute(q)]

    # ---- the adaptive throttle (backend/executor/adaptive.py) ------------------------------
    def throttle_mode(self, plan_id: int) -> dict | None:
        """The mode a user switched the execution to ({mode, floor, changed_by,
        changed_at}), or None: as approved."""
        with self.store.read() as c:
            row = c.execute(select(exec_throttle_mode)
                            .where(exec_throttle_mode.c.plan_id == plan_id)).first()
        return None if row is None else dict(row._mapping)

    def set_throttle_mode(self, plan_id: int, mode: str, floor: int | None, user: str,
                          now: float) -> None:
        """Switch the execution's throttle to ``mode`` (replacing an earlier switch)."""
        with self.store.write() as c:
            switching_throttle(plan_id, mode, floor, user, now)(c)

    def add_throttle_tick(self, plan_id: int, at: float, mode: str, brokers: dict,
                          eta_seconds: float | None, note: str | None) -> None:
        """One look of the adaptive controller (the plan page's throttle-over-time)."""
        with self.store.write() as c:
            c.execute(insert(exec_throttle_ticks).values(
                plan_id=plan_id, at=at, mode=mode, brokers=brokers, eta_seconds=eta_seconds,
                note=note))

    def throttle_ticks(self, plan_id: int, newest: int | None = None) -> list[dict]:
        """The controller's looks at an execution, oldest first (only the ``newest`` ones
        when given: a long plan's looks are thousands of rows of every broker's rates)."""
        q = select(exec_throttle_ticks).where(exec_throttle_ticks.c.plan_id == plan_id) \
            .order_by(exec_throttle_ticks.c.id.desc())
        if newest is not None:
            q = q.limit(newest)
        with self.store.read() as c:
            return [dict(r._mapping) for r in c.execute(q)][::-1]

    # ---- the lease ----------------------------------------------------------------------
    def acquire(self, cluster: str, holder: str, now: float, ttl: float) -> bool:
        """Take or renew the cluster's lease: True while ``holder`` holds it.

        A conditional update (held by us, or expired) decides between racers; the first
        insert of a cluster's row is decided by its primary key.
        """
        values = {"holder": holder, "expires_at": now + ttl, "heartbeat_at": now}
        with self.store.write() as c:
            n = c.execute(update(exec_leases).where(
                exec_leases.c.cluster == cluster,
                or_(exec_leases.c.holder == holder, exec_leases.c.expires_at < now))
                .values(**values)).rowcount
        if n == 1:
            return True
        try:
            with self.store.write() as c:
                c.execute(insert(exec_leases).values(cluster=cluster, **values))
            return True
        except IntegrityError:
            return False

    def release(self, cluster: str, holder: str) -> None:
        with self.store.write() as c:
            c.execute(update(exec_leases).where(and_(
                exec_leases.c.cluster == cluster, exec_leases.c.holder == holder))
                .values(expires_at=0.0))

    def lease(self, cluster: str) -> dict | None:
        with self.store.read() as c:
            row = c.execute(select(exec_leases).where(exec_leases.c.cluster == cluster)).first()
        return None if row is None else dict(row._mapping)


_KEY = (exec_configs.c.plan_id == bindparam("p"), exec_configs.c.entity_type == bindparam("e"),
        exec_configs.c.name == bindparam("n"), exec_configs.c.key == bindparam("k"))


def _key(plan_id: int, r: dict) -> dict:
    return {"p": plan_id, "e": r["entity_type"], "n": r["name"], "k": r["key"]}


def requesting(plan_id: int, allowed: tuple[str, ...], state: str,
               now: float) -> Callable[[Connection], bool]:
    """A user's pause, resume or cancel for the transaction of its audit row (Store.record's
    ``also``): ``state`` when the execution is in ``allowed``; whether it was."""
    q = update(executions).where(
        executions.c.plan_id == plan_id, executions.c.state.in_(allowed)).values(
        state=state, updated_at=now, retry_at=None, version=executions.c.version + 1)
    return lambda c: c.execute(q).rowcount == 1


def switching_throttle(plan_id: int, mode: str, floor: int | None, user: str,
                       now: float) -> Callable[[Connection], bool]:
    """A switch of the execution's throttle to ``mode`` (replacing an earlier switch), for
    the transaction of its audit row (Store.record's ``also``): always True."""
    def write(c: Connection) -> bool:
        c.execute(delete(exec_throttle_mode).where(exec_throttle_mode.c.plan_id == plan_id))
        c.execute(insert(exec_throttle_mode).values(
            plan_id=plan_id, mode=mode, floor=floor, changed_by=user, changed_at=now))
        return True
    return write


def checking_off(plan_id: int, idx: int, now: float) -> Callable[[Connection], bool]:
    """An operator's check of migration step ``idx``, for the transaction of its audit row
    (Store.record's ``also``): done at ``now`` unless it already was (two operators at
    once: one row, one audit entry); whether it was."""
    changes = {"state": "done", "started_at": now, "ended_at": now, "done": 1}
    return lambda c: _save_batch(c, plan_id, idx, changes, exec_batches.c.state != "done")


def _save_batch(c: Connection, plan_id: int, idx: int, changes: dict,
                *where: ColumnElement[bool]) -> bool:
    """Write ``changes`` to batch ``idx`` (where ``where`` holds too); whether it matched."""
    return c.execute(update(exec_batches).where(
        exec_batches.c.plan_id == plan_id, exec_batches.c.idx == idx, *where)
        .values(**changes)).rowcount == 1


def saving(ex: Execution, **changes: Any) -> tuple[Execution, Callable[[Connection], None]]:
    """The row after ``changes``, and their conditional write for a transaction of
    another's (an execution's end goes with its plan's: Store.transition's ``also``)."""
    changes["version"] = ex.version + 1
    return replace(ex, **changes), lambda c: _update_if_unchanged(c, ex, changes)


def _update_if_unchanged(c, ex: Execution, changes: dict) -> None:
    """Write ``changes`` to the execution row only if it is still at ``ex``'s version
    (LostRace when another executor changed it first)."""
    n = c.execute(update(executions).where(
        executions.c.plan_id == ex.plan_id,
        executions.c.version == ex.version).values(**changes)).rowcount
    if n != 1:
        raise LostRace(f"execution of plan {ex.plan_id} changed under this executor")
