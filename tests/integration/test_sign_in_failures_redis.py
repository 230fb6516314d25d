"""Failed sign-ins counted in a real Redis, as `railyard serve` does with several workers:
two counters on one Redis stand for two worker processes. Each counted on its own
before, so an address had FAILURES_ALLOWED guesses per worker."""

from __future__ import annotations

import pytest
import redis

from dashboard.config import CacheSettings
from dashboard.sign_in_failures import (
    FAILURE_WINDOW,
    FAILURES_ALLOWED,
    KEY_PREFIX,
    FailedSignIns,
    SharedSignInFailures,
    counter,
)
from tests.servers import redis_server

pytestmark = pytest.mark.integration

redis_url = pytest.fixture(scope="module")(redis_server)


@pytest.fixture
def clock():
    now = [1_800_000_000.0]  # wall-clock seconds: the processes share no other clock
    return now


def test_two_workers_count_one_address_together(redis_url, clock):
    first, second = (SharedSignInFailures(redis_url, clock=lambda: clock[0]) for _ in "ab")
    for i in range(FAILURES_ALLOWED):
        assert first.wait("10.0.0.1") == second.wait("10.0.0.1") == 0
        (first if i % 2 else second).failed("10.0.0.1")
        clock[0] += 1
    # the tenth failure makes the address wait on both, until the first ages out
    assert first.wait("10.0.0.1") == second.wait("10.0.0.1") == \
        FAILURE_WINDOW - FAILURES_ALLOWED
    assert first.wait("10.0.0.2") == 0  # another address is not held up
    clock[0] = 1_800_000_000.0 + FAILURE_WINDOW  # the oldest failure ages out
    assert first.wait("10.0.0.1") == second.wait("10.0.0.1") == 0
    second.failed("10.0.0.1")  # the tenth within the window again
    assert first.wait("10.0.0.1") == 1.0  # until the second failure ages out
    keys = redis.Redis.from_url(redis_url)
    assert keys.zcard(KEY_PREFIX + "10.0.0.1") == FAILURES_ALLOWED  # the aged-out one gone
    assert 0 < keys.ttl(KEY_PREFIX + "10.0.0.1") <= FAILURE_WINDOW + 1


def test_without_redis_each_process_counts_its_own(clock, caplog):
    """A Redis that does not answer neither locks everyone out nor lets guesses through
    uncounted: the process counts what it saw, as one process always did."""
    unreachable = SharedSignInFailures("redis://127.0.0.1:1/0", clock=lambda: clock[0])
    for _ in range(FAILURES_ALLOWED):
        assert unreachable.wait("10.0.0.3") == 0
        unreachable.failed("10.0.0.3")
    assert unreachable.wait("10.0.0.3") == FAILURE_WINDOW
    assert caplog.text.count("sign-in failures are counted per process until Redis answers") == 1


def test_a_redis_that_lost_the_count_leaves_each_process_its_own(redis_url, clock):
    first, second = (SharedSignInFailures(redis_url, clock=lambda: clock[0]) for _ in "ab")
    for _ in range(FAILURES_ALLOWED):
        first.failed("10.0.0.4")
    redis.Redis.from_url(redis_url).delete(KEY_PREFIX + "10.0.0.4")  # flushed, restarted
    assert first.wait("10.0.0.4") == FAILURE_WINDOW  # the failures it saw itself
    assert second.wait("10.0.0.4") == 0


def test_the_cache_decides_which_counter(redis_url):
    assert isinstance(counter(CacheSettings("redis", redis_url)), SharedSignInFailures)
    assert isinstance(counter(CacheSettings()), FailedSignIns)
