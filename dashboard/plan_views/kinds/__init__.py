"""Each plan kind's page block, looked up by the kind's name (the UI side of
backend/services/plan_kinds): a module per kind with ``block(draft, head)``, and where a
kind needs them, ``stored_draft(plan)`` (its grid), ``json_summary(plan)`` and
``json_text(content)`` (the exact-JSON panel), ``execution_hint(cluster)`` (what
executing it does on that cluster). Adding a kind: a module here under its name."""

from __future__ import annotations

import json
from types import ModuleType

from backend.services import plan_preview
from backend.store.store import Plan
from dashboard.plan_views.kinds import clear_throttles, reassignment, shrink

VIEWS: dict[str, ModuleType] = {"reassignment": reassignment, "shrink": shrink,
                                "clear_throttles": clear_throttles}


def block(kind: str, draft: plan_preview.Draft, head: list | None = None) -> list:
    """The page block of a draft or stored plan of ``kind``."""
    return VIEWS[kind].block(draft, head)


def stored_draft(plan: Plan) -> plan_preview.Draft:
    """A stored plan as a draft its block can show."""
    view = VIEWS[plan.kind]
    if hasattr(view, "stored_draft"):
        return view.stored_draft(plan)
    return plan_preview.Draft(plan.kind, plan.cluster, plan.title, plan.preview,
                              frozen=plan.content)


def json_summary(plan: Plan) -> str:
    view = VIEWS[plan.kind]
    return view.json_summary(plan) if hasattr(view, "json_summary") else ""


def json_text(kind: str, content: dict) -> str:
    view = VIEWS[kind]
    return view.json_text(content) if hasattr(view, "json_text") else json.dumps(content,
                                                                                 indent=1)


def execution_hint(plan: Plan) -> str | None:
    view = VIEWS[plan.kind]
    return view.execution_hint(plan.cluster) if hasattr(view, "execution_hint") else None
