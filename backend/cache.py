"""Answers kept for a while: one ``TtlCache`` per kind of answer, each with one key scheme
(``kind:`` + a digest of what was asked) and one lifetime.

Two kinds exist: Prometheus answers (backend.metrics.client, lifetime the dashboard's
cache timeout) and cluster reads (backend.services.cluster: assignments and configs, a
few seconds). Where the entries live is a ``CacheBackend``: in process by default; the
dashboard hands in its configured store (flask-caching, in process or Redis) so every
dashboard process shares Prometheus answers. The backend itself imports no Flask.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class CacheBackend(Protocol):
    """Where entries live: what cachelib / flask-caching backends offer."""

    def get(self, key: str) -> Any: ...

    def set(self, key: str, value: Any, timeout: float | None = None) -> Any: ...


class LocalStore:
    """In-process entries with their own expiry, the oldest dropped beyond ``max_entries``."""

    def __init__(self, max_entries: int = 2048) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[str, tuple[float, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> Any:
        with self._lock:
            hit = self._entries.get(key)
            if hit is None or hit[0] <= time.monotonic():
                return None
            return hit[1]

    def set(self, key: str, value: Any, timeout: float | None = None) -> bool:
        expires = time.monotonic() + (timeout if timeout else float("inf"))
        with self._lock:
            self._entries[key] = (expires, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return True


class _Flight:
    """One computation in progress that later callers of the same key wait for."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._value: Any = None
        self._error: BaseException | None = None

    def done(self, value: Any, error: BaseException | None) -> None:
        self._value, self._error = value, error
        self._event.set()

    def wait(self) -> Any:
        self._event.wait()
        if self._error is not None:
            raise self._error
        return self._value


class TtlCache:
    """One kind of answer. ``ttl`` <= 0 keeps nothing (every ask computes)."""

    def __init__(self, kind: str, ttl: float, store: CacheBackend | None = None) -> None:
        self.kind, self.ttl = kind, ttl
        self.store: CacheBackend = store if store is not None else LocalStore()
        self._flights: dict[str, _Flight] = {}
        self._flights_lock = threading.Lock()

    def key(self, *parts: Any) -> str:
        """``kind:`` and a digest of the parts (their repr): the one key scheme."""
        return f"{self.kind}:{hashlib.sha1(repr(parts).encode()).hexdigest()}"

    def fetch(self, parts: tuple, compute: Callable[[], T]) -> T:
        """The answer kept for ``parts``, or ``compute()`` kept for the lifetime. A failure
        is not kept: the next ask tries again. Callers asking the same question at once
        share one computation (single flight): 20 browsers refreshing together cost one
        Prometheus query, not 20 that queue behind each other and time out."""
        key = self.key(*parts)
        if self.ttl > 0:
            hit = self.store.get(key)
            if hit is not None:
                return hit
        with self._flights_lock:
            flight = self._flights.get(key)
            leader = flight is None
            if leader:
                flight = self._flights[key] = _Flight()
        if not leader:
            return flight.wait()
        try:
            value = compute()
            if self.ttl > 0:
                self.store.set(key, value, timeout=self.ttl)
            flight.done(value, None)
            return value
        except BaseException as e:
            flight.done(None, e)
            raise
        finally:
            with self._flights_lock:
                del self._flights[key]

    def put(self, parts: tuple, value: Any) -> None:
        """Keep ``value`` for ``parts`` (an answer read afresh replaces the kept one)."""
        if self.ttl > 0:
            self.store.set(self.key(*parts), value, timeout=self.ttl)
