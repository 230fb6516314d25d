"""The sizes Railyard accepts: what Kafka allows and what one machine can plan for.

Every count and size a user types or a file carries is checked against these before an
array is allocated, so a typo of a few zeros is one BadInput line naming the limit, never
a 7 TiB allocation, an int64 overflow or a negative size.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from backend.errors import BadInput

if TYPE_CHECKING:  # numpy is imported where arrays are checked: the CLI starts without it
    import numpy as np

# Kafka stores byte counts, rates and throttles as a Java long.
MAX_LONG = 2**63 - 1
# Kafka's INT configs: max.broker.partitions and max.partitions (KIP-578),
# controller.quota.window.num and controller.quota.window.size.seconds (KIP-599),
# replica.fetch.response.max.bytes and replication.quota.window.num (KIP-73).
MAX_INT = 2**31 - 1
# KIP-578's limits (max.broker.partitions, max.partitions) are at least this, for every
# verb, page and the API. The KIP gives no "0 means no limit": unset is its default, "the
# maximum int32 value that Java can represent" (2^31 - 1; the int64 one for
# max.partitions), no limit in practice. A value is a count that, once reached, leaves a
# broker "unable to host any further" partitions and makes the cluster "fail any further
# requests to create topics or partitions". So 0 is not "unset" but a cluster that may
# create no partition at all (it was taken, and answered "over max.partitions = 0
# already"): a limit to plan against is at least 1, and an empty field keeps the
# cluster's own (KIP-578, "Proposed Changes" and "Compatibility": https://cwiki.apache.
# org/confluence/display/KAFKA/KIP-578%3A+Add+configuration+to+limit+number+of+partitions).
MIN_LIMIT = 1
# Kafka's replication factor is an int16 in CreateTopics.
MAX_RF = 2**15 - 1
# Partitions and replicas one snapshot or request may hold: five times the largest cluster
# the docs and benchmarks plan for (1M partitions at RF 3), well inside this machine's memory.
MAX_PARTITIONS = 5_000_000
MAX_REPLICAS = 15_000_000
# `snapshot generate` makes clusters of up to 1,000 brokers (docs/snapshot-format.md).
MAX_GENERATED_BROKERS = 1_000


def check_count(value: int, limit: int, what: str) -> int:
    """``value`` unless it is past ``limit``: BadInput saying the limit."""
    if value > limit:
        raise BadInput(f"{what} {value} is more than the {limit:,} Railyard accepts")
    return value


def check_long(value: int | float, what: str) -> int | float:
    """A byte count or rate: finite, >= 0 and within Kafka's long."""
    if isinstance(value, float) and not math.isfinite(value):
        raise BadInput(f"{what} must be a finite number, got {value}")
    if value < 0:
        raise BadInput(f"{what} must be >= 0, got {value}")
    if value > MAX_LONG:
        raise BadInput(f"{what} {value:g} is past Kafka's largest value (2^63-1)")
    return value


def check_replicas(partitions: int, rf: int, what: str) -> None:
    """``partitions`` x ``rf`` replicas fit the partition and replica bounds."""
    check_count(partitions, MAX_PARTITIONS, f"{what}: partition count")
    check_count(rf, MAX_RF, f"{what}: replication factor")
    check_count(partitions * rf, MAX_REPLICAS, f"{what}: replica count (partitions x RF)")


def check_total_bytes(part_size: np.ndarray, rf: np.ndarray, where: str) -> None:
    """The bytes all replicas store together fit a long (per-broker sums never overflow)."""
    import numpy as np

    if len(part_size) and float(np.dot(part_size.astype(np.float64), rf)) >= 2.0**63:
        raise BadInput(f"{where}: the partitions' size_bytes add up past Kafka's largest "
                       "value (2^63-1 bytes): a size is wrong")


MAX_BROKER_ID = MAX_INT  # broker.id is a Java int


def whole_number(text: str) -> int | None:
    """``text`` as an int if it is ASCII digits (a sign allowed first), else None: int()
    also takes '١٢', '1_000' and ' 7 ', which no one means as a count. Past 30 digits it
    is ±10**30, past every bound here (int() refuses 4,300 digits with a ValueError)."""
    digits = text[1:] if text[:1] in "+-" else text
    if not digits.isascii() or not digits.isdigit():
        return None
    if len(digits.lstrip("0")) > 30:
        return -10**30 if text[0] == "-" else 10**30
    return int(text)


def parse_broker_id(text: str, default: str | None = None) -> int:
    """A broker id typed or sent in a URL: 0..2^31-1, else BadInput (never a crash)."""
    hint = f" or '{default}'" if default else ""
    value = whole_number(text) if text.isdigit() else None
    if value is None or value > MAX_BROKER_ID:
        shown = text if len(text) <= 40 else f"{text[:37]}..."
        raise BadInput(f"broker must be an id from 0 to {MAX_BROKER_ID}{hint}, got {shown!r}")
    return value
