"""KIP-599 controller mutation quotas: Kafka's TokenBucket and quota entities, vectorised.

The arithmetic is Kafka's (clients .../metrics/stats/TokenBucket.java and
core .../ControllerMutationQuotaManager.scala), operation for operation, so the
floats agree with a port of the Java code bit for bit:

- burst B = samples x window_seconds x rate; a principal's bucket is full when its
  first request arrives (Kafka's bucket starts at 0 tokens at epoch 0, so the first
  refill at any real clock reading fills it);
- refill: tokens = min(B, tokens + rate x elapsed_ms / 1000), clocks in whole ms;
- strict (CreateTopics v6+, CreatePartitions v3+, DeleteTopics v5+): admitted iff
  tokens >= 0 before the charge, admitted requests carry no throttle, rejected ones
  are not charged and carry the throttle;
- permissive (older clients): always admitted and charged, throttle if tokens < 0;
- throttle ms = Java Math.round(-tokens / rate x 1000);
- validate-only requests never touch the quota.

Buckets belong to quota *entities* as Kafka's DefaultQuotaCallback resolves them, so
two clients of one user share a bucket when the quota is set on the user alone.

``replay`` runs every bucket in lockstep: ``prepare`` lays requests out step-major (the
k-th request of every principal together), so one numpy step advances all principals;
once fewer than 16 principals are left (a skewed workload's heaviest few), each finishes
in a plain loop with the same arithmetic. ``prepare`` depends on the workload only, so a
sweep prepares once and calls ``run`` per (rate, samples) scenario.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from backend.errors import BadInput

if TYPE_CHECKING:  # pandas only where frames are built: the constants import light
    import pandas as pd

DEFAULT = "<default>"
"""The default entity name, as ZooKeeper paths and kafka-configs --entity-default use it."""

DEFAULT_SAMPLES = 11  # controller.quota.window.num
DEFAULT_WINDOW_SECONDS = 1  # controller.quota.window.size.seconds

# Kafka's ClientQuotaManager bit flags for which entity levels are configured.
_CLIENT_ID, _USER, _USER_CLIENT_ID = 1, 2, 4


def burst(rate: float, samples: int = DEFAULT_SAMPLES,
          window_seconds: float = DEFAULT_WINDOW_SECONDS) -> float:
    """B = samples x window x rate, multiplied in Kafka's order (TokenBucket.burst)."""
    return samples * (window_seconds * 1000 / 1000.0) * rate


def java_round(x: np.ndarray | float) -> np.ndarray:
    """Java's Math.round: nearest integer, halves up (Python's round goes to even)."""
    x = np.asarray(x, dtype=np.float64)
    whole = np.floor(x)
    return (whole + (x - whole >= 0.5)).astype(np.int64)


def throttle_ms(tokens: np.ndarray | float, rate: np.ndarray | float) -> np.ndarray:
    """ControllerMutationQuotaManager.throttleTimeMs: time for the bucket to climb to 0.

    Zero when tokens >= 0 (Kafka only computes it on a violation, i.e. tokens < 0).
    """
    tokens = np.asarray(tokens, dtype=np.float64)
    owed = np.where(tokens < 0, -tokens, 0.0)
    return java_round(owed / rate * 1000)


def refilled(tokens: float, elapsed_ms: int, rate: float, burst: float) -> float:
    """TokenBucket.refill on one bucket (Python floats give numpy's IEEE results exactly)."""
    return min(burst, tokens + rate * (elapsed_ms / 1000.0))


def charge(tokens: float, cost: float, burst: float, strict: bool) -> tuple[bool, float]:
    """One charged mutation on refilled ``tokens``: (admitted, tokens after).

    Strict rejects without charging while tokens < 0; permissive always charges.
    """
    if strict and tokens < 0:
        return False, tokens
    return True, min(burst, tokens - cost)


@dataclass(frozen=True)
class Admission:
    """The broker's answer to one mutation: admitted or not, and the throttle it returns."""

    admitted: bool
    throttle_ms: int


class TokenBucket:
    """One principal's live bucket (for the twin): Kafka's arithmetic, time passed in.

    ``record`` and ``tokens`` are Kafka's TokenBucket.record/measure; ``admit`` is what
    the Strict/PermissiveControllerMutationQuota does with one request.
    """

    def __init__(self, rate: float, samples: int = DEFAULT_SAMPLES,
                 window_seconds: float = DEFAULT_WINDOW_SECONDS) -> None:
        if not rate > 0:
            raise BadInput(f"quota rate must be positive, got {rate}")
        self.rate = float(rate)
        self.burst = burst(self.rate, samples, window_seconds)
        self._tokens = self.burst
        self._last_ms: int | None = None

    def _refill(self, now_ms: int) -> None:
        if self._last_ms is not None:
            self._tokens = refilled(self._tokens, now_ms - self._last_ms, self.rate, self.burst)
        self._last_ms = now_ms

    def tokens(self, now_ms: int) -> float:
        """Tokens left at ``now_ms`` (Kafka's ``tokens`` metric); negative means throttled."""
        self._refill(now_ms)
        return self._tokens

    def record(self, value: float, now_ms: int) -> None:
        """Charge ``value`` tokens (negative gives them back, capped at the burst)."""
        self._refill(now_ms)
        self._tokens = min(self.burst, self._tokens - value)

    def throttle_ms(self, now_ms: int) -> int:
        """How long a client must wait at ``now_ms`` before the bucket is back at zero."""
        return int(throttle_ms(self.tokens(now_ms), self.rate))

    def admit(self, partitions: float, now_ms: int, strict: bool = True,
              validate_only: bool = False) -> Admission:
        """One CreateTopics/CreatePartitions/DeleteTopics mutation of ``partitions``."""
        if validate_only:
            return Admission(True, 0)
        self._refill(now_ms)
        admitted, self._tokens = charge(self._tokens, partitions, self.burst, strict)
        owes = not admitted if strict else self._tokens < 0
        return Admission(admitted, int(throttle_ms(self._tokens, self.rate)) if owes else 0)


# ---------------------------------------------------------------------------------------
# Quota entities (ClientQuotaManager.DefaultQuotaCallback)

Entity = tuple[str | None, str | None]
"""(user, client_id) of a quota config; None = not part of it, DEFAULT = the default."""


def entity_path(entity: Entity) -> str:
    """The ZooKeeper-style path Kafka's docs use to name an entity."""
    user, client = entity
    if user is None:
        return f"/config/clients/{client}"
    return f"/config/users/{user}" + ("" if client is None else f"/clients/{client}")


@dataclass(frozen=True)
class Resolution:
    """Which bucket a (user, client-id) uses, at what rate, set by which entity.

    ``tags`` are Kafka's metric tags (user, client-id), "" for a part the bucket is shared
    across; ``rate`` None means no quota applies (Kafka never throttles it).
    """

    tags: tuple[str, str]
    rate: float | None
    entity: str | None


class QuotaBook:
    """The configured controller_mutation_rate quotas, resolved as Kafka resolves them."""

    def __init__(self, quotas: Mapping[Entity, float]) -> None:
        for (user, client), rate in quotas.items():
            if user is None and client is None:
                raise BadInput("a quota entity needs a user, a client_id or both")
            if not (isinstance(rate, int | float) and 0 < rate < float("inf")):
                raise BadInput(f"{entity_path((user, client))}: rate must be a positive "
                               f"number, got {rate!r}")
        self.quotas = {k: float(v) for k, v in quotas.items()}
        kinds = 0
        for user, client in self.quotas:
            kinds |= _CLIENT_ID if user is None else _USER if client is None else _USER_CLIENT_ID
        self._kinds = kinds

    def metric_tags(self, user: str, client_id: str) -> tuple[str, str]:
        """DefaultQuotaCallback.quotaMetricTags: the bucket a connection's mutations go to."""
        if self._kinds in (0, _CLIENT_ID):
            return "", client_id
        if self._kinds == _USER:
            return user, ""
        if self._kinds == _USER_CLIENT_ID:
            return user, client_id
        q = self.quotas
        if (user, client_id) in q or (user, DEFAULT) in q:
            return user, client_id
        if (user, None) in q:
            return user, ""
        if (DEFAULT, client_id) in q or (DEFAULT, DEFAULT) in q:
            return user, client_id
        if (DEFAULT, None) in q:
            return user, ""
        return "", client_id

    def quota_limit(self, tags: tuple[str, str]) -> tuple[float | None, Entity | None]:
        """DefaultQuotaCallback.quotaLimit: the rate for a bucket and the entity that set it."""
        user, client = tags
        if user and client:
            candidates = [(user, client), (user, DEFAULT), (DEFAULT, client), (DEFAULT, DEFAULT)]
        elif user:
            candidates = [(user, None), (DEFAULT, None)]
        elif client:
            candidates = [(None, client), (None, DEFAULT)]
        else:
            candidates = []
        for entity in candidates:
            if entity in self.quotas:
                return self.quotas[entity], entity
        return None, None

    def resolve(self, user: str, client_id: str) -> Resolution:
        tags = self.metric_tags(user, client_id)
        rate, entity = self.quota_limit(tags)
        return Resolution(tags, rate, None if entity is None else entity_path(entity))


# ---------------------------------------------------------------------------------------
# Vectorised replay


@dataclass(frozen=True)
class Replay:
    """Per request, in input order: admitted, tokens left after it (NaN: no quota), throttle."""

    admitted: np.ndarray
    tokens_after: np.ndarray
    throttle_ms: np.ndarray


@dataclass(frozen=True)
class Prepared:
    """A workload laid out for replay, independent of rates (sweeps run it many times).

    Charged requests (not validate-only) are ordered step-major: step k holds positions
    offsets[k]:offsets[k+1], the k-th request of every bucket that has one, buckets ranked
    by request count so the active ones are always a prefix and a bucket's rank is its
    position within every step it is in.
    """

    bucket: np.ndarray  # per request, input order
    free: np.ndarray  # validate-only mask, input order
    src: np.ndarray  # input index of each step-major position
    offsets: np.ndarray
    ranked: np.ndarray  # bucket ids by descending request count
    counts: np.ndarray  # charged requests per bucket, in ``ranked`` order
    rank_s: np.ndarray  # bucket rank of each position
    elapsed_s: np.ndarray  # ms since the bucket's previous charged request (0 at the first)
    cost_s: np.ndarray
    free_idx: np.ndarray  # input indices of validate-only requests
    free_prev: np.ndarray  # input index of the bucket's last charged request before, or -1
    free_elapsed: np.ndarray  # ms since that request


def _stable_by_bucket(bucket: np.ndarray, n_buckets: int) -> np.ndarray:
    """Indices sorted by bucket, time order kept (a radix sort for up to 65,536 buckets)."""
    keys = bucket.astype(np.uint16) if n_buckets <= 1 << 16 else bucket
    return np.argsort(keys, kind="stable")


def prepare(bucket: np.ndarray, t_ms: np.ndarray, partitions: np.ndarray,
            validate_only: np.ndarray, n_buckets: int) -> Prepared:
    """Lay out requests in time order (``bucket`` ids 0..n_buckets-1) for ``run``."""
    bucket = np.asarray(bucket, dtype=np.int64)
    t_ms = np.asarray(t_ms, dtype=np.int64)
    free = np.asarray(validate_only, dtype=bool)
    by_bucket = _stable_by_bucket(bucket, n_buckets)
    sorted_bucket = bucket[by_bucket]
    sorted_free = free[by_bucket]
    starts = np.cumsum(np.bincount(bucket, minlength=n_buckets))
    seg_start = (starts - np.bincount(bucket, minlength=n_buckets))[sorted_bucket]
    # the bucket's last charged request at or before each request (sorted positions)
    last = np.maximum.accumulate(np.where(sorted_free, -1, np.arange(len(bucket))))
    last = np.where(last >= seg_start, last, -1)

    charged = by_bucket[~sorted_free]  # charged requests, by bucket then time
    cb = sorted_bucket[~sorted_free]
    counts = np.bincount(cb, minlength=n_buckets)
    ranked = np.argsort(-counts, kind="stable")
    rank = np.empty(n_buckets, dtype=np.int64)
    rank[ranked] = np.arange(n_buckets)
    step = np.arange(len(cb)) - (np.cumsum(counts) - counts)[cb]
    n_steps = int(counts.max()) if len(cb) else 0
    active = n_buckets - np.cumsum(np.bincount(counts, minlength=n_steps + 1))[:n_steps]
    offsets = np.concatenate(([0], np.cumsum(active)))
    pos = offsets[step] + rank[cb]
    src = np.empty(len(cb), dtype=np.int64)
    src[pos] = charged
    t_c = t_ms[charged]
    elapsed = np.zeros(len(cb), dtype=np.int64)
    elapsed[1:] = np.where(step[1:] > 0, t_c[1:] - t_c[:-1], 0)
    elapsed_s = np.empty(len(cb), dtype=np.int64)
    elapsed_s[pos] = elapsed
    rank_s = np.empty(len(cb), dtype=np.int64)
    rank_s[pos] = rank[cb]
    cost_s = np.empty(len(cb), dtype=np.float64)
    cost_s[pos] = np.asarray(partitions, dtype=np.float64)[charged]

    prev_sorted = np.where(last >= 0, by_bucket[np.maximum(last, 0)], -1)[sorted_free]
    free_idx = by_bucket[sorted_free]
    free_elapsed = t_ms[free_idx] - t_ms[np.maximum(prev_sorted, 0)]
    return Prepared(bucket, free, src, offsets, ranked, counts[ranked], rank_s, elapsed_s,
                    cost_s, free_idx, prev_sorted, free_elapsed)


def run(w: Prepared, rates: np.ndarray, samples: int = DEFAULT_SAMPLES,
        window_seconds: float = DEFAULT_WINDOW_SECONDS, strict: bool = True) -> Replay:
    """Replay a prepared workload with ``rates[b]`` per bucket (NaN: no quota)."""
    rates = np.asarray(rates, dtype=np.float64)
    rate_r = rates[w.ranked]
    burst_r = burst(rate_r, samples, window_seconds)
    gain = rate_r[w.rank_s] * (w.elapsed_s / 1000.0)  # refill since the previous request
    adm_s, tok_s = _lockstep(w, gain, burst_r, rate_r, strict)
    n = len(w.bucket)
    admitted = np.ones(n, dtype=bool)
    tokens = np.full(n, np.nan)
    admitted[w.src] = adm_s
    tokens[w.src] = tok_s
    if len(w.free_idx):  # validate-only: the bucket as refilled since, left unchanged
        rate_f = rates[w.bucket[w.free_idx]]
        burst_f = burst(rate_f, samples, window_seconds)
        seen = np.minimum(burst_f, tokens[np.maximum(w.free_prev, 0)]
                          + rate_f * (w.free_elapsed / 1000.0))
        tokens[w.free_idx] = np.where(w.free_prev >= 0, seen, burst_f)
    rate_req = rates[w.bucket]
    bounded = ~np.isnan(rate_req)
    admitted[~bounded] = True
    owes = bounded & ~w.free & (~admitted if strict else tokens < 0)
    throttle = np.zeros(n, dtype=np.int64)
    throttle[owes] = throttle_ms(tokens[owes], rate_req[owes])
    return Replay(admitted, tokens, throttle)


def replay(bucket: np.ndarray, t_ms: np.ndarray, partitions: np.ndarray,
           validate_only: np.ndarray, rates: np.ndarray, samples: int = DEFAULT_SAMPLES,
           window_seconds: float = DEFAULT_WINDOW_SECONDS, strict: bool = True) -> Replay:
    """Replay requests in time order through one token bucket per bucket id."""
    w = prepare(bucket, t_ms, partitions, validate_only, len(rates))
    return run(w, rates, samples, window_seconds, strict)


def _lockstep(w: Prepared, gain: np.ndarray, burst_r: np.ndarray, rate_r: np.ndarray,
              strict: bool) -> tuple[np.ndarray, np.ndarray]:
    """(admitted, tokens after) in step-major order; each step reads the previous step's
    tokens as a slice, since a bucket's rank is its position in every step it is in."""
    offsets, cost_s = w.offsets, w.cost_s
    adm_s = np.ones(len(cost_s), dtype=bool)
    tok_s = np.empty(len(cost_s))
    n_steps = len(offsets) - 1
    k = 0
    while k < n_steps and offsets[k + 1] - offsets[k] > _LOCKSTEP_MIN_BUCKETS:
        lo, hi = offsets[k], offsets[k + 1]
        m = hi - lo
        level = burst_r[:m] if k == 0 else tok_s[offsets[k - 1]:offsets[k - 1] + m]
        tok = np.minimum(burst_r[:m], level + gain[lo:hi])
        if strict:
            ok = tok >= 0
            adm_s[lo:hi] = ok
            tok_s[lo:hi] = np.where(ok, tok - cost_s[lo:hi], tok)
        else:
            np.subtract(tok, cost_s[lo:hi], out=tok_s[lo:hi])
        k += 1
    for j in range(offsets[k + 1] - offsets[k] if k < n_steps else 0):
        pos = offsets[k:w.counts[j]] + j
        level = float(burst_r[j]) if k == 0 else float(tok_s[offsets[k - 1] + j])
        adm_s[pos], tok_s[pos] = _one_bucket(level, float(rate_r[j]), float(burst_r[j]),
                                             w.elapsed_s[pos].tolist(), cost_s[pos].tolist(),
                                             strict)
    return adm_s, tok_s


# Below this many active buckets a numpy step costs more than stepping each bucket in
# plain Python, so the few heaviest principals of a skewed workload finish one by one.
_LOCKSTEP_MIN_BUCKETS = 16


def _one_bucket(level: float, rate: float, cap: float, elapsed_ms: list[int],
                costs: list[float], strict: bool) -> tuple[list[bool], list[float]]:
    """The rest of one bucket's requests, sequentially, with the same arithmetic."""
    admitted, tokens_after = [], []
    for dt, cost in zip(elapsed_ms, costs, strict=True):
        ok, level = charge(refilled(level, dt, rate, cap), cost, cap, strict)
        admitted.append(ok)
        tokens_after.append(level)
    return admitted, tokens_after


REQUEST_COLUMNS = ("t", "user", "client_id", "partitions", "validate_only")


@dataclass(frozen=True)
class Buckets:
    """Per bucket (a quota entity's token bucket), in order of first request."""

    user: list[str]
    client_id: list[str]
    rate: np.ndarray  # NaN: no quota
    burst: np.ndarray
    quota_entity: list[str]


def replay_requests(user: Sequence[str], client_id: Sequence[str], t: np.ndarray,
                    partitions: np.ndarray, validate_only: np.ndarray, rate: float | None,
                    samples: int = DEFAULT_SAMPLES,
                    window_seconds: float = DEFAULT_WINDOW_SECONDS, strict: bool = True,
                    quotas: QuotaBook | None = None) -> tuple[Replay, np.ndarray, Buckets]:
    """Replay requests given as columns (t in seconds, time order), without pandas.

    ``rate`` is the quota of the entity (user=<default>, client-id=<default>), the one
    level that gives every (user, client-id) pair its own bucket; ``quotas`` adds
    entities. Returns the per-request replay, each request's bucket, and the buckets.
    """
    book = _book(rate, quotas)
    user_codes, users = factorize(user)
    client_codes, clients = factorize(client_id)
    pair_codes, pairs = factorize(user_codes * len(clients) + client_codes)
    by_tags: dict[tuple[str, str], Resolution] = {}
    tag_ids: dict[tuple[str, str], int] = {}
    pair_bucket = np.empty(len(pairs), dtype=np.int64)
    for i, code in enumerate(pairs):
        r = book.resolve(users[code // len(clients)], clients[code % len(clients)])
        by_tags.setdefault(r.tags, r)
        pair_bucket[i] = tag_ids.setdefault(r.tags, len(tag_ids))
    bucket = pair_bucket[pair_codes]
    tags = list(tag_ids)
    rates = np.array([np.nan if by_tags[t].rate is None else by_tags[t].rate for t in tags])
    out = replay(bucket, java_ms(t), np.asarray(partitions), np.asarray(validate_only, dtype=bool),
                 rates, samples, window_seconds, strict)
    return out, bucket, Buckets([t[0] for t in tags], [t[1] for t in tags], rates,
                                burst(rates, samples, window_seconds),
                                [by_tags[t].entity for t in tags])


def replay_frame(requests: pd.DataFrame, rate: float | None, samples: int = DEFAULT_SAMPLES,
                 window_seconds: float = DEFAULT_WINDOW_SECONDS, strict: bool = True,
                 quotas: QuotaBook | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``replay_requests`` over a frame (columns REQUEST_COLUMNS). Returns (per request:
    admitted, tokens_after, throttle_ms, bucket) and (per bucket: user, client_id, rate,
    burst, quota_entity)."""
    import pandas as pd

    out, bucket, b = replay_requests(
        requests["user"], requests["client_id"],
        requests["t"].to_numpy(dtype=np.float64), requests["partitions"].to_numpy(),
        requests["validate_only"].to_numpy(dtype=bool), rate, samples, window_seconds, strict,
        quotas)
    per_request = pd.DataFrame({"admitted": out.admitted, "tokens_after": out.tokens_after,
                                "throttle_ms": out.throttle_ms, "bucket": bucket})
    buckets = pd.DataFrame({"user": b.user, "client_id": b.client_id, "rate": b.rate,
                            "burst": b.burst, "quota_entity": b.quota_entity})
    return per_request, buckets


def bucket_totals(requests: Mapping[str, Any], per_request: Mapping[str, Any], n_buckets: int
                  ) -> dict[str, np.ndarray]:
    """Per bucket: requests, admitted, rejected, partitions admitted (validate-only requests
    mutate nothing) and the worst throttle; ``requests`` and ``per_request`` are frames or
    mappings of arrays with ``replay_frame``'s columns."""
    b = np.asarray(per_request["bucket"])
    admitted = np.asarray(per_request["admitted"], dtype=bool)
    mutated = admitted & ~np.asarray(requests["validate_only"], dtype=bool)
    count = np.bincount(b, minlength=n_buckets)
    n_admitted = np.bincount(b, weights=admitted, minlength=n_buckets).astype(np.int64)
    parts = np.bincount(b, weights=np.where(mutated, np.asarray(requests["partitions"]), 0),
                        minlength=n_buckets).astype(np.int64)
    max_throttle = np.zeros(n_buckets, dtype=np.int64)
    np.maximum.at(max_throttle, b, np.asarray(per_request["throttle_ms"]))
    return {"requests": count, "admitted": n_admitted, "rejected": count - n_admitted,
            "partitions_admitted": parts, "max_throttle_ms": max_throttle}


def token_curve(t: np.ndarray, bucket: np.ndarray, tokens_after: np.ndarray,
                rates: np.ndarray, bursts: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each bucket's tokens over time as (seconds, bucket, tokens) points to join with
    straight lines: full at its first request, each request's drop, the refill between
    requests (K = min(B, K + R x elapsed): up at the rate, flat once full) and, after its
    last request, the refill until it is full again (a drained bucket is seen refilling,
    not waiting for its next request). Requests without a quota (NaN tokens) are left
    out; ``t`` in seconds, in time order, as ``replay_requests`` takes it."""
    keep = np.flatnonzero(~np.isnan(tokens_after))
    keep = keep[np.argsort(bucket[keep], kind="stable")]  # each bucket's requests in order
    b, after = bucket[keep], tokens_after[keep]
    t_ms = java_ms(np.asarray(t)[keep]).astype(np.float64)
    rate, cap = rates[b], bursts[b]
    first = np.r_[True, b[1:] != b[:-1]] if len(b) else np.zeros(0, dtype=bool)
    last = np.r_[b[1:] != b[:-1], True] if len(b) else np.zeros(0, dtype=bool)
    prev_t, prev_after = np.r_[np.nan, t_ms[:-1]], np.r_[np.nan, after[:-1]]
    grown = prev_after + rate * ((t_ms - prev_t) / 1000.0)
    before = np.where(first, cap, np.minimum(cap, grown))
    full_again = ~first & (grown > cap)  # full before this request came
    full_at = prev_t + (cap - prev_after) / rate * 1000.0
    ends = last & (after < cap)
    ends_at = t_ms + (cap - after) / rate * 1000.0
    # four kinds of point per request, drawn in this order: full, before, after, full
    ms = np.concatenate([full_at[full_again], t_ms, t_ms, ends_at[ends]])
    tokens = np.concatenate([cap[full_again], before, after, cap[ends]])
    request = np.concatenate([np.flatnonzero(full_again), np.arange(len(b)), np.arange(len(b)),
                              np.flatnonzero(ends)])
    kind = np.repeat([0, 1, 2, 3], [full_again.sum(), len(b), len(b), ends.sum()])
    order = np.lexsort((kind, request))
    return ms[order] / 1000.0, b[request[order]], tokens[order]


# Past this many requests pandas' hash table factorizes faster than a dict costs to fill
# (and its import is paid back); below it, the CLI's small workloads start without pandas.
_PANDAS_FACTORIZE_MIN = 100_000


def factorize(values: Sequence[Any]) -> tuple[np.ndarray, list]:
    """(codes, labels) with labels in order of first appearance, as pandas.factorize."""
    if len(values) >= _PANDAS_FACTORIZE_MIN:
        import pandas as pd

        codes, labels = pd.factorize(values)  # a Series of arrow strings stays one
        return codes.astype(np.int64), list(labels)
    if isinstance(values, np.ndarray):
        values = values.tolist()  # Python ints hash faster than numpy's
    index: dict[Any, int] = {}
    codes = np.fromiter((index.setdefault(v, len(index)) for v in values), dtype=np.int64,
                        count=len(values))
    return codes, list(index)


def java_ms(t_seconds: np.ndarray) -> np.ndarray:
    """Seconds to Kafka's clock: whole milliseconds (nearest, so 1.001 s is 1001 ms)."""
    return np.rint(np.asarray(t_seconds, dtype=np.float64) * 1000).astype(np.int64)


def _book(rate: float | None, quotas: QuotaBook | None) -> QuotaBook:
    entries = dict(quotas.quotas) if quotas else {}
    if rate is not None:
        if (DEFAULT, DEFAULT) in entries:
            raise BadInput("--rate sets the entity user=<default>, client-id=<default>, which "
                           "the quotas file sets too: keep one")
        entries[(DEFAULT, DEFAULT)] = rate
    return QuotaBook(entries)
