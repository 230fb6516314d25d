"""Capacity-aware placement for when Kafka's own round robin would break a limit.

KIP-578's prototype skips brokers at capacity while it walks Kafka's round robin, and so
rejects requests that fit (the KIP's own 10/20/30-with-limit-40 example). Here the
question "can P partitions of RF distinct brokers fit into per-broker capacities c?" is
answered exactly: yes iff sum(min(c_b, P)) >= P * RF. The witness is built by the
wrap-around rule (McNaughton's): lay brokers out with multiplicities y_b <= P and deal
slot i to partition i mod P; a broker's run of at most P consecutive slots never hits
one partition twice. Choosing y_b by level-filling keeps the brokers' final counts as
even as the capacities allow. Laying the brokers out rack by rack applies the same rule
one level up at once: with every rack's run at most P slots, each partition is on
distinct racks (possible whenever the racks' capacities allow it). With more replicas
than racks, each rack taking at least P slots gives every partition every rack: P
consecutive slots meet every partition once.
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
    level = _water_level(current, cap, total)
    y = np.clip(level - 1 - current, 0, cap)
    rest = total - int(y.sum())
    if rest:
        can_rise = np.flatnonzero((y < cap) & (current + y == level - 1))
        y[can_rise[:rest]] += 1
    return y


def _water_level(current: np.ndarray, cap: np.ndarray, total: int) -> int:
    """Smallest level L with sum(clip(L - current, 0, cap)) >= total (the highest
    current + cap when none is). The sum is piecewise linear in L, its slope rising by 1
    where a broker starts filling and falling by 1 where it is full, so one sort of those
    points and two running sums find the piece it crosses ``total`` on."""
    points = np.concatenate((current, current + cap))
    order = np.argsort(points, kind="stable")  # a broker's start before its end
    at = points[order]
    slope = np.cumsum(np.where(order < len(current), 1, -1))  # just after each point
    filled = np.zeros(len(at), dtype=np.int64)
    np.cumsum(slope[:-1] * (at[1:] - at[:-1]), out=filled[1:])  # the sum at each point
    k = int(np.searchsorted(filled, total))
    if k == len(at):
        return int(at[-1])
    return int(at[k - 1]) - (-(total - int(filled[k - 1])) // int(slope[k - 1]))


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
) -> tuple[np.ndarray, bool, np.ndarray]:
    """A placement that respects ``capacity`` (assumes ``fits``), rows leader first.

    Returns (assignment of broker positions, rack_aware, replicas added per broker) where
    rack_aware says whether every partition spans min(rf, racks) racks (always True
    without racks).
    """
    cap = np.minimum(np.asarray(capacity, dtype=np.int64), partitions)
    n_racks = 0 if racks is None else len(np.unique(racks))
    y = None
    if racks is not None and rf <= n_racks:
        rack_cap = np.minimum(np.bincount(racks, weights=cap, minlength=n_racks), partitions)
        if int(rack_cap.sum()) >= partitions * rf:
            y = _fill_with_rack_cap(counts, cap, racks, partitions, partitions * rf)
    elif racks is not None:
        rack_room = np.bincount(racks, weights=cap, minlength=n_racks)
        if (rack_room >= partitions).all():
            y = np.zeros_like(cap)
            for r in range(n_racks):  # P slots in every rack first, then the rest anywhere
                members = racks == r
                y[members] = level_fill(counts[members], cap[members], partitions)
            y += level_fill(counts + y, cap - y, partitions * (rf - n_racks))
    rack_aware = y is not None or racks is None
    if y is None:
        y = level_fill(counts, cap, partitions * rf)
        order = np.arange(len(cap))
    else:  # brokers rack by rack: every rack's run is at most P slots too (or at least P)
        order = np.argsort(racks, kind="stable")
    return _rotated(deal(order, y[order], partitions, rf)), rack_aware, y


def _rotated(rows: np.ndarray) -> np.ndarray:
    """Row p rotated left by p mod RF, so leadership spreads over the brokers rather
    than the first ones dealt."""
    rf = rows.shape[1]
    out = np.empty_like(rows)
    for s in range(rf):  # RF slices, each vectorised over its partitions
        out[s::rf, :rf - s] = rows[s::rf, s:]
        out[s::rf, rf - s:] = rows[s::rf, :s]
    return out


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
