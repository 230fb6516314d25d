"""Brokers a finished plan emptied, remembered so that later goals keep them empty.

A drain usually comes before taking a broker out of service, and while the broker stays
registered nothing in Kafka keeps it empty: a balance or an add would refill it, and new
topics' replicas land on any live broker (Kafka's ``KRaftReplicaPlacer`` places on every
unfenced broker). The plans store knows which completed reassignment last changed each
broker's replica count: one that left it at zero drained it; one that gave it replicas
back (an ``add`` naming it) took it back.
"""

from __future__ import annotations

from backend.model.snapshot import Snapshot
from backend.services import plans
from backend.services.plan_kinds import REASSIGNMENT
from backend.store.store import Store

RECENT = 500  # completed plans read, newest first: a drain older than that is forgotten


def remembered(store: Store, snap: Snapshot) -> dict[int, dict]:
    """{broker id: {"plan": id, "completed_at": ISO 8601}} for the brokers of ``snap``
    whose last completed reassignment emptied them."""
    done = [p for p in plans.list_plans(store, snap.cluster, "completed", RECENT)
            if p.kind == REASSIGNMENT]
    last: dict[int, tuple[int, str, bool]] = {}
    for p in sorted(done, key=lambda p: (p.updated_at, p.id)):
        for b in p.preview.get("brokers", []):
            if b.get("before") != b.get("after"):
                last[int(b["id"])] = (p.id, p.updated_at.isoformat(), b.get("after") == 0)
    present = set(snap.broker_ids.tolist())
    return {b: {"plan": plan_id, "completed_at": at}
            for b, (plan_id, at, emptied) in sorted(last.items()) if emptied and b in present}
