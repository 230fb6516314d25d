"""What one kind of plan is: the pieces that differ from kind to kind, behind one shape.

The services, the executor thread and the pages ask a kind (backend/services/plan_kinds)
for these instead of comparing kind names; a new kind is one module here (and its page
block on the UI floors, dashboard/plan_views/kinds/)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from backend.errors import BadInput
from backend.executor.runs import Start
from backend.gateways.base import ClusterReader
from backend.model.snapshot import Snapshot
from backend.services.plan_preview import Draft
from backend.store.executions import Execution, ExecutionRecords
from backend.store.store import Plan


def no_migration(plan: Plan, gateway: ClusterReader | None, migration: bool) -> None:
    """Any cluster that can be changed runs it; it has no migration to run instead."""
    if migration:
        raise BadInput(f"migration: plan {plan.id} is a {plan.kind}; only a shrink has one")


def no_progress(records: ExecutionRecords, ex: Execution, now: float) -> dict | None:
    """Nothing beyond the batches every execution reports."""
    return None


@dataclass(frozen=True)
class PlanKind:
    """One kind of plan."""

    name: str
    # the default title of a plan with this content
    title: Callable[[dict], str]
    # the basis stored with the plan, proposed against the snapshot (None: not read);
    # approval and execution check whatever it records (plan_basis.changes_since)
    basis: Callable[[Snapshot | None, dict], dict]
    # how the executor starts it (backend/executor/runs.py)
    start: Start
    # refuse Execute on this cluster, in one line (``migration``: the migration asked)
    check_execute: Callable[[Plan, ClusterReader | None, bool], None] = no_migration
    # its own progress beside the batches (the "shrink" part of an execution's progress)
    progress: Callable[[ExecutionRecords, Execution, float], dict | None] = no_progress
    # why pause and resume do not act on its execution (None: they do)
    unpausable: str | None = None
    # the draft an API request for a plan of this kind asks for (None: not drafted from a
    # request), given the request body and its checked throttle
    # (snapshot, request body, throttle, the brokers completed plans drained, each
    # broker's network capacity in bytes/s: the cluster's configured one, None for 1 GbE,
    # the cluster's gateway: what it can do, None when not known)
    draft: Callable[[Snapshot, dict, float | None, dict[int, dict] | None, float | None,
                     ClusterReader | None], Draft] | None = None
    # whether, on a cluster with this gateway, it runs as a migration instead (offered
    # beside Execute)
    migration_here: Callable[[ClusterReader | None], bool] = lambda _gw: False
    # (partitions, topics whose partition count matters) its content touches
    touched: Callable[[dict], tuple[list[tuple[str, int]], list[str]]] = lambda _c: ([], [])
    # (brokers, topics) the approval rules count, given its content, preview and basis
    affects: Callable[[dict, dict, dict], tuple[set, set[str]]] = \
        lambda _c, _p, _b: (set(), set())
    # the keys an API request for it may hold beyond cluster, kind and title (any other is
    # refused, naming it)
    request_keys: tuple[str, ...] = ()
    propose_right: str | None = None  # a right beyond "propose" its author needs
    large: bool = False  # content and basis can be megabytes: pages read them lazily
    throttled: bool = False  # it carries a replication throttle
    # it runs in batches that wait for a start time and the cluster's execution windows
    # (so it may be given a not-before time, or be let run outside the windows)
    scheduled: bool = False
