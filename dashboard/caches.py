"""The dashboard's cache, configured once from the dashboard config (flask-caching: in
process, or Redis so every dashboard process shares it) and handed to the backend as the
store of its metric-answer cache (backend.cache). Drafts and drawn figures live in it too.
"""

from __future__ import annotations

import json

import plotly.graph_objects as go
import plotly.io as pio

from components.timerange import Window
from dashboard import runtime
from dashboard.config import REDIS_TIMEOUTS, CacheSettings

KEY_PREFIX = "railyard:"
MAX_ENTRIES = 2000  # in process: Prometheus answers of a few pages and windows, drafts


def cache_config(settings: CacheSettings) -> dict:
    """flask-caching settings: SimpleCache in-process by default, Redis when configured."""
    common = {"CACHE_DEFAULT_TIMEOUT": settings.default_timeout,
              "CACHE_KEY_PREFIX": KEY_PREFIX}
    if settings.type == "redis":
        return {**common, "CACHE_TYPE": "RedisCache", "CACHE_REDIS_URL": settings.client_url(),
                "CACHE_OPTIONS": dict(REDIS_TIMEOUTS)}
    return {**common, "CACHE_TYPE": "SimpleCache", "CACHE_THRESHOLD": MAX_ENTRIES}


def make_cache(redis_url: str | None = None, default_timeout: int = 5):
    """A store without an app (tools, tests): SimpleCache, or RedisCache at ``redis_url``."""
    from flask_caching.backends import RedisCache, SimpleCache

    if not redis_url:
        return SimpleCache(threshold=MAX_ENTRIES, default_timeout=default_timeout)
    import redis  # only needed when configured

    return RedisCache(host=redis.from_url(redis_url, **REDIS_TIMEOUTS),
                      default_timeout=default_timeout,
                      key_prefix=KEY_PREFIX)


def drawn(page: str, state: dict, w: Window, draw):
    """A page's drawn answer for one window, kept for the cache TTL (dashboard config):
    flipping back to a range, or a refresh within the same step, redraws nothing (drawing
    a large cluster's figures costs far more than a hit, even from cached answers)."""
    rt = runtime.current()
    key = f"{page}|{state['cluster']}|{w.key}|{w.start}|{w.end}|{w.step}"
    hit = rt.cache.get(key)
    if hit is not None:
        return hit
    answer = tuple(_plain(part) for part in draw())
    rt.cache.set(key, answer, timeout=rt.config.cache.default_timeout)
    return answer


def _plain(part):
    """Figures as the JSON they are sent as: a cache hit then unpickles plain lists (under
    a millisecond) instead of rebuilding and re-validating a plotly Figure (tens of ms)."""
    if isinstance(part, go.Figure):
        return json.loads(pio.to_json(part, validate=False))
    return part
