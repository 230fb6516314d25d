"""Shrink plans with the migration that works on any Kafka cluster today."""

from __future__ import annotations

import numpy as np

from backend.engines.limits import TopicRequest, broker_figures, create_topics
from backend.engines.shrink import CLI_FIELDS, plan_shrink
from backend.errors import BadInput
from backend.model.names import check_no_collision, check_topic_name
from backend.model.snapshot import Limits, Snapshot


def shrink_plan(snap: Snapshot, topic: str, partitions: int, limits: Limits,
                delay_ms: int | None = None, new_topic: str | None = None,
                seed: int = 0, fields: tuple[str, str] = CLI_FIELDS,
                keep_empty: dict[int, dict] | None = None,
                deletes_partitions: bool | None = None) -> dict:
    """The KIP's staged shrink plus a new-topic migration placed by the limit engine,
    leaving out the ``keep_empty`` brokers (drained: services.drained.remembered); a
    refusal names partitions and delay as ``fields`` does (the CLI's flags, the API's
    fields); ``deletes_partitions``: whether the cluster implements the delete-partitions
    KIP (plan_kinds.shrink.deletes_partitions; None: not known), for its risks."""
    plan = plan_shrink(snap, topic, partitions, delay_ms, fields, deletes_partitions)
    rows = plan.removed_rows
    ids = snap.broker_ids
    figures = broker_figures(ids, plan.counts_after, limits)
    return {
        "topic": topic,
        "from": plan.from_partitions,
        "to": plan.to_partitions,
        "removed_partitions": snap.part_id[rows].tolist(),
        "bytes_reclaimed": plan.bytes_reclaimed,
        "broker_bytes_reclaimed": {str(b): int(v) for b, v in
                                   zip(ids.tolist(), plan.broker_bytes_reclaimed, strict=True)},
        "replicas_reclaimed": int(snap.replication_factors[rows].sum()),
        **figures,
        "delay_ms": plan.delay_ms,
        "stages": plan.stages,
        "warnings": plan.warnings,
        "migration": _migration(snap, topic, partitions, limits, new_topic, seed,
                                keep_empty or {}),
    }


def _migration(snap: Snapshot, topic: str, partitions: int, limits: Limits,
               new_topic: str | None, seed: int, keep_empty: dict[int, dict]) -> dict:
    """Copy-to-a-new-topic: the shrink any cluster can do today, with its placement (none
    on a drained broker: Railyard creates the topic with this assignment)."""
    t = snap.topic_index(topic)
    name = check_topic_name(new_topic or f"{topic}.p{partitions}", "--new-topic")
    if snap.has_topic(name):
        raise BadInput(f"migration topic '{name}' already exists: name another with --new-topic")
    check_no_collision(name, snap.colliding_topic(name), "--new-topic")
    rf = int(snap.replication_factors[snap.topic_starts[t]])
    kept = sorted(set(keep_empty) & set(snap.broker_ids.tolist()))
    placed = create_topics(snap, [TopicRequest(name, partitions, rf)], limits, seed=seed,
                           closed=snap.broker_positions(kept))
    left_out = "".join(f", leaving out broker {b}, which plan {keep_empty[b]['plan']} drained"
                       for b in kept)
    outcome = placed.to_dict()["topics"][0]
    old_replicas = int(snap.replication_factors[snap.topic_starts[t]:snap.topic_starts[t + 1]]
                       .sum())
    keyed = bool(snap.topic_keyed[t])
    steps = [
        f"create topic '{name}' with {partitions} partitions and replication factor {rf} "
        f"(placement below{left_out}), copying the configs of '{topic}'",
        f"switch producers of '{topic}' to '{name}'"
        + (" after pausing them, so each key's records stay in order" if keyed else ""),
        f"let consumer groups read '{topic}' to the end (lag 0 on every partition), then "
        f"start them on '{name}' from the earliest offset",
        f"delete topic '{topic}' once no group reads it and its retention has passed, "
        f"freeing {old_replicas} partition replicas",
    ]
    return {
        "new_topic": name,
        "ok": outcome["ok"],
        "assignment": outcome["assignment"],
        "error": outcome["error"],
        "rack_aware": outcome["rack_aware"],
        "peak_cluster_partitions": int(np.sum(placed.counts_after)),
        "steps": steps,
    }
