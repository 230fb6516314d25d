"""A clear-throttles plan: replication throttle configs no executing plan holds, deleted
exactly as approved (KIP-73's configs; backend/services/throttle_leftovers.py proposes it,
backend/executor/clear.py runs it). Admins only."""

from __future__ import annotations

from backend.errors import BadInput
from backend.executor.runs import run_clear
from backend.model.snapshot import Snapshot
from backend.services.plan_basis import config_id
from backend.services.plan_kinds.kind import PlanKind

NAME = "clear_throttles"


def basis(_snap: Snapshot | None, content: dict) -> dict:
    """The values of its configs, read when it was proposed (they are in its content)."""
    try:
        return {"configs": {config_id(c["entity_type"], c["name"], c["key"]): c["value"]
                            for c in content["configs"]}}
    except (KeyError, TypeError) as e:
        raise BadInput(f"{NAME} plan: malformed content ({e})") from None


def affects(content: dict, _preview: dict, _basis: dict) -> tuple[set[str], set[str]]:
    """The brokers and topics whose configs it deletes."""
    configs = content.get("configs", [])
    return ({str(c["name"]) for c in configs if c["entity_type"] == "broker"},
            {str(c["name"]) for c in configs if c["entity_type"] == "topic"})


def title(content: dict) -> str:
    return f"clear {len(content.get('configs', []))} leftover throttle configs"


KIND = PlanKind(NAME, title, basis, run_clear, propose_right=NAME, affects=affects,
                request_keys=("configs",))
