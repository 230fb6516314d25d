"""The capacity review a URL asks for (/capacity and its report downloads share the query):
the knobs checked once, here, as the engine's Scenario, the forecast's 'today' and the
date brokers are planned by. A bad knob is a BadInput naming it."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

from backend.engines.forecast import Scenario
from backend.errors import BadInput
from backend.model.bounds import (
    MAX_GENERATED_BROKERS,
    MAX_PARTITIONS,
    MAX_REPLICAS,
    MAX_RF,
    check_replicas,
    whole_number,
)
from backend.services import capacity, fields, limits
from backend.services.cluster import ClusterSource

DEFAULT_WINDOW = 30
DEFAULT_BY_DAYS = 90
MAX_BY_DAYS = 3650  # a plan date within ten years: the forecast reads 7 to 90 days of history
MAX_GROWTH_PCT = 1000  # +1000%/month: ten times the partitions every month
# Extra growth is added on top of the measured trend, and none below it is taken: the
# forecast answers the replicas a plan date needs room for, which are never fewer than
# today's (engines.forecast.brokers_to_add), so -20 drew a falling line over an answer of
# today's count, the same for -20 as for 0. Shrinking is refused, not clamped in silence.
MIN_GROWTH_PCT = 0
MAX_ADD_BROKERS = MAX_GENERATED_BROKERS
# each knob as the page labels it (pages/capacity.py), so a refusal of what was typed on
# the page names the field typed in; the limits' fields are labelled with their configs'
# names (limits.typed_limit), the planned topic's refusal names it (capacity.topic_refused)
KNOB_NAMES = {"window": "history", "growth": "growth +% / month", "add": "add brokers",
              "by": "brokers by"}
# a URL a user typed (a shared link, a report's address) names the history window and the
# plan date by its query keys, the words the user sees in front of what was typed there
URL_NAMES = {**KNOB_NAMES, "window": "window", "by": "by"}


def parse_view(query: dict, names: Mapping[str, str] = URL_NAMES) -> dict:
    """The capacity view a URL (or the page's fields, ``names`` KNOB_NAMES) asks for,
    checked; BadInput names the bad knob as ``names`` say, so a refusal names what the
    user typed into: a URL's key, or a field's label."""
    def number(key: str, **bounds):
        return fields.number(query.get(key), names.get(key, key), **bounds)
    window = number("window", whole=True, default=DEFAULT_WINDOW)
    if window not in capacity.WINDOWS:
        raise BadInput(f"{names['window']}: expected one of "
                       f"{', '.join(map(str, capacity.WINDOWS))} days")
    view = {"cluster": query.get("cluster"), "window": window,
            "growth": number("growth", low=MIN_GROWTH_PCT, high=MAX_GROWTH_PCT, default=0.0),
            "add": number("add", low=0, high=MAX_ADD_BROKERS, whole=True, default=0),
            "mbp": limits.typed_limit(query.get("mbp"), "max.broker.partitions"),
            "mp": limits.typed_limit(query.get("mp"), "max.partitions"),
            "topic": str(query.get("topic") or "").strip(),
            "by": str(query.get("by") or "").strip(), "by_field": names["by"],
            "end": str(query.get("end") or "").strip()}
    scenario(view)
    end_time(view)
    return view


def end_time(view: dict) -> float | None:
    """The forecast's 'today' (None: now)."""
    if not view["end"]:
        return None
    try:
        t = datetime.fromisoformat(view["end"])
    except ValueError:
        raise BadInput(f"end: expected a UTC time like 2024-05-01T12:00, got '{view['end']}'") \
            from None
    return (t if t.tzinfo else t.replace(tzinfo=UTC)).timestamp()


def scenario(view: dict) -> Scenario:
    """The view's knobs as the engine's Scenario (a planned topic is PARTITIONS:RF)."""
    partitions, rf = planned_topic(view["topic"]) if view["topic"] else (0, 1)
    s = Scenario(view["growth"], view["add"], view["mbp"], view["mp"], partitions, rf)
    s.validate()
    return s


def planned_topic(text: str) -> tuple[int, int]:
    """The planned-topic field (PARTITIONS:RF) read once: each refusal in one shape,
    "planned topic: expected <rule>, got '<typed>'" (capacity.topic_refused). It said
    "topic: ..." for some rules and "topic '10000000:3': ..." for others, as if what was
    typed were a topic's name. The bounds are every verb's (check_planned_topic)."""
    parts = [whole_number(x.strip()) for x in text.split(":")]
    if len(parts) != 2 or None in parts:
        raise capacity.topic_refused("PARTITIONS:RF like 100:3", text)
    partitions, rf = parts
    for wrong, rule in (
            (partitions < 1 or rf < 1, "at least 1 partition and a replication factor of at "
                                       "least 1"),
            (partitions > MAX_PARTITIONS, f"at most {MAX_PARTITIONS:,} partitions"),
            (rf > MAX_RF, f"a replication factor of at most {MAX_RF:,}"),
            (partitions * rf > MAX_REPLICAS, f"at most {MAX_REPLICAS:,} replicas "
                                             "(partitions x RF)")):
        if wrong:
            raise capacity.topic_refused(rule, text)
    return partitions, rf


def check_growth(pct: float, where: str) -> float:
    """Extra growth a month, in the page's range: past it the projection overflows."""
    if not math.isfinite(pct) or not MIN_GROWTH_PCT <= pct <= MAX_GROWTH_PCT:
        raise BadInput(f"{where}: give a number from {MIN_GROWTH_PCT} to {MAX_GROWTH_PCT} "
                       f"(% a month), got {pct:g}")
    return pct


def check_planned_topic(partitions: int, rf: int, where: str) -> None:
    """A planned topic within the partition and replica counts every verb accepts (its
    placement is arrays of that size)."""
    check_replicas(partitions, rf, f"{where} '{partitions}:{rf}'")


def by_days(view: dict, today: float) -> tuple[float, str]:
    """Days from ``today`` to the plan date, and the date (90 days ahead by default); a
    refusal names the plan date as the view was read (``by_field``: parse_view)."""
    where = view.get("by_field", "by")
    if not view["by"]:
        day = datetime.fromtimestamp(today, UTC) + timedelta(days=DEFAULT_BY_DAYS)
        return float(DEFAULT_BY_DAYS), day.strftime("%Y-%m-%d")
    try:
        day = datetime.strptime(view["by"], "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        raise BadInput(f"{where}: expected a date like 2025-06-30, got '{view['by']}'") from None
    days = (day.timestamp() - today) / 86_400
    if days < 0:
        raise BadInput(f"{where}: {view['by']} is before the forecast's day")
    if days > MAX_BY_DAYS:
        raise BadInput(f"{where}: give a date within {MAX_BY_DAYS // 365} years of the "
                       f"forecast's day, got {view['by']}")
    return days, view["by"]


def forecast(source: ClusterSource, view: dict) -> tuple[dict, str]:
    """The forecast a checked view asks for, and its plan date's label."""
    end = end_time(view)
    days, label = by_days(view, end if end is not None else time.time())
    return capacity.forecast(source, view["window"], scenario(view), days, end=end,
                             topic=view["topic"]), label
