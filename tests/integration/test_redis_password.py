"""A Redis that asks for a password (`requirepass`, as the compose stack's does), met
through the config's `cache.redis_password` secret by every Redis client the dashboard
has: the shared cache, the sweeps' cancel flags, the shared sign-in failure counts and
Celery's broker. The password is never in the configured URL, which pages and logs may
show."""

from __future__ import annotations

import pytest
import redis
from flask import Flask
from flask_caching import Cache

from dashboard import caches, jobs
from dashboard.config import parse_config
from dashboard.sign_in_failures import (
    FAILURES_ALLOWED,
    KEY_PREFIX,
    SharedSignInFailures,
    counter,
)
from tests.servers import redis_server

pytestmark = pytest.mark.integration

PASSWORD = "p@ss:w/rd%-0123456789"  # every character a URL must quote


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory):
    yield from redis_server(tmp_path_factory, password=PASSWORD)


@pytest.fixture
def cache(redis_url, tmp_path):
    secret = tmp_path / "redis-password"
    secret.write_text(PASSWORD + "\n")
    doc = {"clusters": [{"name": "a", "gateway": {"type": "twin", "url": "http://127.0.0.1:9"}}],
           "cache": {"type": "redis", "redis_url": redis_url, "background_dir": str(tmp_path),
                     "redis_password": {"file": str(secret)}}}
    return parse_config(doc, "cfg").cache


def test_the_server_refuses_a_client_without_the_password(redis_url):
    with pytest.raises(redis.AuthenticationError):
        redis.Redis.from_url(redis_url).ping()


def test_the_dashboard_cache_and_a_cache_without_an_app_sign_in(cache):
    app = Flask(__name__)
    shared = Cache(app, config=caches.cache_config(cache))
    with app.app_context():
        assert shared.set("answer", 42) and shared.get("answer") == 42
    tool = caches.make_cache(cache.client_url())
    assert tool.set("other", 7) and tool.get("other") == 7
    assert PASSWORD not in cache.redis_url


def test_a_cancel_flag_is_set_and_read(cache):
    assert not jobs.cancel_requested(cache, "t-pw")
    jobs.request_cancel(cache, "t-pw")
    assert jobs.cancel_requested(cache, "t-pw")


def test_sign_in_failures_are_counted_in_redis(cache, redis_url):
    """Counted in Redis itself: a counter that could not sign in falls back to counting in
    its own process, which two workers would not share."""
    first, second = counter(cache), counter(cache)
    assert isinstance(first, SharedSignInFailures)
    for _ in range(FAILURES_ALLOWED):
        first.failed("10.9.9.9")
    assert second.wait("10.9.9.9") > 0
    stored = redis.Redis.from_url(cache.client_url())
    assert stored.zcard(KEY_PREFIX + "10.9.9.9") == FAILURES_ALLOWED


def test_celery_reaches_its_broker(cache):
    app = jobs.celery_app(cache.client_url())
    with app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1)
        assert conn.connected
