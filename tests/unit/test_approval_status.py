"""Where a plan stands on its approvals (today's rule: one approval of its sha256 by
someone other than the author with the approve right), read from its decisions alone."""

from __future__ import annotations

from dataclasses import replace

from backend.services import approval_status
from backend.store.store import Decision, Plan
from tests.plan_helpers import ADMIN, APPROVER, APPROVER2, OPERATOR, T0, VIEWER

PLAN = Plan(id=1, kind="reassignment", cluster="c1", title="t", author=OPERATOR.name,
            created_at=T0, expires_at=T0, updated_at=T0, state="proposed", content=None,
            sha256="a" * 64, basis=None, preview={}, throttle=None, cancel_requested_at=None,
            version=1)


def decided(plan: Plan, *ds: tuple[str, str, str]) -> Plan:
    return replace(plan, decisions=tuple(Decision(u, d, "", sha, T0) for u, d, sha in ds))


def test_a_proposed_plan_needs_one_approver_of_the_approve_roles():
    s = approval_status.status(PLAN)
    assert (s.approvers, s.required, s.still_needed, s.met, s.admin_required) \
        == ((), 1, 1, False, False)
    assert s.roles == ("approver", "admin")
    assert s.text == "needs 1 approver: 0 of 1 so far"


def test_an_approval_counts_only_for_the_sha256_approved():
    approved = decided(replace(PLAN, state="approved"), ("anna", "approve", "a" * 64))
    s = approval_status.status(approved)
    assert (s.approvers, s.still_needed, s.met, s.text) == (("anna",), 0, True,
                                                            "approved: anna")
    other = decided(PLAN, ("anna", "approve", "b" * 64))
    assert approval_status.status(other).approvers == ()
    rejected = decided(replace(PLAN, state="rejected"), ("anna", "reject", None))
    assert not approval_status.status(rejected).met


def test_who_a_plan_waits_for():
    assert approval_status.needs_approval_by(PLAN, APPROVER)
    assert approval_status.needs_approval_by(PLAN, ADMIN)
    assert not approval_status.needs_approval_by(PLAN, OPERATOR)  # the author; no right
    assert not approval_status.needs_approval_by(PLAN, VIEWER)
    own = replace(PLAN, author=ADMIN.name)
    assert not approval_status.needs_approval_by(own, ADMIN)  # two people must agree
    # someone who already decided is not waited for; nor is anyone once it moved on
    assert not approval_status.needs_approval_by(
        decided(PLAN, ("anna", "reject", None)), APPROVER)
    assert not approval_status.needs_approval_by(replace(PLAN, state="approved"), APPROVER2)
