"""Kafka's AdminUtils placement, reproduced exactly (cases from Kafka's own
AdminUtilsTest / AdminRackAwareTest, server-common/src/test/java/org/apache/kafka/admin)."""

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from backend.engines.placement import kafka_assign, rack_alternated
from backend.errors import BadInput


def rack_index(mapping: dict[int, str]) -> tuple[list[int], np.ndarray]:
    """Broker ids ascending and their rack numbers in sorted-name order."""
    ids = sorted(mapping)
    names = sorted(set(mapping.values()))
    return ids, np.array([names.index(mapping[b]) for b in ids])


def assign(mapping: dict[int, str] | list[int], partitions, rf, start, start_partition=0,
           shift=None):
    if isinstance(mapping, dict):
        ids, racks = rack_index(mapping)
    else:
        ids, racks = sorted(mapping), None
    pos = kafka_assign(len(ids), partitions, rf, start, shift=shift,
                       start_partition=start_partition, racks=racks)
    return {start_partition + p: [ids[i] for i in row] for p, row in enumerate(pos.tolist())}


def test_rack_unaware_exact():  # AdminTest.testReplicaAssignment
    expected = {0: [0, 1, 2], 1: [1, 2, 3], 2: [2, 3, 4], 3: [3, 4, 0], 4: [4, 0, 1],
                5: [0, 2, 3], 6: [1, 3, 4], 7: [2, 4, 0], 8: [3, 0, 1], 9: [4, 1, 2]}
    assert assign([0, 1, 2, 3, 4], 10, 3, 0) == expected


def test_rack_alternated_list():  # testGetRackAlternatedBrokerListAndAssignReplicasToBrokers
    mapping = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    ids, racks = rack_index(mapping)
    assert [ids[i] for i in rack_alternated(racks)] == [0, 3, 1, 5, 4, 2]
    del mapping[5]
    ids, racks = rack_index(mapping)
    assert [ids[i] for i in rack_alternated(racks)] == [0, 3, 1, 4, 2]


def test_rack_aware_exact():
    mapping = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    assert assign(mapping, 7, 3, 0) == {0: [0, 3, 1], 1: [3, 1, 5], 2: [1, 5, 4],
                                        3: [5, 4, 2], 4: [4, 2, 0], 5: [2, 0, 3],
                                        6: [0, 4, 2]}


def check_distribution(assignment, mapping, partitions, rf, rack_aware, leaders, replicas):
    """Kafka's assertReplicaDistribution."""
    for reps in assignment.values():
        assert len(set(reps)) == len(reps)
    if rack_aware:
        assert all(len({mapping[b] for b in reps}) == rf for reps in assignment.values())
    if leaders:
        counts = Counter(reps[0] for reps in assignment.values())
        assert sorted(counts.values()) == [partitions // len(mapping)] * len(mapping)
    if replicas:
        counts = Counter(b for reps in assignment.values() for b in reps)
        assert sorted(counts.values()) == [partitions * rf // len(mapping)] * len(mapping)


EVEN = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}


@pytest.mark.parametrize("start", range(6))
def test_rack_aware_even(start):  # testAssignmentWithRackAware(WithRandomStartIndex)
    check_distribution(assign(EVEN, 6, 3, start), EVEN, 6, 3, True, True, True)


def test_rack_aware_uneven_replicas():
    check_distribution(assign(EVEN, 13, 3, 0), EVEN, 13, 3, True, False, False)


@pytest.mark.parametrize("start", range(6))
def test_rack_aware_uneven_racks(start):
    mapping = {0: "rack1", 1: "rack1", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}
    check_distribution(assign(mapping, 12, 3, start, shift=(start * 5) % 6), mapping, 12, 3,
                       True, True, False)


@pytest.mark.parametrize("start", range(6))
def test_two_replicas_rack_aware(start):
    check_distribution(assign(EVEN, 12, 2, start), EVEN, 12, 2, True, True, True)


@pytest.mark.parametrize("start", range(6))
def test_rack_aware_expansion(start):  # testRackAwareExpansion: partitions 12.. added
    mapping = {6: "rack1", 7: "rack2", 8: "rack2", 9: "rack3", 10: "rack3", 11: "rack1"}
    check_distribution(assign(mapping, 12, 2, start, start_partition=12), mapping, 12, 2,
                       True, True, True)


@pytest.mark.parametrize("start", range(12))
def test_large_number_of_partitions(start):
    mapping = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1",
               6: "rack1", 7: "rack2", 8: "rack2", 9: "rack3", 10: "rack1", 11: "rack3"}
    check_distribution(assign(mapping, 96, 3, start), mapping, 96, 3, True, True, True)


def test_more_replicas_than_racks():
    mapping = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack2"}
    for reps in assign(mapping, 6, 5, 1).values():
        assert len(reps) == 5 and len({mapping[b] for b in reps}) == 3


def test_less_replicas_than_racks():
    mapping = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack2"}
    for reps in assign(mapping, 6, 2, 3).values():
        assert len({mapping[b] for b in reps}) == 2


def test_skip_broker_with_replica_already_assigned():
    mapping = {0: "a", 1: "b", 2: "c", 3: "a", 4: "a"}
    for reps in assign(mapping, 6, 4, 2).values():
        assert len(set(reps)) == 4


@pytest.mark.parametrize("partitions,rf,brokers", [(0, 1, 3), (3, 0, 3), (3, 4, 3)])
def test_kafka_rejections(partitions, rf, brokers):
    with pytest.raises(BadInput):
        kafka_assign(brokers, partitions, rf, 0)


def reference_rack_aware(n, partitions, rf, start, shift, racks, start_partition=0):
    """Line-by-line transcription of AdminUtils.assignReplicasToBrokersRackAware."""
    arranged = list(rack_alternated(racks))
    num_racks = len(set(racks.tolist()))
    out, cur = [], start_partition
    for _ in range(partitions):
        if cur > 0 and cur % n == 0:
            shift += 1
        first = (cur + start) % n
        reps, used_racks, used = [arranged[first]], {racks[arranged[first]]}, {arranged[first]}
        k = 0
        for _ in range(rf - 1):
            while True:
                b = arranged[(first + 1 + (shift * num_racks + k) % (n - 1)) % n]
                k += 1
                if ((racks[b] not in used_racks or len(used_racks) == num_racks)
                        and (b not in used or len(used) == n)):
                    reps.append(b)
                    used_racks.add(racks[b])
                    used.add(b)
                    break
        out.append(reps)
        cur += 1
    return out


@settings(max_examples=150, deadline=None)
@given(st.integers(2, 9), st.integers(1, 4), st.integers(1, 40), st.integers(0, 20),
       st.integers(0, 20), st.integers(0, 30), st.data())
def test_rack_aware_matches_transcription(n, n_racks, partitions, start, shift, first_pid, data):
    racks = np.array(data.draw(st.lists(st.integers(0, n_racks - 1), min_size=n, max_size=n)))
    racks = np.unique(racks, return_inverse=True)[1]  # racks numbered densely, as names sort
    rf = data.draw(st.integers(1, n))
    got = kafka_assign(n, partitions, rf, start, shift=shift, start_partition=first_pid,
                       racks=racks).tolist()
    assert got == reference_rack_aware(n, partitions, rf, start, shift, racks, first_pid)


@pytest.mark.parametrize("n,racks_n", [(12, 3), (9, 3), (8, 2), (10, 3)])
def test_reused_walks_match_transcription(n, racks_n):
    """Equal racks take the reuse-the-walk path; unequal ones walk every partition."""
    racks = np.arange(n) % racks_n
    for start, shift in [(0, 0), (5, 3), (7, 11)]:
        got = kafka_assign(n, 250, 3, start, shift=shift, start_partition=4, racks=racks)
        assert got.tolist() == reference_rack_aware(n, 250, 3, start, shift, racks, 4)


@pytest.mark.parametrize("seed", range(40))
def test_walk_table_matches_transcription_on_random_shapes(seed):
    """The (start, leader rack) table and the per-partition walk both equal Kafka's walk:
    uneven racks, RF 1..5 (also above the rack count), any start, shift and first id, and
    fewer or more blocks of n partition ids than racks (the table's threshold)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 40))
    n_racks = int(rng.integers(1, min(n, 6) + 1))
    weights = rng.dirichlet(np.ones(n_racks) * 0.7)  # some racks much larger than others
    racks = np.unique(rng.choice(n_racks, n, p=weights), return_inverse=True)[1]
    rf = int(rng.integers(1, min(n, 5) + 1))
    partitions = int(rng.integers(1, 3 * n * (racks.max() + 1)))
    start, shift, first_pid = (int(x) for x in rng.integers(0, 3 * n, 3))
    got = kafka_assign(n, partitions, rf, start, shift=shift, start_partition=first_pid,
                       racks=racks).tolist()
    assert got == reference_rack_aware(n, partitions, rf, start, shift, racks, first_pid)


def reference_rack_unaware(n, partitions, rf, start, shift, start_partition=0):
    """Line-by-line transcription of AdminUtils.assignReplicasToBrokersRackUnaware."""
    out, cur = [], start_partition
    for _ in range(partitions):
        if cur > 0 and cur % n == 0:
            shift += 1
        first = (cur + start) % n
        out.append([first] + [(first + 1 + (shift + j) % (n - 1)) % n for j in range(rf - 1)])
        cur += 1
    return out


@pytest.mark.parametrize("seed", range(40))
def test_rack_unaware_matches_transcription_on_random_shapes(seed):
    """Runs of one nextReplicaShift, partial first and last runs, fewer partitions than
    brokers and many more, RF 1..5."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    rf = int(rng.integers(1, min(n, 5) + 1))
    partitions = int(rng.integers(1, 5 * n))
    start, shift, first_pid = (int(x) for x in rng.integers(0, 3 * n, 3))
    got = kafka_assign(n, partitions, rf, start, shift=shift, start_partition=first_pid)
    assert got.tolist() == reference_rack_unaware(n, partitions, rf, start, shift, first_pid)
