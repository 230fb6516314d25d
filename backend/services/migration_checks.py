"""What the cluster says about a shrink migration's operator steps before each is checked
off (docs/executor.md#shrinks): producers switched (the old topic's produce rate, Kafka's
per-topic BytesInPerSec through Prometheus) and consumers drained (every consumer group's
committed offsets at the old topic's end, from the cluster). A step is refused only when
the cluster shows it is not done; where the cluster cannot say (no Prometheus, a cluster
without consumer groups, a read that failed) it can still be checked off, and the words
kept with it (audited) say it was not confirmed and why."""

from __future__ import annotations

from backend.errors import Conflict, Unavailable
from backend.gateways.base import GroupReader
from backend.metrics.client import MetricMissing, MetricsError
from backend.services import monitoring
from backend.services.cluster import ClusterSource

NAMED = 3  # groups named in a refusal; the rest counted


def producers_switched(source: ClusterSource | None, topic: str, new_topic: str,
                       step: int) -> str:
    """Conflict while producers still write to ``topic``; else what was read."""
    if source is None or source.prometheus_url is None:
        return (f"not confirmed: no Prometheus configured for the cluster, so Railyard "
                f"cannot read what producers write to '{topic}'")
    rates = monitoring.topic_write_rates(source, [topic])
    if isinstance(rates, MetricsError) and not isinstance(rates, MetricMissing):
        return f"not confirmed: {monitoring.short_reason(rates)} ({rates})"
    if isinstance(rates, MetricMissing) or topic not in rates:
        return (f"not confirmed: Prometheus has no BytesInPerSec series for '{topic}' (no "
                f"write since its brokers started, or an exporter that drops per-topic "
                f"metrics)")
    window = f"{monitoring.LIVE_RATE_SECONDS} s"
    if rates[topic] > 0:
        raise Conflict(f"step {step}: producers still write to '{topic}': "
                       f"{rates[topic]:,.0f} B/s over the last {window} (Kafka's "
                       f"BytesInPerSec for the topic, from Prometheus): switch them to "
                       f"'{new_topic}', then check this step off (the rate reads 0 once "
                       f"{window} pass without a write)")
    return f"confirmed: no writes to '{topic}' over the last {window} (BytesInPerSec)"


def consumers_drained(source: ClusterSource | None, topic: str, new_topic: str,
                      step: int) -> str:
    """Conflict while a consumer group has not read ``topic`` to its end; else what was
    read."""
    gw = None if source is None else source.gateway
    if not isinstance(gw, GroupReader):
        return ("not confirmed: Railyard cannot read this cluster's consumer groups "
                "(Apache Kafka's ListGroups and OffsetFetch)")
    try:
        lags = gw.group_lags(topic)
    except Unavailable as e:
        return f"not confirmed: the consumer groups could not be read ({e})"
    behind = {g: n for g, n in lags.items() if n > 0}
    if behind:
        worst = sorted(behind, key=lambda g: (-behind[g], g))
        named = ", ".join(f"'{g}' {behind[g]:,} record{'s' if behind[g] != 1 else ''}"
                          for g in worst[:NAMED])
        more = f" and {len(worst) - NAMED} more" if len(worst) > NAMED else ""
        raise Conflict(f"step {step}: consumer groups have not read '{topic}' to the end: "
                       f"{named}{more} behind (committed offsets against the log end): let "
                       f"them finish, then start them on '{new_topic}' and check this step "
                       f"off")
    if not lags:
        return f"confirmed: no consumer group has a committed offset on '{topic}'"
    return (f"confirmed: every consumer group with offsets on '{topic}' is at its end "
            f"({', '.join(sorted(lags))})")
