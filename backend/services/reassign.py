"""Reassignment questions: plan toward a goal, or summarise and check any plan."""

from __future__ import annotations

import json

from backend.engines import plan_summary, planner
from backend.engines.batches import CLUSTER, PER_BROKER
from backend.engines.planner import BALANCE_THRESHOLD, GOALS
from backend.errors import BadInput
from backend.model.io import atomic_output, check_output_path, read_json
from backend.model.reassignment import reassignment_from_dict
from backend.model.snapshot import Limits, Snapshot


def goal(kind: str, brokers: tuple[int, ...] = (), target_utilization: float = 1.0,
         threshold: float = BALANCE_THRESHOLD,
         keep_empty: tuple[int, ...] = ()) -> planner.Goal:
    """The planner's goal from what an operator names (one of GOALS); ``keep_empty``:
    brokers drained earlier that the goal must leave empty."""
    if kind not in GOALS:
        raise BadInput(f"goal must be one of {', '.join(GOALS)}, got '{kind}'")
    return planner.Goal(kind, brokers, target_utilization, threshold, keep_empty)


def generate(snap: Snapshot, goal: planner.Goal, limits: Limits, seed: int = 0,
             plan_out: str | None = None, per_broker: int = PER_BROKER,
             cluster: int = CLUSTER) -> dict:
    """The plan for ``goal`` as Kafka's JSON, its summary, and the plan file if asked."""
    if plan_out is not None:
        check_output_path(plan_out, "--plan-out")
    result = planner.plan(snap, goal, limits, seed=seed)
    settled = result.before  # moves in flight at their targets: what the plan is made on
    summary = plan_summary.summarize(settled, result.reassignment, limits, result.unresolved,
                                     per_broker, cluster)
    kafka = result.reassignment.to_kafka_json(settled)
    out = {"goal": goal.kind, "ok": result.ok, "plan": kafka, "summary": summary}
    if plan_out is not None:
        out["plan_out"] = write_plan(kafka, plan_out)
    return out


def diff(snap: Snapshot, plan_path: str, limits: Limits, per_broker: int = PER_BROKER,
         cluster: int = CLUSTER) -> dict:
    """Validate a plan file as kafka-reassign-partitions does, then summarise it."""
    plan = reassignment_from_dict(read_json(plan_path, "reassignment file"), snap,
                                  source=plan_path)
    summary = plan_summary.summarize(snap, plan, limits, None, per_broker, cluster)
    return {"ok": not summary["violations"] and not summary["unresolved"],
            "partitions": len(plan), "summary": summary}


def write_plan(kafka: dict, path: str) -> dict:
    """Write the bare plan kafka-reassign-partitions --execute accepts (never an empty one:
    Kafka rejects an empty partition list)."""
    if not kafka["partitions"]:
        return {"path": path, "written": False,
                "reason": "the plan is empty: nothing to reassign"}
    check_output_path(path, "--plan-out")
    with atomic_output(path, "--plan-out") as tmp, open(tmp, "w", encoding="utf-8") as f:
        json.dump(kafka, f, separators=(",", ":"))
    return {"path": path, "written": True, "partitions": len(kafka["partitions"])}
