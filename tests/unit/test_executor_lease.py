"""One executor per cluster: the lease is held, renewed, refused to others, taken over
once expired; racers for a free lease get exactly one winner (SQLite here; PostgreSQL in
tests/integration/test_executor_store.py)."""

from __future__ import annotations

import threading

from backend.store.executions import ExecutionRecords
from tests.executor_rig import sqlite_store


def race(records: ExecutionRecords, cluster: str, n: int, now: float) -> list[str]:
    """``n`` threads try to take the lease at once; the holders."""
    barrier = threading.Barrier(n)
    won: list[str] = []

    def take(i: int) -> None:
        barrier.wait()
        if records.acquire(cluster, f"executor-{i}", now, ttl=30):
            won.append(f"executor-{i}")

    threads = [threading.Thread(target=take, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return won


def test_lease_held_renewed_and_taken_over_after_expiry(tmp_path):
    records = ExecutionRecords(sqlite_store(tmp_path / "s.db"))
    assert records.acquire("c1", "a", now=0, ttl=30)
    assert not records.acquire("c1", "b", now=10, ttl=30)
    assert records.acquire("c1", "a", now=20, ttl=30)  # heartbeat: now until 50
    assert not records.acquire("c1", "b", now=45, ttl=30)
    assert records.acquire("c1", "b", now=51, ttl=30)  # a died: b takes over
    assert not records.acquire("c1", "a", now=52, ttl=30)
    assert records.acquire("c2", "a", now=52, ttl=30)  # one lease per cluster
    records.release("c1", "b")
    assert records.acquire("c1", "a", now=53, ttl=30)


def test_lease_race_has_one_winner(tmp_path):
    records = ExecutionRecords(sqlite_store(tmp_path / "s.db"))
    for round_ in range(5):
        assert len(race(records, f"fresh-{round_}", 8, now=0.0)) == 1  # insert race
    assert len(race(records, "fresh-0", 8, now=100.0)) == 1  # takeover race
