"""Background callbacks: where they run, and the cancel flags a running sweep polls.

Dash's DiskcacheManager forks a process per job. A fork of a process that holds the warm
Spark session inherits py4j sockets and locks owned by threads that do not exist in the
child, and the job can hang forever on them. So by default a background job runs in a
thread of the server process, next to the warm session (py4j and Spark are thread-safe;
job groups keep sweeps apart), and diskcache still carries results and progress between
the job and the polling requests. With `cache.type: redis` the jobs go to Celery instead:
`railyard worker` processes (thread pool, one warm Spark session each) take them from
Redis, so sweeps survive a dashboard restart and scale past one machine.

Cancelling is a flag the sweep polls (in diskcache, or in Redis beside the Celery queue),
so Spark cancels its job group cleanly; a job is never killed in the middle of a Spark call.
"""

from __future__ import annotations

import functools
import itertools
import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import diskcache
from dash import CeleryManager, DiskcacheManager

from dashboard.config import REDIS_TIMEOUTS, CacheSettings

if TYPE_CHECKING:
    from celery import Celery

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


def manager(settings: CacheSettings) -> ThreadJobManager | CeleryManager:
    """Threads of this process by default; Celery workers when Redis is configured."""
    if settings.type == "redis":
        return CeleryManager(celery_app(settings.client_url()))
    Path(settings.background_dir).mkdir(mode=0o700, parents=True, exist_ok=True)  # job results
    return ThreadJobManager(diskcache.Cache(settings.background_dir))


@functools.cache
def celery_app(redis_url: str) -> Celery:
    """The one Celery app per Redis URL: the dashboard queues on it, `railyard worker`
    serves it (both register the same background callbacks as its tasks)."""
    from celery import Celery

    app = Celery("railyard", broker=redis_url, backend=redis_url)
    app.conf.update(broker_connection_retry_on_startup=True, result_expires=3600,
                    worker_hijack_root_logger=False, task_acks_late=False,
                    broker_transport_options=dict(REDIS_TIMEOUTS),
                    redis_socket_timeout=REDIS_TIMEOUTS["socket_timeout"],
                    redis_socket_connect_timeout=REDIS_TIMEOUTS["socket_connect_timeout"])
    return app


@functools.cache
def _redis(url: str):
    import redis

    return redis.Redis.from_url(url, **REDIS_TIMEOUTS)


def request_cancel(settings: CacheSettings, token: str) -> None:
    key = f"railyard:cancel:{token}"
    if settings.type == "redis":
        _redis(settings.client_url()).set(key, 1, ex=CANCEL_TTL_SECONDS)
    else:
        _flags(settings.background_dir).set(key, True, expire=CANCEL_TTL_SECONDS)


def cancel_requested(settings: CacheSettings, token: str) -> bool:
    key = f"railyard:cancel:{token}"
    if settings.type == "redis":
        return bool(_redis(settings.client_url()).exists(key))
    return bool(_flags(settings.background_dir).get(key, False))


@functools.cache
def _flags(directory: str) -> diskcache.Cache:
    return diskcache.Cache(str(Path(directory) / "flags"))


class CancelWatch:
    """Inside a background job: turns the cancel flag into the event a sweep honours."""

    def __init__(self, settings: CacheSettings, token: str) -> None:
        self.settings, self.token = settings, token
        self.event = threading.Event()

    def poll(self) -> None:
        if not self.event.is_set() and cancel_requested(self.settings, self.token):
            self.event.set()
