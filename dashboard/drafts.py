"""Drafts between callbacks: a previewed plan stays on the server under a token.

A 100k-move plan is megabytes of JSON; sending it to the browser and back on every
callback would cost seconds. The page keeps only the token; the draft (what Propose
stores) and its diff table (what the grid pages through) live in the dashboard's cache
(in-process, or Redis when configured) for DRAFT_SECONDS.
"""

from __future__ import annotations

import uuid

from backend.services.plan_preview import DiffTable, Draft
from dashboard import runtime

DRAFT_SECONDS = 3600  # an hour to look at a preview before proposing it


def save(draft: Draft, table: DiffTable | None) -> str:
    """Keep ``draft`` and its grid; the token to find them again."""
    token = uuid.uuid4().hex
    runtime.current().cache.set(f"draft:{token}", draft, timeout=DRAFT_SECONDS)
    if table is not None:
        save_grid(table, token)
    return token


def save_grid(table: DiffTable, token: str | None = None) -> str:
    """Keep a diff table alone (a stored plan's view pages through one too)."""
    token = token or uuid.uuid4().hex
    runtime.current().cache.set(f"draft-grid:{token}", table, timeout=DRAFT_SECONDS)
    return token


def load(token: str | None) -> Draft | None:
    """The draft, or None when the token is unknown or expired."""
    return runtime.current().cache.get(f"draft:{token}") if token else None


def grid(token: str | None) -> DiffTable | None:
    return runtime.current().cache.get(f"draft-grid:{token}") if token else None
