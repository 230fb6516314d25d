"""A shrink: fewer partitions for a topic. Run as the delete-partitions KIP's stages
where the cluster can delete partitions, as its migration (a new topic, switch, drain,
delete) where it cannot (docs/executor.md#shrinks)."""

from __future__ import annotations

from backend.engines.shrink import API_FIELDS, CHECK_INTERVAL_MS
from backend.engines.shrink_stages import READ_ONLY, READ_WRITE, REMOVED, observe
from backend.errors import BadInput, Conflict, Unavailable
from backend.executor.runs import start_shrink
from backend.executor.shrink import REQUEST, mode_on
from backend.gateways.base import ClusterReader, GatewayError, can_delete_partitions
from backend.model.snapshot import Snapshot
from backend.services import plan_preview
from backend.services.plan_basis import fingerprint
from backend.services.plan_kinds.kind import PlanKind
from backend.services.plan_preview import Draft
from backend.store.executions import MIGRATION, STAGES, Execution, ExecutionRecords
from backend.store.store import Plan

NAME = "shrink"


def touched(content: dict) -> tuple[list[tuple[str, int]], list[str]]:
    """The partitions it removes, and its topic (whose partition count matters)."""
    try:
        topic = str(content["topic"])
        return [(topic, int(p)) for p in content["removed_partitions"]], [topic]
    except (KeyError, TypeError, ValueError) as e:
        raise BadInput(f"{NAME} plan: malformed content ({type(e).__name__}: {e})") from None


def basis(snap: Snapshot | None, content: dict) -> dict:
    return fingerprint(snap, *touched(content))


def draft(snap: Snapshot, body: dict, _throttle: float | None,
          drained: dict[int, dict] | None = None,
          _network_capacity: float | None = None,
          gateway: ClusterReader | None = None) -> Draft:
    """A topic and the partitions to keep (a shrink runs without a throttle, so the
    network capacity does not matter); its migration leaves the ``drained`` brokers out,
    and its risks are those of the cluster behind ``gateway`` (deletes_partitions)."""
    if "plan" in body or "generate" in body:
        raise BadInput("kind shrink: give topic and partitions, not plan or generate")
    return plan_preview.from_shrink(snap, body.get("topic"), body.get("partitions"),
                                    delay_ms=body.get("delay_ms"), fields=API_FIELDS,
                                    drained=drained,
                                    deletes_partitions=deletes_partitions(gateway))


def deletes_partitions(gw: ClusterReader | None) -> bool | None:
    """Whether the cluster behind ``gw`` deletes partitions (the delete-partitions KIP,
    enabled: the twin; Apache Kafka never does), so that a shrink preview names the risk
    that it cannot only where that is true; None when it is not known here (no gateway,
    or it did not answer), and the preview names it then."""
    if gw is None:
        return None
    try:
        return can_delete_partitions(gw)
    except (Unavailable, GatewayError):
        return None


def affects(content: dict, preview: dict, _basis: dict) -> tuple[set[int], set[str]]:
    """The brokers whose replicas of the removed partitions go, and its topic."""
    return ({b["id"] for b in preview.get("brokers", []) if b.get("replicas_reclaimed")},
            {str(content.get("topic"))})


def title(content: dict) -> str:
    return (f"shrink {content.get('topic')} from {content.get('from')} to "
            f"{content.get('to')} partitions")


def check_execute(plan: Plan, gateway: ClusterReader | None, migration: bool) -> None:
    """Only if this cluster can run it the way asked: the stages need a cluster that
    deletes partitions, the migration (``migration``) one that does not."""
    mode = mode_on(gateway)
    if mode is None:
        raise Conflict(f"cluster '{plan.cluster}' is read-only here: nothing can execute "
                       "this shrink")
    if mode == MIGRATION and not migration:
        raise Conflict(f"cluster '{plan.cluster}' cannot delete partitions (Apache Kafka has "
                       "no DeletePartitions API): run the migration to "
                       f"'{plan.content['migration']['new_topic']}' instead")
    if mode == STAGES and migration:
        raise Conflict(f"cluster '{plan.cluster}' deletes partitions itself: Execute runs the "
                       "KIP's stages")
    if mode == MIGRATION and not plan.content["migration"]["ok"]:
        raise Conflict(f"the migration cannot be placed: {plan.content['migration']['error']}")


def progress(records: ExecutionRecords, ex: Execution, now: float) -> dict:
    """The stage, the partitions in each state and when the next stage comes (stages), or
    the checklist (migration)."""
    mode = records.mode(ex.plan_id)
    c = records.content(ex.plan_id)["shrink"]
    batches = records.batches(ex.plan_id)
    if mode == MIGRATION:
        return {"mode": mode, "new_topic": c["migration"]["new_topic"], "steps": [
            {"step": i + 1, "text": text, "done": b["state"] == "done", "at": b["ended_at"]}
            for i, (text, b) in enumerate(zip(c["migration"]["steps"], batches, strict=True))]}
    removed = c["removed_partitions"]
    requested = batches[0]["started_at"]
    stage = ex.phase
    if stage == REQUEST:
        modes = dict.fromkeys(removed, READ_WRITE)
    else:  # the controller moves them together: the stage and the count removed say all
        modes = {p: stage for p in removed[ex.partitions_done:]}
    view = observe(modes, removed, 0, c["delay_ms"], CHECK_INTERVAL_MS)
    out = {"mode": mode, "topic": c["topic"], "from": c["from"], "to": c["to"],
           "delay_ms": c["delay_ms"], **view.to_dict(), "requested_at": requested,
           "next_in_seconds": None, "next_latest_in_seconds": None,
           "check_interval_ms": CHECK_INTERVAL_MS}
    if view.stage == READ_ONLY and requested is not None:
        out["next_in_seconds"] = max(requested + view.next_earliest_ms / 1000 - now, 0.0)
        out["next_latest_in_seconds"] = max(requested + view.next_latest_ms / 1000 - now, 0.0)
    if stage == REQUEST:
        out["stage"] = "requesting"
    out["removed"] = view.counts[REMOVED]
    return out


KIND = PlanKind(NAME, title, basis, start_shrink, check_execute=check_execute,
                progress=progress,
                unpausable=("its stages run on the cluster's clock (cancel stops it before "
                            "DeletePartitions is sent)"),
                touched=touched, affects=affects,
                migration_here=lambda gw: mode_on(gw) == MIGRATION, draft=draft,
                request_keys=("topic", "partitions", "delay_ms"))
