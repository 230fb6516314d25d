"""SQLite writers of one process take the database in arrival order, writers of several
processes (`railyard serve`'s workers) queue on a lock file, and a proposed plan is read
without a decisions query because no plan is ever decided back to proposed."""

from __future__ import annotations

import fcntl
import multiprocessing
import os
import threading
import time

import pytest

from backend.store.store import WriterQueue, open_store
from backend.store.workflow import TRANSITIONS


def test_writers_take_the_queue_in_arrival_order():
    queue, order = WriterQueue(), []

    def writer(n: int) -> None:
        with queue:
            order.append(n)

    threads = []
    with queue:
        for n in range(8):
            threads.append(threading.Thread(target=writer, args=(n,)))
            threads[-1].start()
            deadline = time.monotonic() + 10
            while len(queue._waiting) < n + 1:  # wait until it queues before the next
                assert time.monotonic() < deadline, "a writer never queued"
                time.sleep(0.001)
    for t in threads:
        t.join(10)
    assert order == list(range(8))
    with queue:  # free again once everyone left
        pass


def _hold_write(url: str, inside, leave) -> None:
    store = open_store(url)
    with store.write():
        inside.set()
        leave.wait(30)
    store.close()


def test_a_write_in_another_process_holds_the_lock_file(tmp_path):
    """While one process is inside a write transaction, the lock file is taken, so a
    writer of another process sleeps in the kernel until it is released, not in SQLite's
    busy handler's back-off."""
    url = f"sqlite:///{tmp_path / 'r.db'}"
    open_store(url).close()  # migrated before the race
    ctx = multiprocessing.get_context("spawn")
    inside, leave = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold_write, args=(url, inside, leave))
    holder.start()
    try:
        assert inside.wait(60)
        fd = os.open(tmp_path / "r.db.writer-lock", os.O_RDWR)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            leave.set()
            holder.join(30)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free once it committed
        finally:
            os.close(fd)
    finally:
        leave.set()
        holder.join(30)
    assert holder.exitcode == 0


def test_no_transition_leads_back_to_proposed():
    assert all(target != "proposed" for _, target in TRANSITIONS.values())
