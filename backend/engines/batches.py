"""Execution batches: a plan split so an executor can apply it step by step.

Cruise Control's executor bounds concurrent partition movements per broker
(num.concurrent.partition.movements.per.broker, default 5) and in the cluster
(max.num.cluster.partition.movements, default 1250). A movement occupies a slot on the
partition's current leader (it serves the new replicas' fetches) and on every broker that
receives a replica, as in Cruise Control's ExecutionTaskPlanner. Batches are filled
greedily in plan order; a movement that does not fit waits for the next batch ahead of
later ones. Leadership-only changes move no data and come last, bounded by the cluster
limit only.
"""

from __future__ import annotations

import numpy as np

from backend.errors import BadInput
from backend.model.csr import gather_index, offsets_from_lengths
from backend.model.reassignment import Reassignment
from backend.model.snapshot import Snapshot

PER_BROKER = 5  # num.concurrent.partition.movements.per.broker
CLUSTER = 1250  # max.num.cluster.partition.movements
_PASSES = 4  # refills of one batch with movements the first pass skipped


def new_replicas(snap: Snapshot, plan: Reassignment) -> np.ndarray:
    """Mask over ``plan.brokers``: replicas the plan adds (not in the current list)."""
    old = snap.replica_matrix(plan.rows)
    entry = np.repeat(np.arange(len(plan)), np.diff(plan.offsets))
    return ~(old[entry] == plan.brokers[:, None]).any(axis=1)


def execution_batches(snap: Snapshot, plan: Reassignment, per_broker: int = PER_BROKER,
                      cluster: int = CLUSTER) -> list[np.ndarray]:
    """Plan entry indexes per batch, in execution order."""
    if per_broker < 1 or cluster < 1:
        raise BadInput("concurrency limits must be at least 1")
    m = len(plan)
    added = new_replicas(snap, plan)
    entry = np.repeat(np.arange(m), np.diff(plan.offsets))
    n_added = np.bincount(entry[added], minlength=m)
    # Brokers each entry occupies: the current leader, then every receiving broker.
    occ_off = offsets_from_lengths(1 + n_added)
    occ = np.empty(int(occ_off[-1]), np.int64)
    occ[occ_off[:-1]] = snap.leaders[plan.rows]
    occ[occ_off[entry[added]] + 1 + rank_within(entry[added])] = plan.brokers[added]

    moving = np.flatnonzero(n_added > 0)
    window_size = 8 * min(cluster, per_broker * snap.n_brokers)
    batches: list[np.ndarray] = []
    carry, ptr = np.zeros(0, np.int64), 0
    while len(carry) or ptr < len(moving):
        fresh = moving[ptr:ptr + max(window_size - len(carry), 0)]
        ptr += len(fresh)
        window = np.concatenate((carry, fresh))
        taken = _fill(window, occ_off, occ, snap.n_brokers, per_broker, cluster)
        batches.append(window[taken])
        carry = window[~taken]
    still = np.flatnonzero(n_added == 0)
    batches += [still[i:i + cluster] for i in range(0, len(still), cluster)]
    return batches


def _fill(window: np.ndarray, occ_off: np.ndarray, occ: np.ndarray, n_brokers: int,
          per_broker: int, cluster: int) -> np.ndarray:
    """Which window entries (priority order) join one batch within both limits."""
    taken = np.zeros(len(window), bool)
    used = np.zeros(n_brokers, np.int64)
    for _ in range(_PASSES):
        cand = np.flatnonzero(~taken)
        room = cluster - int(taken.sum())
        if not len(cand) or room <= 0:
            break
        rows = window[cand]
        owner = np.repeat(np.arange(len(cand)), occ_off[rows + 1] - occ_off[rows])
        brokers = occ[gather_index(occ_off, rows)]
        over = used[brokers] + rank_within(brokers) >= per_broker
        fits = np.flatnonzero(np.bincount(owner[over], minlength=len(cand)) == 0)[:room]
        if not len(fits):
            break
        taken[cand[fits]] = True
        chosen = np.zeros(len(cand), bool)
        chosen[fits] = True
        used += np.bincount(brokers[chosen[owner]], minlength=n_brokers)
    return taken


def rank_within(keys: np.ndarray) -> np.ndarray:
    """0-based position of each element among equal keys, in array order."""
    if len(keys) and keys.min() >= 0 and keys.max() < 2**15:
        keys = keys.astype(np.int16)  # numpy's stable sort is a radix sort here
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    ranks = np.empty(len(keys), np.int64)
    ranks[order] = np.arange(len(keys)) - np.repeat(starts, np.diff(np.r_[starts, len(keys)]))
    return ranks
