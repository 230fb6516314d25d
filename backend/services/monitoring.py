"""What the monitoring pages ask: the cluster's guard rails from Prometheus (through the
metrics catalog and client) and from the cluster gateway, over the window a page shows.

Every view runs its queries concurrently (a page's figures arrive in one round trip to
Prometheus' latency, not the sum) and answers figures per concept: one missing metric
greys one figure, never the page. Prometheus unreachable is ``Unavailable`` (a banner).
Configs have no history, so figures read from the gateway (configured throttle rates,
the engine's predicted ETA) are shown for live windows only. The overview's concepts as
plain answers (``overview_now``, ``overview_window``) are what `railyard` tools and the
JSON endpoints print.
"""

from __future__ import annotations

import contextlib
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Protocol

import numpy as np
import pandas as pd

from backend.engines import throttle as throttle_engine
from backend.engines.quota import QuotaBook, burst
from backend.errors import BadInput, Unavailable, shown_url
from backend.metrics import catalog
from backend.metrics.client import (
    MetricMissing,
    MetricsClient,
    MetricsError,
    PrometheusSlow,
    PrometheusUnavailable,
)
from backend.model.reassignment import before_moves, reassignment_from_dict
from backend.model.snapshot import Limits, Snapshot
from backend.services.cluster import ClusterSource, cluster_read, cluster_snapshot

LEADER_RATE = "leader.replication.throttled.rate"  # KIP-73 broker configs
FOLLOWER_RATE = "follower.replication.throttled.rate"
TOP_BROKERS = 12  # per-broker lines drawn on overview charts
# the observed ETA's progress: how far the bytes behind shrank over this long. The copy
# rate cannot stand for it: a moving replica also copies what producers write meanwhile
# (KIP-73: a throttled follower catches up at the throttle less its keep-up writes), so
# the demo's move read 17 min at 1 MB/s copied while it shrank at 0.46 MB/s
PROGRESS_SECONDS = 120.0

_pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="railyard-metrics")
_clients: dict[tuple, MetricsClient] = {}
_lock = threading.Lock()


class Span(Protocol):
    """The time a view covers (components.timerange.Window is one)."""

    start: float
    end: float
    step: float
    refreshing: bool  # a relative window that moves with the clock (live, last N)


def metrics_client(source: ClusterSource) -> MetricsClient:
    """One client per Prometheus and cache, reused: its answers live in the store the
    dashboard configured (in Redis when the dashboard's cache is Redis: every dashboard
    process shares them), or in process when none was handed in."""
    if source.prometheus_url is None:
        raise Unavailable("Prometheus", "no Prometheus configured for this cluster, so "
                          "there are no live metrics or history")
    key = (source.prometheus_url, source.dialect, source.prometheus_timeout,
           source.metrics_ttl, id(source.metrics_cache), source.prometheus_authorization,
           source.prometheus_ca_file)
    with _lock:
        client = _clients.get(key)
        if client is None:
            client = _clients[key] = MetricsClient(
                source.prometheus_url, source.dialect, timeout=source.prometheus_timeout,
                ttl=source.metrics_ttl, cache=source.metrics_cache,
                authorization=source.prometheus_authorization,
                ca_file=source.prometheus_ca_file)
    return client


LIVE_RATE_SECONDS = 60  # a live counter rate's window: Prometheus's rate() over it


def _rate_window(step: float) -> str:
    """Counter rates over at least a minute, and never narrower than two samples."""
    return f"{int(max(LIVE_RATE_SECONDS, 2 * step))}s"


def _fetch(client: MetricsClient, span: Span, kind: str, concept: str, topics: str = ".+"):
    """kind: 'now' (at the window's end), 'before' (PROGRESS_SECONDS earlier), 'range' (a
    series over it), 'over' (one answer for the whole window: the concept's *_over_time
    across its length) or 'steps' (a series whose every point is the concept's
    *_over_time across the step ending there: a KIP-599 throttle lasts seconds, and a
    point sampled every step would miss it)."""
    try:
        if kind in ("now", "before"):
            at = span.end - (PROGRESS_SECONDS if kind == "before" else 0.0)
            return client.instant(concept, at=at, window=_rate_window(span.step),
                                  topics=topics)
        if kind == "over":
            return client.instant(concept, at=span.end,
                                  window=f"{max(int(span.end - span.start), 1)}s")
        window = f"{int(span.step)}s" if kind == "steps" else _rate_window(span.step)
        return client.range(concept, span.start, span.end, step=f"{int(span.step)}s",
                            window=window)
    except MetricsError as e:
        return e


def _query(source: ClusterSource, span: Span, jobs: dict[str, tuple[str, ...]]) -> dict:
    """{name: (kind 'now'|'range', concept[, topics regex])} -> {name: frame or
    MetricsError}, concurrently."""
    client = metrics_client(source)
    futures = {name: _pool.submit(_fetch, client, span, *job) for name, job in jobs.items()}
    got = {name: f.result() for name, f in futures.items()}
    down = [v for v in got.values() if isinstance(v, PrometheusUnavailable)]
    if down and len(down) == len(got):
        if all(isinstance(v, PrometheusSlow) for v in down):
            raise Unavailable(f"Prometheus at {client.url}", f"slow (timed out after "
                              f"{client.timeout:g} s); live metrics are not shown")
        raise Unavailable(f"Prometheus at {client.url}", "unreachable (no answer); live "
                          "metrics and history are not shown")
    return got


def _figure(value: float | None, error: MetricsError | None = None,
            detail: list | None = None) -> dict:
    return {"value": value, "error": None if error is None else str(error),
            "why": None if error is None else short_reason(error),
            "detail": detail or []}


def _by_broker(frame) -> dict[str, float]:
    if isinstance(frame, MetricsError):
        return {}
    return dict(zip(frame["broker"], frame["value"].astype(float), strict=True))


def _total(frame) -> dict:
    if isinstance(frame, MetricsError):
        return _figure(None, frame)
    return _figure(float(frame["value"].sum()))


def _id_order(label: str):
    return (0, int(label)) if str(label).isdigit() else (1, str(label))


def series(frame, label: str | None, name: str | None = None, drop_zero: bool = False,
           only: str | None = None) -> pd.DataFrame | MetricsError:
    """A range answer as chart rows (time, value, series), one series per ``label`` value,
    or one series ``name`` summed over all labels."""
    if isinstance(frame, MetricsError):
        return frame
    if only is not None:
        frame = frame[frame[label] == only]
    if label is None or name is not None:
        out = frame.groupby("timestamp", as_index=False)["value"].sum()
        out["series"] = name or "total"
    else:
        out = frame[[label, "timestamp", "value"]].rename(columns={label: "series"})
        if drop_zero:
            peak = out.groupby("series")["value"].transform("max")
            out = out[peak > 0]
        out = out.assign(series=out["series"].map(lambda s: f"{s}"))
    return out.rename(columns={"timestamp": "time"})[["time", "value", "series"]]


def _stack(*parts) -> pd.DataFrame | MetricsError:
    """Several chart frames as one; the first error if none answered."""
    ok = [p for p in parts if not isinstance(p, MetricsError)]
    if not ok:
        return parts[0]
    return pd.concat(ok, ignore_index=True)


# ---- overview --------------------------------------------------------------------------

def health(source: ClusterSource, span: Span) -> dict:
    """The guard rails Prometheus knows at the end of the window, and over it."""
    got = _query(source, span, {
        "urp": ("now", "under_replicated_per_broker"),
        "umi": ("now", "under_min_isr_per_broker"),
        "offline": ("now", "offline_partitions"),
        "reassigning": ("now", "reassigning_per_broker"),
        "up": ("now", "brokers_up"),
        "leader": ("now", "leader_throttled_rate"),
        "follower": ("now", "follower_throttled_rate"),
        "tokens_low": ("over", "mutation_tokens_low"),
        "throttle_high": ("over", "mutation_throttle_time_high"),
        # each point the most within its step: an outage falls between a week's points
        "urp_t": ("steps", "under_replicated_peak"),
        "umi_t": ("steps", "under_min_isr_peak"),
        "offline_t": ("steps", "offline_partitions_peak"),
        "reassigning_t": ("steps", "reassigning_peak"),
        "partitions_t": ("range", "partitions_per_broker"),
    })
    per_broker = series(got["partitions_t"], "broker")
    up = got["up"]
    down = _figure(None, up) if isinstance(up, MetricsError) else _figure(
        float((up["value"] == 0).sum()),
        detail=sorted(up.loc[up["value"] == 0, "broker"].tolist(), key=_id_order))
    return {
        "figures": {
            "under_replicated": _total(got["urp"]),
            "under_min_isr": _total(got["umi"]),
            "offline": _total(got["offline"]),
            "reassigning": _total(got["reassigning"]),
            "brokers_down": down,
            "throttles": throttles_in_force(source, span, got["leader"], got["follower"]),
            "throttled_principals": _throttled_principals(got["tokens_low"],
                                                          got["throttle_high"]),
        },
        "health_series": _stack(series(got["urp_t"], None, "under-replicated"),
                                series(got["umi_t"], None, "under min ISR"),
                                series(got["offline_t"], None, "offline"),
                                series(got["reassigning_t"], None, "reassigning")),
        "partitions_series": fullest(per_broker, TOP_BROKERS),
        "partitions_shown": None if isinstance(per_broker, MetricsError)
        or per_broker["series"].nunique() <= TOP_BROKERS
        else f"the {TOP_BROKERS} fullest of {per_broker['series'].nunique()} brokers",
    }


HISTORY_LOOKBACK = "3650d"  # how far back "where is this cluster's data" looks


def data_ends_before(source: ClusterSource, span: Span) -> float | None:
    """When the cluster's metrics end before the window does (a recorded incident viewed
    as "last 6 h", an absolute window ending in the future, brokers Prometheus no longer
    scrapes): the time of the newest sample, so the page can say why the figures at the
    window's end are empty and offer to go there. None when Prometheus scraped the
    brokers at the window's end (within its 5 min lookback), or cannot tell. One cheap
    instant query first (the Overview asks the same); only when it is empty, the window
    (every 5 min), then the history before it (an hourly pass, then by the minute)."""
    if source.prometheus_url is None:
        return None
    client = metrics_client(source)
    length = max(int(span.end - span.start), 60)

    def newest(at: float, window: str) -> float:
        return float(client.instant("newest_sample", at=at, window=window)["value"].max())

    try:
        client.instant("brokers_up", at=span.end)
        return None  # scraped at the window's end
    except MetricMissing:
        pass
    except MetricsError:
        return None
    try:
        # within the window: every sample is under 5 min before a point of a 5 min grid,
        # so Prometheus' 5 min lookback finds the newest (a year is 105k points)
        return newest(span.end, f"{length}s:5m")
    except MetricMissing:
        pass
    except MetricsError:
        return None
    try:
        # at the minute, so asks within the metrics cache's lifetime share one answer
        near = newest(span.end // 60 * 60, f"{HISTORY_LOOKBACK}:1h") + 3600
        return newest(near, "2h:1m")  # the last sample is within the hour
    except MetricsError:
        return None


def _ended(source: ClusterSource, span: Span, error: MetricsError) -> str:
    """Why a figure at the window's end is missing: where the cluster's metrics end, when
    they end before the window does, else the metric's own error."""
    end = data_ends_before(source, span) if isinstance(error, MetricMissing) else None
    if end is None:
        return str(error)
    return f"the cluster's metrics end at {datetime.fromtimestamp(end, UTC):%Y-%m-%d %H:%M} UTC"


def partitions_at(source: ClusterSource, span: Span) -> dict:
    """What Prometheus saw at the window's end: replicas per broker (broker label -> count)
    and partitions in the cluster. Raises Unavailable when it cannot say."""
    got = _query(source, span, {"brokers": ("now", "partitions_per_broker"),
                                "partitions": ("now", "cluster_partitions")})
    if isinstance(got["brokers"], MetricsError):
        raise Unavailable(f"Prometheus at {shown_url(source.prometheus_url)}",
                          "no partition counts "
                          f"at the end of the window ({_ended(source, span, got['brokers'])})")
    parts = got["partitions"]
    return {"brokers": {b: int(v) for b, v in _by_broker(got["brokers"]).items()},
            "partitions": None if isinstance(parts, MetricsError)
            else int(parts["value"].sum())}


def fullest(frame, n: int):
    """The ``n`` series with the highest last value (a chart of 100 brokers' lines is
    unreadable and slow to draw; the fullest are the ones near the limit)."""
    if isinstance(frame, MetricsError) or frame["series"].nunique() <= n:
        return frame
    last = frame.sort_values("time").groupby("series")["value"].last()
    return frame[frame["series"].isin(last.nlargest(n).index)]


def throttles_in_force(source: ClusterSource, span: Span, leader, follower) -> dict:
    """Live with a gateway: brokers with a KIP-73 rate configured. Otherwise (or for a past
    window): brokers fetching throttled bytes, from Prometheus. The follower side only:
    Kafka's leader side records every follower fetch's response overhead, throttled
    partitions or not (KafkaApis's sizeOfThrottledPartitions), so every broker that leads
    a replicated partition reads above 0 there. No follower series anywhere (Kafka makes
    the sensor on the first throttled bytes) is 0 brokers when the leader side answered."""
    rates = configured_rates(source) if span.refreshing and source.gateway is not None \
        else None
    if rates is not None:
        hot = sorted((b for b, r in rates.items() if r["leader"] or r["follower"]), key=int)
        return {**_figure(float(len(hot)), detail=hot), "basis": "configured"}
    if isinstance(leader, MetricsError) and isinstance(follower, MetricsError):
        return {**_figure(None, leader), "basis": "observed"}
    hot = sorted((b for b, v in _by_broker(follower).items() if v > 0), key=_id_order)
    return {**_figure(float(len(hot)), detail=hot), "basis": "observed"}


def _throttled_principals(tokens_low, throttle_high) -> dict:
    """Principals throttled at any time in the window: their tokens went below zero or
    Kafka told them to back off. A KIP-599 throttle lasts seconds, so the state at the
    window's end alone misses nearly every one."""
    if isinstance(tokens_low, MetricsError) and isinstance(throttle_high, MetricsError):
        return _figure(None, tokens_low)
    names = set()
    for frame, hot in ((tokens_low, lambda v: v < 0), (throttle_high, lambda v: v > 0)):
        if not isinstance(frame, MetricsError):
            rows = frame[hot(frame["value"])]
            names |= {principal(u, c) for u, c in zip(rows["user"], rows["client_id"],
                                                       strict=True)}
    return _figure(float(len(names)), detail=sorted(names))


def principal(user: str, client_id: str) -> str:
    """How a quota bucket is named on the pages: user, user/client or /client."""
    if user and client_id:
        return f"{user}/{client_id}"
    return user or f"/{client_id}"


# ---- brokers ---------------------------------------------------------------------------

def broker_figures(source: ClusterSource, span: Span) -> dict:
    """Per broker at the end of the window: bytes in, replica lag (MaxLag), up."""
    got = _query(source, span, {"bytes_in": ("now", "bytes_in_per_broker"),
                                "lag": ("now", "max_lag_per_broker"),
                                "up": ("now", "brokers_up")})
    return {name: _by_broker(frame) for name, frame in got.items()} | {
        "errors": [str(v) for v in got.values() if isinstance(v, MetricsError)]}


BROKER_SERIES = {  # chart key -> (concept, what the chart shows)
    "traffic": ("bytes_in_per_broker", "bytes in"),
    "replication": ("replication_bytes_in_per_broker", "replication bytes in"),
    "reassignment": ("reassignment_bytes_in_per_broker", "reassignment bytes in"),
    "lag": ("max_lag_per_broker", "max lag"),
    "partitions": ("partitions_per_broker", "partitions"),
}


def broker_series(source: ClusterSource, broker: str, span: Span) -> dict:
    """One broker over the window: bytes in (client, replication, reassignment), MaxLag,
    partitions."""
    got = _query(source, span, {k: ("range", c) for k, (c, _) in BROKER_SERIES.items()})
    return {
        "bytes": _stack(*(series(got[k], "broker", BROKER_SERIES[k][1], only=broker)
                          for k in ("traffic", "replication", "reassignment"))),
        "lag": series(got["lag"], "broker", "max lag", only=broker),
        "partitions": series(got["partitions"], "broker", "partitions", only=broker),
    }


# ---- throttles (KIP-73) ----------------------------------------------------------------

def throttles(source: ClusterSource, span: Span) -> dict:
    """Throttled rates against the configured rates, replica lag, reassignment bytes, and
    the ETA from observed progress beside the engine's prediction."""
    live = span.refreshing and source.gateway is not None
    moves = in_flight(source) if live else None
    got = _query(source, span, {
        "leader": ("now", "leader_throttled_rate"),
        "follower": ("now", "follower_throttled_rate"),
        "reassign": ("now", "reassignment_bytes_in_per_broker"),
        "reassigning": ("now", "reassigning_per_broker"),
        "leader_t": ("range", "leader_throttled_rate"),
        "follower_t": ("range", "follower_throttled_rate"),
        "lag_t": ("range", "replica_lag_sum_per_broker"),
        "reassign_t": ("range", "reassignment_bytes_in_per_broker"),
    } | _behind_job(moves))
    if not isinstance(moves, list):
        got["behind"] = _behind_everywhere(source, span, got["reassigning"])
    configured = configured_rates(source) if live else None
    leader, follower = _by_broker(got["leader"]), _by_broker(got["follower"])
    idle = _idle_throttles(configured, leader, follower)
    for side, rates in (("leader", leader), ("follower", follower)):
        rates.update(dict.fromkeys(idle[side], 0.0))
        if idle[side] and isinstance(got[side], MetricMissing):
            got[side] = None  # no series anywhere: every configured throttle is idle
    brokers = sorted(set(leader) | set(follower) | set(configured or {}), key=_id_order)
    lead_t = series(got["leader_t"], "broker", drop_zero=True)
    foll_t = series(got["follower_t"], "broker", drop_zero=True)
    eta = observed_eta(_moving_only(got.get("behind"), moves), got["reassign"],
                       got["reassigning"],
                       _moving_only(got["before"], moves) if "before" in got else None)
    return {
        "rates": {"brokers": brokers,
                  "leader": [leader.get(b) for b in brokers],
                  "follower": [follower.get(b) for b in brokers],
                  "configured": None if configured is None else {
                      side: [configured.get(b, {}).get(side) for b in brokers]
                      for side in ("leader", "follower")},
                  "error": next((str(v) for v in (got["leader"], got["follower"])
                                 if isinstance(v, MetricsError)), None)},
        "rates_series": _stack(_prefixed(lead_t, "leader"), _prefixed(foll_t, "follower")),
        "lag_series": series(got["lag_t"], "broker", drop_zero=True),
        "reassign_series": series(got["reassign_t"], "broker", drop_zero=True),
        "observed_eta": eta,
        "predicted_eta": predicted_eta(source, got.get("behind")) if live else None,
    }


def _idle_throttles(configured: dict[str, dict] | None, leader: dict[str, float],
                    follower: dict[str, float]) -> dict[str, list[str]]:
    """Brokers with a KIP-73 rate configured whose byte-rate has no series: Kafka creates a
    side's sensor on its first record (the follower side's on a broker's first throttled
    bytes; the leader side's on its first follower fetch, whose response overhead it
    records throttled or not) and drops it after an hour without any (core
    .../ReplicationQuotaManager.scala), so a throttle that is set but idle moves 0 bytes/s
    rather than having no data."""
    out: dict[str, list[str]] = {"leader": [], "follower": []}
    for b, rates in (configured or {}).items():
        for side, seen in (("leader", leader), ("follower", follower)):
            if rates.get(side) and b not in seen:
                out[side].append(b)
    return out


def in_flight(source: ClusterSource) -> list[dict] | Unavailable:
    """The reassignments in flight as the gateway lists them (kept with the cluster
    reads), or why the gateway could not say."""
    try:
        return cluster_read(source, "reassignments", source.gateway.list_reassignments)
    except Unavailable as e:
        return e


def _behind_job(moves) -> dict[str, tuple[str, ...]]:
    """Bytes behind over the partitions in flight when the gateway lists them, now and
    PROGRESS_SECONDS before: Prometheus reads only their topics' log sizes (none when
    nothing moves)."""
    if not isinstance(moves, list) or not moves:
        return {}
    topics = catalog.topic_regex(m["topic"] for m in moves)
    return {"behind": ("now", "replica_bytes_behind_in", topics),
            "before": ("before", "replica_bytes_behind_in", topics)}


def _behind_everywhere(source: ClusterSource, span: Span, reassigning):
    """Bytes behind over every partition (the full join: a minute at 200k partitions), for
    past windows and clusters without a gateway; asked only when Prometheus counts
    partitions being reassigned at the window's end (otherwise there is no ETA to give)."""
    if isinstance(reassigning, MetricsError) or not reassigning["value"].sum():
        return None
    return _fetch(metrics_client(source), span, "now", "replica_bytes_behind")


def _moving_only(behind, moves):
    """Bytes behind of the partitions in flight only (their topics' other partitions are
    not moving); none when nothing moves."""
    if behind is None:
        return pd.DataFrame({"value": []})
    if not isinstance(moves, list) or isinstance(behind, MetricsError):
        return behind
    moving = {(m["topic"], str(m["partition"])) for m in moves}
    keep = [pair in moving for pair in zip(behind["topic"], behind["partition"], strict=True)]
    return behind[keep]


def _prefixed(frame, prefix: str):
    if isinstance(frame, MetricsError):
        return frame
    return frame.assign(series=prefix + " " + frame["series"])


def observed_eta(behind, rate, reassigning, before=None) -> dict:
    """Remaining bytes over the observed progress. With ``before`` (each moving replica's
    bytes behind PROGRESS_SECONDS earlier: the partitions in flight) the progress is how
    fast the replicas both answers name got closer to their leaders' logs; without it (a
    past window: every partition's bytes behind is one sum, whose scrape-to-scrape noise
    over 30k partitions is larger than two minutes' progress) it is the reassignment
    copy rate, which also carries new writes: then the ETA is a lower bound (``bound``;
    the bytes behind are then every partition's, not only the moving ones').
    How many partitions move is its own answer: a slow bytes-behind query (a join over
    every log-size series) does not hide the count; when the count itself is missing,
    ``moving_why`` says in a word or two why (Prometheus slow, unreachable, no data)."""
    if isinstance(reassigning, MetricsError):
        moving, why = None, short_reason(reassigning)
    else:
        moving, why = int(reassigning["value"].sum()), None
    errors = [v for v in (reassigning, behind, rate) if isinstance(v, MetricsError)]
    if errors:
        return {"moving": moving, "moving_why": why, "eta_seconds": None,
                "error": str(errors[0]), "why": short_reason(errors[0])}
    remaining = float(behind["value"].sum())
    shrinking = None if before is None else _shrinking(behind, before)
    per_second = float(rate["value"].sum()) if before is None else shrinking
    # nothing behind while partitions move is no ETA of 0 s: a new replica's log size is
    # in Prometheus only from its first scrape, and a replica that caught up may still be
    # joining the ISR
    eta = remaining / per_second if moving and remaining > 0 and (per_second or 0) > 0 \
        else None
    return {"moving": moving, "moving_why": None, "remaining_bytes": remaining,
            "rate": per_second, "eta_seconds": eta, "bound": before is None,
            "measuring": before is not None and shrinking is None,
            "error": None, "why": None}


def _shrinking(behind: pd.DataFrame, before) -> float | None:
    """Bytes/s by which the moving replicas got closer to their leaders' logs over the
    last PROGRESS_SECONDS, over those both answers name (a replica added since has no
    earlier figure); None when there are none yet, or the earlier answer is missing."""
    if isinstance(before, MetricsError):
        return None
    keys = [c for c in behind.columns if c not in ("value", "timestamp")]
    both = behind.merge(before, on=keys, suffixes=("", "_before"))
    if both.empty:
        return None
    return float((both["value_before"] - both["value"]).sum()) / PROGRESS_SECONDS


def short_reason(error: MetricsError) -> str:
    """A card's value when its metric could not be read: which of the failures it was."""
    if isinstance(error, PrometheusSlow):
        return "Prometheus slow"
    if isinstance(error, PrometheusUnavailable):
        return "Prometheus unreachable"
    if isinstance(error, MetricMissing):
        return "no data"
    return "query refused"


def reassignment_rates(source: ClusterSource) -> dict[str, float] | MetricsError:
    """Each broker's reassignment bytes received per second now: Kafka's
    ReassignmentBytesInPerSec meter (KIP-542, kafka.server:type=BrokerTopicMetrics), the
    catalog's ``reassignment_bytes_in_per_broker`` that /throttles charts, over the rate
    window of a live view. Counted while a partition copies, not when it finishes (what
    the plan page's live copy rate reads: services.execution.progress). Why Prometheus
    could not say is the MetricsError (``short_reason`` words it); no Prometheus
    configured is ``Unavailable``, as for every live view."""
    client = metrics_client(source)
    try:
        return _by_broker(client.instant("reassignment_bytes_in_per_broker",
                                         window=_rate_window(0.0)))
    except MetricsError as e:
        return e


def topic_write_rates(source: ClusterSource, topics: list[str]) -> dict[str, float] | MetricsError:
    """Produce bytes/s into each of ``topics`` now: Kafka's per-topic BytesInPerSec
    (kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec,topic=...) summed over the
    brokers, over a live view's rate window. A topic absent from the answer has no series
    (no write since its brokers started, or an exporter that drops per-topic metrics):
    unknown, not 0. No Prometheus configured is ``Unavailable``."""
    client = metrics_client(source)
    try:
        frame = client.instant("bytes_in_of_topics", window=_rate_window(0.0),
                               topics=catalog.topic_regex(topics))
    except MetricsError as e:
        return e
    return dict(zip(frame["topic"], frame["value"].astype(float), strict=True))


def configured_rates(source: ClusterSource) -> dict[str, dict] | None:
    """broker id -> {leader, follower} throttled rate configured (None when unset); None
    when the gateway does not answer (the pages then show observed rates only)."""
    def read():
        gw = source.gateway
        out = {}
        for b in gw.describe_cluster()["brokers"]:
            cfg = gw.describe_configs("broker", str(b["id"]))["configs"]
            out[str(b["id"])] = {k: None if cfg.get(key) is None else float(cfg[key])
                                 for k, key in (("leader", LEADER_RATE),
                                                ("follower", FOLLOWER_RATE))}
        return out
    try:
        return cluster_read(source, "configured_rates", read)
    except Unavailable:
        return None


def predicted_eta(source: ClusterSource,
                  behind: pd.DataFrame | MetricsError | None = None) -> dict:
    """The throttle engine's ETA for the reassignments in flight, each broker at its own
    configured rates (KIP-73: a leader's rate bounds what it sends, a follower's what it
    receives; the slowest broker paces). From now when ``behind`` (replica_bytes_behind_in:
    each replica's bytes behind) answers, what each new replica still lacks; otherwise
    from the moves' start, at the logs' current sizes (``from_now`` says which)."""
    moves = in_flight(source)
    if isinstance(moves, Unavailable):
        return {"moving": None, "eta_seconds": None, "note": str(moves)}
    if not moves:
        return {"moving": 0, "eta_seconds": None, "note": "no reassignment in progress"}
    rates = configured_rates(source) or {}
    if not any(r for b in rates.values() for r in b.values()):
        return {"moving": len(moves), "eta_seconds": None,
                "note": "no replication throttle configured: moves run at network speed"}
    snap = cluster_snapshot(source)
    original, plan = _in_flight(snap, moves)
    try:
        copies = throttle_engine.proposed_moves(original, plan)
    except BadInput as e:
        return {"moving": len(moves), "eta_seconds": None, "note": str(e)}
    left = _left_to_copy(original, copies, behind)
    load = throttle_engine.broker_load(original, copies, left)
    ids = [str(b) for b in original.broker_ids]
    leader, follower = (np.array([rates.get(b, {}).get(side) or np.nan for b in ids])
                        for side in ("leader", "follower"))
    eta = throttle_engine.eta_at_rates(load, leader, follower)
    # the rates that pace these moves: of the leaders sending and the brokers receiving
    paced = np.concatenate((leader[load.bytes_out > 0], follower[load.bytes_in > 0]))
    paced = paced[~np.isnan(paced)]
    return {"moving": len(moves), "eta_seconds": eta if np.isfinite(eta) else None,
            "throttle": float(paced.min()) if len(paced) else None, "note": None,
            "from_now": left is not None,
            "diagnosis": None if np.isfinite(eta) else _never(load, leader, follower, ids)}


NAMED = 4  # brokers a "never" names before "and N more"


def _never(load: throttle_engine.BrokerLoad, leader: np.ndarray, follower: np.ndarray,
           ids: list[str]) -> str:
    """Which brokers never catch up, and by how much: each at a rate at or below the
    writes it must keep up with (KIP-73). A burst of writes counts while it is inside the
    rate's window, so an operator needs the two figures to tell a burst from a low rate."""
    into, out = throttle_engine.broker_etas(load, leader, follower)
    said = []
    for side, rate, keep, eta in (("follower", follower, load.keep_up_in, into),
                                  ("leader", leader, load.keep_up_out, out)):
        said += [f"broker {ids[i]}'s {side} rate {rate[i]:,.0f} B/s is at or below the "
                 f"{keep[i]:,.0f} B/s written to its moving partitions"
                 for i in np.flatnonzero(np.isinf(eta))]
    more = f"; and {len(said) - NAMED} more" if len(said) > NAMED else ""
    return ("; ".join(said[:NAMED]) + more + " (writes: the topics' produce bytes/s as the "
            "cluster read took them; a burst stays in Prometheus' one-minute rate for a "
            "minute)")


def _left_to_copy(original: Snapshot, copies: throttle_engine.Moves,
                  behind: pd.DataFrame | MetricsError | None) -> np.ndarray | None:
    """Bytes each destination of the moves in flight still lacks, in ``copies``'
    destination order: its replica's bytes behind, or the whole log where Prometheus has
    no figure for it yet (a new replica's log size is scraped only once it exists). None
    when Prometheus gave no per-replica answer."""
    keys = ["topic", "partition", "broker"]
    if not isinstance(behind, pd.DataFrame) or not set(keys) <= set(behind.columns):
        return None
    rows = np.repeat(copies.rows, copies.n_destinations)
    wanted = pd.DataFrame({"topic": original.topic_names[original.part_topic[rows]],
                           "partition": original.part_id[rows].astype(str),
                           "broker": original.broker_ids[copies.dst_brokers].astype(str)})
    known = behind.groupby(keys, as_index=False)["value"].max()
    seen = wanted.merge(known, on=keys, how="left")["value"].to_numpy(np.float64)
    return np.where(np.isnan(seen), original.part_size[rows], seen)


def _in_flight(snap: Snapshot, moves: list[dict]):
    """The assignment before the moves and the moves' plan (KIP-455: replicas = target +
    original - target; adding replicas are new, removing ones go at completion)."""
    original = before_moves(snap, moves)
    plan = {"version": 1, "partitions": [
        {"topic": m["topic"], "partition": m["partition"],
         "replicas": [b for b in m["replicas"] if b not in m["removing"]]} for m in moves]}
    return original, reassignment_from_dict(plan, original, "reassignments in flight")


# ---- quotas (KIP-599) ------------------------------------------------------------------

def quotas(source: ClusterSource, span: Span) -> dict:
    """Tokens per principal against its burst, mutation rate and throttle time over the
    window (the fewest tokens and longest throttle time in each step), and who was
    throttled in it."""
    got = _query(source, span, {
        "tokens": ("now", "mutation_tokens"),
        "tokens_low": ("over", "mutation_tokens_low"),
        "throttle_high": ("over", "mutation_throttle_time_high"),
        "tokens_t": ("steps", "mutation_tokens_low"),
        "rate_t": ("range", "mutation_rate"),
        "throttle_t": ("steps", "mutation_throttle_time_high"),
    })
    tokens = got["tokens"]
    configured = _configured_quotas(source)
    now = []
    if not isinstance(tokens, MetricsError):
        bursts = principal_bursts(source, tokens, configured)
        now = [{"principal": principal(u, c), "tokens": float(v), "burst": b}
               for (u, c, v), b in zip(tokens[["user", "client_id", "value"]].itertuples(
                   index=False, name=None), bursts, strict=True)]
    return {
        "now": now,
        "now_error": str(tokens) if isinstance(tokens, MetricsError) else None,
        # quotas the cluster has (None: no gateway, or it did not answer): with none, Kafka
        # makes no mutation sensors (ControllerMutationQuotaManager.quotasEnabled), so
        # every chart here stays empty however long Prometheus scrapes
        "quotas_set": _quotas_set(configured),
        "throttled": _throttled_principals(got["tokens_low"], got["throttle_high"]),
        "tokens_series": _principal_series(got["tokens_t"]),
        "rate_series": _principal_series(got["rate_t"]),
        "throttle_series": _principal_series(got["throttle_t"]),
    }


def _configured_quotas(source: ClusterSource) -> dict | None:
    """{(user, client_id): controller_mutation_rate} as the gateway describes the
    cluster's quotas; None when there is no gateway or it does not answer."""
    if source.gateway is None:
        return None
    with contextlib.suppress(Unavailable):
        return {(q["user"], q["client_id"]): q["controller_mutation_rate"]
                for q in cluster_read(source, "client_quotas",
                                      source.gateway.describe_client_quotas)}
    return None


_UNREAD = object()  # principal_bursts reads the quotas itself unless given them


def principal_bursts(source: ClusterSource, frame: pd.DataFrame,
                     quotas: dict | object | None = _UNREAD) -> list[float | None]:
    """Each bucket's burst (rate x window.num x window seconds) from the quotas the gateway
    describes (``quotas``, as _configured_quotas read them, None when it did not answer:
    a gateway that timed out is not asked again), resolved as Kafka does; the config's
    default rate when there is no gateway or it does not answer."""
    if quotas is _UNREAD:
        quotas = _configured_quotas(source)
    if quotas is None:
        quotas = {} if source.default_mutation_rate is None else {
            ("<default>", None): source.default_mutation_rate}
    book = QuotaBook(quotas)
    out = []
    for user, client_id in zip(frame["user"], frame["client_id"], strict=True):
        rate, _ = book.quota_limit((user, client_id))
        out.append(None if rate is None else burst(rate, source.quota_window_num,
                                                   source.quota_window_seconds))
    return out


def _principal_series(frame) -> pd.DataFrame | MetricsError:
    if isinstance(frame, MetricsError):
        return frame
    named = frame.assign(principal=[principal(u, c) for u, c in zip(
        frame["user"], frame["client_id"], strict=True)])
    return series(named, "principal")


# ---- the overview concepts as plain answers -------------------------------------------

def _answer(concept: str, fetch) -> dict:
    c = catalog.concept(concept)
    try:
        frame: pd.DataFrame = fetch()
    except MetricsError as e:
        return {"ok": False, "error": type(e).__name__, "message": str(e), "unit": c.unit}
    return {"ok": True, "unit": c.unit, "help": c.help, "frame": frame}


def overview_now(client: MetricsClient, limits: Limits | None = None,
                 at: datetime | float | None = None,
                 concepts: tuple[str, ...] = catalog.OVERVIEW) -> dict:
    """The overview concepts at one instant, plus partition headroom under the limits."""
    out = {name: _answer(name, lambda n=name: client.instant(n, at=at)) for name in concepts}
    parts = out.get("partitions_per_broker")
    if limits is not None and limits.max_broker_partitions is not None and parts and parts["ok"]:
        frame = parts["frame"].copy()
        frame["limit"] = limits.max_broker_partitions
        frame["headroom"] = frame["limit"] - frame["value"]
        frame["over_limit"] = frame["headroom"] < 0
        out["partition_headroom"] = {"ok": True, "unit": "replicas", "frame": frame}
    return out


def overview_window(client: MetricsClient, start: datetime | float, end: datetime | float,
                    step: str = "15s", concepts: tuple[str, ...] = catalog.OVERVIEW) -> dict:
    """The overview concepts as time series over [start, end]."""
    return {name: _answer(name, lambda n=name: client.range(n, start, end, step))
            for name in concepts}


def to_json(answers: dict) -> dict:
    """The same answers with frames as records (for the CLI and JSON endpoints)."""
    out = {}
    for name, a in answers.items():
        a = dict(a)
        if "frame" in a:
            f = a.pop("frame").copy()
            f["timestamp"] = f["timestamp"].map(lambda t: t.isoformat())
            a["rows"] = f.to_dict(orient="records")
        out[name] = a
    return out


def quotas_set(source: ClusterSource) -> int | None:
    """How many controller_mutation_rate quotas the cluster has (None: no gateway, or it
    did not answer): ``quotas``' quotas_set, from one (cached) gateway read and no
    Prometheus query, for the Overview's throttled-principals card. With none, Kafka makes
    no mutation sensors (ControllerMutationQuotaManager), so "no data" is no scrape gap."""
    return _quotas_set(_configured_quotas(source))


def _quotas_set(configured: dict | None) -> int | None:
    return None if configured is None else sum(1 for r in configured.values() if r)
