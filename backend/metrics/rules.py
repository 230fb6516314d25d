"""Prometheus alerting rules for the guard rails, built from the metrics catalog.

One rule group per cluster and naming dialect, so every expression is a catalog query
(the same PromQL the dashboard runs). Every alert says what to do and links the dashboard
page that shows it, over a window that covers the alert. Rules:

- partitions per broker (and replicas in the cluster) near max.broker.partitions
  (max.partitions): critical from the config's near_limit_ratio (the share the dashboard
  colours "near"), a warning one tenth of the limit before it (80% and 90% by default);
- predict_linear over the last 7 days reaching a limit within 14 days;
- a replication throttle left behind: throttled replication traffic while no
  reassignment is in flight, for 10 minutes (a throttled-replica list still names
  partitions, so their followers' keep-up traffic is throttled);
- follower lag growing under a throttle during a reassignment, for 15 minutes (writes
  outpace the throttle, KIP-73's keep-up rule: the move cannot finish);
- a principal's controller mutation throttle time above zero for 5 minutes (KIP-599).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from backend.metrics import catalog
from backend.model.snapshot import NEAR_LIMIT_RATIO, Limits

TREND_WINDOW = "7d"  # history predict_linear fits
LAG_WINDOW = "10m"
WARNING_LEAD = 0.1  # the warning fires this share of the limit before "near": time to plan


@dataclass(frozen=True)
class AlertTarget:
    """A cluster whose Prometheus loads the rules: its limits, dialect and dashboard."""

    cluster: str
    limits: Limits
    dialect: str = "strimzi"
    by: str = "broker"  # the label naming a broker in the scrape config
    dashboard_url: str = "http://127.0.0.1:8050"
    near_limit_ratio: float = NEAR_LIMIT_RATIO  # the config's: from which share it is "near"


def limit_levels(near_limit_ratio: float) -> tuple[tuple[float, str], ...]:
    """(share of a limit, severity) of the limit alerts and of Grafana's thresholds: the
    dashboard's "near" is critical, and a warning comes WARNING_LEAD of the limit earlier."""
    return ((round(near_limit_ratio - WARNING_LEAD, 4), "warning"),
            (near_limit_ratio, "critical"))


PAGE_WINDOW = {"capacity": "window", "throttles": "range", "quotas": "range"}  # URL key


def link(t: AlertTarget, page: str, window: str) -> str:
    """The dashboard page showing the alert, over the last ``window`` when opened (a time
    range for monitoring pages, days of history for /capacity)."""
    query = urlencode({"cluster": t.cluster, PAGE_WINDOW[page]: window})
    return f"{t.dashboard_url.rstrip('/')}/{page}?{query}"


def _alert(t: AlertTarget, name: str, expr: str, duration: str, severity: str, summary: str,
           action: str, page: str, window: str) -> dict:
    return {"alert": name, "expr": expr, "for": duration,
            "labels": {"severity": severity, "cluster": t.cluster},
            "annotations": {"summary": summary, "action": action,
                            "dashboard": link(t, page, window)}}


def rules(t: AlertTarget) -> list[dict]:
    """Every guard-rail alert for one cluster in its dialect."""
    def q(concept: str, window: str = "1m") -> str:
        return catalog.promql(concept, t.dialect, window=window, by=t.by)

    broker = f"{{{{ $labels.{t.by} }}}}"
    mbp, mp = t.limits.max_broker_partitions, t.limits.max_partitions
    out = []
    for share, severity in limit_levels(t.near_limit_ratio):
        pct = f"{share * 100:g}"
        if mbp is not None:
            out.append(_alert(
                t, f"RailyardBrokerPartitionsAbove{pct}Percent",
                f"{q('partitions_per_broker')} > {share} * {mbp}", "5m", severity,
                f"Broker {broker} hosts over {pct}% of max.broker.partitions={mbp}",
                "At the limit Kafka refuses new topics and partitions on this broker "
                "(KIP-578): move replicas off it (railyard reassign, goal limits) or add "
                "brokers; the capacity page says when each limit is reached.",
                "capacity", "30"))
        if mp is not None:
            out.append(_alert(
                t, f"RailyardClusterReplicasAbove{pct}Percent",
                f"{q('cluster_replicas')} > {share} * {mp}", "5m", severity,
                f"The cluster hosts over {pct}% of max.partitions={mp} replicas",
                "At the limit Kafka refuses every new topic and partition (KIP-578): delete "
                "unused topics or raise max.partitions; the capacity page says when.",
                "capacity", "30"))
    if mbp is not None:
        out.append(_alert(
            t, "RailyardBrokerPartitionsLimitWithin14Days",
            f"{q('partitions_per_broker_in_14d', TREND_WINDOW)} > {mbp}", "1h", "warning",
            f"Broker {broker} reaches max.broker.partitions={mbp} within 14 days at the "
            f"last {TREND_WINDOW}'s growth",
            "Plan brokers or a rebalance now: the capacity page gives the date with its "
            "interval and the brokers to add by a date.", "capacity", "90"))
    if mp is not None:
        out.append(_alert(
            t, "RailyardClusterReplicasLimitWithin14Days",
            f"{q('cluster_replicas_in_14d', TREND_WINDOW)} > {mp}", "1h", "warning",
            f"The cluster reaches max.partitions={mp} within 14 days at the last "
            f"{TREND_WINDOW}'s growth",
            "Raise max.partitions or retire topics before then: the capacity page gives "
            "the date with its interval.", "capacity", "90"))
    # throttled replication, read on the follower side: a fetcher records only the bytes
    # of partitions in follower.replication.throttled.replicas (ReplicaFetcherThread), so
    # it reads 0 without a throttle. The leader side never does: every follower fetch's
    # response overhead is recorded, throttled partitions or not (KafkaApis's
    # sizeOfThrottledPartitions: FetchResponse.sizeOf over none of them is still its
    # header: 16 B at fetch v12+), 64 B/s per broker on an idle 3-broker cluster (two
    # followers, each fetch held replica.fetch.wait.max.ms = 500 ms), more while producers
    # write (fetches return sooner: about 125 B/s on the Kafka demo).
    throttled = f"(sum({q('follower_throttled_rate')}) > 0)"
    moving = f"(sum({q('reassigning_per_broker')}) > 0)"
    out.append(_alert(
        t, "RailyardThrottleLeftBehind", f"{throttled} unless on() {moving}", "10m", "warning",
        "Replication is throttled but no reassignment is in flight",
        "A reassignment's throttle was left behind: remove the leader/follower throttled "
        "rates and throttled-replica lists (kafka-reassign-partitions --verify does), or "
        "in-sync followers stay throttled.", "throttles", "1h"))
    out.append(_alert(
        t, "RailyardLagGrowingUnderThrottle",
        f"{q('max_lag_growth_per_broker', LAG_WINDOW)} > 0 and on() {throttled} "
        f"and on() {moving}", "15m", "warning",
        f"Follower lag on broker {broker} keeps growing under the replication throttle",
        "Writes outpace the throttle (KIP-73 counts in-sync followers' keep-up traffic), so "
        "the reassignment cannot finish: raise the throttle above the moving partitions' "
        "write rate, or move fewer partitions per batch.", "throttles", "1h"))
    out.append(_alert(
        t, "RailyardMutationQuotaThrottling", f"{q('mutation_throttle_time')} > 0", "5m",
        "warning",
        "Principal user={{ $labels.user }} client_id={{ $labels.client_id }} is throttled "
        "by the controller mutation quota",
        "Its topic/partition creations and deletions are being delayed (KIP-599): spread "
        "them out, or raise its controller_mutation_rate quota.", "quotas", "1h"))
    return out


def rule_file(t: AlertTarget) -> dict:
    """The rule file's document: one group for the cluster."""
    return {"groups": [{"name": f"railyard-guard-rails-{t.cluster}", "rules": rules(t)}]}
