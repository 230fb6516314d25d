"""`railyard worker`: a Celery worker for the dashboard's background callbacks (sweeps).

Used when the config sets `cache.type: redis`. It builds the same app as `railyard serve`
(so the pages' background callbacks are registered as the same Celery tasks), warms its own
Spark session, and serves jobs on a thread pool: threads share that one warm session,
where a forking pool would copy the JVM connection into every child.
"""

from __future__ import annotations

import logging
import socket

from dashboard import jobs
from dashboard.app import create_app
from dashboard.config import DashboardConfig
from dashboard.server import warm_spark


def run_worker(config: DashboardConfig, concurrency: int = 4,
               warm_spark_session: bool = True) -> None:
    """Serve the Redis queue of ``config`` (its cache.type is redis) until interrupted."""
    logging.getLogger("py4j").setLevel(logging.WARNING)  # one line per closed socket at INFO
    create_app(config)  # registers the pages' background callbacks as Celery tasks
    if warm_spark_session:
        warm_spark(config)
    jobs.celery_app(config.cache.client_url()).worker_main([
        "worker", "--pool=threads", f"--concurrency={concurrency}", "--loglevel=INFO",
        "--without-gossip", "--without-mingle", f"--hostname=railyard@{socket.gethostname()}",
    ])
