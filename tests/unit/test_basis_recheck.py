"""Approving and executing re-check a plan's basis by reading only the topics it touches,
from the live cluster (a real twin here), never from a cache, and still name what changed:
a moved partition, a deleted topic, a deleted partition's topic."""

from __future__ import annotations

import pytest

from backend.errors import Conflict, Unavailable
from backend.gateways.twin_http import TwinHttpGateway
from backend.model.io import save_snapshot
from backend.model.snapshot import Limits
from backend.services import plans
from backend.services.cluster import ClusterSource, cluster_snapshot, touched_snapshot
from backend.services.plan_kinds import basis_for
from backend.store.store import open_store
from backend.twin.cluster import TwinCluster, TwinSettings
from backend.twin.gateway import TwinGateway
from backend.twin.generate import generate_snapshot
from tests.plan_helpers import (
    APPROVER,
    OPERATOR,
    T0,
    Recording,
    moves,
    settle,
    shrink_content,
)
from tests.servers import free_port


@pytest.fixture
def world(tmp_path):
    twin = TwinCluster(generate_snapshot(6, 3, 8, 80, 3, seed=11, cluster="c1"),
                       TwinSettings(traffic_noise=0.0))
    gw = Recording(TwinGateway(twin))
    source = ClusterSource("c1", None, Limits(), gateway=gw)
    store = open_store(f"sqlite:///{tmp_path}/plans.db", expiry_hours=24)
    yield twin, gw, source, store
    store.close()


def _topics_of(source):
    return lambda _cluster, topics: touched_snapshot(source, topics)


def _swap_leader(twin, topic: str, p: int) -> tuple[list[int], list[int]]:
    snap = twin.assignment()
    was = snap.replicas_of(snap.partition_row(topic, p))
    return was, [was[1], was[0], *was[2:]]


def _propose(twin, store, kind: str, content: dict):
    snap = twin.assignment()
    return plans.propose(store, OPERATOR, cluster="c1", kind=kind, content=content,
                         preview={}, snapshot=snap, now=T0)


def _reassign(twin, store, *parts: tuple[str, int]):
    entries = [(t, p, _swap_leader(twin, t, p)[1]) for t, p in parts]
    return _propose(twin, store, "reassignment", moves(*entries))


def _names(twin) -> list[str]:
    return [str(n) for n in twin.assignment().topic_names]


def _count(twin, topic: str) -> int:
    snap = twin.assignment()
    return snap.topic_partition_count(snap.topic_index(topic))


def test_approve_and_execute_read_only_the_touched_topics(world):
    twin, gw, source, store = world
    names = _names(twin)
    plan = _reassign(twin, store, (names[5], 1), (names[2], 0), (names[5], 3))
    plans.approve(store, APPROVER, plan.id, sha256=plan.sha256,
                  topics_of=_topics_of(source), now=T0)
    plans.request_execute(store, OPERATOR, plan.id, topics_of=_topics_of(source), now=T0)
    assert gw.asked == [sorted([names[2], names[5]])] * 2  # 2 of 8 topics, each time
    assert gw.whole_reads == 0
    assert plans.get(store, plan.id).state == "executing"


def test_the_touched_read_holds_the_cluster_as_it_is_for_those_topics(world):
    twin, _, source, _ = world
    names, whole = _names(twin), twin.assignment()
    part = touched_snapshot(source, [names[3], "never-made", names[0]])
    assert list(part.topic_names) == [names[0], names[3]]
    for t in (names[0], names[3]):
        assert part.topic_partition_count(part.topic_index(t)) == \
            whole.topic_partition_count(whole.topic_index(t))
        for p in range(part.topic_partition_count(part.topic_index(t))):
            assert part.replicas_of(part.partition_row(t, p)) == \
                whole.replicas_of(whole.partition_row(t, p))
    shrink = shrink_content(names[3], to=1, frm=_count(twin, names[3]))
    assert basis_for(part, "shrink", shrink) == basis_for(whole, "shrink", shrink)


def test_a_partition_moved_after_a_cached_read_is_still_refused(world):
    """The pages' cached assignment (kept CLUSTER_TTL_SECONDS) predates the move: the
    re-check must not take it."""
    twin, gw, source, store = world
    topic = _names(twin)[4]
    plan = _reassign(twin, store, (topic, 2))
    cluster_snapshot(source)  # the cache now holds the cluster before the move
    was, moved = _swap_leader(twin, topic, 2)
    settle(twin, moves((topic, 2, moved)))
    with pytest.raises(Conflict, match=rf"cluster c1 changed since plan {plan.id} was "
                       rf"proposed: {topic}-2 replicas \[{', '.join(map(str, was))}\] -> "
                       rf"\[{', '.join(map(str, moved))}\]: re-propose"):
        plans.approve(store, APPROVER, plan.id, sha256=plan.sha256,
                      topics_of=_topics_of(source), now=T0)
    assert gw.asked == [[topic]] and plans.get(store, plan.id).state == "proposed"


def test_a_topic_deleted_since_the_proposal_is_named(world):
    twin, _, source, store = world
    names = _names(twin)
    moving = _reassign(twin, store, (names[1], 0), (names[6], 1))
    n = _count(twin, names[7])
    shrink = _propose(twin, store, "shrink", shrink_content(names[7], to=n - 2, frm=n))
    assert twin.delete_topics([names[1], names[7]])[0]["error"] is None
    with pytest.raises(Conflict, match=rf": {names[1]}-0 no longer exists: re-propose"):
        plans.approve(store, APPROVER, moving.id, sha256=moving.sha256,
                      topics_of=_topics_of(source), now=T0)
    with pytest.raises(Conflict, match=rf": topic {names[7]} no longer exists; "
                       rf"{names[7]}-{n - 2} no longer exists; {names[7]}-{n - 1} no longer "
                       "exists: "
                       "re-propose"):
        plans.approve(store, APPROVER, shrink.id, sha256=shrink.sha256,
                      topics_of=_topics_of(source), now=T0)


def test_a_silent_gateway_is_unavailable_and_a_snapshot_file_cluster_reads_its_file(
        tmp_path):
    snap = generate_snapshot(3, 1, 2, 4, 2, seed=3, cluster="f")
    path = tmp_path / "f.json"
    save_snapshot(snap, path)
    down = ClusterSource("f", str(path), Limits(),
                         gateway=TwinHttpGateway(f"http://127.0.0.1:{free_port()}", 1.0))
    with pytest.raises(Unavailable, match="never a snapshot file"):
        touched_snapshot(down, [str(snap.topic_names[0])])
    from_file = touched_snapshot(ClusterSource("f", str(path), Limits()), ["any"])
    assert list(from_file.topic_names) == list(snap.topic_names)
