"""Where the executor reports: every step an audit entry of its plan (user "railyard"),
and the end of a run the plan's transition from executing to completed, failed or
cancelled, through the store's one path for state changes (Store.transition)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Protocol

from sqlalchemy import Connection

from backend.errors import Conflict
from backend.store.store import Store, load_plan
from backend.store.workflow import OUTCOMES, SYSTEM, TRANSITIONS


class Journal(Protocol):
    """Where the executor reports: every step as an audit entry, and the plan's end."""

    def record(self, plan_id: int, action: str, detail: dict, now: float) -> None: ...

    def ended(self, plan_id: int, state: str, cause: str | None, now: float,
              also: Callable[[Connection], None] | None = None) -> None: ...


def at(now: float) -> datetime:
    """An executor time (epoch seconds) as the store's timestamps."""
    return datetime.fromtimestamp(now, UTC)


class StoreJournal:
    """The executor's reports as the plan's audit entries and its final transition."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def record(self, plan_id: int, action: str, detail: dict | None, now: float) -> None:
        self.store.record(at(now), {"user": SYSTEM.name, "action": action,
                                    "plan_id": plan_id, "detail": detail})

    def ended(self, plan_id: int, state: str, cause: str | None, now: float,
              also: Callable[[Connection], None] | None = None) -> None:
        """Move the plan on from executing (a plan already moved on is left alone), in
        one transaction with ``also`` (the execution row's end)."""
        with self.store.read() as conn:
            plan = load_plan(conn, plan_id, content=False, basis=False)
        action = OUTCOMES[state]
        if plan is None or plan.state not in TRANSITIONS[action][0]:
            if also is not None:
                with self.store.write() as conn:
                    also(conn)
            return
        if not self.store.transition(plan.id, plan.state, plan.version, state=state,
                                     at=at(now), also=also, audit_row={
                                         "user": SYSTEM.name, "action": action,
                                         "before": plan.state, "after": state,
                                         "detail": {"cause": cause} if cause else None}):
            raise Conflict(f"plan {plan_id} changed while the executor ended it")
