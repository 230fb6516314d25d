"""One registry of plan kinds: reassignment, shrink, clear_throttles, one module each
holding what differs (what its basis records, title, the check before Execute, how the
executor starts it, its own progress); everything else asks ``kind_of`` instead of
comparing names.

Adding a kind: a module here building a PlanKind (plan_kinds/kind.py), its name in
KINDS below and in store.workflow.KINDS (the names the store accepts), and its page
block in dashboard/plan_views/kinds/ under the same name.
"""

from __future__ import annotations

from typing import Any

from backend.errors import BadInput
from backend.gateways.base import ClusterReader
from backend.model.json_input import only_keys
from backend.model.snapshot import Snapshot
from backend.services.plan_kinds import clear_throttles, reassignment, shrink
from backend.services.plan_kinds.kind import PlanKind
from backend.services.plan_preview import Draft, request_throttle

KINDS: dict[str, PlanKind] = {k.name: k for k in (reassignment.KIND, shrink.KIND,
                                                  clear_throttles.KIND)}
REASSIGNMENT, SHRINK, CLEAR = reassignment.NAME, shrink.NAME, clear_throttles.NAME
ANY_KIND = ("cluster", "kind", "title")  # what every API request for a plan may hold
__all__ = ["CLEAR", "KINDS", "REASSIGNMENT", "SHRINK", "PlanKind", "basis_for",
           "check_request_keys", "draft_from_request", "kind_of", "touched"]


def kind_of(name: str) -> PlanKind:
    """The kind called ``name``; BadInput naming the kinds there are."""
    kind = KINDS.get(name)
    if kind is None:
        raise BadInput(f"unknown plan kind '{name}' (kinds: {', '.join(KINDS)})")
    return kind


def check_request_keys(body: dict) -> None:
    """BadInput naming a key the request's kind does not read (an unknown kind is named
    by what reads it)."""
    kind = KINDS.get(body.get("kind")) if isinstance(body.get("kind"), str) else None
    if kind is not None:
        only_keys(body, ANY_KIND + kind.request_keys, f"a {kind.name} request")


def draft_from_request(snap: Snapshot, body: Any, drained: dict[int, dict] | None = None,
                       network_capacity: float | None = None,
                       gateway: ClusterReader | None = None) -> Draft:
    """The draft an API request asks for (POST /api/v1/plans), or BadInput naming the
    first thing wrong; a planner goal keeps the ``drained`` brokers empty
    (services.drained.remembered); a throttled kind's safe band and suggested throttle
    are for brokers of ``network_capacity`` bytes/s (the cluster's configured
    adaptive_throttle.network_capacity; None: the throttle engine's 1 GbE); a kind's risks
    are those of the cluster behind ``gateway`` where it knows (None: not known)."""
    if not isinstance(body, dict):
        raise BadInput("request: expected a JSON object with cluster and kind")
    drafted = [name for name, k in KINDS.items() if k.draft is not None]
    kind = body.get("kind")
    if kind not in drafted:
        raise BadInput(f"kind: must be one of {', '.join(drafted)}, got {kind!r}")
    throttle = request_throttle(body)
    made = KINDS[kind].draft(snap, body, throttle, drained, network_capacity, gateway)
    title = body.get("title")
    if title is not None:
        if not isinstance(title, str) or not title.strip() or len(title) > 200:
            raise BadInput("title: give a non-empty string of at most 200 characters")
        made.title = title.strip()
    return made


def previewed_throttle(draft: Draft) -> int | None:
    """The throttle a proposal of ``draft`` freezes: the figure its preview shows, given
    or suggested, in whole bytes/s (None for a kind without one). The approver approves
    the figure they read and the executor runs at it: a plan that left it out ran
    unthrottled under a preview that named a rate."""
    throttle = draft.preview.get("throttle")
    return round(throttle) if kind_of(draft.kind).throttled and throttle else None


def basis_for(snap: Snapshot | None, kind: str, content: dict) -> dict:
    """The basis to store with a plan of ``kind`` proposed against ``snap``."""
    return kind_of(kind).basis(snap, content)


def touched(kind: str, content: dict) -> tuple[list[tuple[str, int]], list[str]]:
    """(partitions, topics whose partition count matters) a plan's content touches."""
    return kind_of(kind).touched(content)
