"""The fleet's plan queue in the store: every plan of the named clusters with what a
queue row shows, in one statement for the plans of all clusters, and bulk statements
(never one per plan or per cluster) for the rest: their decisions, their preview's
figures and schedule, their executions' progress and who paused them.

What was read is kept (``Frozen``): a plan's row and decisions change only with its
version, its preview and content never (frozen at proposal). So a refresh of 5,000
plans of 200 clusters reads their ids and versions, the executions in flight, and the
rows of the plans that changed since. The content (megabytes for a large
reassignment) is never read whole: only its schedule fields, and only for plans still
to run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Select, and_, case, func, select, union

from backend.store.executions import ACTIVE, Execution, _execution
from backend.store.schema import audit, decisions, exec_batches, executions, plans
from backend.store.store import Decision, Plan

OPEN = ("proposed", "approved", "executing")  # still to run: a schedule matters
# the content's schedule fields, when present: a reassignment's start time (epoch s,
# in its sha256; services.plans.propose), and a window of its own should a plan carry one
SCHEDULE_KEYS = ("not_before", "window")
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


class Frozen:
    """Plans read before, kept between answers so a refresh reads only what changed: each
    plan as listed (with its decisions) by id and version (every change of a plan's row,
    a decision included, bumps its version), and its preview's figures and content's
    schedule by id (frozen at proposal). Share one per store."""

    MOST = 50_000  # plans remembered; past that it starts afresh

    def __init__(self) -> None:
        self.plans: dict[int, Plan] = {}
        self.figures: dict[int, tuple[dict, dict]] = {}  # id -> (preview, schedule)

    def trim(self) -> None:
        if len(self.plans) > self.MOST or len(self.figures) > self.MOST:
            self.plans, self.figures = {}, {}


def queue_entries(conn: Connection, clusters: list[str], states: list[str] | None = None,
                  limit: int = 10_000, frozen: Frozen | None = None) -> list[QueueEntry]:
    """The newest ``limit`` plans of ``clusters`` (in ``states``, if given) and all of
    theirs still to run, newest first; ``frozen``: what earlier answers read (then only
    the plans' ids and versions are read, and the rows of those that changed)."""
    frozen = frozen or Frozen()
    frozen.trim()
    # this answer's own references: another thread's trim starts new ones meanwhile
    known, figures = frozen.plans, frozen.figures
    where = [plans.c.cluster.in_(clusters)]
    if states:
        where.append(plans.c.state.in_(states))
    # the newest ``limit`` plans, and every plan still to run however old (a long
    # execution stays in the queue while the history after it grows)
    newest = select(plans.c.id, plans.c.version).where(*where) \
        .order_by(plans.c.id.desc()).limit(limit).subquery()
    both = union(select(newest.c.id, newest.c.version),
                 select(plans.c.id, plans.c.version).where(*where, plans.c.state.in_(OPEN))
                 ).subquery()
    versions = conn.execute(select(both.c.id, both.c.version)
                            .order_by(both.c.id.desc())).all()
    listed = select(both.c.id)
    stale = [i for i, v in versions if i not in known or known[i].version != v]
    if stale:
        _read_plans(conn, known, figures, _among(stale, listed))
    # (a plan read by the listing's subquery after it left the listing is left out)
    versions = [(i, v) for i, v in versions if i in known]
    running = [i for i, _ in versions if known[i].state == "executing"]
    runs = _executions(conn, running) if running else {}
    paused = [i for i, (ex, _, _) in runs.items() if ex.state in PAUSED]
    by = _paused_by(conn, paused) if paused else {}
    out = []
    for plan_id, _ in versions:
        plan = known[plan_id]
        ex, parts, nbytes = runs.get(plan_id, (None, 0, 0))
        out.append(QueueEntry(plan, figures[plan_id][1] if plan.state in OPEN else {},
                              ex, parts, nbytes, by.get(plan_id)))
    return out


BY_ID = 500  # up to this many plans are read by id; more, as the listing selects them


def _among(ids: list[int], listed: Select):
    """The plans ``ids`` of the listing, as what a plan id is IN."""
    return ids if len(ids) <= BY_ID else listed.scalar_subquery()


def _read_plans(conn: Connection, known: dict[int, Plan],
                figures: dict[int, tuple[dict, dict]], ids) -> None:
    """Plans ``ids`` as listed: their rows and decisions, and the preview's figures and
    schedule of those not read before."""
    rows = conn.execute(select(*_LISTED).where(plans.c.id.in_(ids))).mappings().all()
    unread = [r["id"] for r in rows if r["id"] not in figures]
    if unread:
        _read_figures(conn, figures, unread if len(unread) <= BY_ID else ids)
    made: dict[int, list[Decision]] = {}
    q = select(decisions).where(decisions.c.plan_id.in_(ids)).order_by(decisions.c.id)
    for d in conn.execute(q).mappings():
        made.setdefault(d["plan_id"], []).append(
            Decision(d["user"], d["decision"], d["comment"], d["sha256"], d["at"], d["role"]))
    for r in rows:
        known[r["id"]] = Plan(**r, content=None, basis=None, preview=figures[r["id"]][0],
                              decisions=tuple(made.get(r["id"], ())))


def _read_figures(conn: Connection, figures: dict[int, tuple[dict, dict]], ids) -> None:
    """The preview's figures of plans ``ids`` and the content's schedule of those still to
    run (a plan that ended never runs again: its content is not parsed)."""
    schedule = [case((plans.c.state.in_(OPEN), plans.c.content[k])).label(f"content.{k}")
                for k in SCHEDULE_KEYS]
    q = select(plans.c.id, *[plans.c.preview[k].label(f"preview.{k}") for k in PREVIEW_KEYS],
               *schedule).where(plans.c.id.in_(ids))
    for r in conn.execute(q).mappings():
        figures[r["id"]] = (
            {k: r[f"preview.{k}"] for k in PREVIEW_KEYS if r[f"preview.{k}"] is not None},
            {k: r[f"content.{k}"] for k in SCHEDULE_KEYS if r[f"content.{k}"] is not None})


def plan_bases(conn: Connection, ids: list[int]) -> dict[int, dict]:
    """The stored basis of plans ``ids`` by id, BY_ID plans a statement (a basis is
    frozen at proposal: the caller keeps what it read)."""
    out: dict[int, dict] = {}
    for i in range(0, len(ids), BY_ID):
        q = select(plans.c.id, plans.c.basis).where(plans.c.id.in_(ids[i:i + BY_ID]))
        out.update((plan_id, basis) for plan_id, basis in conn.execute(q))
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
