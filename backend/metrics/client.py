"""The dashboard's Prometheus client: catalog concepts in, tidy pandas frames out.

prometheus-api-client does the HTTP; answers are cached (flask-caching SimpleCache by
default, Redis when a URL is configured) for a short TTL; every failure becomes a typed
``MetricsError`` a page can show: Prometheus unreachable, a query Prometheus refused,
or a metric with no series. An empty answer is never turned into zeros.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

import pandas as pd
import requests
from flask_caching.backends import SimpleCache
from prometheus_api_client import PrometheusApiClientException, PrometheusConnect
from urllib3.util.retry import Retry

from backend.metrics import catalog


class MetricsError(Exception):
    """Base of the errors a page shows instead of a chart."""


class PrometheusUnavailable(MetricsError):
    """Prometheus did not answer (down, unreachable, or timed out)."""


class QueryFailed(MetricsError):
    """Prometheus answered with an error (bad query, overload)."""


class MetricMissing(MetricsError):
    """The query ran but no series exist: the metric is not exported or not scraped yet."""


def make_cache(redis_url: str | None = None, default_timeout: int = 5):
    """SimpleCache in process, or RedisCache when ``redis_url`` is set."""
    if not redis_url:
        return SimpleCache(threshold=2000, default_timeout=default_timeout)
    import redis  # only needed when configured
    from flask_caching.backends import RedisCache
    return RedisCache(host=redis.from_url(redis_url), default_timeout=default_timeout,
                      key_prefix="railyard:")


class MetricsClient:
    """Catalog queries against one Prometheus, in one naming dialect."""

    def __init__(self, url: str, dialect: str = "strimzi", timeout: float = 5.0,
                 cache=None, ttl: int = 5, by: str = "broker") -> None:
        self.url = url
        self.dialect = catalog.dialect(dialect)
        self.timeout, self.ttl, self.by = timeout, ttl, by
        self.cache = cache if cache is not None else make_cache(default_timeout=ttl)
        # no retries: a page asks again on its next refresh, and a dead Prometheus must
        # turn into PrometheusUnavailable within ``timeout``, not after minutes of backoff
        self.prom = PrometheusConnect(url=url, disable_ssl=True, timeout=timeout,
                                      retry=Retry(total=0, raise_on_status=False))

    def promql(self, concept: str, window: str = "1m") -> str:
        return catalog.promql(concept, self.dialect, window=window, by=self.by)

    def instant(self, concept: str, at: datetime | float | None = None,
                window: str = "1m") -> pd.DataFrame:
        """One row per series: label columns, ``value``, ``timestamp`` (UTC)."""
        query = self.promql(concept, window)
        params = {} if at is None else {"time": _epoch(at)}
        raw = self._cached(("instant", query, params.get("time")),
                           lambda: self.prom.custom_query(query, params=params))
        return self._frame(concept, query, raw, ranged=False)

    def range(self, concept: str, start: datetime | float, end: datetime | float,
              step: str = "15s", window: str = "1m") -> pd.DataFrame:
        """Long format: label columns, ``timestamp``, ``value``; one row per sample."""
        query = self.promql(concept, window)
        s, e = _datetime(start), _datetime(end)
        raw = self._cached(("range", query, s.timestamp(), e.timestamp(), step),
                           lambda: self.prom.custom_query_range(query, s, e, step))
        return self._frame(concept, query, raw, ranged=True)

    def _cached(self, key: tuple, fetch):
        digest = hashlib.sha1(repr((self.url, *key)).encode()).hexdigest()
        hit = self.cache.get(digest) if self.ttl > 0 else None  # cachelib: 0 = forever
        if hit is not None:
            return hit
        try:
            value = fetch()
        except (requests.ConnectionError, requests.Timeout) as e:
            raise PrometheusUnavailable(f"Prometheus at {self.url} is not answering "
                                        f"({type(e).__name__})") from None
        except PrometheusApiClientException as e:
            raise QueryFailed(f"Prometheus refused the query: {str(e).splitlines()[0]}") \
                from None
        if self.ttl > 0:
            self.cache.set(digest, value, timeout=self.ttl)
        return value

    def _frame(self, concept: str, query: str, raw: list, ranged: bool) -> pd.DataFrame:
        if not raw:
            raise MetricMissing(f"no series for '{concept}' ({query}): not exported by the "
                                "cluster, or not scraped yet")
        labels = catalog.label_columns(concept, self.by)
        rows = []
        for series in raw:
            tags = {lab: series["metric"].get(lab, "") for lab in labels}
            samples = series["values"] if ranged else [series["value"]]
            rows += [{**tags, "timestamp": float(t), "value": float(v)} for t, v in samples]
        frame = pd.DataFrame(rows, columns=[*labels, "timestamp", "value"])
        frame["timestamp"] = pd.to_datetime(frame["timestamp"], unit="s", utc=True)
        return frame.sort_values([*labels, "timestamp"], ignore_index=True)


def _epoch(t: datetime | float) -> float:
    return t.timestamp() if isinstance(t, datetime) else float(t)


def _datetime(t: datetime | float) -> datetime:
    return t if isinstance(t, datetime) else datetime.fromtimestamp(float(t), tz=UTC)
