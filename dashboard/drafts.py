"""Drafts between callbacks: a previewed plan stays on the server under a token (stored
plans' grids are dashboard/plan_views/grids.py's).

A 100k-move plan is megabytes of JSON; sending it to the browser and back on every
callback would cost seconds. The page keeps only the token; the draft (what Propose
stores, with the diff table the grid pages through) and uploaded plan files live in the
dashboard's cache (in-process, or Redis when configured) for DRAFT_SECONDS.
"""

from __future__ import annotations

import uuid

from backend.services.plan_preview import DiffTable, Draft
from dashboard import runtime

DRAFT_SECONDS = 3600  # an hour to look at a preview before proposing it


def save(draft: Draft) -> str:
    """Keep ``draft`` (with its grid); the token to find it again."""
    token = uuid.uuid4().hex
    runtime.current().cache.set(f"draft:{token}", draft, timeout=DRAFT_SECONDS)
    return token


def save_upload(obj: object, filename: str | None) -> str:
    """Keep an uploaded plan file (parsed) until it is previewed."""
    token = uuid.uuid4().hex
    runtime.current().cache.set(f"upload:{token}", (obj, filename or "upload"),
                                timeout=DRAFT_SECONDS)
    return token


def upload(token: str | None) -> tuple[object | None, str]:
    """(parsed plan, file name) of an upload, or (None, "upload") when gone."""
    hit = runtime.current().cache.get(f"upload:{token}") if token else None
    return hit if hit is not None else (None, "upload")


def load(token: str | None) -> Draft | None:
    """The draft, or None when the token is unknown or expired."""
    return runtime.current().cache.get(f"draft:{token}") if token else None


def grid(token: str | None) -> DiffTable | None:
    """The diff table of the draft under ``token``."""
    draft = load(token) if isinstance(token, str) else None
    return draft.table if draft is not None else None
