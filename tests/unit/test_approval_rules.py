"""The approval rule language (backend/store/approvals.py): every condition, first match
wins, the two-person minimum, how progress is counted and said, the facts a plan's
frozen content gives, and the config errors that refuse to start, each naming its rule."""

from __future__ import annotations

import pytest

from backend.errors import BadInput
from backend.services.approval_status import facts
from backend.store.approvals import (
    APPROVING_ROLES,
    DEFAULT,
    Facts,
    Policies,
    Policy,
    Progress,
    Requirement,
    check_users,
    parse_policy,
)
from backend.store.workflow import Actor
from dashboard.config import parse_config

GB = 10**9
BIG = Facts("reassignment", bytes_to_move=2_000 * GB, replica_moves=400, partitions=120,
            brokers=6, topics=("payments-eu", "orders"), outside_window=True)
SMALL = Facts("reassignment", bytes_to_move=200 * 10**6, replica_moves=3, partitions=1,
              brokers=2, topics=("orders",))


def rule(name: str = "r", when: dict | None = None, **require) -> dict:
    return {"name": name, "when": when or {}, "require": require or {"approvers": 2}}


def policy(*rules: dict) -> Policy:
    return parse_policy(list(rules), "approval.rules")


def matches(when: dict, f: Facts) -> bool:
    return policy(rule(when=when)).requirement(f).rule == "r"


@pytest.mark.parametrize("when,big,small", [
    ({"kind": "reassignment"}, True, True),
    ({"kind": ["shrink", "clear_throttles"]}, False, False),
    ({"bytes_to_move": {"min": 1_000 * GB}}, True, False),
    ({"bytes_to_move": {"max": GB}}, False, True),
    ({"replica_moves": {"min": 100}}, True, False),
    ({"replica_moves": {"min": 3, "max": 3}}, False, True),
    ({"partitions": {"min": 100}}, True, False),
    ({"brokers": {"min": 3}}, True, False),
    ({"brokers": {"max": 2}}, False, True),
    ({"topics": "payments-*"}, True, False),
    ({"topics": "orders"}, True, True),
    ({"topics": "pay*-us"}, False, False),
    ({"outside_window": True}, True, False),
    ({"outside_window": False}, False, True),
    ({"kind": "reassignment", "topics": "payments-*", "bytes_to_move": {"min": GB}}, True, False),
    ({}, True, True),  # no condition: every plan
])
def test_every_condition(when, big, small):
    assert (matches(when, BIG), matches(when, SMALL)) == (big, small)


def test_the_first_matching_rule_wins_and_no_match_is_todays_rule():
    p = policy(rule("payments", {"topics": "payments-*"}, approvers=3, admin=True),
               rule("large", {"bytes_to_move": {"min": 1_000 * GB}}, approvers=2),
               rule("shrinks", {"kind": "shrink"}, approvers=2, roles=["admin"]))
    assert p.requirement(BIG) == Requirement(3, APPROVING_ROLES, True, "payments")
    assert p.requirement(Facts("reassignment", bytes_to_move=5_000 * GB)).rule == "large"
    assert p.requirement(Facts("shrink")) == Requirement(2, ("admin",), False, "shrinks")
    assert p.requirement(SMALL) is DEFAULT
    assert Requirement(1, ("approver", "admin"), False, "default") == DEFAULT
    assert Policy().requirement(BIG) is DEFAULT


def test_a_rule_can_only_ask_for_more_than_one_other_approver():
    for n in (0, -1, True, "2", 11):
        with pytest.raises(BadInput, match=r"approval.rules\[0\] 'r'.require.approvers: "
                                           r"expected 1 to 10 \(someone other than the author"):
            policy(rule(approvers=n))
    assert policy(rule(approvers=1)).rules[0].require.approvers == 1


def test_the_requirement_as_stored_comes_back_the_same():
    r = Requirement(2, ("admin",), True, "payments")
    assert Requirement.from_dict(r.to_dict()) == r
    assert Requirement.from_dict(None) is DEFAULT  # a plan from before policies


def test_progress_counts_and_says_it():
    r = Requirement(2, APPROVING_ROLES, True, "payments")
    none = Progress(r)
    assert (none.met, none.still_needed) == (False, 2)
    assert none.text() == "needs 2 approvers incl. an admin: 0 of 2 so far"
    bob = none.after(Actor("bob", "approver"))
    assert bob.text() == "needs 2 approvers incl. an admin: 1 of 2 so far: bob"
    assert (bob.met, bob.still_needed) == (False, 1)
    done = bob.after(Actor("ada", "admin"))
    assert (done.met, done.still_needed) == (True, 0)
    assert done.text() == "needs 2 approvers incl. an admin: 2 of 2 so far: bob, ada"
    assert Progress(DEFAULT).text() == "needs 1 approver: 0 of 1 so far"
    assert Progress(Requirement(2, ("admin",))).text() == "needs 2 approvers (admin): 0 of " \
                                                          "2 so far"


def test_who_may_add_an_approval():
    r = Requirement(2, APPROVING_ROLES, True, "payments")
    bob = Progress(r).after(Actor("bob", "approver"))
    assert "bob already approved" in bob.refusal(Actor("bob", "approver"))
    assert "the last approval must be an admin's" in bob.refusal(Actor("carl", "approver"))
    assert bob.refusal(Actor("ada", "admin")) is None
    assert Progress(r).refusal(Actor("carl", "approver")) is None  # an admin can still come
    admins = Progress(Requirement(2, ("admin",), False, "admins"))
    assert "counts only approvals by the admin role, not approver" in \
        admins.refusal(Actor("carl", "approver"))


def test_facts_from_each_kinds_frozen_content():
    content = {"version": 1, "partitions": [
        {"topic": "orders", "partition": 0, "replicas": [3, 2]},  # 1 -> 3 joins, leader moves
        {"topic": "audit", "partition": 1, "replicas": [4, 2]}]}  # leader only: 2,4 -> 4,2
    basis = {"partitions": {"orders:0": [1, 2], "audit:1": [2, 4]}, "topics": {}}
    preview = {"bytes_to_move": 10, "replica_moves": 1, "partitions": 2}
    f = facts("reassignment", content, preview, basis)
    assert f == Facts("reassignment", 10, 1, 2, 4, ("audit", "orders"), False)
    shrink = facts("shrink", {"topic": "orders"}, {"partitions": 2, "brokers": [
        {"id": 1, "replicas_reclaimed": 2}, {"id": 2, "replicas_reclaimed": 0}]}, {},
        outside_window=True)
    assert shrink == Facts("shrink", 0, 0, 2, 1, ("orders",), True)
    clear = facts("clear_throttles", {"configs": [
        {"entity_type": "broker", "name": "1", "key": "k", "value": "1"},
        {"entity_type": "topic", "name": "orders", "key": "k", "value": "*"}]}, {}, {})
    assert (clear.brokers, clear.topics) == (1, ("orders",))
    # outside a window: the plan's signed flag as the caller reads it, never the preview's
    assert not facts("shrink", {}, {"outside_window": True}, {}).outside_window
    assert facts("shrink", {}, {}, {}, True).outside_window


@pytest.mark.parametrize("rules,message", [
    ([rule(when={"size": 1})], r"approval.rules\[0\] 'r'.when: unknown key 'size'"),
    ([{"name": "r", "when": {}, "require": {}, "owner": "x"}],
     r"approval.rules\[0\] 'r': unknown key 'owner'"),
    ([rule(when={}, approvers=2, who="x")], r"'r'.require: unknown key 'who'"),
    ([rule("all"), rule("payments", {"topics": "payments-*"})],
     r"approval.rules\[1\] 'payments': can never match: rule 'all' before it"),
    ([rule("big", {"bytes_to_move": {"min": 10}}), rule("bigger", {"bytes_to_move": {"min": 20},
                                                                   "kind": "reassignment"})],
     r"'bigger': can never match: rule 'big' before it"),
    ([rule("odd", {"replica_moves": {"min": 5, "max": 4}})],
     r"'odd'.when.replica_moves: can never match: max 4 is below min 5"),
    ([rule(approvers=2, roles=["approver"], admin=True)],
     r"'r'.require: can never be met: admin is required but roles leave it out"),
    ([rule(approvers=2, roles=["operator"])], r"'r'.require.roles: expected some of approver"),
    ([rule(when={"kind": "merge"})], r"'r'.when.kind: expected one or a list of reassignment"),
    ([rule(when={"outside_window": "yes"})], r"'r'.when.outside_window: expected true or"),
    ([rule(when={"topics": ""})], r"'r'.when.topics: expected a topic name pattern"),
    ([rule(when={"brokers": 3})], r"'r'.when.brokers: expected \{min: N\}"),
    ([rule(), rule()], r"approval.rules\[1\] 'r': the name is used twice"),
    ([{"when": {}, "require": {}}], r"approval.rules\[0\].name: required"),
])
def test_config_errors_name_the_rule(rules, message):
    with pytest.raises(BadInput, match=message):
        policy(*rules)


def test_a_narrower_rule_first_is_fine():
    p = policy(rule("payments", {"topics": "payments-*", "bytes_to_move": {"min": 10}}),
               rule("big", {"bytes_to_move": {"min": 10}}), rule("rest"))
    assert [r.name for r in p.rules] == ["payments", "big", "rest"]


USERS = [("olga", "operator"), ("anna", "approver"), ("ada", "admin")]


def test_a_requirement_no_configured_user_can_meet_is_refused():
    check_users(policy(rule(approvers=2)), USERS, "approval.rules")  # anna and ada
    check_users(policy(rule(approvers=1, admin=True)), USERS, "approval.rules")
    with pytest.raises(BadInput, match=r"approval.rules\[0\] 'three': no configured users can "
                                       r"meet it: it needs 3 approvers other than the author"):
        check_users(policy(rule("three", approvers=3)), USERS, "approval.rules")
    # ada proposes too: a plan of hers leaves anna alone, and no admin
    with pytest.raises(BadInput, match="'two admins'"):
        check_users(policy(rule("two admins", approvers=1, roles=["admin"])),
                    [("ada", "admin")], "approval.rules")


def _config(approval: dict | None = None, cluster_approval: dict | None = None,
            users: list | None = None) -> dict:
    cluster = {"name": "c1", "gateway": {"type": "twin", "url": "http://x:1"}}
    if cluster_approval is not None:
        cluster["approval"] = cluster_approval
    doc = {"clusters": [cluster, {"name": "c2", "gateway": {"type": "twin",
                                                            "url": "http://x:1"}}]}
    if approval is not None:
        doc["approval"] = approval
    if users is not None:
        doc["auth"] = {"users": [{"name": n, "role": r, "password_hash": "pbkdf2:x"}
                                 for n, r in users]}
    return doc


def test_the_config_has_a_fleet_default_and_each_clusters_own():
    config = parse_config(_config({"rules": [rule("fleet", approvers=2)]},
                                  {"rules": [rule("own", approvers=3)]}))
    policies = config.approval_policies
    assert isinstance(policies, Policies)
    assert policies.of("c1").requirement(SMALL).rule == "own"
    assert policies.of("c2").requirement(SMALL).rule == "fleet"
    assert parse_config(_config()).approval_policies.of("c1").requirement(BIG) is DEFAULT


def test_the_config_refuses_to_start_with_one_line_naming_the_rule():
    with pytest.raises(BadInput, match=r"^cfg: clusters\[0\].approval.rules\[1\] 'late': can "
                                       r"never match"):
        parse_config(_config(cluster_approval={"rules": [rule("all"), rule("late")]}), "cfg")
    with pytest.raises(BadInput, match=r"^cfg: approval.default: unknown key \(known: rules\)"):
        parse_config(_config({"rules": [], "default": 2}), "cfg")
    with pytest.raises(BadInput, match=r"^cfg: clusters\[0\].approval.rules\[0\] 'many': no "
                                       r"configured users can meet it"):
        parse_config(_config(cluster_approval={"rules": [rule("many", approvers=3)]},
                             users=USERS), "cfg")
    with pytest.raises(BadInput, match=r"^cfg: approval.rules\[0\] 'admins': no configured"):
        parse_config(_config({"rules": [rule("admins", approvers=2, roles=["admin"])]},
                             users=USERS), "cfg")


def test_touched_brokers_and_topics_are_counted_only_when_a_rule_reads_them():
    content = {"partitions": [{"topic": "orders", "partition": 0, "replicas": [3, 2]}]}
    basis = {"partitions": {"orders:0": [1, 2]}}
    assert policy(rule(when={"bytes_to_move": {"min": 1}})).reads == {"bytes_to_move"}
    assert policy(rule(when={"topics": "o*"})).reads == {"topics"}
    assert Policy().reads == frozenset()
    skipped = facts("reassignment", content, {}, basis, reads=frozenset({"bytes_to_move"}))
    assert (skipped.brokers, skipped.topics) == (0, ())
    counted = facts("reassignment", content, {}, basis, reads=frozenset({"brokers"}))
    assert (counted.brokers, counted.topics) == (2, ("orders",))
