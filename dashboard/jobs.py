"""Background callbacks: the diskcache manager, and cancel flags a running sweep polls.

Dash runs a background callback in a forked process. A forked child must not share
the parent's py4j sockets to the warm Spark JVM (two processes interleaving on one
socket corrupt it, and a killed child leaves it mid-message), so every child drops the
inherited connections and opens its own: the JVM stays warm, the sockets are fresh.
Cancelling is a flag the sweep polls, so Spark cancels its job group cleanly instead
of the child being killed in the middle of a Spark call.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import diskcache
from dash import DiskcacheManager

CANCEL_TTL_SECONDS = 3600


def manager(directory: str) -> DiskcacheManager:
    Path(directory).mkdir(parents=True, exist_ok=True)
    return DiskcacheManager(diskcache.Cache(directory))


def flags(directory: str) -> diskcache.Cache:
    """Cancel flags shared by the server and its background children."""
    return diskcache.Cache(str(Path(directory) / "flags"))


def request_cancel(directory: str, token: str) -> None:
    flags(directory).set(f"cancel:{token}", True, expire=CANCEL_TTL_SECONDS)


def cancel_requested(directory: str, token: str) -> bool:
    return bool(flags(directory).get(f"cancel:{token}", False))


def _fresh_spark_connections() -> None:
    context = sys.modules.get("pyspark.core.context")
    sc = context.SparkContext._active_spark_context if context else None
    if sc is not None:
        # py4j keeps idle connections in a deque; forget (never close) the inherited ones
        sc._gateway._gateway_client.deque.clear()


os.register_at_fork(after_in_child=_fresh_spark_connections)


class CancelWatch:
    """Inside a background job: turns the cancel flag into the event a sweep honours."""

    def __init__(self, directory: str, token: str) -> None:
        self.directory, self.token = directory, token
        self.event = threading.Event()

    def poll(self) -> None:
        if not self.event.is_set() and cancel_requested(self.directory, self.token):
            self.event.set()
