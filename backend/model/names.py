"""Kafka's rule for topic names (org.apache.kafka.common.internals.Topic), applied wherever
a name enters Railyard, so a plan never names a topic Kafka would refuse."""

from __future__ import annotations

import re

from backend.errors import BadInput

MAX_NAME_LENGTH = 249
_LEGAL = re.compile(r"[a-zA-Z0-9._-]+")


def broken_rule(name: str) -> str | None:
    """Which of Kafka's rules (Topic.validate) a topic name breaks: "empty", "dots",
    "length" or "chars"; None when Kafka takes it."""
    if not name:
        return "empty"
    if name in (".", ".."):
        return "dots"
    if len(name) > MAX_NAME_LENGTH:
        return "length"
    return None if _LEGAL.fullmatch(name) else "chars"


def kafka_name_error(name: str) -> str | None:
    """What Kafka's controller answers for a name it refuses, in its words (Topic.java,
    detectInvalidTopic), or None: the twin and the what-if placement answer the same."""
    match broken_rule(name):
        case None:
            return None
        case "empty":
            reason = "the empty string is not allowed"
        case "dots":
            reason = f"'{name}' is not allowed"
        case "length":
            reason = (f"the length of '{name}' is longer than the max allowed length "
                      f"{MAX_NAME_LENGTH}")
        case _:
            reason = (f"'{name}' contains one or more characters other than ASCII "
                      "alphanumerics, '.', '_' and '-'")
    return f"Topic name is invalid: {reason}"


def check_topic_name(name: object, where: str) -> str:
    """``name`` if Kafka accepts it as a topic name; BadInput saying why not, and where."""
    if not isinstance(name, str) or not name:
        raise BadInput(f"{where}: a topic name must be a non-empty string")
    shown = name if len(name) <= 60 else f"{name[:57]}..."
    match broken_rule(name):
        case "dots":
            raise BadInput(f"{where}: topic name '{name}' is illegal: it cannot be '.' or '..'")
        case "length":
            raise BadInput(f"{where}: topic name '{shown}' is {len(name)} characters, Kafka "
                           f"allows at most {MAX_NAME_LENGTH}")
        case "chars":
            bad = next(c for c in name if not _LEGAL.fullmatch(c))
            raise BadInput(f"{where}: topic name {shown!r} contains {bad!r}: Kafka allows only "
                           "ASCII letters, digits, '.', '_' and '-'")
    return name


def metric_name(name: str) -> str:
    """The name as Kafka's metrics see it: '.' becomes '_', so 'a.b' and 'a_b' collide."""
    return name.replace(".", "_")


def check_no_collision(name: str, clash: str | None, where: str) -> None:
    """Kafka refuses a new topic whose metric name equals an existing topic's: ``clash``,
    the existing one found (``Snapshot.colliding_topic``), or None."""
    if clash is not None and clash != name:
        raise BadInput(f"{where}: topic '{name}' collides with existing topic '{clash}' "
                       "('.' and '_' are the same in metric names): Kafka refuses it")


def collision_warning(name: str) -> str | None:
    """Kafka's warning for a new topic whose name has '.' or '_'."""
    if "." not in name and "_" not in name:
        return None
    return (f"topic '{name}': due to limitations in metric names, topics with a period ('.') "
            "or underscore ('_') could collide; best use either, but not both")
