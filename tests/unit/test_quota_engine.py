"""KIP-599 engine: the KIP's example, Kafka's own test scenarios, Kafka's entity precedence."""

from unittest.mock import patch

import numpy as np
import pandas as pd
import pytest

from backend.engines import quota as q
from backend.engines.quota import DEFAULT, QuotaBook, TokenBucket
from backend.errors import BadInput

EPOCH = 1_700_000_000_000  # Kafka's MockTime starts at the wall clock in these tests


def frame(rows):
    df = pd.DataFrame(rows, columns=["t", "user", "client_id", "partitions"])
    df["validate_only"] = False
    return df


# --- the KIP's worked example ---------------------------------------------------------

def test_kip_example_burst_560_partitions_then_12s_throttle():
    assert q.burst(5, 100, 1) == 500
    per_request, buckets = q.replay_frame(
        frame([(0, "u", "c", 560), (0, "u", "c", 1)]), rate=5, samples=100)
    assert per_request["admitted"].tolist() == [True, False]
    assert per_request["tokens_after"].tolist() == [-60.0, -60.0]
    assert per_request["throttle_ms"].tolist() == [0, 12000]  # strict: admitted carry none
    assert buckets["burst"].tolist() == [500.0]


def test_kip_example_drawn_as_the_bucket_runs():
    """KIP-599: R = 5, B = 500; 560 partitions take the bucket from 500 to -60, it is back
    at 0 after 12 s and full again after (500 + 60) / 5 = 112 s."""
    t = np.array([0.0, 4.0])
    out, bucket, b = q.replay_requests(["u", "u"], ["c", "c"], t, np.array([560, 1]),
                                       np.array([False, False]), 5, samples=100)
    assert out.admitted.tolist() == [True, False]  # -60 + 5 x 4 = -40: still refused
    ts, bs, tokens = q.token_curve(t, bucket, out.tokens_after, b.rate, b.burst)
    assert list(zip(ts.tolist(), tokens.tolist(), strict=True)) == [
        (0.0, 500.0), (0.0, -60.0), (4.0, -40.0), (4.0, -40.0), (112.0, 500.0)]
    assert bs.tolist() == [0] * 5


def test_the_curve_refills_to_the_burst_and_stays_there_between_requests():
    """Two principals, each its own bucket (rate 5, burst 55): tenant b's bucket is full
    again 4.4 s after its request and stays full until its next one at 20 s; each point
    before a request is the bucket as Kafka refilled it (after it, minus the cost)."""
    t = np.array([0.0, 1.0, 2.0, 20.0])
    users, cost = ["a", "b", "a", "b"], np.array([10, 22, 5, 3])
    out, bucket, b = q.replay_requests(users, ["c"] * 4, t, cost, np.zeros(4, dtype=bool), 5)
    ts, bs, tokens = q.token_curve(t, bucket, out.tokens_after, b.rate, b.burst)
    got = {name: list(zip(ts[bs == i].tolist(), tokens[bs == i].tolist(), strict=True))
           for i, name in enumerate(b.user)}
    assert got["a"] == [(0.0, 55.0), (0.0, 45.0), (2.0, 55.0), (2.0, 50.0),
                        (3.0, 55.0)]  # 45 + 5 x 2 = 55 exactly: full at its next request
    assert got["b"] == [(1.0, 55.0), (1.0, 33.0), (5.4, 55.0), (20.0, 55.0), (20.0, 52.0),
                        (20.6, 55.0)]
    assert np.all(np.diff(ts[bs == 1]) >= 0)


def test_requests_without_a_quota_draw_nothing():
    ts, bs, tokens = q.token_curve(np.array([0.0]), np.array([0]), np.array([np.nan]),
                                   np.array([np.nan]), np.array([np.nan]))
    assert len(ts) == len(bs) == len(tokens) == 0


def test_kip_example_permissive_throttles_the_admitted_request():
    per_request, _ = q.replay_frame(frame([(0, "u", "c", 560)]), rate=5, samples=100,
                                    strict=False)
    assert per_request["admitted"].tolist() == [True]
    assert per_request["throttle_ms"].tolist() == [12000]


# --- TokenBucketTest (clients .../metrics/stats) ----------------------------------------

@pytest.mark.parametrize("sign", [1, -1])
def test_kafka_token_bucket_record_and_unrecord(sign):
    # quota 5, window 2 s, 10 samples: burst 100
    tk = TokenBucket(5, samples=10, window_seconds=2)
    now = EPOCH
    assert tk.tokens(now) == pytest.approx(100, abs=0.1)
    if sign == 1:  # testRecord
        tk.record(60, now)
        assert tk.tokens(now) == pytest.approx(40, abs=0.1)
        now += 2000
        tk.record(5, now)
        assert tk.tokens(now) == pytest.approx(45, abs=0.1)
        now += 2000
        tk.record(60, now)
        assert tk.tokens(now) == pytest.approx(-5, abs=0.1)
    else:  # testUnrecord: giving tokens back never lifts the bucket above its burst
        tk.record(-60, now)
        assert tk.tokens(now) == pytest.approx(100, abs=0.1)
        now += 2000
        tk.record(60, now)
        assert tk.tokens(now) == pytest.approx(40, abs=0.1)
        now += 2000
        tk.record(-60, now)
        assert tk.tokens(now) == pytest.approx(100, abs=0.1)


# --- ControllerMutationQuotaManagerTest (core .../server) -------------------------------

def test_kafka_throttle_time_ms():
    assert q.throttle_ms(0, 10) == 0
    assert q.throttle_ms(-5, 10) == 500
    assert q.throttle_ms(-10, 10) == 1000


def test_kafka_strict_controller_mutation_quota():
    tk = TokenBucket(10, samples=10, window_seconds=1)  # burst 100
    assert tk.admit(90, EPOCH) == q.Admission(True, 0)  # tokens 10
    assert tk.admit(90, EPOCH) == q.Admission(True, 0)  # tokens -80, still admitted
    assert tk.admit(90, EPOCH) == q.Admission(False, 8000)  # rejected, not charged
    assert tk.tokens(EPOCH) == -80
    assert tk.throttle_ms(EPOCH + 5000) == 3000  # the throttle shrinks with time


def test_kafka_permissive_controller_mutation_quota():
    tk = TokenBucket(10, samples=10, window_seconds=1)
    assert tk.admit(90, EPOCH, strict=False) == q.Admission(True, 0)
    assert tk.admit(90, EPOCH, strict=False) == q.Admission(True, 8000)
    assert tk.admit(90, EPOCH, strict=False) == q.Admission(True, 17000)
    assert tk.throttle_ms(EPOCH + 5000) == 12000


@pytest.mark.parametrize("lockstep_min", [q._LOCKSTEP_MIN_BUCKETS, 0])
def test_kafka_controller_mutation_quota_violation_replayed(lockstep_min):
    # quota 10 on (ANONYMOUS, test-client), 10 samples of 1 s: burst 100
    times = [float(s) for s in range(10)] + [10.0, 10.0, 11.0]
    parts = [10] * 10 + [110, 110, 110]
    df = frame([(t, "ANONYMOUS", "test-client", p) for t, p in zip(times, parts, strict=True)])
    book = QuotaBook({("ANONYMOUS", "test-client"): 10})
    with patch.object(q, "_LOCKSTEP_MIN_BUCKETS", lockstep_min):  # both replay paths
        per_request, buckets = q.replay_frame(df, rate=None, samples=10, quotas=book)
    # at T+11 s the bucket is back at exactly 0 tokens, which admits (tokens >= 0)
    assert per_request["throttle_ms"].tolist() == [0] * 10 + [0, 1000, 0]
    assert per_request["admitted"].tolist() == [True] * 11 + [False, True]
    assert per_request["tokens_after"].tolist()[10:] == [-10.0, -10.0, -110.0]
    assert buckets["quota_entity"].tolist() == ["/config/users/ANONYMOUS/clients/test-client"]


# --- arithmetic details -----------------------------------------------------------------

def test_java_round_goes_half_up_not_to_even():
    assert q.java_round([0.5, 1.5, 2.5, -0.5, -1.5, 2.4999]).tolist() == [1, 2, 3, 0, -1, 2]


def test_bucket_starts_full_and_refill_is_capped():
    tk = TokenBucket(2, samples=11)
    assert tk.burst == 22
    assert tk.tokens(0) == 22
    tk.record(30, 0)
    assert tk.tokens(0) == -8
    assert tk.tokens(4_000) == 0
    assert tk.tokens(1_000_000) == 22


def test_validate_only_is_free_even_when_throttled():
    tk = TokenBucket(1)
    tk.record(100, 0)
    assert tk.admit(5, 0, validate_only=True) == q.Admission(True, 0)
    assert tk.tokens(0) == 11 - 100
    df = frame([(0, "u", "c", 100), (0, "u", "c", 5), (0, "u", "c", 5)])
    df.loc[1, "validate_only"] = True
    per_request, _ = q.replay_frame(df, rate=1)
    assert per_request["admitted"].tolist() == [True, True, False]
    assert per_request["throttle_ms"].tolist() == [0, 0, 89000]


def test_timestamps_are_whole_milliseconds():
    assert q.java_ms(np.array([0.0, 1.001, 2.0004, 2.0006])).tolist() == [0, 1001, 2000, 2001]


def test_a_rate_must_be_positive():
    with pytest.raises(BadInput):
        TokenBucket(0)
    with pytest.raises(BadInput):
        QuotaBook({("alice", None): -1})


# --- Kafka's entity precedence (ClientQuotaManager.DefaultQuotaCallback) ----------------

ALL_LEVELS = {
    ("alice", "app"): 1, ("alice", DEFAULT): 2, ("alice", None): 3,
    (DEFAULT, "app"): 4, (DEFAULT, DEFAULT): 5, (DEFAULT, None): 6,
    (None, "app"): 7, (None, DEFAULT): 8,
}


@pytest.mark.parametrize("level", range(1, 9))
def test_most_specific_entity_wins(level):
    # keep only the levels at or below `level`: the top remaining one must win for alice/app
    book = QuotaBook({e: r for e, r in ALL_LEVELS.items() if r >= level})
    assert book.resolve("alice", "app").rate == level


def test_bucket_sharing_follows_kafka_metric_tags():
    book = QuotaBook({("alice", None): 10, (None, DEFAULT): 3, ("bob", "etl"): 7})
    # a user quota: all of alice's clients share one bucket
    assert book.resolve("alice", "a1").tags == ("alice", "")
    assert book.resolve("alice", "a2").tags == ("alice", "")
    # the client-id default: one bucket per client-id, shared across users
    carol, dave = book.resolve("carol", "shared"), book.resolve("dave", "shared")
    assert carol.tags == dave.tags == ("", "shared")
    assert carol.rate == 3 and carol.entity == "/config/clients/<default>"
    # a user+client quota is its own bucket; bob's other clients fall to the client default
    assert book.resolve("bob", "etl") == q.Resolution(("bob", "etl"), 7,
                                                      "/config/users/bob/clients/etl")
    assert book.resolve("bob", "web").rate == 3


def test_no_matching_entity_means_no_quota():
    book = QuotaBook({("alice", None): 10})
    r = book.resolve("bob", "x")
    assert r.rate is None and r.entity is None
    per_request, _ = q.replay_frame(frame([(0, "bob", "x", 10_000)] * 3), rate=None,
                                    quotas=book)
    assert per_request["admitted"].all()
    assert per_request["throttle_ms"].tolist() == [0, 0, 0]
    assert per_request["tokens_after"].isna().all()


def test_rate_is_the_default_user_and_client_entity():
    book = QuotaBook({("alice", None): 10})
    with pytest.raises(BadInput, match="keep one"):
        q.replay_frame(frame([(0, "u", "c", 1)]), rate=5,
                       quotas=QuotaBook({(DEFAULT, DEFAULT): 2}))
    _, buckets = q.replay_frame(
        frame([(0, "alice", "a", 1), (0, "bob", "b", 1)]), rate=5, quotas=book)
    assert buckets.set_index("user")["rate"].to_dict() == {"alice": 10.0, "bob": 5.0}


def test_shared_bucket_throttles_every_client_of_the_user():
    book = QuotaBook({("alice", None): 1})  # burst 11
    per_request, buckets = q.replay_frame(
        frame([(0, "alice", "a1", 20), (0, "alice", "a2", 1)]), rate=None, quotas=book)
    assert per_request["admitted"].tolist() == [True, False]
    assert per_request["throttle_ms"].tolist() == [0, 9000]
    assert len(buckets) == 1
