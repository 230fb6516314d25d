"""Fleet headroom: per cluster and broker, replicas, room under the limits and time to reach them.

Pure numpy (an engine): the Spark fleet sweep maps it over clusters. Growth is observed from
the oldest and newest snapshot of a cluster, (replicas now - replicas then) / days
between them, per broker (a broker missing from the oldest snapshot has no observed
growth) and for the cluster; a ``growth_per_day`` given in the spec (replicas per broker
per day, the cluster growing by that times its broker count) replaces the observation.
Room is the limits engine's ``broker_capacity`` (never negative); time to limit is
room / growth in days: 0 when there is no room, null when unlimited or not growing.
"""

from __future__ import annotations

import numpy as np

from backend.engines.limits import broker_capacity
from backend.model.snapshot import Limits, Snapshot

SECONDS_PER_DAY = 86_400.0


def days_to_limit(room: np.ndarray, growth: np.ndarray) -> list[float | None]:
    """room / growth per element; 0 without room, None when not growing or unlimited."""
    out: list[float | None] = []
    for r, g in zip(room.tolist(), growth.tolist(), strict=True):
        if r is None or np.isnan(r):
            out.append(None)
        elif r <= 0:
            out.append(0.0)
        elif g is None or np.isnan(g) or g <= 0:
            out.append(None)
        else:
            out.append(float(r / g))
    return out


def observed_growth(snaps: list[Snapshot], taken_at: list[float | None]
                    ) -> tuple[np.ndarray, float]:
    """Per-broker and cluster replicas/day between the oldest and newest snapshot (NaN if one)."""
    now = snaps[-1]
    counts = now.broker_replica_counts().astype(np.float64)
    if len(snaps) < 2:
        return np.full(now.n_brokers, np.nan), float("nan")
    first = snaps[0]
    days = (taken_at[-1] - taken_at[0]) / SECONDS_PER_DAY
    before = np.full(now.n_brokers, np.nan)
    pos = np.searchsorted(first.broker_ids, now.broker_ids)
    pos = np.minimum(pos, first.n_brokers - 1)
    known = first.broker_ids[pos] == now.broker_ids
    before[known] = first.broker_replica_counts()[pos[known]]
    cluster = (counts.sum() - first.broker_replica_counts().sum()) / days
    return (counts - before) / days, float(cluster)


def cluster_headroom(cluster: str, snaps: list[Snapshot], taken_at: list[float | None],
                     growth_per_day: float | None, limits: Limits) -> dict[str, list]:
    """Columns of one row per broker of the newest snapshot, cluster figures repeated."""
    now = snaps[-1]
    counts = now.broker_replica_counts()
    if growth_per_day is None:
        growth, cluster_growth = observed_growth(snaps, taken_at)
    else:
        growth = np.full(now.n_brokers, float(growth_per_day))
        cluster_growth = float(growth_per_day) * now.n_brokers
    room = broker_capacity(counts, limits)
    room_f = np.full(now.n_brokers, np.nan) if room is None else room.astype(np.float64)
    total = int(counts.sum())
    cluster_room = (None if limits.max_partitions is None
                    else max(limits.max_partitions - total, 0))
    cluster_days = days_to_limit(np.array([np.nan if cluster_room is None else cluster_room]),
                                 np.array([cluster_growth]))[0]
    n = now.n_brokers
    return {
        "cluster": [cluster] * n,
        "broker": now.broker_ids.astype(np.int64).tolist(),
        "rack": list(now.broker_racks),
        "replicas": counts.tolist(),
        "headroom": [None] * n if room is None else room.tolist(),
        "growth_per_day": [None if np.isnan(g) else float(g) for g in growth.tolist()],
        "days_to_limit": days_to_limit(room_f, growth),
        "cluster_replicas": [total] * n,
        "cluster_headroom": [cluster_room] * n,
        "cluster_growth_per_day": [None if np.isnan(cluster_growth) else cluster_growth] * n,
        "cluster_days_to_limit": [cluster_days] * n,
    }
