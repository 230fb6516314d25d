"""The execution spec of a reassignment: the concurrency limits, the throttle and the
batch order. The throttle is the plan's (in the sha256 an approver signs); the batches
are computed when the execution starts (backend/executor/runs.start_batches), from the
approved content on the cluster as the approval and the execute request checked it (its
basis), and stored with the execution, so a restart runs the same batches.

Content of a started reassignment (the execution's, not the plan's):
``{"reassignment": <Kafka plan JSON>, "execution": {"throttle", "per_broker", "cluster",
"batches": [[entry index, ...], ...], "not_before"?, "outside_windows"?}}`` where an entry
index points into the Kafka plan's ``partitions`` list; an adaptive throttle adds ``"throttle_mode":
{"mode": "adaptive", "floor"}`` (the throttle is then its ceiling:
backend/executor/adaptive.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from backend.engines.batches import CLUSTER, PER_BROKER, execution_batches
from backend.errors import BadInput
from backend.model.reassignment import reassignment_from_dict
from backend.model.snapshot import Snapshot


@dataclass(frozen=True)
class ExecutionSpec:
    """How an approved reassignment runs."""

    throttle: int | None  # bytes/s on both KIP-73 rates; None: no throttle
    per_broker: int
    cluster: int
    batches: tuple[tuple[int, ...], ...]  # indexes into the plan's partitions, in order
    not_before: float | None = None  # epoch s: no batch starts before (the plan's, signed)
    throttle_mode: dict | None = None  # {"mode": "adaptive", "floor"}; None: fixed
    outside_windows: bool = False  # signed at proposal: it may start batches at any time

    def to_dict(self) -> dict:
        out = {"throttle": self.throttle, "per_broker": self.per_broker,
               "cluster": self.cluster, "batches": [list(b) for b in self.batches]}
        if self.not_before is not None:
            out["not_before"] = self.not_before
        if self.throttle_mode is not None:
            out["throttle_mode"] = self.throttle_mode
        if self.outside_windows:
            out["outside_windows"] = True
        return out


def freeze(snap: Snapshot, plan: dict, throttle: float | None, per_broker: int = PER_BROKER,
           cluster: int = CLUSTER, not_before: float | None = None,
           throttle_mode: dict | None = None, outside_windows: bool = False) -> ExecutionSpec:
    """Batches from engines.batches on ``snap``, the cluster as the execution starts."""
    if throttle is not None and not throttle >= 1:
        raise BadInput(f"throttle must be at least 1 byte/s, got {throttle}")
    parsed = reassignment_from_dict(plan, snap)
    batches = execution_batches(snap, parsed, per_broker, cluster)
    # execution_batches indexes the parsed plan (rows ascending): map back to file order
    topic_of = {name: t for t, name in enumerate(snap.topic_names)}
    entries = plan["partitions"]
    file_rows = snap.topic_starts[[topic_of[e["topic"]] for e in entries]] + np.array(
        [e["partition"] for e in entries], dtype=np.int64)
    file_index = np.argsort(file_rows, kind="stable")
    out = tuple(tuple(file_index[b].tolist()) for b in batches if len(b))
    if throttle_mode is not None and (throttle is None
                                      or not 0 < int(throttle_mode["floor"]) <= throttle):
        raise BadInput("throttle mode: an adaptive throttle needs a floor at or below its "
                       "throttle")
    return ExecutionSpec(None if throttle is None else int(throttle), per_broker, cluster, out,
                         not_before, throttle_mode, outside_windows)


def spec_from_dict(obj: dict, n_entries: int) -> ExecutionSpec:
    """The spec stored in a plan, checked: every plan entry in exactly one batch."""
    try:
        batches = tuple(tuple(int(i) for i in b) for b in obj["batches"])
        throttle, not_before = obj.get("throttle"), obj.get("not_before")
        mode = obj.get("throttle_mode")
        spec = ExecutionSpec(None if throttle is None else int(throttle),
                             int(obj["per_broker"]), int(obj["cluster"]), batches,
                             None if not_before is None else float(not_before),
                             None if mode is None else {"mode": "adaptive",
                                                        "floor": int(mode["floor"])},
                             obj.get("outside_windows") is True)
    except (KeyError, TypeError, ValueError):
        raise BadInput("execution spec: expected {throttle, per_broker, cluster, "
                       "batches}") from None
    flat = sorted(i for b in batches for i in b)
    if flat != list(range(n_entries)):
        raise BadInput("execution spec: the batches must list every plan entry exactly once")
    return spec


def executable_content(snap: Snapshot, plan: dict, throttle: float | None,
                       per_broker: int = PER_BROKER, cluster: int = CLUSTER,
                       throttle_mode: dict | None = None) -> dict:
    """What a reassignment's execution stores and runs: the plan and its spec (with the
    plan's "not before" and whether it may run outside the cluster's windows, both part of
    its signed content: docs/executor.md)."""
    return {"reassignment": plan,
            "execution": freeze(snap, plan, throttle, per_broker, cluster,
                                plan.get("not_before"), throttle_mode,
                                plan.get("outside_windows") is True).to_dict()}
