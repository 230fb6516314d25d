"""One queue for the fleet: every plan of every configured cluster, with where it stands
(approvals so far and still needed, bytes to move, its schedule, progress and ETA while
it runs, why it is paused), filtered by cluster, state and "needs my approval", sorted.

The /queue page and `GET /api/v1/plans?cluster=*` ask ``queue``; the store answers all
clusters at once (backend/store/queue.py: no statement per plan or per cluster; what
never changes is read once per process), and the approvals come from
``approval_status`` on the decisions loaded in bulk.

An open plan whose cluster changed under its basis cannot be approved or started
(services.plans refuses it: re-propose); ``seen`` says so for the lists (this queue, the
navigation's "Plans (N for you)") from each cluster's cached snapshot, so an approver
does not click through plans that Approve would refuse.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any
from weakref import WeakKeyDictionary

from backend.errors import BadInput, Unavailable
from backend.model.snapshot import Snapshot
from backend.services import approval_status, execution, plans
from backend.services.cluster import ClusterSource, assignment_note, cluster_snapshot
from backend.store import queue as repo
from backend.store.store import Plan, Store
from backend.store.workflow import STATES, Actor

ALL = "*"  # every configured cluster
QUEUE_ROWS = 10_000  # the newest plans the queue holds
# the fields a queue may be sorted by ("-field": descending), the grid's columns
SORTS = ("id", "cluster", "state", "kind", "title", "author", "approvals", "still_needed",
         "bytes_to_move", "schedule", "progress", "eta_seconds", "created_at")
DEFAULT_SORT = "-id"  # newest first
CHECKED = ("proposed", "approved")  # the states whose basis Approve or Execute re-checks
HOLDS, STALE, NOT_CHECKED = "holds", "stale", "not checked"  # what a list says of a basis
# cluster name -> its cached snapshot, None when there is none to judge by
SnapshotOf = Callable[[str], Snapshot | None]


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
          limit: int = QUEUE_ROWS, snapshot_of: SnapshotOf | None = None) -> list[dict]:
    """The plans of ``clusters`` (or of ``cluster`` among them; ``*`` is all), in
    ``state``, only those waiting for ``needs_approval_by``'s approval when given (not
    those seen stale: Approve would refuse them), as rows sorted by ``sort``; ``viewer``:
    whose "for you" flag each row carries; ``snapshot_of``: each cluster's cached
    snapshot, what the open plans' bases are checked against (``seen``; without it
    they are not checked)."""
    cluster, state, sort = checked(clusters, cluster, state, sort)
    if needs_approval_by is not None and state not in (None, "proposed"):
        return []  # only a proposed plan waits for an approval
    states = ["proposed"] if needs_approval_by is not None else [state] if state else None
    with store.read() as conn:
        entries = repo.queue_entries(conn, [cluster] if cluster else list(clusters), states,
                                     limit, _frozen(store))
    bases = seen(store, (e.plan for e in entries), snapshot_of)
    if needs_approval_by is not None:
        entries = [e for e in entries if _for(e.plan, needs_approval_by, bases.get(e.plan.id))]
    viewer = viewer or needs_approval_by
    made = _made(store)
    rows = [_row(made, e, viewer, bases.get(e.plan.id)) for e in entries]
    first: dict[str, int | None] = {}
    for r in rows:  # executing, not started: the plan it waits for
        if r["state"] == "executing" and r["execution"] is None:
            if r["cluster"] not in first:
                first[r["cluster"]] = execution.running_first(store, r["cluster"])
            ahead = first[r["cluster"]]
            r.update(execution="starting" if ahead is None else f"waiting for #{ahead}",
                     pause_reason=execution.waiting_text(r["cluster"], ahead))
    return sort_rows(rows, sort)


@dataclass(frozen=True)
class Seen:
    """What a list says of an open plan's basis: HOLDS, STALE or NOT_CHECKED; ``note``:
    the words Approve would refuse it with (STALE), or why it was not checked."""

    basis: str
    note: str | None = None

    @property
    def stale(self) -> str | None:
        """Approve's refusal of a plan seen stale, None otherwise."""
        return self.note if self.basis == STALE else None


def seen(store: Store, listed: Iterable[Plan], snapshot_of: SnapshotOf | None) -> dict[int, Seen]:
    """The bases of the ``listed`` plans that are proposed or approved, by plan id, checked
    against their cluster's cached snapshot (``snapshot_of``, asked once per cluster):
    whether Approve would refuse them as stale, for the lists to say before anyone
    clicks. Only what the lists show: approving and executing still re-read the plan's
    topics live (services.plans), since a cached snapshot may be seconds old either way.

    The check reads no cluster: the whole cached snapshot is the ``topics_of`` answer
    (TopicsOf allows one holding more; a copy of the plan's topics, Snapshot.only_topics,
    would only cost more), and a verdict is kept while the cluster's snapshot is the same
    object. Not checked (NOT_CHECKED, never guessed): a plan whose basis is throttle
    configs (a clear-throttles plan; the snapshot holds none), a cluster with no
    snapshot at hand. The bases are read in bulk, once per plan (frozen at proposal)."""
    bases, judged = _bases(store), _judged(store)
    by_cluster: dict[str, list[Plan]] = {}
    for plan in listed:
        if plan.state in CHECKED:
            by_cluster.setdefault(plan.cluster, []).append(plan)
        else:  # past approval: its basis is never checked here again
            bases.pop(plan.id, None)
    out: dict[int, Seen] = {}
    todo: list[tuple[Plan, Snapshot, dict[int, Seen]]] = []
    for name, open_plans in by_cluster.items():
        snap = snapshot_of(name) if snapshot_of is not None else None
        if snap is None:
            unread = Seen(NOT_CHECKED, note=f"not checked: cluster {name}'s assignment is not "
                                            f"at hand here (Approve reads it live)")
            out.update((p.id, unread) for p in open_plans)
            continue
        kept = judged.get(name)
        if kept is None or kept[0]() is not snap:  # a newer snapshot: judge again
            kept = judged[name] = (weakref.ref(snap), {})
        for plan in open_plans:
            hit = kept[1].get(plan.id)
            if hit is None:
                todo.append((plan, snap, kept[1]))
            else:
                out[plan.id] = hit
    unread_ids = [p.id for p, _, _ in todo if p.id not in bases]
    if unread_ids:
        with store.read() as conn:
            bases.update(repo.plan_bases(conn, unread_ids))
    for plan, snap, kept_here in todo:
        out[plan.id] = kept_here[plan.id] = _judge(replace(plan, basis=bases[plan.id]), snap)
    return out


def _judge(plan: Plan, snap: Snapshot) -> Seen:
    """``plan``'s basis (loaded) against ``snap``, with Approve's own check and words."""
    if "configs" in plan.basis:
        return Seen(NOT_CHECKED, note="not checked: its basis is the throttle configs it "
                                      "deletes, read live when it is approved")
    refusal = plans.basis_refusal(plan, lambda _cluster, _topics: snap)
    return Seen(HOLDS) if refusal is None else Seen(STALE, refusal)


def cached_snapshots(source_of: Callable[[str], ClusterSource | None]) -> SnapshotOf:
    """``SnapshotOf`` from the dashboard's kept cluster reads (``cluster_snapshot``, the
    assignment every page shows, read at most once per CLUSTER_TTL_SECONDS): None for a
    cluster ``source_of`` does not know, one that cannot be read, or one whose gateway
    did not answer (its snapshot file is not the cluster now)."""
    def snapshot_of(name: str) -> Snapshot | None:
        source = source_of(name)
        if source is None:
            return None
        try:
            snap = cluster_snapshot(source)
        except Unavailable:
            return None
        return None if assignment_note(source) is not None else snap
    return snapshot_of


_FROZEN: WeakKeyDictionary[Store, repo.Frozen] = WeakKeyDictionary()
_MADE: WeakKeyDictionary[Store, dict] = WeakKeyDictionary()
_BASES: WeakKeyDictionary[Store, dict[int, dict]] = WeakKeyDictionary()
# cluster -> the snapshot last judged by (not kept alive) and the verdicts on it, by plan id
_JUDGED: WeakKeyDictionary[Store, dict[str, tuple[weakref.ref, dict[int, Seen]]]] = \
    WeakKeyDictionary()


def _frozen(store: Store) -> repo.Frozen:
    """The store's queue rows read before (what never changes of them), for this process."""
    frozen = _FROZEN.get(store)
    if frozen is None:
        frozen = _FROZEN.setdefault(store, repo.Frozen())
    return frozen


def _bases(store: Store) -> dict[int, dict]:
    """The bases read before by plan id, for this process (started afresh past
    repo.Frozen.MOST)."""
    bases = _BASES.get(store)
    if bases is None or len(bases) > repo.Frozen.MOST:
        bases = _BASES[store] = {}
    return bases


def _judged(store: Store) -> dict[str, tuple[weakref.ref, dict[int, Seen]]]:
    """The verdicts kept per cluster, for this process."""
    return _JUDGED.setdefault(store, {})


def _made(store: Store) -> dict:
    """Rows made before (but their "for_you"), by plan id and version, for this process:
    a plan that is not executing changes only with its version."""
    made = _MADE.get(store)
    if made is None or len(made) > 2 * QUEUE_ROWS:
        made = _MADE[store] = {}
    return made


def _row(made: dict, entry: repo.QueueEntry, viewer: Actor | None,
         basis: Seen | None = None) -> dict:
    """``row``, from what was made before for a plan that is not executing."""
    if entry.execution is not None:
        return row(entry, viewer, basis)
    key = (entry.plan.id, entry.plan.version)
    base = made.get(key)
    if base is None:
        base = made[key] = _plan_row(entry)
    return {**base, **_basis_fields(basis), "for_you": _for(entry.plan, viewer, basis)}


def row(entry: repo.QueueEntry, viewer: Actor | None = None,
        basis: Seen | None = None) -> dict:
    """One queue row, JSON-ready: the plan, its approvals, bytes to move, schedule, and
    its execution's state, progress, predicted ETA and pause reason while it runs; what
    ``seen`` says of its basis (``basis``: None for a plan past approval); and whether
    it waits for ``viewer``'s approval (never when seen stale)."""
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
    return {**out, **_basis_fields(basis), "for_you": _for(entry.plan, viewer, basis)}


def _basis_fields(basis: Seen | None) -> dict:
    """A row's "basis" (HOLDS, STALE, NOT_CHECKED; None: nothing to check), "stale"
    (Approve's refusal, or None) and "basis_note" (its reason, or why not checked)."""
    if basis is None:
        return {"basis": None, "stale": None, "basis_note": None}
    return {"basis": basis.basis, "stale": basis.stale, "basis_note": basis.note}


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


def _for(plan: Plan, viewer: Actor | None, basis: Seen | None = None) -> bool:
    """Whether ``plan`` waits for ``viewer``'s approval and was not seen stale."""
    return (viewer is not None and approval_status.needs_approval_by(plan, viewer)
            and (basis is None or basis.stale is None))


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
