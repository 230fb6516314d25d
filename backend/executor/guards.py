"""Guard-rail stops and execution windows, as the executor applies them every tick.

A running reassignment is *held* when a guard condition is breached (engines.guards) or
when it is outside the cluster's execution windows or before its "not before"
(engines.windows). A held execution is ``paused`` (the state a user's pause ends in, so
cancel and the Overview treat it as they always did) with a ``hold`` record saying why:

- the batch in flight finishes and no new batch starts;
- on a guard breach the batch in flight's throttle drops to the floor (never above the
  plan's own), through the plan's book like every other config, so the throttles of a
  held plan are the plan's and are put back when it ends;
- it resumes by itself once the guard has been clear for ``resume_after_seconds`` (or,
  with ``auto_resume`` off, when a user presses Resume), and at the next window.

A user's own pause has no hold and is left alone. The hold, and when its conditions
cleared, is in the store, so a restarted executor carries on; the lag history that
finds a stalled move is in memory (after a restart a stall takes T minutes to be seen
again).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from backend.engines.guards import Breach, Figures, Key, breaches, stalls
from backend.engines.limits import check_reassignment
from backend.engines.windows import next_open
from backend.executor.freeze import ExecutionSpec
from backend.executor.journal import Journal
from backend.model.guards import GuardSettings, Windows
from backend.model.reassignment import reassignment_from_dict
from backend.model.snapshot import Limits, Snapshot
from backend.store.executions import Execution, ExecutionRecords

GUARD, WINDOW = "guard", "window"  # the kinds of hold
NEXT_BATCH_SECONDS = 30.0  # the next batch's brokers and limit check, re-read this often


class Health(Protocol):
    """The figures the guards read (services.guards: Prometheus and the gateway)."""

    def figures(self, moving: list[Key]) -> Figures: ...

    def assignment(self) -> Snapshot: ...


@dataclass
class Watch:
    """One cluster's guards and windows, consulted by its executor every tick."""

    settings: GuardSettings
    windows: Windows
    health: Health | None
    limits: Limits = field(default_factory=Limits)
    _lag: dict[int, dict[Key, list[tuple[float, float]]]] = field(default_factory=dict)
    _next: dict[int, tuple[int, float, frozenset[int], list[dict]]] = field(
        default_factory=dict)  # plan -> (batch, read at, brokers touched, limit violations)
    _ours: dict[int, frozenset[Key]] = field(default_factory=dict)  # plan -> its partitions

    def review(self, records: ExecutionRecords, journal: Journal, ex: Execution,
               spec: ExecutionSpec, plan: list[dict], flight: dict, now: float) -> Execution:
        """Hold, update or release ``ex`` as the guards and windows say now."""
        if ex.state not in ("running", "paused") or (ex.state == "paused" and ex.hold is None):
            return ex  # a user's pause (or pausing) is theirs
        pending = ex.batch + 1 < len(spec.batches)
        hold = self._reasons(ex, spec, plan, flight, pending, now)
        old = ex.hold
        if hold is None:
            if old is None:
                return ex
            if old["kind"] == GUARD and ex.state == "paused":
                since = old.get("clear_since")
                if since is None:
                    return records.save(ex, hold={**old, "clear_since": now}, updated_at=now)
                waited = now - since
                if not self.settings.auto_resume or waited < self.settings.resume_after_seconds:
                    return ex
            journal.record(ex.plan_id, "execution_released", {"kind": old["kind"]}, now)
            return records.save(ex, state="running", hold=None, updated_at=now)
        if old is not None and old.get("kind") == hold["kind"] \
                and old.get("conditions") == hold.get("conditions") \
                and old.get("next_window") == hold.get("next_window") \
                and old.get("clear_since") is None and ex.state == "paused":
            return ex  # nothing new to write
        if old is None or old.get("kind") != hold["kind"]:
            journal.record(ex.plan_id, "execution_held", hold, now)
        return records.save(ex, state="paused", hold={**hold, "since": now if old is None
                                                      else old.get("since", now)},
                            updated_at=now)

    def rate(self, ex: Execution, spec: ExecutionSpec) -> int | None:
        """The throttle of the batch in flight: the plan's, or the floor while a guard
        holds it (never above the plan's)."""
        if ex.hold is None or ex.hold.get("kind") != GUARD:
            return spec.throttle
        floor = self.settings.floor if spec.throttle_mode is None \
            else spec.throttle_mode["floor"]  # an adaptive plan's own floor
        return floor if spec.throttle is None else min(floor, spec.throttle)

    def forget(self, plan_id: int) -> None:
        for memory in (self._lag, self._next, self._ours):
            memory.pop(plan_id, None)

    # ---- why it is held -----------------------------------------------------------------
    def _reasons(self, ex: Execution, spec: ExecutionSpec, plan: list[dict], flight: dict,
                 pending: bool, now: float) -> dict | None:
        # once every batch is done and none is in flight, nothing is left to hold: the
        # plan completes and puts its configs back
        found = self._breaches(ex, spec, plan, flight, pending, now) \
            if pending or ex.phase != "idle" else []
        if found:
            return {"kind": GUARD, "conditions": [b.to_dict() for b in found],
                    "text": "; ".join(b.text for b in found),
                    "auto_resume": self.settings.auto_resume,
                    "resume_after": self.settings.resume_after_seconds}
        if pending:
            early = spec.not_before is not None and spec.not_before > now
            windows = Windows() if spec.outside_windows else self.windows  # no ranges: always
            opens = next_open(windows, spec.not_before if early else now)
            if opens > now:
                return {"kind": WINDOW, "next_window": opens,
                        "text": "not before its start time" if early
                        else "outside the cluster's execution windows"}
        return None

    def _breaches(self, ex: Execution, spec: ExecutionSpec, plan: list[dict], flight: dict,
                  pending: bool, now: float) -> list[Breach]:
        if self.health is None or not self.settings.enabled:
            return []
        ours = self._ours.get(ex.plan_id)
        if ours is None:
            ours = self._ours[ex.plan_id] = frozenset((e["topic"], e["partition"])
                                                      for e in plan)
        moving = sorted(k for k in flight if k in ours)
        figures = self.health.figures(moving)
        stalled = [] if figures.lag is None else self._stalled(ex, spec, figures.lag, now)
        touched, violations = self._next_batch(ex, spec, plan, pending, now)
        held = frozenset(c["condition"] for c in ex.hold["conditions"]) \
            if ex.hold is not None and ex.hold.get("kind") == GUARD else frozenset()
        return breaches(self.settings, figures, touched, violations, stalled, held)

    def _stalled(self, ex: Execution, spec: ExecutionSpec, lag: dict[Key, float],
                 now: float) -> list[tuple[Key, float]]:
        """The moves whose lag has not fallen for the stall time, from the lag read now
        added to the plan's history (not called while the lag is not known, so the
        history then stays as it is)."""
        # a move is judged stalled at the plan's own rate only: at the floor it may well
        # not gain on its producers, and a stall seen there would hold it for ever
        history = {} if self.rate(ex, spec) != spec.throttle \
            else self._lag.setdefault(ex.plan_id, {})
        self._lag[ex.plan_id] = history
        for k in list(history):
            if k not in lag:
                del history[k]
        for k, value in lag.items():
            history.setdefault(k, []).append((now, value))
            del history[k][:-600]  # a few hours of samples is plenty
        return stalls(history, now, self.settings.stall_minutes)

    def _next_batch(self, ex: Execution, spec: ExecutionSpec, plan: list[dict],
                    pending: bool, now: float) -> tuple[frozenset[int], list[dict]]:
        """The brokers the next batch moves from or to and the KIP-578 limits it would
        break on the live counts (re-read every NEXT_BATCH_SECONDS)."""
        if not pending or not (self.settings.broker_down or self.settings.partition_limits):
            return frozenset(), []
        idx = ex.batch + 1
        cached = self._next.get(ex.plan_id)
        if cached is not None and cached[0] == idx and now - cached[1] < NEXT_BATCH_SECONDS:
            return cached[2], cached[3]
        snap = self.health.assignment()
        entries = [plan[i] for i in spec.batches[idx]]
        touched = set()
        for e in entries:
            touched |= set(e["replicas"])
            touched |= set(snap.replicas_of(snap.partition_row(e["topic"], e["partition"])))
        parsed = reassignment_from_dict({"version": 1, "partitions": entries}, snap, "plan")
        # the configured limits where given, else the ones the cluster itself carries
        # (the twin's broker configs; Apache Kafka has none: KIP-578 was never merged)
        limits = snap.limits.merged(self.limits.max_broker_partitions,
                                    self.limits.max_partitions)
        violations = check_reassignment(snap, parsed, limits).violations
        self._next[ex.plan_id] = (idx, now, frozenset(touched), violations)
        return frozenset(touched), violations
