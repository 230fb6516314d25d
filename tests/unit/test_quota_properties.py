"""Property tests: the lockstep replay and the live TokenBucket equal a line-by-line port of
Kafka's Java (TokenBucket, Sensor.checkQuotas, Strict/PermissiveControllerMutationQuota)."""

import math
from unittest.mock import patch

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from backend.engines import quota as q

EPOCH = 1_600_000_000_000  # a wall-clock reading: Kafka's bucket starts at 0 tokens at t=0


class KafkaTokenBucket:
    """TokenBucket.java as written: tokens 0 and lastUpdateMs 0 at construction."""

    def __init__(self):
        self.tokens = 0.0
        self.last_ms = 0

    def _refill(self, quota, burst, now_ms):
        self.tokens = min(burst, self.tokens + quota * ((now_ms - self.last_ms) / 1000.0))
        self.last_ms = now_ms

    def measure(self, quota, burst, now_ms):
        self._refill(quota, burst, now_ms)
        return self.tokens

    def record(self, quota, burst, value, now_ms):
        self._refill(quota, burst, now_ms)
        self.tokens = min(burst, self.tokens - value)


def java_math_round(x):
    return math.floor(x + 0.5)


def kafka_request(bucket, quota, samples, window_s, value, now_ms, strict):
    """(admitted, tokens after, throttle ms) for one mutation, as the broker computes them."""
    burst = samples * (window_s * 1000 / 1000.0) * quota
    if strict:  # checkQuotas, then record without checking
        tokens = bucket.measure(quota, burst, now_ms)
        if tokens < 0:
            return False, tokens, java_math_round(-tokens / quota * 1000)
        bucket.record(quota, burst, value, now_ms)
        return True, bucket.tokens, 0
    bucket.record(quota, burst, value, now_ms)  # record, then checkQuotas
    tokens = bucket.measure(quota, burst, now_ms)
    return True, tokens, java_math_round(-tokens / quota * 1000) if tokens < 0 else 0


def reference(principal, t_ms, parts, free, rates, samples, window_s, strict):
    """Kafka, one request at a time; validate-only requests never reach the quota."""
    buckets, out = {}, []
    for p, t, v, f in zip(principal, t_ms, parts, free, strict=True):
        b = buckets.setdefault(p, KafkaTokenBucket())
        if f:
            snapshot = KafkaTokenBucket()
            snapshot.tokens, snapshot.last_ms = b.tokens, b.last_ms
            burst = samples * (window_s * 1000 / 1000.0) * rates[p]
            if b.last_ms == 0:  # not yet used: it would read as full
                out.append((True, burst, 0))
            else:
                out.append((True, snapshot.measure(rates[p], burst, EPOCH + t), 0))
            continue
        out.append(kafka_request(b, rates[p], samples, window_s, v, EPOCH + t, strict))
    return out


@st.composite
def workloads(draw):
    n_principals = draw(st.integers(1, 6))
    n = draw(st.integers(0, 60))
    principal = draw(st.lists(st.integers(0, n_principals - 1), min_size=n, max_size=n))
    # whole seconds and round sizes make the bucket land exactly on 0, Kafka's boundary
    gap = st.one_of(st.integers(0, 3000), st.sampled_from([0, 1000, 2000]))
    gaps = draw(st.lists(gap, min_size=n, max_size=n))
    size = st.one_of(st.integers(0, 400), st.sampled_from([5, 10, 50, 100]))
    parts = draw(st.lists(size, min_size=n, max_size=n))
    free = draw(st.lists(st.booleans().map(lambda b: b and draw(st.booleans())),
                         min_size=n, max_size=n))
    rates = draw(st.lists(st.sampled_from([1.0, 2.0, 5.0, 10.0, 0.5, 3.3, 37.5]),
                          min_size=n_principals, max_size=n_principals))
    samples = draw(st.one_of(st.integers(1, 4), st.integers(1, 120)))
    window_s = draw(st.integers(1, 3))
    t_ms = np.cumsum(np.array(gaps, dtype=np.int64))
    return (np.array(principal, dtype=np.int64), t_ms, np.array(parts, dtype=np.float64),
            np.array(free, dtype=bool), np.array(rates), samples, window_s)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(workloads(), st.booleans())
def test_replay_equals_kafka_port(workload, strict):
    principal, t_ms, parts, free, rates, samples, window_s = workload
    want = reference(principal, t_ms, parts, free, rates, samples, window_s, strict)
    # few principals finish bucket by bucket; with the threshold at 0 all run in lockstep
    for lockstep_min in (q._LOCKSTEP_MIN_BUCKETS, 0):
        with patch.object(q, "_LOCKSTEP_MIN_BUCKETS", lockstep_min):
            got = q.replay(principal, t_ms, parts, free, rates, samples, window_s, strict)
        assert got.admitted.tolist() == [w[0] for w in want]
        assert got.tokens_after.tolist() == [w[1] for w in want]  # bit for bit
        assert got.throttle_ms.tolist() == [w[2] for w in want]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(workloads(), st.booleans())
def test_live_token_bucket_agrees_with_replay(workload, strict):
    principal, t_ms, parts, free, rates, samples, window_s = workload
    got = q.replay(principal, t_ms, parts, free, rates, samples, window_s, strict)
    live = {}
    for i, (p, t, v, f) in enumerate(zip(principal, t_ms, parts, free, strict=True)):
        tk = live.setdefault(p, q.TokenBucket(rates[p], samples, window_s))
        answer = tk.admit(v, int(t), strict=strict, validate_only=f)
        assert answer == q.Admission(bool(got.admitted[i]), int(got.throttle_ms[i]))
        if not f:
            assert tk.tokens(int(t)) == got.tokens_after[i]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(workloads(), st.booleans())
def test_tokens_never_above_burst(workload, strict):
    principal, t_ms, parts, free, rates, samples, window_s = workload
    got = q.replay(principal, t_ms, parts, free, rates, samples, window_s, strict)
    assert (got.tokens_after <= q.burst(rates[principal], samples, window_s)).all()


@settings(max_examples=60, deadline=None, derandomize=True)
@given(workloads())
def test_strict_bucket_never_admits_while_negative(workload):
    principal, t_ms, parts, free, rates, samples, window_s = workload
    got = q.replay(principal, t_ms, parts, free, rates, samples, window_s, strict=True)
    charged = got.admitted & ~free
    before = got.tokens_after + np.where(charged, parts, 0)  # tokens the check saw
    assert (before[charged] >= 0).all()
    assert (before[~got.admitted] < 0).all()
    assert (got.throttle_ms[got.admitted] == 0).all()


@settings(max_examples=40, deadline=None, derandomize=True)
@given(workloads())
def test_permissive_admits_everything_and_throttles_iff_negative(workload):
    principal, t_ms, parts, free, rates, samples, window_s = workload
    got = q.replay(principal, t_ms, parts, free, rates, samples, window_s, strict=False)
    assert got.admitted.all()
    assert ((got.throttle_ms > 0) <= (got.tokens_after < 0)).all()
