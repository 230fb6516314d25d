"""Capacity-aware placement for when Kafka's own round robin would break a limit.

KIP-578's prototype skips brokers at capacity while it walks Kafka's round robin, and so
rejects requests that fit (the KIP's own 10/20/30-with-limit-40 example). Here the
question "can P partitions of RF distinct brokers fit into per-broker capacities c?" is
answered exactly: yes iff sum(min(c_b, P)) >= P * RF. The witness is built by the
wrap-around rule (McNaughton's): lay brokers out with multiplicities y_b <= P and deal
slot i to partition i mod P; a broker's run of at most P consecutive slots never hits
one partition twice. Choosing y_b by level-filling keeps the brokers' final counts as
even as the capacities allow. The same rule one level up (racks as the "brokers")
keeps each partition on distinct racks whenever the racks' capacities allow it. With more
replicas than racks, brokers laid out rack by rack, each rack taking at least P slots,
give every partition every rack: P consecutive slots meet every partition once.
"""

from __future__ import annotations

import numpy as np


def fits(capacity: np.ndarray, partitions: int, rf: int) -> bool:
    """Whether ``partitions`` partitions of ``rf`` distinct brokers fit the capacities."""
    return int(np.minimum(capacity, partitions).sum()) >= partitions * rf


def shortfall(capacity: np.ndarray, partitions: int, rf: int) -> int:
    """Replica slots missing for the request to fit (0 when it fits)."""
    return max(partitions * rf - int(np.minimum(capacity, partitions).sum()), 0)


def level_fill(current: np.ndarray, cap: np.ndarray, total: int) -> np.ndarray:
    """Integers y <= cap with sum(y) == total that keep max(current + y) lowest.

    Ties go to the lowest positions, so the result is deterministic.
    """
    current = np.asarray(current, dtype=np.int64)
    cap = np.asarray(cap, dtype=np.int64)
    if total <= 0:
        return np.zeros_like(cap)
    lo, hi = int(current.min()), int((current + cap).max())
    while lo < hi:  # smallest level L with sum(clip(L - current, 0, cap)) >= total
        mid = (lo + hi) // 2
        if int(np.clip(mid - current, 0, cap).sum()) >= total:
            hi = mid
        else:
            lo = mid + 1
    y = np.clip(lo - 1 - current, 0, cap)
    rest = total - int(y.sum())
    if rest:
        can_rise = np.flatnonzero((y < cap) & (current + y == lo - 1))
        y[can_rise[:rest]] += 1
    return y


def deal(groups: np.ndarray, multiplicity: np.ndarray, partitions: int, rf: int) -> np.ndarray:
    """Wrap-around dealing: a (partitions, rf) matrix of group ids, distinct per row.

    Requires multiplicity <= partitions and sum(multiplicity) == partitions * rf.
    """
    seq = np.repeat(groups, multiplicity)
    return seq.reshape(rf, partitions).T


def place_by_capacity(
    counts: np.ndarray,
    capacity: np.ndarray,
    partitions: int,
    rf: int,
    racks: np.ndarray | None = None,
) -> tuple[np.ndarray, bool]:
    """A placement that respects ``capacity`` (assumes ``fits``), rows leader first.

    Returns (assignment of broker positions, rack_aware) where rack_aware says whether
    every partition spans min(rf, racks) racks (always True without racks).
    """
    cap = np.minimum(np.asarray(capacity, dtype=np.int64), partitions)
    n = len(cap)
    brokers = np.arange(n)
    n_racks = 0 if racks is None else len(np.unique(racks))
    rack_aware = False
    if racks is not None and rf <= n_racks:
        rack_cap = np.minimum(np.bincount(racks, weights=cap, minlength=n_racks), partitions)
        if int(rack_cap.sum()) >= partitions * rf:
            y = _fill_with_rack_cap(counts, cap, racks, partitions, partitions * rf)
            x = np.bincount(racks, weights=y, minlength=n_racks).astype(np.int64)
            rack_matrix = deal(np.arange(n_racks), x, partitions, rf)
            # inside each rack, deal its brokers to the partitions that use the rack
            order = np.argsort(rack_matrix.ravel(), kind="stable")
            by_rack = np.lexsort((brokers, racks))
            flat = np.empty(partitions * rf, dtype=np.int64)
            flat[order] = np.repeat(by_rack, y[by_rack])
            out = flat.reshape(partitions, rf)
            rack_aware = True
    elif racks is not None and rf > n_racks:
        rack_room = np.bincount(racks, weights=cap, minlength=n_racks)
        if (rack_room >= partitions).all():
            y = np.zeros_like(cap)
            for r in range(n_racks):  # P slots in every rack first, then the rest anywhere
                members = racks == r
                y[members] = level_fill(counts[members], cap[members], partitions)
            y += level_fill(counts + y, cap - y, partitions * (rf - n_racks))
            by_rack = np.lexsort((brokers, racks))
            out = deal(by_rack, y[by_rack], partitions, rf)
            rack_aware = True
    if not rack_aware:
        y = level_fill(counts, cap, partitions * rf)
        out = deal(brokers, y, partitions, rf)
        rack_aware = racks is None
    # rotate rows so leadership spreads over the brokers rather than the first ones dealt
    shift = np.arange(partitions) % rf
    cols = (np.arange(rf)[None, :] + shift[:, None]) % rf
    return np.take_along_axis(out, cols, axis=1), rack_aware


def _fill_with_rack_cap(
    counts: np.ndarray, cap: np.ndarray, racks: np.ndarray, rack_limit: int, total: int
) -> np.ndarray:
    """level_fill where each rack may take at most ``rack_limit`` in all."""
    y = np.zeros_like(cap)
    free = np.ones(len(cap), dtype=bool)
    while True:
        y[free] = level_fill(counts[free], cap[free], total)
        per_rack = np.bincount(racks, weights=np.where(free, y, 0))
        over = np.flatnonzero(per_rack > rack_limit)
        if not len(over):
            return y
        for r in over:  # at most one pass per rack
            members = free & (racks == r)
            y[members] = level_fill(counts[members], cap[members], rack_limit)
            free &= ~members
            total -= rack_limit
