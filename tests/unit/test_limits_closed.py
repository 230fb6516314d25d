"""Placing a topic Railyard creates itself (a shrink's migration) off the brokers a drain
emptied: a closed broker takes no replica, with or without max.broker.partitions, and a
replication factor the other brokers cannot hold is refused in one line."""

from __future__ import annotations

import numpy as np
import pytest

from backend.engines.limits import TopicRequest, create_topics
from backend.model.snapshot import Limits
from tests.unit.helpers import filled_snapshot


@pytest.mark.parametrize("limits", [Limits(), Limits(40, None)])
@pytest.mark.parametrize("racks", [None, {1: "a", 2: "a", 3: "b", 4: "b", 5: "c"}])
def test_a_closed_broker_takes_no_replica(limits, racks):
    snap = filled_snapshot({1: 10, 2: 10, 3: 10, 4: 10, 5: 0}, racks, limits)
    request = [TopicRequest("orders.p12", 12, 3)]
    kafka = create_topics(snap, request, limits, seed=3)
    assert np.bincount(np.ravel(kafka.topics[0].assignment), minlength=5)[4] > 0
    placed = create_topics(snap, request, limits, seed=3, closed=np.array([4]))
    outcome = placed.topics[0]
    assert outcome.ok
    added = np.bincount(np.ravel(outcome.assignment), minlength=5)
    assert added[4] == 0 and added.sum() == 36
    assert all(len(set(r)) == 3 for r in np.asarray(outcome.assignment).tolist())


def test_a_replication_factor_past_the_open_brokers_is_refused():
    snap = filled_snapshot({1: 1, 2: 1, 3: 0})
    outcome = create_topics(snap, [TopicRequest("t", 2, 3)], Limits(),
                            closed=np.array([2])).topics[0]
    assert not outcome.ok
    assert outcome.error == ("topic 't' needs 3 distinct brokers and only 2 are not kept "
                             "empty (drained)")
