"""A plan's "not before": part of its frozen content and sha256, carried into the spec
the executor runs, refused in one line when it does not read or the kind cannot wait."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from backend.errors import BadInput
from backend.executor.freeze import executable_content, spec_from_dict
from backend.services import plans
from backend.store.store import open_store
from tests.plan_helpers import OPERATOR, T0, moves, orders_cluster, shrink_content

SNAP = orders_cluster()
NOVEMBER = datetime(2026, 11, 20, tzinfo=UTC)  # proposed within 30 days of 2026-12-01


@pytest.fixture
def store(tmp_path):
    s = open_store(f"sqlite:///{tmp_path}/plans.db", expiry_hours=24)
    yield s
    s.close()


def propose(store, **kw):
    args = {"cluster": "c1", "kind": "reassignment", "content": moves(("orders", 0, [3, 4])),
            "preview": {"replica_moves": 2}, "snapshot": SNAP, "now": T0, **kw}
    return plans.propose(store, OPERATOR, **args)


def test_not_before_is_in_the_content_and_its_sha256(store):
    plain = propose(store)
    later = propose(store, not_before="2026-12-01T22:00:00+01:00", now=NOVEMBER)
    assert later.content["not_before"] == 1_796_158_800.0
    assert later.sha256 != plain.sha256
    assert later.sha256 == plans.plan_sha256("reassignment", "c1", later.content, None)
    assert plans.get(store, later.id).content["not_before"] == 1_796_158_800.0
    spec = executable_content(SNAP, later.content, None)["execution"]
    assert spec["not_before"] == 1_796_158_800.0
    assert spec_from_dict(spec, 1).not_before == 1_796_158_800.0
    assert "not_before" not in executable_content(SNAP, plain.content, None)["execution"]
    assert propose(store, not_before=1_796_158_800, now=NOVEMBER).content["not_before"] == \
        1_796_158_800.0
    # the plan page reads it without decoding the content
    assert plans.start_terms(store, plans.summary(store, later.id)) == (1_796_158_800.0, False)
    assert plans.start_terms(store, plans.summary(store, plain.id)) == (None, False)


@pytest.mark.parametrize("value", ["tomorrow", "2026-12-01T22:00:00", True, -5, [1]])
def test_a_time_that_does_not_read_is_one_line(store, value):
    with pytest.raises(BadInput) as e:
        propose(store, not_before=value)
    assert str(e.value).startswith("not_before: expected a date-time with its zone")


def test_a_time_already_past_is_refused(store):
    """A start time before the proposal holds nothing back: most likely the wrong day or
    zone, said before anyone approves it."""
    for past in (T0.timestamp() - 60, T0.timestamp(), "2020-01-01T00:00+00:00"):
        with pytest.raises(BadInput, match=r"^not_before: .* is already past: give a later "
                                           r"time, or leave it empty"):
            propose(store, not_before=past)
    assert propose(store, not_before=T0.timestamp() + 60).content["not_before"] == \
        T0.timestamp() + 60


def test_a_time_more_than_30_days_away_is_refused(store):
    """An executing plan waiting for its start holds its cluster's executor, and every
    plan executed after it waited behind it: 9999-12-31 was taken, and held the cluster."""
    days = plans.MAX_NOT_BEFORE_DAYS * 86400
    for far in (T0.timestamp() + days + 1, "9999-12-31T00:00Z"):
        with pytest.raises(BadInput, match=r"^not_before: .* is more than 30 days away: "
                                           r"propose it nearer the time \(a plan waiting for "
                                           r"its start holds its cluster's executor"):
            propose(store, not_before=far)
    assert propose(store, not_before=T0.timestamp() + days).content["not_before"] == \
        T0.timestamp() + days


def test_only_a_reassignment_waits(store):
    with pytest.raises(BadInput, match="not_before: only a reassignment waits"):
        propose(store, kind="shrink", content=shrink_content(), not_before=0)


def test_outside_windows_is_signed_and_read_back(store):
    """An emergency plan that may run outside the cluster's windows: the flag is in its
    content, so in the sha256 the approver signs and in the spec the executor runs; only
    a reassignment waits for windows, and the flag is true or false."""
    plain = propose(store)
    urgent = propose(store, outside_windows=True)
    assert urgent.content["outside_windows"] is True and urgent.sha256 != plain.sha256
    spec = executable_content(SNAP, urgent.content, None)["execution"]
    assert spec["outside_windows"] is True and spec_from_dict(spec, 1).outside_windows
    assert not spec_from_dict(executable_content(SNAP, plain.content, None)["execution"],
                              1).outside_windows
    assert plans.start_terms(store, plans.summary(store, urgent.id)) == (None, True)
    with pytest.raises(BadInput, match="outside_windows: expected true or false"):
        propose(store, outside_windows="yes")
