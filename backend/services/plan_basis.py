"""A plan's basis: the part of the cluster it was computed against.

An approver approves a plan for the cluster as it was when the plan was proposed. The
basis records the current replicas of every partition the plan touches and, for a shrink,
the topic's partition count; before approval and again before execution the services
compare it with the cluster now, and a difference names the partitions and asks for a
re-proposal instead of running moves computed for a cluster that no longer exists.
"""

from __future__ import annotations

from collections.abc import Iterable

from backend.errors import BadInput
from backend.model.snapshot import Snapshot


def touched(kind: str, content: dict) -> tuple[list[tuple[str, int]], list[str]]:
    """(partitions, topics whose partition count matters) that a plan's content touches."""
    try:
        if kind == "reassignment":
            return [(str(e["topic"]), int(e["partition"])) for e in content["partitions"]], []
        if kind == "shrink":
            topic = str(content["topic"])
            return [(topic, int(p)) for p in content["removed_partitions"]], [topic]
    except (KeyError, TypeError, ValueError) as e:
        raise BadInput(f"{kind} plan: malformed content ({type(e).__name__}: {e})") from None
    raise BadInput(f"unknown plan kind '{kind}' (kinds: reassignment, shrink)")


def fingerprint(snap: Snapshot, partitions: Iterable[tuple[str, int]],
                topics: Iterable[str] = ()) -> dict:
    """{"partitions": {"topic:p": [replica ids, leader first]}, "topics": {topic: count}};
    BadInput when a partition or topic is not in the snapshot."""
    parts = {f"{t}:{p}": snap.replicas_of(snap.partition_row(t, p)) for t, p in partitions}
    counts = {t: snap.topic_partition_count(snap.topic_index(t)) for t in topics}
    return {"partitions": parts, "topics": counts}


def basis_for(snap: Snapshot | None, kind: str, content: dict) -> dict:
    """The basis to store with a plan proposed against ``snap``; a clear-throttles plan's
    is the values of its configs, read when it was proposed (they are in its content)."""
    if kind == "clear_throttles":
        try:
            return {"configs": {config_id(c["entity_type"], c["name"], c["key"]): c["value"]
                                for c in content["configs"]}}
        except (KeyError, TypeError) as e:
            raise BadInput(f"clear_throttles plan: malformed content ({e})") from None
    partitions, topics = touched(kind, content)
    return fingerprint(snap, partitions, topics)


def basis_changes(basis: dict, snap: Snapshot) -> list[str]:
    """What differs between the stored basis and ``snap``, one phrase per partition or
    topic ("orders-3 replicas [1, 2, 3] -> [1, 2, 4]"); empty when nothing changed."""
    changes = []
    for topic, count in basis.get("topics", {}).items():
        now = snap.topic_partition_count(snap.topic_index(topic)) if snap.has_topic(topic) \
            else None
        if now is None:
            changes.append(f"topic {topic} no longer exists")
        elif now != count:
            changes.append(f"{topic} partition count {count} -> {now}")
    for key, replicas in basis.get("partitions", {}).items():
        topic, _, p = key.rpartition(":")
        name = f"{topic}-{p}"
        try:
            now = snap.replicas_of(snap.partition_row(topic, int(p)))
        except BadInput:
            changes.append(f"{name} no longer exists")
            continue
        if now != replicas:
            changes.append(f"{name} replicas {replicas} -> {now}")
    return changes


def config_id(entity_type: str, name: str, key: str) -> str:
    """"broker:3:leader.replication.throttled.rate" (names of brokers and topics hold no
    colon)."""
    return f"{entity_type}:{name}:{key}"


def config_changes(basis: dict, current: dict[tuple[str, str, str], str]) -> list[str]:
    """What differs between a clear-throttles plan's basis and the configs now
    ((entity_type, name, key) -> value), one phrase per config; empty when nothing did."""
    changes = []
    for cid, value in basis.get("configs", {}).items():
        etype, name, key = cid.split(":", 2)
        now = current.get((etype, name, key))
        if now is None:
            changes.append(f"{etype} {name} {key} is no longer set")
        elif now != value:
            changes.append(f"{etype} {name} {key} {value} -> {now}")
    return changes
