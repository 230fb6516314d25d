"""One registry of plan kinds: reassignment, shrink, clear_throttles, one module each
holding what differs (basis, title, the check before Execute, how the executor starts it,
its own progress); everything else asks ``kind_of`` instead of comparing names.

Adding a kind: a module here building a PlanKind (plan_kinds/kind.py), its name in
KINDS below and in store.workflow.KINDS (the names the store accepts), and its page
block in dashboard/plan_views/kinds/ under the same name.
"""

from __future__ import annotations

from backend.errors import BadInput
from backend.model.snapshot import Snapshot
from backend.services.plan_kinds import clear_throttles, reassignment, shrink
from backend.services.plan_kinds.kind import ConfigsOf, PlanKind, TopicsOf

KINDS: dict[str, PlanKind] = {k.name: k for k in (reassignment.KIND, shrink.KIND,
                                                  clear_throttles.KIND)}
REASSIGNMENT, SHRINK, CLEAR = reassignment.NAME, shrink.NAME, clear_throttles.NAME
__all__ = ["CLEAR", "KINDS", "REASSIGNMENT", "SHRINK", "ConfigsOf", "PlanKind", "TopicsOf",
           "basis_for", "kind_of", "touched"]


def kind_of(name: str) -> PlanKind:
    """The kind called ``name``; BadInput naming the kinds there are."""
    kind = KINDS.get(name)
    if kind is None:
        raise BadInput(f"unknown plan kind '{name}' (kinds: {', '.join(KINDS)})")
    return kind


def basis_for(snap: Snapshot | None, kind: str, content: dict) -> dict:
    """The basis to store with a plan of ``kind`` proposed against ``snap``."""
    return kind_of(kind).basis(snap, content)


def touched(kind: str, content: dict) -> tuple[list[tuple[str, int]], list[str]]:
    """(partitions, topics whose partition count matters) a plan's content touches."""
    return kind_of(kind).touched(content)
