"""Partition-limit questions (KIP-578) as the CLI and the pages ask them."""

from __future__ import annotations

from backend.engines import limits as engine
from backend.errors import BadInput
from backend.model.bounds import MAX_PARTITIONS, check_count, check_replicas
from backend.model.names import check_no_collision, check_topic_name, collision_warning
from backend.model.reassignment import Reassignment
from backend.model.snapshot import Limits, Snapshot


def parse_topic_spec(spec: str) -> engine.TopicRequest:
    """NAME:PARTITIONS:RF, e.g. orders:12:3 (the name may itself contain ':')."""
    name, sep, rest = spec.rpartition(":")
    name, sep2, parts = name.rpartition(":")
    if not sep or not sep2 or not name:
        raise BadInput(f"--topic '{spec}': expected NAME:PARTITIONS:RF, e.g. orders:12:3")
    try:
        partitions, rf = int(parts), int(rest)
    except ValueError:
        raise BadInput(f"--topic '{spec}': PARTITIONS and RF must be integers") from None
    if partitions <= 0:
        raise BadInput(f"--topic '{spec}': partitions must be larger than 0")
    if rf <= 0:
        raise BadInput(f"--topic '{spec}': replication factor must be larger than 0")
    check_topic_name(name, "--topic")
    check_replicas(partitions, rf, f"--topic '{spec}'")
    return engine.TopicRequest(name, partitions, rf)


def effective_limits(snap: Snapshot, max_broker_partitions: int | None,
                     max_partitions: int | None) -> Limits:
    """The snapshot's limits, overridden by any given explicitly."""
    return snap.limits.merged(max_broker_partitions, max_partitions)


def create_topics(snap: Snapshot, topics: list[engine.TopicRequest], limits: Limits,
                  start_index: int | None = None, seed: int = 0) -> dict:
    """Place new topics in order; Kafka's metric-name warning on names with '.' or '_'."""
    earlier: list[str] = []
    for t in topics:
        if t.rf > snap.n_brokers:
            raise BadInput(f"topic '{t.name}': replication factor {t.rf} is larger than the "
                           f"{snap.n_brokers} brokers of cluster '{snap.cluster}'")
        if not snap.has_topic(t.name):
            check_no_collision(t.name, [*snap.topic_names, *earlier], "--topic")
        earlier.append(t.name)
    check_count(snap.n_partitions + sum(t.partitions for t in topics), MAX_PARTITIONS,
                "partitions after creating the topics")
    result = engine.create_topics(snap, topics, limits, start_index, seed).to_dict()
    for outcome in result["topics"]:
        warning = collision_warning(outcome["name"])
        if warning and outcome["ok"]:
            outcome["warnings"].append(warning)
    return result


def add_partitions(snap: Snapshot, topic: str, total: int, limits: Limits,
                   start_index: int | None = None, seed: int = 0) -> dict:
    """Grow ``topic`` to ``total`` partitions as kafka-topics --alter does."""
    check_count(total, MAX_PARTITIONS, "--total")
    return engine.add_partitions(snap, topic, total, limits, start_index, seed).to_dict()


def check_reassignment(snap: Snapshot, plan: Reassignment, limits: Limits) -> dict:
    return engine.check_reassignment(snap, plan, limits).to_dict()
