"""Background callbacks: where they run, and the cancel flags a running sweep polls.

Dash's DiskcacheManager forks a process per job. A fork of a process that holds the warm
Spark session inherits py4j sockets and locks owned by threads that do not exist in the
child, and the job can hang forever on them. So by default a background job runs in a
thread of the server process, next to the warm session (py4j and Spark are thread-safe;
job groups keep sweeps apart), and diskcache still carries results and progress between
the job and the polling requests. Cancelling is a flag the sweep polls, so Spark cancels
its job group cleanly; a thread is never killed in the middle of a Spark call.
"""

from __future__ import annotations

import itertools
import logging
import threading
from pathlib import Path

import diskcache
from dash import DiskcacheManager

CANCEL_TTL_SECONDS = 3600
log = logging.getLogger("railyard.dashboard.jobs")


class ThreadJobManager(DiskcacheManager):
    """Dash background callbacks on threads of this process, results in diskcache.

    Job ids are this process's own counters; ids from another process (a page left open
    across a restart) are unknown here and count as finished."""

    def __init__(self, cache: diskcache.Cache) -> None:
        super().__init__(cache)
        self._ids = itertools.count(1)
        self._threads: dict[int, threading.Thread] = {}
        self._lock = threading.Lock()

    def call_job_fn(self, key, job_fn, args, context) -> int:
        with self._lock:
            self._threads = {j: t for j, t in self._threads.items() if t.is_alive()}
            job = next(self._ids)
            thread = threading.Thread(target=job_fn, name=f"dash-job-{job}", daemon=True,
                                      args=(key, self._make_progress_key(key), args, context))
            self._threads[job] = thread
        thread.start()
        return job

    def job_running(self, job) -> bool:
        thread = self._threads.get(int(job)) if job else None
        return thread is not None and thread.is_alive()

    def terminate_job(self, job) -> None:
        # a thread cannot be killed; a job that must stop early polls its cancel flag
        if job and self.job_running(job):
            log.info("background job %s left to finish (cancel it from its page)", job)

    def terminate_unhealthy_job(self, job) -> bool:
        return False


def manager(directory: str) -> ThreadJobManager:
    Path(directory).mkdir(parents=True, exist_ok=True)
    return ThreadJobManager(diskcache.Cache(directory))


def flags(directory: str) -> diskcache.Cache:
    """Cancel flags shared by the requests that set them and the jobs that poll them."""
    return diskcache.Cache(str(Path(directory) / "flags"))


def request_cancel(directory: str, token: str) -> None:
    flags(directory).set(f"cancel:{token}", True, expire=CANCEL_TTL_SECONDS)


def cancel_requested(directory: str, token: str) -> bool:
    return bool(flags(directory).get(f"cancel:{token}", False))


class CancelWatch:
    """Inside a background job: turns the cancel flag into the event a sweep honours."""

    def __init__(self, directory: str, token: str) -> None:
        self.directory, self.token = directory, token
        self.event = threading.Event()

    def poll(self) -> None:
        if not self.event.is_set() and cancel_requested(self.directory, self.token):
            self.event.set()
