"""Crash and resume: the executor killed at random gateway calls (before or after the
call reaches the cluster) and restarted from the store, some plans cancelled midway.
Every plan ends completed or cancelled, no partition is sent to its target twice, no
throttle the plan set is left, and the operator's own throttles are back exactly."""

from tests.executor_rig import crash_campaign


def test_crash_resume_campaign(tmp_path):
    r = crash_campaign(runs=30, seed=12, tmp=tmp_path)
    assert r.other == []
    assert r.completed + r.cancelled == r.runs == 30
    assert r.crashes >= 30 and r.cancelled >= 1 and r.completed >= 1
    assert r.moved_twice == 0
    assert r.throttles_left == 0
    assert r.operator_not_restored == 0
    assert r.off_target == 0
