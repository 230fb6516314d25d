"""One queue for the fleet: every plan of every configured cluster, with where it stands
(approvals so far and still needed, bytes to move, its schedule, progress and ETA while
it runs, why it is paused), filtered by cluster, state and "needs my approval", sorted.

The /queue page and `GET /api/v1/plans?cluster=*` ask ``queue``; the store answers all
clusters at once (backend/store/queue.py: no statement per plan or per cluster; what
never changes is read once per process), and the approvals come from
``approval_status`` on the decisions loaded in bulk.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any
from weakref import WeakKeyDictionary

from backend.errors import BadInput
from backend.services import approval_status, execution
from backend.store import queue as repo
from backend.store.store import Plan, Store
from backend.store.workflow import STATES, Actor

ALL = "*"  # every configured cluster
QUEUE_ROWS = 10_000  # the newest plans the queue holds
# the fields a queue may be sorted by ("-field": descending), the grid's columns
SORTS = ("id", "cluster", "state", "kind", "title", "author", "approvals", "still_needed",
         "bytes_to_move", "schedule", "progress", "eta_seconds", "created_at")
DEFAULT_SORT = "-id"  # newest first


def checked(clusters: Sequence[str], cluster: str | None, state: str | None,
            sort: str | None) -> tuple[str | None, str | None, str]:
    """The filters as the queue takes them: (cluster or None for all, state or None,
    sort); BadInput naming the one that is not known."""
    cluster = None if cluster in (None, "", ALL) else cluster
    if cluster is not None and cluster not in clusters:
        raise BadInput(f"cluster: expected {ALL} or one of {', '.join(clusters)}, "
                       f"got {cluster[:60]!r}")
    state = state or None
    if state is not None and state not in STATES:
        raise BadInput(f"state: expected one of {', '.join(STATES)}, got {state[:40]!r}")
    sort = sort or DEFAULT_SORT
    if sort.lstrip("-") not in SORTS:
        raise BadInput(f"sort: expected one of {', '.join(SORTS)} (a leading - for "
                       f"descending), got {sort[:40]!r}")
    return cluster, state, sort


def queue(store: Store, clusters: Sequence[str], *, cluster: str | None = None,
          state: str | None = None, needs_approval_by: Actor | None = None,
          viewer: Actor | None = None, sort: str | None = None,
          limit: int = QUEUE_ROWS) -> list[dict]:
    """The plans of ``clusters`` (or of ``cluster`` among them; ``*`` is all), in
    ``state``, only those waiting for ``needs_approval_by``'s approval when given, as
    rows sorted by ``sort``; ``viewer``: whose "for you" flag each row carries."""
    cluster, state, sort = checked(clusters, cluster, state, sort)
    if needs_approval_by is not None and state not in (None, "proposed"):
        return []  # only a proposed plan waits for an approval
    states = ["proposed"] if needs_approval_by is not None else [state] if state else None
    with store.read() as conn:
        entries = repo.queue_entries(conn, [cluster] if cluster else list(clusters), states,
                                     limit, _frozen(store))
    if needs_approval_by is not None:
        entries = [e for e in entries
                   if approval_status.needs_approval_by(e.plan, needs_approval_by)]
    viewer = viewer or needs_approval_by
    made = _made(store)
    return sort_rows([_row(made, e, viewer) for e in entries], sort)


_FROZEN: WeakKeyDictionary[Store, repo.Frozen] = WeakKeyDictionary()
_MADE: WeakKeyDictionary[Store, dict] = WeakKeyDictionary()


def _frozen(store: Store) -> repo.Frozen:
    """The store's queue rows read before (what never changes of them), for this process."""
    frozen = _FROZEN.get(store)
    if frozen is None:
        frozen = _FROZEN.setdefault(store, repo.Frozen())
    return frozen


def _made(store: Store) -> dict:
    """Rows made before (but their "for_you"), by plan id and version, for this process:
    a plan that is not executing changes only with its version."""
    made = _MADE.get(store)
    if made is None or len(made) > 2 * QUEUE_ROWS:
        made = _MADE[store] = {}
    return made


def _row(made: dict, entry: repo.QueueEntry, viewer: Actor | None) -> dict:
    """``row``, from what was made before for a plan that is not executing."""
    if entry.execution is not None:
        return row(entry, viewer)
    key = (entry.plan.id, entry.plan.version)
    base = made.get(key)
    if base is None:
        base = made[key] = _plan_row(entry)
    return {**base, "for_you": _for(entry.plan, viewer)}


def row(entry: repo.QueueEntry, viewer: Actor | None = None) -> dict:
    """One queue row, JSON-ready: the plan, its approvals, bytes to move, schedule, and
    its execution's state, progress, predicted ETA and pause reason while it runs; and
    whether it waits for ``viewer``'s approval."""
    out = _plan_row(entry)
    ex = entry.execution
    if ex is not None:
        partitions, _copied, left = execution.done_so_far(ex, entry.unfinished_partitions,
                                                          entry.unfinished_bytes)
        said = execution.held(ex)
        out.update(execution=said["status"],
                   progress=partitions / ex.partitions_total if ex.partitions_total else None,
                   eta_seconds=execution.predicted_left(entry.plan.preview, ex.state, left),
                   pause_reason=pause_reason(ex.state, entry.paused_by, ex.cause, said))
        if said["next_window"] is not None:
            out["schedule"] = schedule_text({**entry.schedule,
                                             "next_window": said["next_window"]})
    return {**out, "for_you": _for(entry.plan, viewer)}


def _plan_row(entry: repo.QueueEntry) -> dict:
    """A row's figures of the plan itself (no execution yet)."""
    plan = entry.plan
    approval = approval_status.status(plan)
    return {
        "id": plan.id, "key": str(plan.id), "cluster": plan.cluster, "state": plan.state,
        "kind": plan.kind, "title": plan.title, "author": plan.author,
        "created_at": plan.created_at.isoformat(), "expires_at": plan.expires_at.isoformat(),
        "approvers": list(approval.approvers), "required": approval.required,
        "roles": list(approval.roles), "admin_required": approval.admin_required,
        "approvals": f"{len(approval.approvers)} of {approval.required}",
        # approvals are needed only while it is proposed: a rejected, withdrawn or
        # expired plan needs none ("1 still needed" read as a plan waiting for someone)
        "still_needed": approval.still_needed if plan.state == "proposed" or approval.met
        else None,
        "approval_text": approval.text,
        "bytes_to_move": plan.preview.get("bytes_to_move"),
        "schedule": schedule_text(entry.schedule),
        "execution": None, "progress": None, "eta_seconds": None, "pause_reason": None}


def _for(plan: Plan, viewer: Actor | None) -> bool:
    return viewer is not None and approval_status.needs_approval_by(plan, viewer)


def schedule_text(schedule: dict) -> str:
    """A plan's not-before (and the next window, when a window holds it) as a row shows
    them, times in UTC; "—" when none."""
    parts = [f"{key.replace('_', ' ')} {_text(value)}" for key, value in schedule.items()]
    return "; ".join(parts) or "—"


def _text(value: Any) -> str:
    """Epoch seconds as a UTC time; anything else as it is (JSON when not a string)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, UTC).strftime("%Y-%m-%d %H:%M UTC")
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def pause_reason(state: str, paused_by: str | None, cause: str | None,
                 held: dict | None = None) -> str | None:
    """Why a pausing or paused execution waits, in words (a guard's or a window's hold,
    else the user who paused it); None for any other state."""
    if state not in repo.PAUSED:
        return None
    if held is not None and held.get("hold"):
        return f"{held['status']}: {held['hold']['text']}"
    who = f"paused by {paused_by}" if paused_by else "paused"
    doing = "; the batch in flight finishes first" if state == "pausing" else ""
    return who + doing + (f" ({cause})" if cause else "")


def sort_rows(rows: list[dict], sort: str) -> list[dict]:
    """``rows`` by ``sort`` (a field of SORTS, "-field" descending), rows without a value
    last either way, ties newest first."""
    field, descending = sort.lstrip("-"), sort.startswith("-")
    rows = sorted(rows, key=lambda r: -r["id"])
    present = [r for r in rows if r[field] is not None]
    absent = [r for r in rows if r[field] is None]
    return sorted(present, key=lambda r: _key(r[field]), reverse=descending) + absent


def _key(value: Any) -> Any:
    return value.casefold() if isinstance(value, str) else value


def open_counts(store: Store, cluster: str) -> dict[str, int]:
    """How many of ``cluster``'s plans are proposed, approved and executing (the
    Overview's link to them in the queue)."""
    with store.read() as conn:
        entries = repo.queue_entries(conn, [cluster], list(repo.OPEN), frozen=_frozen(store))
    return {s: sum(e.plan.state == s for e in entries) for s in repo.OPEN}
