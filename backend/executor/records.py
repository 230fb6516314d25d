"""The executor's rows in the store: executions, their batches, and the per-cluster lease.

Every update of an execution is conditional on the version it read, so an executor that
lost its lease (it stalled past the expiry and another took over) cannot write over the
new holder's progress: its write raises LostRace and it stops.
"""

from __future__ import annotations

from sqlalchemy import Engine, and_, func, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from backend.store.schema import (
    exec_batches,
    exec_configs,
    exec_content,
    exec_leases,
    executions,
)

ACTIVE = ("running", "pausing", "paused", "cancelling", "failing")
ENDED = ("completed", "failed", "cancelled")


class LostRace(RuntimeError):
    """Someone else changed the execution since it was read (another executor, or a user)."""


class ExecutionRecords:
    """Reads and conditional writes of executions, batches and leases."""

    def __init__(self, engine: Engine, write_engine: Engine | None = None) -> None:
        """``write_engine``: the same pool marked for write transactions where the store
        needs it (SQLite's BEGIN IMMEDIATE, backend.store.engine.writer)."""
        self.engine = engine
        self.writer = write_engine or engine

    # ---- executions ------------------------------------------------------------------
    def create(self, plan_id: int, cluster: str, content: dict, sha256: str,
               batch_sizes: list[int], user: str, now: float, bytes_total: int = 0) -> None:
        """The execution row and one pending row per batch, in one transaction."""
        with self.writer.begin() as c:
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

    def get(self, plan_id: int) -> dict | None:
        with self.engine.connect() as c:
            row = c.execute(select(executions).where(executions.c.plan_id == plan_id)).first()
        return None if row is None else dict(row._mapping)

    def content(self, plan_id: int) -> dict:
        """The frozen content the execution runs (read once: it never changes)."""
        with self.engine.connect() as c:
            return c.execute(select(exec_content.c.content)
                             .where(exec_content.c.plan_id == plan_id)).scalar_one()

    def active(self, cluster: str | None = None) -> list[dict]:
        """Executions not yet ended, oldest first."""
        q = select(executions).where(executions.c.state.in_(ACTIVE))
        if cluster is not None:
            q = q.where(executions.c.cluster == cluster)
        with self.engine.connect() as c:
            return [dict(r._mapping) for r in c.execute(q.order_by(executions.c.started_at))]

    def on_cluster(self, cluster: str, since: float) -> list[dict]:
        """Executions on ``cluster`` running at or after ``since``."""
        q = select(executions).where(executions.c.cluster == cluster, or_(
            executions.c.ended_at.is_(None), executions.c.ended_at >= since))
        with self.engine.connect() as c:
            return [dict(r._mapping) for r in c.execute(q.order_by(executions.c.started_at))]

    def save(self, ex: dict, **changes) -> dict:
        """Write ``changes`` if the row is still at ``ex``'s version; the updated row."""
        changes["version"] = ex["version"] + 1
        with self.writer.begin() as c:
            n = c.execute(update(executions).where(
                executions.c.plan_id == ex["plan_id"],
                executions.c.version == ex["version"]).values(**changes)).rowcount
        if n != 1:
            raise LostRace(f"execution of plan {ex['plan_id']} changed under this executor")
        return {**ex, **changes}

    def request(self, plan_id: int, allowed: tuple[str, ...], state: str, now: float) -> bool:
        """A user's pause, resume or cancel: ``state`` when the execution is in ``allowed``."""
        with self.writer.begin() as c:
            n = c.execute(update(executions).where(
                executions.c.plan_id == plan_id, executions.c.state.in_(allowed)).values(
                state=state, updated_at=now, retry_at=None,
                version=executions.c.version + 1)).rowcount
        return n == 1

    def held_configs(self, cluster: str) -> list[dict]:
        """The configs the cluster's executions hold now (set by the executor and not yet
        put back): {plan_id, entity_type, name, key, value, prior, since}. Their plan
        restores them when it ends, so they are not leftovers."""
        q = select(exec_configs).join(executions,
                                      executions.c.plan_id == exec_configs.c.plan_id).where(
            executions.c.cluster == cluster, executions.c.state.in_(ACTIVE),
            exec_configs.c.active)
        with self.engine.connect() as c:
            return [dict(r._mapping) for r in c.execute(q)]

    # ---- batches ----------------------------------------------------------------------
    def batches(self, plan_id: int) -> list[dict]:
        with self.engine.connect() as c:
            rows = c.execute(select(exec_batches).where(exec_batches.c.plan_id == plan_id)
                             .order_by(exec_batches.c.idx))
            return [dict(r._mapping) for r in rows]

    def batch(self, plan_id: int, idx: int) -> dict:
        with self.engine.connect() as c:
            return dict(c.execute(select(exec_batches).where(
                exec_batches.c.plan_id == plan_id, exec_batches.c.idx == idx)).one()._mapping)

    def batch_totals(self, plan_id: int) -> tuple[int, int]:
        """Partitions and bytes done over the finished batches."""
        with self.engine.connect() as c:
            row = c.execute(select(func.coalesce(func.sum(exec_batches.c.done), 0),
                                   func.coalesce(func.sum(exec_batches.c.bytes_done), 0))
                            .where(exec_batches.c.plan_id == plan_id,
                                   exec_batches.c.state == "done")).one()
        return int(row[0]), int(row[1])

    def save_batch(self, plan_id: int, idx: int, **changes) -> None:
        with self.writer.begin() as c:
            c.execute(update(exec_batches).where(exec_batches.c.plan_id == plan_id,
                                                 exec_batches.c.idx == idx).values(**changes))

    # ---- the lease ----------------------------------------------------------------------
    def acquire(self, cluster: str, holder: str, now: float, ttl: float) -> bool:
        """Take or renew the cluster's lease: True while ``holder`` holds it.

        A conditional update (held by us, or expired) decides between racers; the first
        insert of a cluster's row is decided by its primary key.
        """
        values = {"holder": holder, "expires_at": now + ttl, "heartbeat_at": now}
        with self.writer.begin() as c:
            n = c.execute(update(exec_leases).where(
                exec_leases.c.cluster == cluster,
                or_(exec_leases.c.holder == holder, exec_leases.c.expires_at < now))
                .values(**values)).rowcount
        if n == 1:
            return True
        try:
            with self.writer.begin() as c:
                c.execute(insert(exec_leases).values(cluster=cluster, **values))
            return True
        except IntegrityError:
            return False

    def release(self, cluster: str, holder: str) -> None:
        with self.writer.begin() as c:
            c.execute(update(exec_leases).where(and_(
                exec_leases.c.cluster == cluster, exec_leases.c.holder == holder))
                .values(expires_at=0.0))

    def lease(self, cluster: str) -> dict | None:
        with self.engine.connect() as c:
            row = c.execute(select(exec_leases).where(exec_leases.c.cluster == cluster)).first()
        return None if row is None else dict(row._mapping)
