"""The dashboard's Prometheus client: catalog concepts in, tidy pandas frames out.

prometheus-api-client does the HTTP; answers are kept for a short TTL in the metric-answer
cache (backend.cache: in process by default, in the store the dashboard configures, e.g.
Redis, when one is handed in); every failure becomes a typed
``MetricsError`` a page can show: Prometheus unreachable, a query Prometheus refused,
or a metric with no series. An empty answer is never turned into zeros.
"""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime

import pandas as pd
import requests
from prometheus_api_client import PrometheusApiClientException, PrometheusConnect
from urllib3.exceptions import ReadTimeoutError
from urllib3.util.retry import Retry

from backend.cache import CacheBackend, TtlCache
from backend.errors import shown_url
from backend.metrics import catalog
from backend.metrics.recording import recorded_name
from backend.metrics.tags import principal_of

RULES_CHECK_SECONDS = 60
# prometheus-api-client's words for a refused request (PrometheusConnect.custom_query)
_HTTP_DENIED = re.compile(r"HTTP Status Code (401|403) ")

log = logging.getLogger(__name__)

class MetricsError(Exception):
    """Base of the errors a page shows instead of a chart."""


class PrometheusUnavailable(MetricsError):
    """Prometheus did not answer (down, unreachable, or timed out)."""


class PrometheusSlow(PrometheusUnavailable):
    """Prometheus is up but did not answer within the client's timeout (a heavy query)."""


class QueryFailed(MetricsError):
    """Prometheus answered with an error (bad query, overload)."""


class MetricMissing(MetricsError):
    """The query ran but no series exist: the metric is not exported or not scraped yet.
    The message is in an operator's words; the PromQL goes to the log (and ``query``)."""

    def __init__(self, message: str, query: str = "") -> None:
        super().__init__(message)
        self.query = query


class MetricsClient:
    """Catalog queries against one Prometheus, in one naming dialect."""

    def __init__(self, url: str, dialect: str = "strimzi", timeout: float = 5.0,
                 cache: CacheBackend | None = None, ttl: float = 5, by: str = "broker",
                 authorization: str | None = None, ca_file: str | None = None) -> None:
        """``authorization``: the Authorization header Prometheus asks for (basic auth or a
        bearer token), never part of ``url``, which messages show; ``ca_file``: the CA
        bundle its TLS certificate is checked against (default: the system's). ``url``
        holds the URL as messages and cache keys show it (backend.errors.shown_url: a
        secret in its query masked); requests go to the URL as given."""
        self.url = shown_url(url)
        self.dialect = catalog.dialect(dialect)
        self.timeout, self.by = timeout, by
        self.answers = TtlCache("metrics", ttl, cache)
        self.rules = TtlCache("recorded", RULES_CHECK_SECONDS, cache)
        # no retries: a page asks again on its next refresh, and a dead Prometheus must
        # turn into PrometheusUnavailable within ``timeout``, not after minutes of backoff
        session = requests.Session()
        session.verify = ca_file or True  # credentials go to this Prometheus and no other
        self.prom = PrometheusConnect(url=url, session=session, timeout=timeout,
                                      headers={"Authorization": authorization}
                                      if authorization else None,
                                      retry=Retry(total=0, raise_on_status=False))

    def promql(self, concept: str, window: str = "1m", topics: str = ".+") -> str:
        """The concept's PromQL; the series a Railyard recording rule records for it when
        this Prometheus has one (checked once a minute), else the full expression."""
        recorded = recorded_name(concept, self.by)
        if recorded is not None and self._recorded(recorded):
            return recorded
        return catalog.promql(concept, self.dialect, window=window, by=self.by, topics=topics)

    def _recorded(self, name: str) -> bool:
        """True when ``name`` has series now (its rule is loaded and has run)."""
        def ask() -> bool:
            try:
                return bool(self.prom.custom_query(f"count({name})"))
            except (requests.RequestException, PrometheusApiClientException):
                return False  # the query that follows reports what is wrong
        return self.rules.fetch((self.url, name), ask)

    def instant(self, concept: str, at: datetime | float | None = None,
                window: str = "1m", topics: str = ".+") -> pd.DataFrame:
        """One row per series: label columns, ``value``, ``timestamp`` (UTC)."""
        query = self.promql(concept, window, topics)
        params = {} if at is None else {"time": _epoch(at)}
        return self._answer(("instant", query, params.get("time")), concept, query, False,
                            lambda: self.prom.custom_query(query, params=params))

    def range(self, concept: str, start: datetime | float, end: datetime | float,
              step: str = "15s", window: str = "1m") -> pd.DataFrame:
        """Long format: label columns, ``timestamp``, ``value``; one row per sample."""
        query = self.promql(concept, window)
        s, e = _datetime(start), _datetime(end)
        return self._answer(("range", query, s.timestamp(), e.timestamp(), step), concept,
                            query, True, lambda: self.prom.custom_query_range(query, s, e, step))

    def _answer(self, key: tuple, concept: str, query: str, ranged: bool, fetch):
        """The tidy frame for one query, kept in the metric-answer cache (a metric with no
        series is kept too: asking again within the lifetime would not find it either).
        Frames may be shared between callers: copy before changing one."""
        def compute():
            try:
                return self._frame(concept, query, self._ask(fetch), ranged)
            except MetricMissing as e:
                return e
        answer = self.answers.fetch((self.url, *key), compute)
        if isinstance(answer, MetricMissing):
            raise MetricMissing(str(answer))
        return answer

    def _ask(self, fetch):
        try:
            return fetch()
        except (requests.ConnectionError, requests.Timeout) as e:
            if _read_timeout(e):
                raise PrometheusSlow(f"Prometheus at {self.url} is slow (timed out after "
                                     f"{self.timeout:g} s)") from None
            raise PrometheusUnavailable(f"Prometheus at {self.url} is not answering "
                                        f"({type(e).__name__})") from None
        except PrometheusApiClientException as e:
            denied = _HTTP_DENIED.match(str(e))
            if denied:
                raise PrometheusUnavailable(
                    f"Prometheus at {self.url} refused Railyard (HTTP {denied[1]}): check the "
                    "cluster's prometheus basic_auth or bearer_token") from None
            raise QueryFailed(f"Prometheus refused the query: {str(e).splitlines()[0]}") \
                from None

    def _frame(self, concept: str, query: str, raw: list, ranged: bool) -> pd.DataFrame:
        if not raw:
            what = catalog.concept(concept).help
            log.info("no series for %s: %s", concept, query)
            raise MetricMissing(f"no data yet for {what[0].lower()}{what[1:]}: the brokers "
                                "do not export it, or Prometheus has not scraped them yet",
                                query)
        labels = catalog.label_columns(concept, self.by)
        principals = "user" in labels and "client_id" in labels
        rows = []
        for series in raw:
            tags = {lab: series["metric"].get(lab, "") for lab in labels}
            if principals:  # as Kafka's quota APIs name them, not as the MBean holds them
                tags["user"], tags["client_id"] = principal_of(tags["user"], tags["client_id"])
            samples = series["values"] if ranged else [series["value"]]
            rows += [{**tags, "timestamp": float(t), "value": float(v)} for t, v in samples]
        frame = pd.DataFrame(rows, columns=[*labels, "timestamp", "value"])
        frame["timestamp"] = pd.to_datetime(frame["timestamp"], unit="s", utc=True)
        return frame.sort_values([*labels, "timestamp"], ignore_index=True)


def _read_timeout(e: requests.RequestException) -> bool:
    """Connected, then no answer in time. With retries off, requests reports urllib3's
    read timeout as a ConnectionError wrapping it; a refused or unroutable connection
    (ConnectTimeout included) is not this."""
    if isinstance(e, requests.ReadTimeout):
        return True
    reason = getattr(e.args[0], "reason", None) if e.args else None
    return isinstance(e.args[0] if e.args else None, ReadTimeoutError) \
        or isinstance(reason, ReadTimeoutError)


def _epoch(t: datetime | float) -> float:
    return t.timestamp() if isinstance(t, datetime) else float(t)


def _datetime(t: datetime | float) -> datetime:
    return t if isinstance(t, datetime) else datetime.fromtimestamp(float(t), tz=UTC)
