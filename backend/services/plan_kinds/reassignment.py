"""A reassignment: Kafka's reassignment JSON, run in throttled batches (KIP-455's
AlterPartitionReassignments, KIP-73's replication throttles)."""

from __future__ import annotations

from backend.errors import BadInput
from backend.executor.runs import start_batches
from backend.model.snapshot import Snapshot
from backend.services import plan_preview
from backend.services.plan_basis import StoredBasis, fingerprint
from backend.services.plan_kinds.kind import ConfigsOf, PlanKind, TopicsOf
from backend.services.plan_preview import Draft
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


def draft(snap: Snapshot, body: dict, throttle: float | None) -> Draft:
    """Exactly one of plan (Kafka's reassignment JSON) or generate (a planner goal);
    refused when it moves nothing (there would be nothing to approve)."""
    given = [k for k in ("plan", "generate") if k in body]
    if len(given) != 1:
        raise BadInput("kind reassignment: give exactly one of plan (Kafka's "
                       "reassignment JSON) or generate (a planner goal)")
    if given == ["plan"]:
        made = plan_preview.from_kafka_json(snap, body["plan"], throttle=throttle)
    else:
        made = plan_preview.from_goal(snap, body["generate"], throttle=throttle)
    if made.empty:
        raise BadInput(f"{given[0]}: nothing to move on cluster '{snap.cluster}': "
                       "no plan to propose")
    return made


def title(content: dict) -> str:
    return f"reassign {len(content.get('partitions', []))} partitions"


KIND = PlanKind(NAME, title, basis, changes, start_batches, large=True, throttled=True,
                touched=touched, draft=draft)
