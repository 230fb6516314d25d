"""Replication-throttle questions (KIP-73) as the CLI and the pages ask them."""

from __future__ import annotations

from backend.engines import throttle as engine
from backend.model.reassignment import Reassignment
from backend.model.snapshot import Snapshot


def plan(snap: Snapshot, reassignment: Reassignment, params: engine.ThrottleParams) -> dict:
    """What --execute would set for this reassignment, what it costs, and whether it is safe."""
    return engine.plan_throttle(snap, reassignment, params).to_dict()
