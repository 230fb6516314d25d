"""Plan events in a time window, for markers on the monitoring pages' time series: an
incident review sees which plan was proposed, approved and running at 02:14, and which
of its batches was moving data."""

from __future__ import annotations

from datetime import UTC, datetime

from backend.services import execution, plans
from backend.store.store import Store

# audit actions that change what runs on a cluster, and the word a marker shows
MARKED = {"propose": "proposed", "approve": "approved", "execute": "executing",
          "complete": "completed", "fail": "failed", "cancel": "cancelled"}
MOST = 200  # markers on one chart at most (the latest)


def events(store: Store, cluster: str, start: float, end: float) -> list[dict]:
    """{"at" (epoch s), "plan_id", "state", "user", "title"} of the cluster's plan events
    between ``start`` and ``end`` (epoch seconds), oldest first."""
    rows = plans.audit_entries(store, cluster=cluster, actions=tuple(MARKED),
                               since=datetime.fromtimestamp(start, UTC),
                               until=datetime.fromtimestamp(end, UTC))[-MOST:]
    titles = plans.titles(store, {e.plan_id for e in rows})
    return [{"at": e.at.timestamp(), "plan_id": e.plan_id, "state": MARKED[e.action],
             "user": e.user, "title": titles[e.plan_id]} for e in rows]


def markers(store: Store, cluster: str, start: float, end: float) -> list[dict]:
    """Plan events and execution batch (or migration step) starts and ends (``"kind":
    "batch"``) in the window, oldest first, the latest MOST of them."""
    both = events(store, cluster, start, end) + execution.batch_markers(store, cluster,
                                                                         start, end)
    return sorted(both, key=lambda m: m["at"])[-MOST:]
