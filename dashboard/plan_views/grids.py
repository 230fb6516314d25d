"""Stored plans' diff grids, and how a page names the stored plan it shows.

A stored plan's page holds ``{"plan": id}`` where a draft's page holds the draft's token
(dashboard.drafts): the grid and download callbacks tell the two apart by shape. A
stored reassignment's grid is built once and kept by plan: its content and basis never
change once proposed, and decoding a 100k-move plan's is the slow part of its page.
"""

from __future__ import annotations

from backend.errors import Unavailable
from backend.services import plan_preview
from backend.services.cluster import cluster_snapshot
from backend.store.store import Plan
from dashboard import runtime
from dashboard.drafts import DRAFT_SECONDS


def stored_ref(plan_id: int) -> dict:
    """What a stored plan's page holds to name it."""
    return {"plan": plan_id}


def stored_plan(ref: object) -> int | None:
    """The stored plan ``ref`` names; None for a draft's token (or nothing)."""
    return ref["plan"] if isinstance(ref, dict) else None


def keep_plan_grid(plan_id: int, table: plan_preview.DiffTable) -> None:
    """Keep a stored reassignment's grid (the one built for one view, or the draft's own
    at Propose) for the next views."""
    runtime.current().cache.set(f"plan-grid:{plan_id}", table, timeout=DRAFT_SECONDS)


def plan_grid(plan_id: int) -> plan_preview.DiffTable | None:
    """A stored plan's grid, if kept."""
    return runtime.current().cache.get(f"plan-grid:{plan_id}")


def stored_table(plan: Plan) -> plan_preview.DiffTable:
    """A stored reassignment's diff grid: its basis against its content, with byte counts
    from the cluster as last read (none when it cannot be read)."""
    try:
        snap = cluster_snapshot(runtime.current().source(plan.cluster))
    except Unavailable:
        snap = None
    return plan_preview.stored_diff_table(plan.content, plan.basis or {}, snap)
