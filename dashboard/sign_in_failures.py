"""Failed password checks per client address, on the sign-in page and the API alike:
guessing passwords costs time, and a flood of wrong guesses cannot keep scrypt busy.

One process counts in memory. Several (``server.workers`` > 1, which requires a Redis
cache) count together in that Redis: counted per process, an address had ``workers``
times the guesses before it was told to wait.
"""

from __future__ import annotations

import logging
import math
import secrets
import threading
import time
from collections import deque
from typing import Protocol

import redis

from dashboard.config import CacheSettings

log = logging.getLogger(__name__)

FAILURES_ALLOWED = 10  # failed password checks from one address within ...
FAILURE_WINDOW = 600.0  # ... this many seconds; then it waits until the oldest ages out
PRUNE_FROM = 1024  # addresses remembered before aged-out ones are first dropped
KEY_PREFIX = "railyard:sign-in-failures:"
REDIS_TIMEOUT = 2.0  # seconds; then the process counts on its own for that request


class Failures(Protocol):
    """What auth asks of a count: how long an address waits, and one more failure."""

    def wait(self, address: str) -> float: ...

    def failed(self, address: str) -> None: ...


class FailedSignIns:
    """An address's failures within the window, in this process's memory. Addresses whose
    failures all aged out are dropped whenever the map doubles, so guesses from ever new
    addresses cannot grow it without bound."""

    def __init__(self, clock=time.monotonic) -> None:
        self._seen: dict[str, deque[float]] = {}
        self._lock = threading.Lock()
        self._clock = clock
        self._prune_at = PRUNE_FROM

    def wait(self, address: str) -> float:
        """Seconds until ``address`` may try a password again (0: now)."""
        with self._lock:
            seen = self._recent(address)
            if len(seen) < FAILURES_ALLOWED:
                return 0.0
            return seen[0] + FAILURE_WINDOW - self._clock()

    def failed(self, address: str) -> None:
        with self._lock:
            self._recent(address)
            self._seen.setdefault(address, deque()).append(self._clock())
            if len(self._seen) > self._prune_at:
                cutoff = self._clock() - FAILURE_WINDOW
                self._seen = {a: d for a, d in self._seen.items() if d[-1] > cutoff}
                self._prune_at = max(PRUNE_FROM, 2 * len(self._seen))

    def __len__(self) -> int:
        return len(self._seen)

    def _recent(self, address: str) -> deque[float]:
        """The address's failures within the window."""
        seen = self._seen.get(address)
        if seen is None:
            return deque()
        while seen and seen[0] <= self._clock() - FAILURE_WINDOW:
            seen.popleft()
        if not seen:
            del self._seen[address]
        return seen


class SharedSignInFailures:
    """The same count, kept in Redis for every process that shares it: an address is a
    sorted set of its failures' times (wall clock, as processes share no other), expiring
    with the window. Each failure is counted in this process's memory too, and an address
    never waits less than that count says: a Redis that does not answer (or lost its keys)
    leaves each process its own count, as with one process, with a warning in the log
    once until it answers again, rather than locking everyone out or letting guesses
    through uncounted."""

    def __init__(self, url: str, clock=time.time) -> None:
        self._redis = redis.Redis.from_url(url, socket_timeout=REDIS_TIMEOUT,
                                           socket_connect_timeout=REDIS_TIMEOUT)
        self._clock = clock
        self._local = FailedSignIns(clock)
        self._down = False  # said so in the log

    def wait(self, address: str) -> float:
        """Seconds until ``address`` may try a password again (0: now)."""
        now = self._clock()
        try:  # the oldest FAILURES_ALLOWED within the window: enough to say
            oldest = self._redis.zrangebyscore(KEY_PREFIX + address,
                                               f"({now - FAILURE_WINDOW!r}", "+inf", start=0,
                                               num=FAILURES_ALLOWED, withscores=True)
        except redis.RedisError as e:
            self._unanswered(e)
            return self._local.wait(address)
        self._down = False
        shared = oldest[0][1] + FAILURE_WINDOW - now if len(oldest) >= FAILURES_ALLOWED else 0.0
        return max(shared, self._local.wait(address))

    def failed(self, address: str) -> None:
        self._local.failed(address)
        now = self._clock()
        key = KEY_PREFIX + address
        try:
            (self._redis.pipeline()
             .zremrangebyscore(key, "-inf", now - FAILURE_WINDOW)
             .zadd(key, {f"{now!r}:{secrets.token_hex(4)}": now})
             .expire(key, math.ceil(FAILURE_WINDOW) + 1)
             .execute())
        except redis.RedisError as e:
            self._unanswered(e)

    def _unanswered(self, e: redis.RedisError) -> None:
        if not self._down:
            log.warning("sign-in failures are counted per process until Redis answers: %s", e)
        self._down = True


def counter(cache: CacheSettings) -> Failures:
    """Shared through the cache's Redis when there is one, else this process's own."""
    if cache.type == "redis":  # the config requires its redis_url
        return SharedSignInFailures(cache.client_url())
    return FailedSignIns()
