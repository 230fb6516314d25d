"""A reassignment: Kafka's reassignment JSON, run in throttled batches (KIP-455's
AlterPartitionReassignments, KIP-73's replication throttles)."""

from __future__ import annotations

from backend.errors import BadInput
from backend.executor.runs import start_batches
from backend.model.snapshot import Snapshot
from backend.services.plan_basis import StoredBasis, fingerprint
from backend.services.plan_kinds.kind import ConfigsOf, PlanKind, TopicsOf
from backend.store.store import Plan

NAME = "reassignment"


def touched(content: dict) -> tuple[list[tuple[str, int]], list[str]]:
    """The partitions it moves; no topic's partition count matters."""
    try:
        return [(str(e["topic"]), int(e["partition"])) for e in content["partitions"]], []
    except (KeyError, TypeError, ValueError) as e:
        raise BadInput(f"{NAME} plan: malformed content ({type(e).__name__}: {e})") from None


def basis(snap: Snapshot | None, content: dict) -> dict:
    return fingerprint(snap, *touched(content))


def changes(plan: Plan, topics_of: TopicsOf, _configs_of: ConfigsOf | None) -> list[str]:
    """The touched partitions' replicas now against the basis (only their topics read)."""
    stored = StoredBasis.parse(plan.basis)
    return stored.changes(topics_of(plan.cluster, stored.topics))


def title(content: dict) -> str:
    return f"reassign {len(content.get('partitions', []))} partitions"


KIND = PlanKind(NAME, title, basis, changes, start_batches, large=True, throttled=True,
                touched=touched)
