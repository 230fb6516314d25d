"""Apache Kafka's replica placement (AdminUtils.assignReplicasToBrokers), vectorised.

The arithmetic is Kafka's own, exactly: for a fixed start index the output equals
Kafka's for the same brokers. Rack-unaware placement is closed-form per partition;
rack-aware placement walks Kafka's candidate sequence for all partitions in lockstep,
so no Python loop runs per partition or per replica.

Brokers are given as positions 0..n-1 in ascending id order (as Kafka's callers sort
them); racks as small integers (or None when no broker has a rack).
"""

from __future__ import annotations

import numpy as np

from backend.errors import BadInput


def validate_request(n_brokers: int, n_partitions: int, replication_factor: int) -> None:
    """Kafka's own checks, with Kafka's wording."""
    if n_partitions <= 0:
        raise BadInput("number of partitions must be larger than 0")
    if replication_factor <= 0:
        raise BadInput("replication factor must be larger than 0")
    if replication_factor > n_brokers:
        raise BadInput(
            f"replication factor: {replication_factor} larger than available brokers: {n_brokers}"
        )


def rack_alternated(racks: np.ndarray) -> np.ndarray:
    """Kafka's getRackAlternatedBrokerList: one broker of each rack in turn.

    ``racks[i]`` is the rack index of broker position i, rack indexes numbered in sorted
    rack-name order; brokers inside a rack are taken in ascending id (position) order.
    """
    racks = np.asarray(racks, dtype=np.int64)
    order = np.lexsort((np.arange(len(racks)), racks))  # by rack, then id
    rack_sorted = racks[order]
    first_of_rack = np.searchsorted(rack_sorted, rack_sorted, side="left")
    rank_in_rack = np.arange(len(racks)) - first_of_rack
    # Round r visits every rack that still has an r-th broker, in rack order.
    arranged = order[np.lexsort((rack_sorted, rank_in_rack))]
    return arranged.astype(np.int64)


def _shifts(partition_ids: np.ndarray, start_partition: int, n: int, shift0: int) -> np.ndarray:
    """nextReplicaShift at each partition: +1 every time the id wraps the broker list."""
    first_counted = max(start_partition, 1)
    return shift0 + (partition_ids // n - (first_counted - 1) // n)


def kafka_assign(
    n_brokers: int,
    n_partitions: int,
    replication_factor: int,
    start_index: int,
    shift: int | None = None,
    start_partition: int = 0,
    racks: np.ndarray | None = None,
) -> np.ndarray:
    """Replica positions per new partition, shape (n_partitions, RF), leader first.

    ``start_index`` and ``shift`` are Kafka's startIndex and nextReplicaShift; Kafka sets
    both to fixedStartIndex when one is given (``shift=None`` does the same).
    ``start_partition`` is the first new partition id (add-partitions).
    """
    validate_request(n_brokers, n_partitions, replication_factor)
    shift = start_index if shift is None else shift
    n = n_brokers
    pid = np.arange(start_partition, start_partition + n_partitions, dtype=np.int64)
    shifts = _shifts(pid, start_partition, n, shift)
    first = (pid + start_index) % n
    if racks is None:
        out = np.empty((n_partitions, replication_factor), dtype=np.int64)
        out[:, 0] = first
        for j in range(replication_factor - 1):  # RF is small; vectorised over partitions
            out[:, j + 1] = (first + 1 + (shifts + j) % (n - 1)) % n
        return out
    arranged = rack_alternated(racks)
    rack_of = np.asarray(racks, dtype=np.int64)[arranged]  # rack per arranged slot
    return arranged[_rack_aware_slots(first, shifts, rack_of, replication_factor)]


def _rack_aware_slots(
    first: np.ndarray, shifts: np.ndarray, rack_of: np.ndarray, rf: int
) -> np.ndarray:
    """Kafka's rack-aware follower walk: arranged-list slots per partition, leader first.

    A partition's walk is fixed by its first slot and ``shift * numRacks mod (n - 1)``.
    When racks are equal in size the arranged list repeats with period numRacks, so the
    walk's offsets from the first slot depend only on ``first mod numRacks``: each distinct
    (first mod period, shift) walk is computed once and reused for its partitions.
    """
    n = len(rack_of)
    num_racks = len(np.unique(rack_of))
    base = (shifts * num_racks) % max(n - 1, 1)
    if not _is_periodic(rack_of, num_racks):
        return _walk(first, base, rack_of, num_racks, rf)
    keys = (first % num_racks) * max(n - 1, 1) + base
    uniq, inverse = np.unique(keys, return_inverse=True)
    rep_first = uniq // max(n - 1, 1)
    rep_slots = _walk(rep_first, uniq % max(n - 1, 1), rack_of, num_racks, rf)
    offsets = (rep_slots - rep_first[:, None]) % n
    return (first[:, None] + offsets[inverse]) % n


def _is_periodic(rack_of: np.ndarray, period: int) -> bool:
    n = len(rack_of)
    return n % period == 0 and np.array_equal(rack_of, np.tile(rack_of[:period], n // period))


def _walk(first: np.ndarray, base: np.ndarray, rack_of: np.ndarray, num_racks: int,
          rf: int) -> np.ndarray:
    """The walk itself, all partitions in lockstep (Kafka's k is never reset)."""
    n = len(rack_of)
    p = len(first)
    slots = np.zeros((p, rf), dtype=np.int64)
    slots[:, 0] = first
    filled = np.ones(p, dtype=np.int64)  # replicas chosen so far
    racks_used = np.ones(p, dtype=np.int64)  # distinct racks among them
    k = np.zeros(p, dtype=np.int64)
    active = np.arange(p) if rf > 1 else np.zeros(0, dtype=np.int64)
    while len(active):
        cand = (first[active] + 1 + (base[active] + k[active]) % (n - 1)) % n
        cand_rack = rack_of[cand]
        chosen = slots[active]
        f = filled[active]
        cols = np.arange(rf)[None, :] < f[:, None]
        broker_taken = ((chosen == cand[:, None]) & cols).any(axis=1)
        rack_taken = ((rack_of[chosen] == cand_rack[:, None]) & cols).any(axis=1)
        ok = (~rack_taken | (racks_used[active] == num_racks)) & (~broker_taken | (f == n))
        acc = active[ok]
        slots[acc, filled[acc]] = cand[ok]
        racks_used[acc] += ~rack_taken[ok]
        filled[acc] += 1
        k[active] += 1
        active = active[filled[active] < rf]
    return slots
