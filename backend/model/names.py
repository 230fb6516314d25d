"""Kafka's rule for topic names (org.apache.kafka.common.internals.Topic), applied wherever
a name enters Railyard, so a plan never names a topic Kafka would refuse."""

from __future__ import annotations

import re

from backend.errors import BadInput

MAX_NAME_LENGTH = 249
_LEGAL = re.compile(r"[a-zA-Z0-9._-]+")


def check_topic_name(name: object, where: str) -> str:
    """``name`` if Kafka accepts it as a topic name; BadInput saying why not."""
    if not isinstance(name, str) or not name:
        raise BadInput(f"{where}: a topic name must be a non-empty string")
    shown = name if len(name) <= 60 else f"{name[:57]}..."
    if name in (".", ".."):
        raise BadInput(f"{where}: topic name '{name}' is illegal: it cannot be '.' or '..'")
    if len(name) > MAX_NAME_LENGTH:
        raise BadInput(f"{where}: topic name '{shown}' is {len(name)} characters, Kafka allows "
                       f"at most {MAX_NAME_LENGTH}")
    if not _LEGAL.fullmatch(name):
        bad = next(c for c in name if not _LEGAL.fullmatch(c))
        raise BadInput(f"{where}: topic name {shown!r} contains {bad!r}: Kafka allows only "
                       "ASCII letters, digits, '.', '_' and '-'")
    return name


def metric_name(name: str) -> str:
    """The name as Kafka's metrics see it: '.' becomes '_', so 'a.b' and 'a_b' collide."""
    return name.replace(".", "_")


def check_no_collision(name: str, existing, where: str) -> None:
    """Kafka refuses a new topic whose metric name equals an existing topic's."""
    key = metric_name(name)
    clash = next((t for t in existing if t != name and metric_name(t) == key), None)
    if clash is not None:
        raise BadInput(f"{where}: topic '{name}' collides with existing topic '{clash}' "
                       "('.' and '_' are the same in metric names): Kafka refuses it")


def collision_warning(name: str) -> str | None:
    """Kafka's warning for a new topic whose name has '.' or '_'."""
    if "." not in name and "_" not in name:
        return None
    return (f"topic '{name}': due to limitations in metric names, topics with a period ('.') "
            "or underscore ('_') could collide; best use either, but not both")
