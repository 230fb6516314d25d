"""Where a running shrink is: the delete-partitions KIP's stage machine, with the clock
passed in.

The KIP's workflow for partitions ``to .. from-1`` of a topic:
- DeletePartitions with a delay > 0: the controller saves a DeleteTopicPartitionsRecord
  and sets the partitions' mode to ReadOnly (producers filter them out, consumers still
  read); with delay 0 (``immediate_delete``) they go straight to None;
- the controller's ScheduleDelayDeletePartitionTask runs every
  delete.topic.partition.interval.delay.ms (300,000 ms by default) from the controller's
  start; the first run at or after request + delay sets the mode to None (clients read and
  write nothing there) and sends StopReplica with delete to every replica;
- once every replica's broker has answered (ReplicaDeletionSuccessful; a broker that is
  down makes it ReplicaDeletionIneligible and the controller retries) the partitions leave
  the topic's metadata: Removed, and the topic has ``to`` partitions.

``observe`` reads the stage from the partitions' modes (the Metadata API's ``mode``) and
says when the next stage comes; ``check_at`` is the controller's schedule, shared with
the twin so the two agree to the millisecond.
"""

from __future__ import annotations

from dataclasses import dataclass

from backend.engines.shrink import CHECK_INTERVAL_MS

READ_WRITE, READ_ONLY, NONE, REMOVED = "ReadWrite", "ReadOnly", "None", "Removed"
ORDER = (READ_WRITE, READ_ONLY, NONE, REMOVED)  # a partition only ever moves right


def check_at(due_ms: int, interval_ms: int = CHECK_INTERVAL_MS, epoch_ms: int = 0) -> int:
    """The first run of the controller's periodic check (at ``epoch_ms`` + k x
    ``interval_ms``) at or after ``due_ms``."""
    if interval_ms <= 0:
        raise ValueError(f"the check interval must be > 0 ms, got {interval_ms}")
    k = max(-(-(due_ms - epoch_ms) // interval_ms), 0)
    return epoch_ms + k * interval_ms


@dataclass(frozen=True)
class StageView:
    """The stage of a shrink and what comes next. Times are ms on the caller's clock."""

    stage: str  # ReadWrite (not requested yet) | ReadOnly | None | Removed
    counts: dict[str, int]  # the removed partitions in each state
    next_stage: str | None
    next_earliest_ms: int | None  # None: not timed (waits on the brokers), or done
    next_latest_ms: int | None

    def to_dict(self) -> dict:
        return {"stage": self.stage, "counts": self.counts, "next_stage": self.next_stage,
                "next_earliest_ms": self.next_earliest_ms,
                "next_latest_ms": self.next_latest_ms}


def observe(modes: dict[int, str], removed: list[int], requested_ms: int | None,
            delay_ms: int, interval_ms: int = CHECK_INTERVAL_MS) -> StageView:
    """The stage of a shrink removing partitions ``removed``, from the modes the cluster
    reports (``modes``: partition -> mode; a partition it no longer lists is Removed).

    A shrink's stage is its least advanced partition's: the controller moves them
    together, so a mix only shows a step in progress (deletion confirmed on some).
    ``requested_ms``: when DeletePartitions was accepted (None: not yet)."""
    counts = dict.fromkeys(ORDER, 0)
    for p in removed:
        mode = modes.get(p, REMOVED)
        counts[mode if mode in counts else READ_WRITE] += 1
    stage = next(s for s in ORDER if counts[s]) if removed else REMOVED
    if stage == READ_WRITE:
        return StageView(stage, counts, READ_ONLY if delay_ms else NONE, None, None)
    if stage == READ_ONLY:
        due = (requested_ms or 0) + delay_ms
        # the check runs on the controller's schedule, unknown here: within one interval
        return StageView(stage, counts, NONE, due, due + interval_ms)
    if stage == NONE:
        return StageView(stage, counts, REMOVED, None, None)
    return StageView(stage, counts, None, None, None)
