"""A stored plan's page names its plan by reference, not by a string a callback parses
(issue 25); drafts keep only drafts."""

from __future__ import annotations

from dashboard import drafts
from dashboard.plan_views import grids


def test_a_stored_plan_is_named_by_reference():
    ref = grids.stored_ref(42)
    assert grids.stored_plan(ref) == 42
    assert grids.stored_plan("plan-42-0123abcd") is None  # a draft token is not a plan
    assert grids.stored_plan(None) is None


def test_drafts_hold_no_stored_plans():
    assert not hasattr(drafts, "save_stored") and not hasattr(drafts, "keep_plan_grid")
