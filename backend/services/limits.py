"""Partition-limit questions (KIP-578) as the CLI and the pages ask them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from backend.engines import limits as engine
from backend.errors import BadInput
from backend.model.bounds import (
    MAX_INT,
    MAX_LONG,
    MAX_PARTITIONS,
    MAX_RF,
    MIN_LIMIT,
    check_count,
    check_replicas,
)
from backend.model.names import (
    check_no_collision,
    check_topic_name,
    collision_warning,
    metric_name,
)
from backend.model.reassignment import Reassignment
from backend.model.snapshot import Limits, Snapshot, is_near
from backend.services import fields, snapshots
from backend.services.cluster import ClusterSource, cluster_snapshot

if TYPE_CHECKING:
    from backend.services.monitoring import Span

CURRENT = "the cluster's current limit"  # what an empty limit field keeps
# each limit's largest value, its KIP-578 default: Java's int32 maximum, int64 for
# max.partitions (backend/model/bounds.py, MIN_LIMIT)
LARGEST = {"max.broker.partitions": MAX_INT, "max.partitions": MAX_LONG}


def parse_topic_spec(spec: str, where: str = "--topic") -> engine.TopicRequest:
    """NAME:PARTITIONS:RF, e.g. orders:12:3 (the name may itself contain ':'); ``where``:
    the input it came from, named in errors."""
    name, sep, rest = spec.rpartition(":")
    name, sep2, parts = name.rpartition(":")
    if not sep or not sep2 or not name:
        raise BadInput(f"{where} '{spec}': expected NAME:PARTITIONS:RF, e.g. orders:12:3")
    try:
        partitions, rf = int(parts), int(rest)
    except ValueError:
        raise BadInput(f"{where} '{spec}': PARTITIONS and RF must be integers") from None
    if partitions <= 0:
        raise BadInput(f"{where} '{spec}': partitions must be larger than 0")
    if rf <= 0:
        raise BadInput(f"{where} '{spec}': replication factor must be larger than 0")
    check_topic_name(name, where)
    check_replicas(partitions, rf, f"{where} '{spec}'")
    return engine.TopicRequest(name, partitions, rf)


def typed_limit(value: object, name: str) -> int | None:
    """A KIP-578 limit as typed into the field labelled with its config ``name`` (None:
    empty, the cluster's own). One rule for every page and the API: a whole number of at
    least MIN_LIMIT (0 is no "unlimited" in KIP-578: backend/model/bounds.py)."""
    return fields.number(value, name, low=MIN_LIMIT, limit=LARGEST[name], whole=True,
                         empty=CURRENT)


def effective_limits(snap: Snapshot, max_broker_partitions: int | None,
                     max_partitions: int | None) -> Limits:
    """The snapshot's limits, overridden by any given explicitly."""
    return snap.limits.merged(max_broker_partitions, max_partitions)


def create_topics(snap: Snapshot, topics: list[engine.TopicRequest], limits: Limits,
                  start_index: int | None = None, seed: int = 0, compact: bool = False,
                  where: str = "--topic") -> dict:
    """Place new topics in order; Kafka's metric-name warning on names with '.' or '_'.
    ``compact``: assignments as mappings over the arrays (PlacementResult.to_dict);
    ``where``: the input a name came from, named in errors."""
    earlier: dict[str, str] = {}  # metric name -> the request's first topic with it
    for t in topics:
        if not snap.has_topic(t.name):
            check_no_collision(t.name, snap.colliding_topic(t.name)
                               or earlier.get(metric_name(t.name)), where)
        earlier.setdefault(metric_name(t.name), t.name)
    check_count(snap.n_partitions + sum(t.partitions for t in topics), MAX_PARTITIONS,
                "partitions after creating the topics")
    result = engine.create_topics(snap, topics, limits, start_index, seed).to_dict(compact)
    for outcome in result["topics"]:
        warning = collision_warning(outcome["name"])
        if warning and outcome["ok"]:
            outcome["warnings"].append(warning)
    return result


def add_partitions(snap: Snapshot, topic: str, total: int, limits: Limits,
                   start_index: int | None = None, seed: int = 0, compact: bool = False) -> dict:
    """Grow ``topic`` to ``total`` partitions as kafka-topics --alter does."""
    check_count(total, MAX_PARTITIONS, "--total")
    return engine.add_partitions(snap, topic, total, limits, start_index,
                                 seed).to_dict(compact)


def check_reassignment(snap: Snapshot, plan: Reassignment, limits: Limits) -> dict:
    return engine.check_reassignment(snap, plan, limits).to_dict()


def whatif(source: ClusterSource, action: str, topic: str, partitions: object,
           rf: object, max_broker_partitions: object, max_partitions: object) -> dict:
    """Create a topic or add partitions: placement preview and replicas per broker. The
    numbers come as typed (text or numbers) and are read here."""
    partitions = fields.number(partitions, "partitions", low=1, limit=MAX_PARTITIONS,
                               whole=True, required=True)
    rf = fields.number(rf, "replication factor", low=1, limit=MAX_RF, whole=True,
                       required=action == "create")
    max_broker_partitions = typed_limit(max_broker_partitions, "max.broker.partitions")
    max_partitions = typed_limit(max_partitions, "max.partitions")
    snap = cluster_snapshot(source)
    limits = effective_limits(snap, max_broker_partitions, max_partitions)
    topic = (topic or "").strip()
    if not topic:
        raise BadInput("topic: give a topic name")
    if action == "create":
        if snap.has_topic(topic):
            raise BadInput(f"topic '{topic}' already exists: add partitions to it instead")
        check_topic_name(topic, "topic")
        result = create_topics(snap, [engine.TopicRequest(topic, partitions, rf)], limits,
                               where="topic")
    else:
        if not snap.has_topic(topic):
            raise BadInput(f"topic '{topic}' does not exist in cluster '{snap.cluster}'")
        result = add_partitions(snap, topic, partitions, limits)
    before = snap.broker_replica_counts()
    return {**result, "brokers": [str(b) for b in snap.broker_ids.tolist()],
            "broker_partitions_before": before.tolist(),
            "limits": {"max.broker.partitions": limits.max_broker_partitions,
                       "max.partitions": limits.max_partitions}}


def guard_rails(source: ClusterSource) -> dict:
    """Partition guard rails from the cluster's assignment (KIP-578): per broker and total,
    with the brokers near and over max.broker.partitions."""
    d = snapshots.describe(cluster_snapshot(source))
    limit = d["limits"]["max.broker.partitions"]
    return {**d, "near_limit_ratio": source.near_limit_ratio,
            "near": [b["id"] for b in d["brokers"]
                     if is_near(b["replicas"], limit, source.near_limit_ratio)],
            "over": [b["id"] for b in d["brokers"] if b["over_limit"]]}


def guard_rails_at(source: ClusterSource, span: Span) -> dict:
    """guard_rails as of a past window's end, from that window's metrics: a review of
    02:00-03:00 must not mix Prometheus' 03:00 with today's assignment. Same shape as
    guard_rails, with what the metrics cannot know (topics, racks) as None."""
    from backend.services import monitoring  # pandas: the CLI's what-ifs start without it

    seen = monitoring.partitions_at(source, span)
    lim = source.limits
    brokers = []
    for label, replicas in sorted(seen["brokers"].items(), key=lambda kv: _broker_order(kv[0])):
        capacity = None if lim.max_broker_partitions is None \
            else max(lim.max_broker_partitions - replicas, 0)
        brokers.append({"id": _broker_order(label)[1], "replicas": replicas,
                        "capacity": capacity, "over_limit": lim.max_broker_partitions
                        is not None and replicas > lim.max_broker_partitions})
    total = sum(b["replicas"] for b in brokers)
    limit = lim.max_broker_partitions
    return {"brokers": brokers, "racks": None, "topics": None, "partitions": seen["partitions"],
            "cluster_partitions": total,
            "limits": {"max.broker.partitions": limit, "max.partitions": lim.max_partitions},
            "cluster_capacity": None if lim.max_partitions is None
            else max(lim.max_partitions - total, 0),
            "near_limit_ratio": source.near_limit_ratio,
            "near": [b["id"] for b in brokers
                     if is_near(b["replicas"], limit, source.near_limit_ratio)],
            "over": [b["id"] for b in brokers if b["over_limit"]]}


def _broker_order(label: str) -> tuple[int, int | str]:
    return (0, int(label)) if str(label).isdigit() else (1, str(label))


def demo_whatifs(snap: Snapshot) -> tuple[engine.PlacementResult, engine.PlacementResult]:
    """The demo's two what-ifs: one topic that fits and one that the limits reject."""
    fits = engine.create_topics(snap, [engine.TopicRequest("payments-v2", 24, 3)],
                                snap.limits, seed=1)
    room = int((snap.limits.max_broker_partitions - snap.broker_replica_counts()).clip(0).sum())
    too_big = engine.create_topics(
        snap, [engine.TopicRequest("clickstream-raw", room // 3 + 50, 3)], snap.limits, seed=1)
    return fits, too_big
