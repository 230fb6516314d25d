"""A cluster's guard-rail stops and execution windows, as its config sets them.

Plain settings: the conditions are evaluated by backend/engines/guards.py, the windows'
arithmetic is backend/engines/windows.py, and the executor acts on both
(backend/executor/guards.py). The dashboard's config parses them (dashboard/config.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")  # datetime.weekday() order


@dataclass(frozen=True)
class GuardSettings:
    """Which conditions pause a running plan, and how it resumes (docs/executor.md)."""

    enabled: bool = True
    offline_partitions: int = 0  # pause when more partitions than this are offline
    under_min_isr: int = 0  # ... when more than this are under min.insync.replicas
    under_replicated: int = 0  # ... when more than this are under-replicated outside the plan
    broker_down: bool = True  # ... when a broker the next batch touches is down
    partition_limits: bool = True  # ... when the next batch would pass KIP-578's limits
    stall_minutes: float = 10.0  # ... when a moving partition's lag has not fallen this long
    resume_after_seconds: float = 60.0  # clear this long before it resumes by itself
    auto_resume: bool = True  # False: a user resumes it
    floor: int = 1_000_000  # bytes/s: the throttle of the batch in flight while paused


@dataclass(frozen=True)
class WeeklyRange:
    """From a weekday and minute to another, local time; the end may wrap into the next
    week (Sat 22:00 to Mon 06:00)."""

    start_day: int  # 0 = Monday
    start_minute: int  # minutes after local midnight
    end_day: int
    end_minute: int  # 1440 = the end of the day


@dataclass(frozen=True)
class Windows:
    """When plans of a cluster may start batches: weekly ranges in one time zone. No
    ranges: always."""

    timezone: str = "UTC"
    ranges: tuple[WeeklyRange, ...] = field(default_factory=tuple)
