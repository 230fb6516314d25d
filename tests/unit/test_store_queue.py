"""SQLite writers of one process take the database in arrival order, and a proposed plan
is read without a decisions query because no plan is ever decided back to proposed."""

from __future__ import annotations

import threading
import time

from backend.store.store import WriterQueue
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


def test_no_transition_leads_back_to_proposed():
    assert all(target != "proposed" for _, target in TRANSITIONS.values())
