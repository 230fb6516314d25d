"""A reassignment: Kafka's reassignment JSON, run in throttled batches (KIP-455's
AlterPartitionReassignments, KIP-73's replication throttles)."""

from __future__ import annotations

from backend.errors import BadInput
from backend.executor.runs import start_batches
from backend.gateways.base import ClusterReader
from backend.model.snapshot import Snapshot
from backend.services import plan_preview
from backend.services.plan_basis import fingerprint
from backend.services.plan_kinds.kind import PlanKind
from backend.services.plan_preview import Draft

NAME = "reassignment"


def touched(content: dict) -> tuple[list[tuple[str, int]], list[str]]:
    """The partitions it moves; no topic's partition count matters."""
    try:
        return [(str(e["topic"]), int(e["partition"])) for e in content["partitions"]], []
    except (KeyError, TypeError, ValueError) as e:
        raise BadInput(f"{NAME} plan: malformed content ({type(e).__name__}: {e})") from None


def basis(snap: Snapshot | None, content: dict) -> dict:
    return fingerprint(snap, *touched(content))


def affects(content: dict, _preview: dict, basis: dict) -> tuple[set[int], set[str]]:
    """The brokers that gain or lose a replica or a leadership (Kafka's reassignment JSON
    against the replicas before), and the topics it moves."""
    before = basis.get("partitions", {})
    brokers: set[int] = set()
    for e in content.get("partitions", []):
        then, now = before.get(f"{e['topic']}:{e['partition']}", []), e["replicas"]
        brokers |= set(then) ^ set(now)
        if then[:1] != now[:1]:
            brokers |= {*then[:1], *now[:1]}
    return brokers, {str(e["topic"]) for e in content.get("partitions", [])}


def draft(snap: Snapshot, body: dict, throttle: float | None,
          drained: dict[int, dict] | None = None,
          network_capacity: float | None = None,
          _gateway: ClusterReader | None = None) -> Draft:
    """Exactly one of plan (Kafka's reassignment JSON, whose replicas on a ``drained``
    broker are a risk it names) or generate (a planner goal, which keeps them empty),
    its safe band and suggested throttle for brokers of ``network_capacity``; refused
    when it moves nothing (there would be nothing to approve)."""
    given = [k for k in ("plan", "generate") if k in body]
    if len(given) != 1:
        raise BadInput("kind reassignment: give exactly one of plan (Kafka's "
                       "reassignment JSON) or generate (a planner goal)")
    if given == ["plan"]:
        made = plan_preview.from_kafka_json(snap, body["plan"], throttle=throttle,
                                            network_capacity=network_capacity,
                                            drained=drained)
    else:
        made = plan_preview.from_goal(snap, body["generate"], throttle=throttle,
                                      network_capacity=network_capacity,
                                      drained=drained)
    if made.empty:
        raise BadInput(f"{given[0]}: nothing to move on cluster '{snap.cluster}': "
                       "no plan to propose")
    return made


def title(content: dict) -> str:
    return f"reassign {len(content.get('partitions', []))} partitions"


KIND = PlanKind(NAME, title, basis, start_batches, large=True, throttled=True, scheduled=True,
                touched=touched, affects=affects, draft=draft,
                request_keys=("plan", "generate", "throttle", "throttle_mode", "not_before",
                              "outside_windows"))
