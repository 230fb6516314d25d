"""Replication-throttle questions (KIP-73) as the CLI and the pages ask them."""

from __future__ import annotations

import numpy as np

from backend.engines import throttle as engine
from backend.engines.planner import Goal
from backend.engines.throttle import (
    DEFAULT_FETCH_RESPONSE_MAX_BYTES,
    DEFAULT_WINDOW_NUM,
    DEFAULT_WINDOW_SECONDS,
)
from backend.errors import BadInput
from backend.model.io import load_snapshot
from backend.model.reassignment import Reassignment, load_reassignment, reassignment_from_dict
from backend.model.snapshot import Snapshot
from backend.services import reassign
from backend.services.cluster import ClusterSource, cluster_snapshot

ETA_CURVE_POINTS = 25


def plan(snap: Snapshot, reassignment: Reassignment, params: engine.ThrottleParams) -> dict:
    """What --execute would set for this reassignment, what it costs, and whether it is safe."""
    return engine.plan_throttle(snap, reassignment, params).to_dict()


def plan_files(snapshot: str, reassignment: str, throttle: float,
               network_capacity: float | None = None,
               fetch_response_max_bytes: int = DEFAULT_FETCH_RESPONSE_MAX_BYTES,
               window_num: int = DEFAULT_WINDOW_NUM,
               window_seconds: int = DEFAULT_WINDOW_SECONDS) -> dict:
    """`railyard throttle plan`: the throttle plan for a snapshot file and a plan file."""
    snap = load_snapshot(snapshot)
    params = engine.ThrottleParams(throttle, network_capacity, fetch_response_max_bytes,
                                   window_num, window_seconds)
    return plan(snap, load_reassignment(reassignment, snap), params)


def reassignment_for(source: ClusterSource, uploaded: dict | None,
                     uploaded_name: str | None) -> tuple[Reassignment, str]:
    """The uploaded plan, or else the plan `railyard reassign generate --goal balance`
    proposes for the cluster (a real plan to rehearse on, never invented moves)."""
    snap = cluster_snapshot(source)
    if uploaded is not None:
        return reassignment_from_dict(uploaded, snap, uploaded_name or "uploaded plan"), \
            uploaded_name or "uploaded plan"
    proposed = reassign.generate(snap, Goal("balance"), snap.limits)["plan"]
    if not proposed["partitions"]:
        raise BadInput("the cluster is balanced, so there is nothing to move: upload a "
                       "reassignment plan (kafka-reassign-partitions JSON)")
    return reassignment_from_dict(proposed, snap, "balance plan"), \
        f"balance plan ({len(proposed['partitions'])} partitions)"


def whatif(source: ClusterSource, reassignment: Reassignment, throttle: float,
           network_capacity: float | None) -> dict:
    """The throttle plan at ``throttle``, plus the predicted ETA over a range of throttles."""
    snap = cluster_snapshot(source)
    answer = plan(snap, reassignment, engine.ThrottleParams(throttle, network_capacity))
    grid = np.unique(np.geomspace(max(throttle / 20, 1.0), throttle * 20, ETA_CURVE_POINTS)
                     .round())
    curve = [plan(snap, reassignment, engine.ThrottleParams(float(t), network_capacity))
             ["eta_seconds"] for t in grid]
    return {**answer, "eta_curve": {"throttle": grid.tolist(), "eta_seconds": curve}}
