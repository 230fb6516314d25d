"""Running an approved shrink on a cluster that implements the delete-partitions KIP.

One step per tick, with the clock passed in (the retries, backoff and failure handling are
the reassignment executor's, backend/executor/loop.py):
- the request: unless the cluster already shows the partitions past ReadWrite (a restart
  after the request reached it), send DeletePartitions with the plan's delay; then
- follow the stages the cluster reports (each partition's ``mode``; a partition it no
  longer lists is Removed): ReadOnly, None once the controller's check after the delay
  has run, Removed once every broker deleted its replica. Each new stage is an audit entry;
  Removed completes the plan.

The execution row's ``phase`` is the stage ("idle" before the cluster accepted it);
its one batch row is the removed partitions, started when DeletePartitions was accepted.
A cancel before the request cancels; after it the KIP has no way back, so the executor
says so and follows the stages to the end.
"""

from __future__ import annotations

from backend.engines.shrink_stages import READ_WRITE, REMOVED, StageView, observe
from backend.executor.loop import Executor
from backend.gateways.base import ClusterGateway, ClusterReader, GatewayError, can_delete_partitions
from backend.store.executions import MIGRATION, STAGES, Execution

REQUEST = "idle"  # the phase before DeletePartitions was accepted (a new execution's)
NO_WAY_BACK = ("cancel requested after DeletePartitions was accepted: the delete-partitions "
               "KIP has no way back, so the partitions go on to Removed")


def mode_on(gw: ClusterReader | None) -> str | None:
    """How a shrink executes on a cluster with gateway ``gw``: the KIP's stages, the
    migration, or None when nothing can execute there (a read-only gateway)."""
    if not isinstance(gw, ClusterGateway):
        return None
    return STAGES if can_delete_partitions(gw) else MIGRATION


def stages_content(shrink: dict) -> dict:
    """What a stage execution stores and runs: the approved shrink, unchanged."""
    return {"shrink": shrink, "execution": {"mode": STAGES, "throttle": None}}


class FrozenShrinks(Executor):
    """An executor of shrink plans (stages or migration): the approved shrink, read once."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._shrinks: dict[int, dict] = {}

    def _at_the_end(self, ex: Execution) -> bool:
        return False  # a shrink sets no configs: there is nothing to put back at its end

    def _shrink(self, plan_id: int) -> Execution:
        if plan_id not in self._shrinks:
            self._shrinks[plan_id] = self.records.content(plan_id)["shrink"]
        return self._shrinks[plan_id]


class ShrinkExecutor(FrozenShrinks):
    """Runs shrink executions through a gateway that can delete partitions."""

    def _step(self, ex: Execution, now: float) -> Execution:
        plan_id = ex.plan_id
        c = self._shrink(plan_id)
        if ex.state == "failing":
            return self._end(ex, "failed", ex.cause, now, ex.phase)
        if ex.state == "cancelling" and ex.phase == REQUEST:
            return self._end(ex, "cancelled", None, now)
        if ex.state == "cancelling" and ex.cause is None:
            self.journal.record(plan_id, "cancel_impossible", {"why": NO_WAY_BACK}, now)
            return self.records.save(ex, cause=NO_WAY_BACK, updated_at=now)
        if ex.state == "pausing":  # the stages run on the cluster's clock, not ours
            ex = self.records.save(ex, state="running", updated_at=now)
        view = self._view(c, None)
        if ex.phase == REQUEST:
            return self._request(ex, c, view, now)
        if view.stage == READ_WRITE:
            raise GatewayError("INVALID_REQUEST", f"the partitions of '{c['topic']}' to "
                               "remove are ReadWrite again: the deletion was undone outside "
                               "Railyard")
        if view.stage != ex.phase:
            removed = view.counts[REMOVED]
            self.journal.record(plan_id, "shrink_stage", {"stage": view.stage,
                                                          "partitions": view.counts}, now)
            self.records.save_batch(plan_id, 0, done=removed)
            ex = self.records.save(ex, phase=view.stage, partitions_done=removed,
                                   updated_at=now)
        if view.stage == REMOVED:
            self.records.save_batch(plan_id, 0, state="done", ended_at=now)
            return self._end(ex, "completed", ex.cause, now, REMOVED)
        return ex

    def _request(self, ex: Execution, c: dict, view: StageView, now: float) -> Execution:
        """DeletePartitions, unless the cluster already has it (sent before a restart)."""
        plan_id = ex.plan_id
        if view.stage == READ_WRITE:
            if not can_delete_partitions(self.gw):
                raise GatewayError("INVALID_REQUEST", "this cluster cannot delete partitions "
                                   "(delete.topic.partition.enable is off)")
            user, client_id = self.gw.principal()
            out = self.gw.delete_partitions(c["topic"], c["to"], c["delay_ms"],
                                            user=user or "", client_id=client_id)
            if out["error"]:
                raise GatewayError(out["error"], out["message"] or "")
            self.journal.record(plan_id, "partitions_delete_requested", {
                "topic": c["topic"], "keep": c["to"], "delay_ms": c["delay_ms"],
                "throttle_time_ms": out["throttle_time_ms"]}, now)
            view = self._view(c, {p["partition"]: p["mode"] for p in out["partitions"]})
        else:
            self.journal.record(plan_id, "partitions_delete_found",
                                {"topic": c["topic"], "stage": view.stage}, now)
        self.records.save_batch(plan_id, 0, state="running", started_at=now)
        self.journal.record(plan_id, "shrink_stage", {"stage": view.stage,
                                                      "partitions": view.counts}, now)
        return self.records.save(ex, phase=view.stage, partitions_done=view.counts[REMOVED],
                                 updated_at=now)

    def _view(self, c: dict, modes: dict[int, str] | None) -> StageView:
        """The stage from the partitions' modes (as given, or described now)."""
        if modes is None:
            topic = self.gw.describe_topics([c["topic"]])[0]
            modes = {p["partition"]: p.get("mode", READ_WRITE) for p in topic["partitions"]}
            if len(modes) < c["to"]:
                raise GatewayError("INVALID_PARTITIONS", f"topic '{c['topic']}' has "
                                   f"{len(modes)} partitions, fewer than the {c['to']} the "
                                   "plan keeps: changed outside Railyard")
        return observe(modes, c["removed_partitions"], None, c["delay_ms"])

