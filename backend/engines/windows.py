"""Execution windows: whether a time is inside a cluster's weekly ranges, and when the
next one opens or the current one closes.

Ranges are local times in the windows' time zone (IANA, through zoneinfo), so a window
"Mon 22:00 to Tue 06:00" in Europe/Paris stays 22:00 local across daylight-saving
changes: it is an hour shorter or longer on the night the clocks move. A local time the
clocks skip (02:30 on the spring-forward night) is read as Python reads it with fold=0
(PEP 495: the offset before the change). A range may wrap into the next week (Sat 22:00
to Mon 06:00). Pure: the time is passed in.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from backend.model.guards import Windows

WEEK_MINUTES = 7 * 1440


def intervals(windows: Windows, around: float, weeks: int = 2) -> list[tuple[float, float]]:
    """The windows' occurrences as (start, end) epoch seconds, from ``weeks`` weeks
    before the week of ``around`` to ``weeks`` after, overlapping ones merged, in order."""
    tz = ZoneInfo(windows.timezone)
    local = datetime.fromtimestamp(around, tz)
    monday = datetime(local.year, local.month, local.day) - timedelta(days=local.weekday())
    out = []
    for week in range(-weeks, weeks + 1):
        base = monday + timedelta(weeks=week)
        for r in windows.ranges:
            start = r.start_day * 1440 + r.start_minute
            end = r.end_day * 1440 + r.end_minute
            if end <= start:
                end += WEEK_MINUTES  # wraps into the next week
            out.append((_epoch(base + timedelta(minutes=start), tz),
                        _epoch(base + timedelta(minutes=end), tz)))
    merged: list[list[float]] = []
    for s, e in sorted(out):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        elif e > s:
            merged.append([s, e])
    return [(s, e) for s, e in merged]


def _epoch(naive: datetime, tz: ZoneInfo) -> float:
    return naive.replace(tzinfo=tz).timestamp()


def is_open(windows: Windows, t: float) -> bool:
    """Whether ``t`` is inside a window (always, when no ranges are set)."""
    return not windows.ranges or any(s <= t < e for s, e in intervals(windows, t))


def current_end(windows: Windows, t: float) -> float | None:
    """When the window ``t`` is in closes; None outside one or without ranges."""
    if not windows.ranges:
        return None
    return next((e for s, e in intervals(windows, t) if s <= t < e), None)


def next_open(windows: Windows, t: float) -> float:
    """When a batch may start next: ``t`` itself inside a window, else the next start."""
    if is_open(windows, t):
        return t
    return min(s for s, _ in intervals(windows, t) if s > t)
