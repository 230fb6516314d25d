"""A Redis that takes connections and never answers (a stopped process, a network that
drops the replies) fails the dashboard's Redis calls in REDIS_TIMEOUTS' seconds instead of
holding their threads for good: the shared cache, the sweeps' cancel flags, and Celery's
broker and result backend. (redis-py before 8, which pyproject.toml allows, has no
default timeout; 8's is 5 s.)"""

from __future__ import annotations

import socket
import time

import pytest
import redis
from flask import Flask
from flask_caching import Cache

from dashboard import caches, jobs
from dashboard.config import REDIS_TIMEOUTS, CacheSettings

SECONDS = REDIS_TIMEOUTS["socket_timeout"]


@pytest.fixture
def silent_redis(tmp_path):
    """A listening socket nobody reads: the kernel completes the connection, no reply
    ever comes."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield CacheSettings(type="redis", redis_url=f"redis://127.0.0.1:"
                            f"{server.getsockname()[1]}/0", background_dir=str(tmp_path))


def _gives_up(call) -> float:
    start = time.monotonic()
    with pytest.raises(redis.TimeoutError):
        call()
    return time.monotonic() - start


def test_the_dashboard_cache_gives_up_after_its_timeout(silent_redis):
    app = Flask(__name__)
    cache = Cache(app, config=caches.cache_config(silent_redis))
    assert cache.cache._read_client.connection_pool.connection_kwargs["socket_timeout"] \
        == SECONDS
    with app.app_context():
        assert SECONDS <= _gives_up(lambda: cache.get("answer")) < SECONDS + 1.5


def test_a_cache_made_without_an_app_gives_up_too(silent_redis):
    cache = caches.make_cache(silent_redis.redis_url)
    assert SECONDS <= _gives_up(lambda: cache.set("answer", 1)) < SECONDS + 1.5


def test_a_cancel_flag_gives_up(silent_redis):
    assert SECONDS <= _gives_up(lambda: jobs.request_cancel(silent_redis, "t-1")) \
        < SECONDS + 1.5


def test_celery_broker_and_results_have_the_same_timeouts(silent_redis):
    conf = jobs.celery_app(silent_redis.redis_url).conf
    assert conf.broker_transport_options == REDIS_TIMEOUTS
    assert (conf.redis_socket_timeout, conf.redis_socket_connect_timeout) == \
        (SECONDS, REDIS_TIMEOUTS["socket_connect_timeout"])
