"""Apache Kafka's replica placement (AdminUtils.assignReplicasToBrokers), vectorised.

The arithmetic is Kafka's own, exactly: for a fixed start index the output equals
Kafka's for the same brokers. Rack-unaware placement is closed-form per partition.
Rack-aware placement reads each partition's followers from a table of Kafka's candidate
walk (see ``_rack_aware``), so no Python loop runs per partition or per replica.

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


def _block_shifts(start_partition: int, n_partitions: int, n: int, shift0: int
                  ) -> np.ndarray:
    """Kafka's nextReplicaShift in each block of n partition ids (b*n .. b*n + n - 1)
    the new partitions touch: it grows by 1 at every partition id > 0 that is a multiple
    of n, so one value holds for a whole block."""
    lo, hi = start_partition, start_partition + n_partitions
    first = shift0 + lo // n - (max(lo, 1) - 1) // n
    return np.arange(first, first + (hi - 1) // n - lo // n + 1)


def _ahead(slot: np.ndarray, step: np.ndarray, n: int,
           out: np.ndarray | None = None) -> np.ndarray:
    """(slot + step) mod n for 0 <= slot < n and 0 <= step <= n, without a division."""
    out = np.add(slot, step, out=out)
    np.subtract(out, n, out=out, where=out >= n)
    return out


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

    Placed block by block of n partition ids (whole blocks, then cut to the new ids): in a
    block the leaders' slots are one period of (id + startIndex) mod n and the shift is
    one number, so every column is written once, from broadcasts, into the result.
    """
    validate_request(n_brokers, n_partitions, replication_factor)
    shift = start_index if shift is None else shift
    n, rf = n_brokers, replication_factor
    shifts = _block_shifts(start_partition, n_partitions, n, shift)
    skip = start_partition % n  # ids of the first block before the first new one
    cycle = (np.arange(n) + start_partition - skip + start_index) % n
    out = np.empty((len(shifts) * n, rf), dtype=np.int64)
    grid = out.reshape(len(shifts), n, rf)  # block, id in block, replica
    if racks is None:
        grid[:, :, 0] = cycle
        for j in range(rf - 1):
            _ahead(cycle, 1 + (shifts[:, None] + j) % (n - 1), n, out=grid[:, :, j + 1])
    else:
        _rack_aware(grid, cycle, shifts, np.asarray(racks, dtype=np.int64))
    return out[skip:skip + n_partitions]


def _rack_aware(grid: np.ndarray, cycle: np.ndarray, shifts: np.ndarray,
                racks: np.ndarray) -> None:
    """Kafka's rack-aware placement into ``grid`` (block, id in block, replica), given
    each id's leader slot in the rack-alternated list (``cycle``) and each block's shift.

    Kafka's candidates for a partition are the slots after ``start = first + 1 + shift *
    numRacks mod (n - 1)``, in a circle that skips the leader's slot, and Kafka's k is
    never reset. Seen as a walk round the whole circle from ``start``, the leader's slot
    is refused anyway (its rack and broker are taken), so until every rack holds a replica
    the followers are the first slots of racks not yet used: a function of ``start`` and
    the leader's rack alone, computed once per (start, rack) and looked up per partition.
    Once every rack is used (RF > numRacks) any slot not yet holding a replica is taken,
    so the rest are the next free slots after the last follower.
    """
    n, rf = len(racks), grid.shape[2]
    arranged = rack_alternated(racks)
    rack_of = racks[arranged]
    grid[:, :, 0] = arranged[cycle]
    if rf == 1:
        return
    width = int(rack_of.max()) + 1
    num_racks = int(np.count_nonzero(np.bincount(rack_of, minlength=width)))
    start = _ahead(cycle, 1 + (shifts[:, None] * num_racks) % (n - 1), n)  # (blocks, n)
    leader_rack = rack_of[cycle]
    m = min(rf, num_racks) - 1  # followers on racks of their own
    columns: list[np.ndarray] = []
    if m and n * width <= start.size:  # a table over every (start, leader rack) is smaller
        table = _new_racks(np.repeat(np.arange(n), width), np.tile(np.arange(width), n),
                           rack_of, m)
        key = start * width + leader_rack
        columns = [np.take(np.ascontiguousarray(table[:, j]), key) for j in range(m)]
    elif m:
        found = _new_racks(start.ravel(), np.broadcast_to(leader_rack, start.shape).ravel(),
                           rack_of, m)
        columns = [found[:, j].reshape(start.shape) for j in range(m)]
    if rf > m + 1:
        after = columns[-1] if m else start - 1
        taken = np.stack([np.broadcast_to(cycle, start.shape), *columns], axis=-1)
        rest = _next_free(after.ravel(), taken.reshape(-1, m + 1), n, rf - m - 1)
        columns += [rest[:, j].reshape(start.shape) for j in range(rf - m - 1)]
    for j, column in enumerate(columns):
        grid[:, :, j + 1] = np.take(arranged, column)


def _new_racks(start: np.ndarray, leader_rack: np.ndarray, rack_of: np.ndarray,
               m: int) -> np.ndarray:
    """The first ``m`` slots from ``start`` round the circle whose racks are new (not the
    leader's, not an earlier follower's), all rows walked in lockstep."""
    n, t = len(rack_of), len(start)
    found = np.empty((t, m), dtype=np.int64)
    seen = np.full((t, m + 1), -1, dtype=np.int64)
    seen[:, 0] = leader_rack
    got = np.zeros(t, dtype=np.int64)
    rows = np.arange(t)
    step = 0
    while len(rows):  # every rack appears within n steps, so this ends before step n
        slot = (start[rows] + step) % n
        rack = rack_of[slot]
        new = (seen[rows] != rack[:, None]).all(axis=1)
        took, g = rows[new], got[rows[new]]
        found[took, g] = slot[new]
        seen[took, g + 1] = rack[new]
        got[took] = g + 1
        rows = rows[got[rows] < m]
        step += 1
    return found


def _next_free(after: np.ndarray, taken: np.ndarray, n: int, count: int) -> np.ndarray:
    """The first ``count`` slots after ``after`` round the circle not in ``taken``'s row.

    ``count + taken.shape[1]`` slots always hold enough free ones.
    """
    window = (after[:, None] + 1 + np.arange(count + taken.shape[1])) % n
    free = ~(window[:, :, None] == taken[:, None, :]).any(axis=2)
    keep = free & (np.cumsum(free, axis=1) <= count)
    return window[keep].reshape(len(after), count)
