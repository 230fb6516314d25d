"""The summary every plan gets, Railyard's own or any other tool's: moves, bytes,
per-broker figures, execution batches, what is left undone and what the plan breaks."""

from __future__ import annotations

import numpy as np

from backend.engines.batches import (
    CLUSTER,
    PER_BROKER,
    execution_batches,
    new_replicas,
)
from backend.engines.limits import check_reassignment
from backend.engines.planner import limit_unresolved
from backend.model.reassignment import Reassignment
from backend.model.snapshot import Limits, Snapshot


def summarize(before: Snapshot, plan: Reassignment, limits: Limits,
              unresolved: list[dict] | None = None, per_broker: int = PER_BROKER,
              cluster: int = CLUSTER, with_batches: bool = True) -> dict:
    """Moves, bytes, per-broker figures, execution batches, what is left and what breaks.

    The same for Railyard's plans and for any plan given to ``reassign diff`` (whose
    ``unresolved`` is then the limits it leaves broken). ``with_batches=False`` leaves
    the batches out (an empty list): a preview does not show them, and on a 100k-move
    plan they cost more than the rest together.
    """
    after = plan.target(before)
    added = new_replicas(before, plan)
    entry = np.repeat(np.arange(len(plan)), np.diff(plan.offsets))
    moves_per_entry = np.bincount(entry[added], minlength=len(plan))
    bytes_per_entry = moves_per_entry * before.part_size[plan.rows]
    new_leaders = plan.brokers[plan.offsets[:-1]] if len(plan) else np.zeros(0, np.int32)
    replica_moves = int(moves_per_entry.sum())
    figures = {
        "replicas": (before.broker_replica_counts(), after.broker_replica_counts()),
        "leaders": (_counted_leaders(before), _counted_leaders(after)),
        "bytes": (before.broker_bytes(), after.broker_bytes()),
    }
    brokers = [{"id": int(b), **{f"{k}_{when}": int(v[w][i]) for k, v in figures.items()
                                 for w, when in enumerate(("before", "after"))}}
               for i, b in enumerate(before.broker_ids.tolist())]
    batches = [{"partitions": idx.tolist(), "replica_moves": int(moves_per_entry[idx].sum()),
                "bytes_to_move": int(bytes_per_entry[idx].sum())}
               for idx in (execution_batches(before, plan, per_broker, cluster)
                           if with_batches else ())]
    if unresolved is None:
        unresolved = limit_unresolved(after, limits.max_broker_partitions, limits.max_partitions)
    return {
        "replica_moves": replica_moves,
        "leader_moves": int((before.leaders[plan.rows] != new_leaders).sum()),
        "bytes_to_move": int(bytes_per_entry.sum()),
        "move_ratio": replica_moves / before.n_replicas if before.n_replicas else 0.0,
        "brokers": brokers,
        "batches": batches,
        "batch_limits": {"per_broker": per_broker, "cluster": cluster},
        "unresolved": unresolved,
        "violations": plan_violations(before, after, plan, limits),
    }


def plan_violations(before: Snapshot, after: Snapshot, plan: Reassignment,
                    limits: Limits) -> list[dict]:
    """What a plan breaks: a destination over max.broker.partitions (the limit engine's
    check), a partition on fewer racks than before, a changed replication factor."""
    out = [{"kind": "limit", **v,
            "message": f"broker {v['broker']} would hold {v['after']} replicas, over the "
                       f"limit {v['limit']}" if v["broker"] is not None else
                       f"the cluster would hold {v['after']} replicas, over max.partitions "
                       f"{v['limit']}"}
           for v in check_reassignment(before, plan, limits).violations]
    rows = plan.rows
    for r in rows[before.replication_factors[rows] != after.replication_factors[rows]]:
        out.append({"kind": "replication_factor", "partition": _name(before, r),
                    "before": int(before.replication_factors[r]),
                    "after": int(after.replication_factors[r]),
                    "message": f"{_name(before, r)} changes replication factor"})
    if before.rack_mode != "none":
        was, now = _rack_spread(before, rows), _rack_spread(after, rows)
        for i in np.flatnonzero(now < was):
            out.append({"kind": "rack_spread", "partition": _name(before, rows[i]),
                        "before": int(was[i]), "after": int(now[i]),
                        "message": f"{_name(before, rows[i])} would span {now[i]} racks "
                                   f"instead of {was[i]}"})
    return out


def _counted_leaders(snap: Snapshot) -> np.ndarray:
    return np.bincount(snap.leaders[~snap.part_internal], minlength=snap.n_brokers)


def _name(snap: Snapshot, row: int) -> str:
    return f"{snap.topic_names[snap.part_topic[row]]}-{snap.part_id[row]}"


def _rack_spread(snap: Snapshot, rows: np.ndarray) -> np.ndarray:
    """Distinct racks per partition row (a broker without a rack is a rack of its own)."""
    rack = snap.broker_rack_index.astype(np.int64)
    rack = np.append(np.where(rack < 0, len(snap.rack_names), rack), -1)  # -1: padding
    racks = np.sort(rack[snap.replica_matrix(rows)], axis=1)
    before = np.hstack((np.full((len(rows), 1), -1), racks[:, :-1]))
    return ((racks >= 0) & (racks != before)).sum(axis=1)
