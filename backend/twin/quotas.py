"""KIP-599 controller mutation quotas in the twin: one engine TokenBucket per quota entity.

Entities resolve as Kafka's DefaultQuotaCallback does (the quota engine's QuotaBook);
the three ControllerMutation metrics per (user, client-id) are Kafka's: ``tokens`` (the
bucket now), ``mutation-rate`` (admitted partition mutations per second over the quota
window, as Kafka's Rate over controller.quota.window.num x size) and ``throttle-time``
(average throttle of the window's throttled requests, 0 when none).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from backend.engines.quota import (
    DEFAULT_SAMPLES,
    DEFAULT_WINDOW_SECONDS,
    Admission,
    QuotaBook,
    TokenBucket,
)

WINDOW_MS = DEFAULT_SAMPLES * DEFAULT_WINDOW_SECONDS * 1000


@dataclass
class _Bucket:
    bucket: TokenBucket
    mutations: deque = field(default_factory=deque)  # (ms, partitions admitted)
    throttles: deque = field(default_factory=deque)  # (ms, throttle ms returned)


class MutationQuotas:
    """Configured controller_mutation_rate quotas and the live buckets they feed."""

    def __init__(self) -> None:
        self.rates: dict[tuple[str | None, str | None], float] = {}
        self.book = QuotaBook({})
        self.buckets: dict[tuple[str, str], _Bucket] = {}

    def set_rate(self, user: str | None, client_id: str | None, rate: float | None) -> None:
        """Set (or with None remove) the quota of one entity; buckets restart as Kafka's do
        when a quota changes (a new sensor is created)."""
        rates = dict(self.rates)
        if rate is None:
            rates.pop((user, client_id), None)
        else:
            rates[(user, client_id)] = rate
        self.book = QuotaBook(rates)
        self.rates = rates
        self.buckets = {}

    def admit(self, user: str, client_id: str, partitions: int, now_ms: int,
              strict: bool = True) -> Admission:
        """Charge one mutation of ``partitions`` to the principal's bucket (if any quota)."""
        res = self.book.resolve(user, client_id)
        if res.rate is None:
            return Admission(True, 0)
        entry = self.buckets.get(res.tags)
        if entry is None or entry.bucket.rate != res.rate:
            entry = self.buckets[res.tags] = _Bucket(TokenBucket(res.rate))
        answer = entry.bucket.admit(partitions, now_ms, strict=strict)
        if answer.admitted:
            entry.mutations.append((now_ms, partitions))
        if answer.throttle_ms:
            entry.throttles.append((now_ms, answer.throttle_ms))
        return answer

    def metrics(self, now_ms: int) -> list[dict]:
        """Per bucket: user, client_id, tokens, mutation_rate, throttle_time (Kafka's)."""
        out = []
        for (user, client), entry in sorted(self.buckets.items()):
            for q in (entry.mutations, entry.throttles):
                while q and q[0][0] <= now_ms - WINDOW_MS:
                    q.popleft()
            throttles = [t for _, t in entry.throttles]
            out.append({
                "user": user, "client_id": client,
                "tokens": entry.bucket.tokens(now_ms),
                "mutation_rate": sum(p for _, p in entry.mutations) / (WINDOW_MS / 1000),
                "throttle_time": sum(throttles) / len(throttles) if throttles else 0.0,
                "rate": entry.bucket.rate, "burst": entry.bucket.burst,
            })
        return out
