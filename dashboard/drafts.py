"""Drafts between callbacks: a previewed plan stays on the server under a token (stored
plans' grids are dashboard/plan_views/grids.py's).

A 100k-move plan is megabytes of JSON; sending it to the browser and back on every
callback would cost seconds. The page keeps only the token; the draft (what Propose
stores, with the diff table the grid pages through) lives in the dashboard's cache
(in-process, or Redis when configured) for DRAFT_SECONDS; uploaded plan files wait on disk
(backend.services.uploads.PlanUploads).
"""

from __future__ import annotations

import uuid
from pathlib import Path

from backend.services.plan_preview import DiffTable, Draft
from backend.services.uploads import PlanUploads
from dashboard import auth, runtime

DRAFT_SECONDS = 3600  # an hour to look at a preview before proposing it
# previews one user keeps (the one on screen and a few to go back to): a draft of an
# uploaded 29 MB plan is as large as the plan, and each Preview click made a new one
DRAFTS_PER_USER = 3


def save(draft: Draft) -> str:
    """Keep ``draft`` (with its grid) as the signed-in user's newest; the token to find
    it again. Their drafts past DRAFTS_PER_USER are dropped, oldest first."""
    token = uuid.uuid4().hex
    cache = runtime.current().cache
    mine_key = f"drafts-of:{auth.current_actor().name}"
    mine = [*(cache.get(mine_key) or []), token]
    for old in mine[:-DRAFTS_PER_USER]:
        cache.delete(f"draft:{old}")
    cache.set(mine_key, mine[-DRAFTS_PER_USER:], timeout=DRAFT_SECONDS)
    cache.set(f"draft:{token}", draft, timeout=DRAFT_SECONDS)
    return token


def _plan_uploads() -> PlanUploads:
    rt = runtime.current()
    return PlanUploads(Path(rt.work_dir) / "plans", rt.config.server.max_upload_bytes)


def save_upload(contents: str, filename: str | None) -> str:
    """Keep the signed-in user's uploaded plan file on disk until it is previewed (never
    in the cache: a 29 MB plan parsed is hundreds of MB of Python objects)."""
    return _plan_uploads().keep(auth.current_actor(), contents, filename)


def upload(token: str | None) -> tuple[object | None, str]:
    """(parsed plan, file name) of the user's upload, or (None, "upload") when gone."""
    return _plan_uploads().read(auth.current_actor(), token)


def load(token: str | None) -> Draft | None:
    """The draft, or None when the token is unknown or expired."""
    return runtime.current().cache.get(f"draft:{token}") if token else None


def grid(token: str | None) -> DiffTable | None:
    """The diff table of the draft under ``token``."""
    draft = load(token) if isinstance(token, str) else None
    return draft.table if draft is not None else None
