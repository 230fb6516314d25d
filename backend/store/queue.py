"""The fleet's plan queue in the store: every plan of the named clusters with what a
queue row shows, in one statement for the plans of all clusters and one bulk statement
each for their decisions, their executions' progress and who paused them.

Nothing here is per plan or per cluster: 5,000 plans of 200 clusters are four
statements. The plans' content (megabytes for a large reassignment) is never read
whole: only its schedule fields, and only for plans still to run; the preview only for
the figures a row shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, and_, case, func, select

from backend.store.executions import ACTIVE, Execution, _execution
from backend.store.schema import audit, decisions, exec_batches, executions, plans
from backend.store.store import Decision, Plan

OPEN = ("proposed", "approved", "executing")  # still to run: a schedule matters
SCHEDULE_KEYS = ("not_before", "window")  # the content's schedule fields, when present
PREVIEW_KEYS = ("bytes_to_move", "batched_eta_seconds", "eta_seconds")  # what a row shows
PAUSED = ("pausing", "paused")


@dataclass(frozen=True)
class QueueEntry:
    """One plan as the queue shows it: the plan (without content and basis; its preview
    holds only PREVIEW_KEYS; its decisions loaded), the content's schedule fields, its
    execution with the partitions and bytes the batch in flight (or the one a cancel
    stopped) finished so far, and who paused it."""

    plan: Plan
    schedule: dict[str, Any]
    execution: Execution | None = None
    unfinished_partitions: int = 0
    unfinished_bytes: int = 0
    paused_by: str | None = None


_LISTED = [c for c in plans.c if c.name not in ("content", "basis", "preview")]


def _fields(column, keys: tuple[str, ...], only_open: bool) -> list:
    """``column``'s top-level ``keys`` as their own JSON columns (the database extracts
    them: the document is not sent); for open plans only when ``only_open``."""
    out = []
    for key in keys:
        value = column[key]
        out.append((case((plans.c.state.in_(OPEN), value)) if only_open else value)
                   .label(f"{column.name}.{key}"))
    return out


def queue_entries(conn: Connection, clusters: list[str], states: list[str] | None = None,
                  limit: int = 10_000) -> list[QueueEntry]:
    """The newest ``limit`` plans of ``clusters`` (in ``states``, if given), newest first."""
    where = [plans.c.cluster.in_(clusters)]
    if states:
        where.append(plans.c.state.in_(states))
    listed = select(*_LISTED, *_fields(plans.c.preview, PREVIEW_KEYS, False),
                    *_fields(plans.c.content, SCHEDULE_KEYS, True)) \
        .where(*where).order_by(plans.c.id.desc()).limit(limit)
    rows = conn.execute(listed).mappings().all()
    if not rows:
        return []
    ids = select(plans.c.id).where(*where).order_by(plans.c.id.desc()).limit(limit) \
        .scalar_subquery()
    made: dict[int, list[Decision]] = {}
    for d in conn.execute(select(decisions).where(decisions.c.plan_id.in_(ids))
                          .order_by(decisions.c.id)).mappings():
        made.setdefault(d["plan_id"], []).append(
            Decision(d["user"], d["decision"], d["comment"], d["sha256"], d["at"]))
    running = [r["id"] for r in rows if r["state"] == "executing"]
    runs = _executions(conn, running) if running else {}
    paused = [i for i, (ex, _, _) in runs.items() if ex.state in PAUSED]
    by = _paused_by(conn, paused) if paused else {}
    out = []
    for r in rows:
        plan = Plan(**{c.name: r[c.name] for c in _LISTED}, content=None, basis=None,
                    preview={k: r[f"preview.{k}"] for k in PREVIEW_KEYS
                             if r[f"preview.{k}"] is not None},
                    decisions=tuple(made.get(r["id"], ())))
        schedule = {k: r[f"content.{k}"] for k in SCHEDULE_KEYS
                    if r[f"content.{k}"] is not None}
        ex, parts, nbytes = runs.get(r["id"], (None, 0, 0))
        out.append(QueueEntry(plan, schedule, ex, parts, nbytes, by.get(r["id"])))
    return out


def _executions(conn: Connection, plan_ids: list[int]) -> dict[int, tuple[Execution, int, int]]:
    """Active executions of ``plan_ids`` with what their unfinished batches (running, or
    stopped by a cancel) did so far: (execution, partitions, bytes)."""
    unfinished = select(
        exec_batches.c.plan_id,
        func.coalesce(func.sum(exec_batches.c.done), 0).label("u_parts"),
        func.coalesce(func.sum(exec_batches.c.bytes_done), 0).label("u_bytes")) \
        .where(exec_batches.c.plan_id.in_(plan_ids),
               exec_batches.c.state.in_(("running", "cancelled"))) \
        .group_by(exec_batches.c.plan_id).subquery()
    q = select(executions, unfinished.c.u_parts, unfinished.c.u_bytes) \
        .outerjoin(unfinished, unfinished.c.plan_id == executions.c.plan_id) \
        .where(and_(executions.c.plan_id.in_(plan_ids), executions.c.state.in_(ACTIVE)))
    return {r.plan_id: (_execution(r), int(r.u_parts or 0), int(r.u_bytes or 0))
            for r in conn.execute(q)}


def _paused_by(conn: Connection, plan_ids: list[int]) -> dict[int, str]:
    """Who last asked each of ``plan_ids`` to pause (its audit entry)."""
    q = select(audit.c.plan_id, audit.c.user).where(
        audit.c.plan_id.in_(plan_ids), audit.c.action == "execution_pause") \
        .order_by(audit.c.id)
    return {plan_id: user for plan_id, user in conn.execute(q)}
