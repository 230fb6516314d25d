"""A clear-throttles plan: replication throttle configs no executing plan holds, deleted
exactly as approved (KIP-73's configs; backend/services/throttle_leftovers.py proposes it,
backend/executor/clear.py runs it). Admins only."""

from __future__ import annotations

from backend.errors import BadInput, Unavailable
from backend.executor.runs import run_clear
from backend.model.snapshot import Snapshot
from backend.services.plan_basis import config_changes, config_id
from backend.services.plan_kinds.kind import ConfigsOf, PlanKind, TopicsOf
from backend.store.store import Plan

NAME = "clear_throttles"


def basis(_snap: Snapshot | None, content: dict) -> dict:
    """The values of its configs, read when it was proposed (they are in its content)."""
    try:
        return {"configs": {config_id(c["entity_type"], c["name"], c["key"]): c["value"]
                            for c in content["configs"]}}
    except (KeyError, TypeError) as e:
        raise BadInput(f"{NAME} plan: malformed content ({e})") from None


def changes(plan: Plan, _topics_of: TopicsOf, configs_of: ConfigsOf | None) -> list[str]:
    if configs_of is None:
        raise Unavailable(f"Cluster '{plan.cluster}'", "its throttle configs were not "
                          "read: a clear-throttles plan is checked against them")
    return config_changes(plan.basis, configs_of(plan.cluster))


def title(content: dict) -> str:
    return f"clear {len(content.get('configs', []))} leftover throttle configs"


KIND = PlanKind(NAME, title, basis, changes, run_clear, propose_right=NAME)
