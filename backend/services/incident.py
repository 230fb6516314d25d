"""What a postmortem asks of a window: when partitions were under-replicated or under min
ISR (and which leaders said so), what was throttled (KIP-73 rates, KIP-599 mutation
quota), how far replicas lagged, where partition counts stood against the KIP-578 limits,
what was moving, and which plan events the store recorded in the window.

Each figure answers on its own (a missing metric is a note in the report, not a failed
report); Prometheus not answering at all is ``Unavailable``."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd
from sqlalchemy.exc import SQLAlchemyError

from backend.errors import BadInput, Unavailable
from backend.metrics.client import MetricsError, PrometheusUnavailable
from backend.services import monitoring
from backend.services.cluster import ClusterSource, cluster_snapshot

POINTS = 240  # samples per series over the window
SERIES = {  # what the report charts, in order: concept, title, unit
    "under_replicated": ("under_replicated_peak_per_broker", "Under-replicated partitions "
                         "(per leader), the most in each step", "partitions"),
    "under_min_isr": ("under_min_isr_peak_per_broker", "Partitions under min.insync.replicas "
                      "(per leader), the most in each step", "partitions"),
    "partitions": ("partitions_per_broker", "Partition replicas per broker", "replicas"),
    "reassigning": ("reassigning_peak_per_broker", "Partitions being reassigned, the most "
                    "in each step", "partitions"),
    "leader": ("leader_throttled_rate", "Throttled replication sent (KIP-73)", "bytes/s"),
    "follower": ("follower_throttled_rate", "Throttled replication fetched (KIP-73)",
                 "bytes/s"),
    "lag": ("max_lag_per_broker", "Replica lag (MaxLag)", "messages"),
    "mutation_throttle": ("mutation_throttle_time_high", "Controller mutation throttle time "
                          "(KIP-599), the longest in each step", "ms"),
    "mutation_tokens": ("mutation_tokens_low", "Controller mutation tokens (< 0: "
                        "throttled), the fewest in each step", "tokens"),
}
# the cluster's own most in each step, for the health episodes (not charted): summing each
# leader's most would count brokers under-replicated minutes apart as at once
TOTALS = {"under_replicated_total": "under_replicated_peak",
          "under_min_isr_total": "under_min_isr_peak"}
# each point of these is the extreme over the step ending there (*_over_time across the
# step): a KIP-599 throttle lasts seconds, an outage minutes, and a point sampled every
# step (6 min over a day) misses either
PER_STEP = frozenset({"under_replicated", "under_min_isr", "reassigning", "mutation_throttle",
                      "mutation_tokens", *TOTALS})


def report(source: ClusterSource, start: float, end: float, store=None) -> dict:
    """The incident report's figures for [start, end] (epoch seconds)."""
    if end <= start:
        raise BadInput("incident window: to must be after from")
    client = monitoring.metrics_client(source)
    step = max(15, round((end - start) / POINTS))
    got: dict[str, pd.DataFrame | str] = {}
    down = 0
    asked = {**{key: concept for key, (concept, _, _) in SERIES.items()}, **TOTALS}
    for key, concept in asked.items():
        try:
            window = step if key in PER_STEP else max(60, 2 * step)
            got[key] = client.range(concept, start, end, step=f"{step}s",
                                    window=f"{window}s")
        except PrometheusUnavailable as e:
            down += 1
            got[key] = str(e)
        except MetricsError as e:
            got[key] = str(e)
    if down == len(asked):
        raise Unavailable(f"Prometheus at {client.url}", "unreachable (no answer): no "
                          "incident report without the metrics")
    limits = _limits(source)
    return {
        "cluster": source.name, "start": start, "end": end, "step": step,
        "made_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "data": f"Prometheus at {client.url} ({client.dialect.name} names), one sample "
                f"every {step} s (partition health, throttle time and tokens: the extreme of "
                f"each {step} s)",
        "limits": limits, "series": got, "by": client.by,
        "health": health_episodes(got, client.by, step),
        "throttled": throttled_peaks(got),
        "brokers": broker_table(got, client.by, limits["max.broker.partitions"]),
        "principals": principal_table(got),
        "plan_events": plan_events(store, source.name, start, end),
    }


def _limits(source: ClusterSource) -> dict:
    try:
        lim = cluster_snapshot(source).limits
    except Unavailable:
        lim = source.limits
    return {"max.broker.partitions": lim.max_broker_partitions,
            "max.partitions": lim.max_partitions}


def _peak(frames: dict, key: str, by: str, how: str = "max") -> pd.Series | None:
    f = frames.get(key)
    if not isinstance(f, pd.DataFrame) or f.empty:
        return None
    return f.groupby(by)["value"].agg(how)


HEALTH_COLUMNS = ["from", "to", "minutes", "peak under-replicated", "at peak",
                  "under-replicated at the end", "peak under min ISR", "leaders reporting"]


def _cluster_total(frames: dict, key: str) -> pd.Series | None:
    """The cluster's figure at each sample: the sum over the brokers' series (a
    cluster-wide answer, one series, as it is)."""
    f = frames.get(key)
    if not isinstance(f, pd.DataFrame) or f.empty:
        return None
    return f.groupby("timestamp")["value"].sum().sort_index()


def health_episodes(frames: dict, by: str, step: float) -> pd.DataFrame:
    """Each stretch of the window with under-replicated partitions: from, to, how long,
    the cluster's peak under-replicated count and when it held, the count in the
    stretch's last step, the peak under min ISR, and the leaders that reported them (a
    down broker's replicas make the partitions other brokers lead under-replicated).
    Counts are the cluster's most at once in each step (TOTALS)."""
    urp = _cluster_total(frames, "under_replicated_total")
    if urp is None or not (urp > 0).any():
        return pd.DataFrame(columns=HEALTH_COLUMNS)
    under_isr = _cluster_total(frames, "under_min_isr_total")
    per_leader = frames["under_replicated"]
    bad = urp > 0
    runs = (bad != bad.shift()).cumsum()[bad]
    rows = []
    for _, run in urp[bad].groupby(runs):
        first, last = run.index[0], run.index[-1]
        inside = per_leader["timestamp"].between(first, last) & (per_leader["value"] > 0)
        leaders = sorted(set(per_leader.loc[inside, by].astype(str)), key=_order)
        isr = 0 if under_isr is None else under_isr[first:last].max()
        at_peak = run.index[run == run.max()]
        rows.append({"from": _clock(first), "to": _clock(last),
                     "minutes": ((last - first).total_seconds() + step) / 60,
                     "peak under-replicated": run.max(),
                     "at peak": f"{_clock(at_peak[0])} to {_clock(at_peak[-1])}",
                     "under-replicated at the end": run.iloc[-1], "peak under min ISR": isr,
                     "leaders reporting": ", ".join(leaders)})
    return pd.DataFrame(rows, columns=HEALTH_COLUMNS)


def _clock(t: pd.Timestamp) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S")


def throttled_peaks(frames: dict) -> dict[str, float | None]:
    """The cluster's peak KIP-73 throttled bytes/s on each side (None: no series). They
    measure different bytes: the leader side counts every byte leaders send for a
    partition in leader.replication.throttled.replicas, in-sync followers' keep-up
    traffic included (KIP-73 with KAFKA-4313: in-sync replicas are not throttled, "those
    in-sync replicas traffic will still be accounted for the throttled traffic"); the
    follower side counts only what the replicas in follower.replication.throttled.replicas
    (the moving ones) fetch. ``reassigning``: the most partitions being reassigned at
    once (None: no series), which says whether anything moved at all."""
    out = {}
    for side, key in (("sent", "leader"), ("fetched", "follower"),
                      ("reassigning", "reassigning")):
        total = _cluster_total(frames, key)
        out[side] = None if total is None else float(total.max())
    return out


def broker_table(frames: dict, by: str, limit: int | None) -> pd.DataFrame:
    """Per broker over the window: peak replicas against the limit, peak under-replicated
    partitions it led, peak throttled rates, peak lag."""
    cols = {"peak replicas": _peak(frames, "partitions", by),
            "peak under-replicated": _peak(frames, "under_replicated", by),
            "peak reassigning": _peak(frames, "reassigning", by),
            "peak throttled sent (B/s)": _peak(frames, "leader", by),
            "peak throttled fetched (B/s)": _peak(frames, "follower", by),
            "peak lag (messages)": _peak(frames, "lag", by)}
    present = {k: v for k, v in cols.items() if v is not None}
    if not present:
        return pd.DataFrame(columns=["broker"])
    table = pd.DataFrame(present)
    table.index.name = "broker"
    table = table.reset_index()
    table = table.iloc[sorted(range(len(table)), key=lambda i: _order(table["broker"][i]))]
    if limit and "peak replicas" in table:
        table.insert(2, "max.broker.partitions", limit)
        table.insert(3, "peak % of limit", (100 * table["peak replicas"] / limit).round(1))
    return table.round(1).reset_index(drop=True)


def _order(label: str) -> tuple:
    return (0, int(label), "") if str(label).isdigit() else (1, 0, str(label))


def principal_table(frames: dict) -> pd.DataFrame:
    """Per principal: longest throttle time and fewest tokens in the window (throttled
    ones first)."""
    throttle = frames.get("mutation_throttle")
    tokens = frames.get("mutation_tokens")
    parts = []
    if isinstance(throttle, pd.DataFrame) and not throttle.empty:
        parts.append(throttle.groupby(["user", "client_id"])["value"].max()
                     .rename("max throttle time (ms)"))
    if isinstance(tokens, pd.DataFrame) and not tokens.empty:
        parts.append(tokens.groupby(["user", "client_id"])["value"].min().rename("fewest tokens"))
    if not parts:
        return pd.DataFrame(columns=["user", "client_id"])
    table = pd.concat(parts, axis=1).reset_index()
    if "max throttle time (ms)" in table:
        table["throttled"] = table["max throttle time (ms)"] > 0
        table = table.sort_values(["throttled", "max throttle time (ms)"],
                                  ascending=False)
    return table.round(1).reset_index(drop=True)


def plan_events(store, cluster: str, start: float, end: float) -> pd.DataFrame | str:
    """Audit-log entries of the cluster's plans in the window, oldest first; a note when
    there is no plan store to ask."""
    if store is None:
        return "No plan store configured: plan events are not part of this report."
    from backend.services import plans  # the store's service, only when there is a store
    try:
        rows = plans.audit_entries(store, cluster=cluster,
                                   since=datetime.fromtimestamp(start, UTC),
                                   until=datetime.fromtimestamp(end, UTC))
    except SQLAlchemyError as e:  # a store that fails is a note, not a failed report
        return f"The plan store did not answer ({type(e).__name__}): plan events are missing."
    return pd.DataFrame([{"at": e.at.strftime("%Y-%m-%d %H:%M:%S"), "plan": e.plan_id,
                          "action": e.action, "user": e.user, "from": e.before,
                          "to": e.after} for e in rows],
                        columns=["at", "plan", "action", "user", "from", "to"])
