"""What the plan page's ETA subtracts while partitions still copy, on Apache Kafka: the
log size of each replica a reassignment adds (DescribeLogDirs, KIP-113), asked of the
receiving broker about the partitions in flight only. Two partitions move under a 10 kB/s
throttle (KIP-73; test_kafka_in_flight's moves: one onto broker 3, one onto broker 1), so
their new replicas hold part of the 3 MB each, read between two independent reads of
every log on every broker."""

from __future__ import annotations

import pytest

from backend.model.snapshot import Limits
from backend.services import execution
from backend.services.cluster import ClusterSource
from tests.integration.test_kafka_in_flight import TOPIC, moving  # noqa: F401 (a fixture)
from tests.kafka_moves import in_flight, log_sizes, wait_until

NEW = [(TOPIC, 0, 3), (TOPIC, 1, 1)]  # the replicas the moves add: 1,2 -> 1,3; 2,3 -> 2,1


@pytest.mark.usefixtures("moving")
def test_the_new_replicas_log_sizes_are_what_the_moves_copied_so_far(kafka_gateway):
    gw = kafka_gateway
    wait_until(lambda: all(log_sizes(gw, [TOPIC]).get(k, 0) > 0 for k in NEW), 60,
               "the new replicas to start copying")
    moves = sorted(in_flight(gw, [TOPIC]).values(), key=lambda m: m["partition"])
    assert [(m["partition"], m["adding"]) for m in moves] == [(0, [3]), (1, [1])]
    before = log_sizes(gw, [TOPIC])
    got = gw.replica_sizes({3: [(TOPIC, 0)], 1: [(TOPIC, 1)], 2: [(TOPIC, 0)]})
    copied, why = execution.copied_in_flight(
        ClusterSource("kafka", None, Limits(), gateway=gw), moves)
    after = log_sizes(gw, [TOPIC])
    # only what was asked, each broker of its own replicas
    assert set(got) == {*NEW, (TOPIC, 0, 2)}
    for topic, p, b in NEW:
        assert 0 < before[(topic, p, b)] <= got[(topic, p, b)] <= after[(topic, p, b)]
    # the source replica of partition 0, written to before the move: its whole log
    assert got[(TOPIC, 0, 2)] == before[(TOPIC, 0, 2)] == after[(TOPIC, 0, 2)] > 3_000_000
    # the moves are partial: the new replicas hold less than the leaders' logs
    assert after[(TOPIC, 0, 3)] < after[(TOPIC, 0, 1)]
    assert after[(TOPIC, 1, 1)] < after[(TOPIC, 1, 2)]
    # what the progress subtracts: the new replicas' bytes, nothing else
    assert why is None
    assert sum(before[k] for k in NEW) <= copied <= sum(after[k] for k in NEW)
