"""The basis fingerprint: what a plan was computed against, and what changed since."""

from __future__ import annotations

import pytest

from backend.errors import BadInput, Conflict
from backend.services.plan_basis import basis_changes
from backend.services.plan_kinds import basis_for, touched
from tests.plan_helpers import ORDERS, cluster, moves, shrink_content


def test_reassignment_basis_is_the_current_replicas_of_touched_partitions():
    basis = basis_for(cluster(ORDERS), "reassignment",
                      moves(("orders", 1, [1, 4]), ("audit", 0, [2, 4])))
    assert basis == {"partitions": {"orders:1": [2, 3], "audit:0": [1, 3]}, "topics": {}}


def test_shrink_basis_has_the_partition_count_and_the_removed_partitions():
    basis = basis_for(cluster(ORDERS), "shrink", shrink_content("orders", to=2))
    assert basis == {"partitions": {"orders:2": [3, 4], "orders:3": [4, 1]},
                     "topics": {"orders": 4}}


def test_unchanged_cluster_has_no_changes():
    snap = cluster(ORDERS)
    assert basis_changes(basis_for(snap, "shrink", shrink_content()), snap) == []


def test_a_moved_partition_is_named_with_before_and_after():
    basis = basis_for(cluster(ORDERS), "reassignment", moves(("orders", 1, [1, 4])))
    moved = {**ORDERS, "orders": [[1, 2], [3, 2], [3, 4], [4, 1]]}
    assert basis_changes(basis, cluster(moved)) == ["orders-1 replicas [2, 3] -> [3, 2]"]


def test_a_grown_topic_and_a_vanished_partition_are_named():
    basis = basis_for(cluster(ORDERS), "shrink", shrink_content("orders", to=2))
    grown = {**ORDERS, "orders": ORDERS["orders"] + [[1, 3]]}
    assert basis_changes(basis, cluster(grown)) == ["orders partition count 4 -> 5"]
    gone = {"audit": ORDERS["audit"]}
    assert basis_changes(basis, cluster(gone)) == [
        "topic orders no longer exists", "orders-2 no longer exists",
        "orders-3 no longer exists"]


@pytest.mark.parametrize("kind,content,match", [
    ("reassignment", moves(("nope", 0, [1])), "topic 'nope' is not in cluster"),
    ("reassignment", moves(("orders", 9, [1])), "orders-9 does not exist"),
    ("reassignment", {"partitions": [{"topic": "orders"}]}, "malformed content"),
    ("shrink", {"topic": "orders"}, "malformed content"),
    ("move", {}, "unknown plan kind 'move'"),
])
def test_bad_content_is_bad_input(kind, content, match):
    with pytest.raises(BadInput, match=match):
        basis_for(cluster(ORDERS), kind, content)


def test_touched_lists_partitions_and_topics():
    assert touched("shrink", shrink_content("orders", to=3)) == ([("orders", 3)], ["orders"])


def test_many_partitions_are_compared_as_arrays_and_named_in_basis_order():
    """A 2,000-partition basis: exactly the moved partitions, a grown replica list and a
    vanished topic are named, in the order the basis lists them."""
    import numpy as np

    from backend.twin.generate import generate_snapshot

    snap = generate_snapshot(6, 3, 10, 2000, 3, seed=11, cluster="c1")
    rows = np.arange(snap.n_partitions)
    entries = [(str(snap.topic_names[snap.part_topic[r]]), int(snap.part_id[r])) for r in rows]
    basis = basis_for(snap, "reassignment", moves(*[(t, p, [1]) for t, p in entries]))
    assert basis_changes(basis, snap) == []
    grid = {t: [snap.replicas_of(r) for r in rows[snap.part_topic == i]]
            for i, t in enumerate(snap.topic_names.tolist())}
    first, last = entries[5], entries[-1]
    grid[first[0]][first[1]] = grid[first[0]][first[1]][::-1]
    grid[last[0]][last[1]] = [*grid[last[0]][last[1]], 99]
    gone = str(snap.topic_names[1])
    del grid[gone]
    now = cluster(grid, brokers=[*map(int, snap.broker_ids), 99], name="c1")
    lost = [f"{t}-{p} no longer exists" for t, p in entries if t == gone]
    assert basis_changes(basis, now) == [
        f"{first[0]}-{first[1]} replicas {basis['partitions'][f'{first[0]}:{first[1]}']} -> "
        f"{grid[first[0]][first[1]]}", *lost,
        f"{last[0]}-{last[1]} replicas {basis['partitions'][f'{last[0]}:{last[1]}']} -> "
        f"{grid[last[0]][last[1]]}"]


def test_a_plan_says_it_is_stale_before_anyone_clicks(tmp_path):
    """On the Apache Kafka demo an approver read "Breaks nothing" on a drain another plan
    had already made, and learnt only from Approve that the cluster had changed: the
    plan's page now asks plans.stale, which is the refusal Approve would give, or None."""
    from backend.services import plans
    from backend.store.store import open_store
    from tests.plan_helpers import APPROVER, OPERATOR, T0

    store = open_store(f"sqlite:///{tmp_path}/plans.db")
    snap = cluster(ORDERS)
    moved = cluster({**ORDERS, "orders": [[1, 2], [3, 2], [3, 4], [4, 1]]})
    try:
        plan = plans.propose(store, OPERATOR, cluster="c1", kind="reassignment",
                             content=moves(("orders", 1, [1, 4])), preview={}, snapshot=snap,
                             now=T0)
        assert plans.stale(store, plan.id, lambda *_: snap) is None
        said = plans.stale(store, plan.id, lambda *_: moved)
        assert said == (f"cluster c1 changed since plan {plan.id} was proposed: orders-1 "
                        f"replicas [2, 3] -> [3, 2]: re-propose")
        with pytest.raises(Conflict, match="changed since plan"):  # Approve's very words
            plans.approve(store, APPROVER, plan.id, sha256=plan.sha256,
                          topics_of=lambda *_: moved, now=T0)
        plans.withdraw(store, OPERATOR, plan.id, now=T0)
        assert plans.stale(store, plan.id, lambda *_: moved) is None  # nothing to refuse
    finally:
        store.close()
