"""What the capacity review asks: partition history from Prometheus, the forecast of when
each KIP-578 limit is reached under the meeting's scenario, and brokers to add by a date.

History is each broker's and the cluster's daily peak of partition replicas (catalog
concepts ``partitions_per_broker_peak`` and ``cluster_replicas_peak``): Prometheus
computes the peaks, so 90 days cost 90 points per broker. A planned topic is placed by
the limits engine on the cluster's assignment when there is one (and the answer says
whether the limits accept it today)."""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime

import numpy as np
import pandas as pd

from backend.engines import forecast as fc
from backend.engines.limits import TopicRequest, create_topics
from backend.errors import BadInput, Unavailable
from backend.metrics.client import MetricMissing, MetricsError, PrometheusUnavailable
from backend.model.snapshot import Limits
from backend.services import monitoring, whatif
from backend.services.cluster import ClusterSource, cluster_snapshot
from backend.spark.spec import (
    SNAPSHOT_LIMIT,
    FleetCluster,
    FleetHistory,
    FleetSpec,
    forecast_grid,
)

WINDOWS = (7, 30, 90)  # days of history a review looks at
DAY = 86_400
PLANNED_TOPIC = "planned-topic"  # the limits engine's name for it, never shown
# the field a planned topic is typed in, as a refusal names it (the page's "Planned topic
# (P:RF)"): every refusal of it is "planned topic: expected <rule>, got '<typed>'"
TOPIC_FIELD = "planned topic"
# a limit further off than a century is written as such (pandas' dates end in 2262, and
# a limit raised a million-fold is days away like 1e15)
HORIZON_DAYS = 36_525
MIN_DAYS = 2  # daily peaks a growth fit needs (engines.forecast.fit_growth): "two"
FIRST_COUNT_POINTS = 2_000  # the most points a search for the first count asks for


def history(source: ClusterSource, days: int, end: float | None = None) -> dict:
    """Daily peaks over the last ``days`` days ending at ``end`` (default: this hour).

    {"times": epoch seconds (days,), "brokers": ids, "broker_values": (brokers, days),
    "cluster_values": (days,)}; missing days are NaN. Unavailable when Prometheus does not
    answer or has no partition counts."""
    if days not in WINDOWS:
        raise BadInput(f"window: expected one of {', '.join(map(str, WINDOWS))} days, got {days}")
    end = float(end if end is not None else time.time() // 3600 * 3600)
    start = end - (days - 1) * DAY
    client = monitoring.metrics_client(source)
    try:
        per_broker = client.range("partitions_per_broker_peak", start, end, step=str(DAY),
                                  window="1d")
    except PrometheusUnavailable as e:
        raise Unavailable(f"Prometheus at {client.url}", f"unreachable ({e})") from None
    except MetricMissing:
        raise Unavailable("Partition history", _too_little(client, start, end, 0),
                          not_yet=True) from None
    except MetricsError as e:
        raise Unavailable("Partition history", str(e)) from None
    by = client.by
    wide = per_broker.pivot_table(index=by, columns="timestamp", values="value", aggfunc="max")
    if wide.shape[1] < MIN_DAYS:  # one day: the growth fit would refuse it (a BadInput)
        raise Unavailable("Partition history", _too_little(client, start, end, wide.shape[1]),
                          not_yet=True)
    wide = wide.reindex(sorted(wide.index, key=_id_order))
    times = np.array([t.timestamp() for t in wide.columns])
    try:
        cluster = client.range("cluster_replicas_peak", start, end, step=str(DAY), window="1d")
    except MetricsError as e:
        raise Unavailable("Partition history", str(e)) from None
    total = cluster.set_index("timestamp")["value"].reindex(wide.columns).to_numpy()
    return {"times": times, "brokers": [str(b) for b in wide.index],
            "broker_values": wide.to_numpy(np.float64), "cluster_values": total,
            "start": start, "end": end, "prometheus": client.url,
            "dialect": client.dialect.name}


def _too_little(client, start: float, end: float, days: int) -> str:
    """Why the window holds fewer than MIN_DAYS daily peaks (``days`` of them), in what
    Prometheus holds: when its partition counts begin, if they do after ``start`` (a
    cluster minutes old, as the Kafka demo's, read "no partition counts from 2026-10-31 to
    2026-11-29" while Prometheus had scraped it for minutes that day, after the window's
    end at the top of the hour), and, while it still scrapes them, from when a forecast
    can be made."""
    need = "a forecast needs daily peaks of ReplicaManager PartitionCount on at least two days"
    lead = f"Prometheus at {client.url} has " + (
        f"no partition counts from {_day(start)} to {_until(end)}" if not days else
        f"partition counts on only {days} day from {_day(start)} to {_until(end)}")
    counts = _counts_since(client, start)
    if counts is None:
        return (f"{lead}: a forecast needs daily peaks of ReplicaManager PartitionCount over "
                "those days (pick a window its data covers, or wait until it has been "
                "scraped for days)")
    first, recent = counts
    ready = math.ceil((first + DAY) / 3600) * 3600  # the first hour whose day before holds it
    if ready <= end:  # counts for long enough, with gaps: nothing to wait for
        return f"{lead}: {need} (pick a window its data covers)"
    since = (f"its counts begin {_minute(first)} UTC ({_age(time.time() - first)} ago)"
             + (", after the window's end" if first > end else ""))
    if not recent:  # they stopped: waiting would not bring the second day
        return f"{lead}; {since}, and none are recent: {need} (pick a window its data covers)"
    return (f"{lead}; {since}: {need}, so the first can be made as of about "
            f"{_minute(ready)} UTC")


def _counts_since(client, start: float) -> tuple[float, bool] | None:
    """When Prometheus' first partition count since ``start`` was scraped, to the second,
    and whether it has counts from the last ``step`` before now, as one it still scrapes
    (None: none up to now, or no answer). A window's peak per coarse step finds the step
    (a plain range query would skip whatever lies between its points); the step's minutes
    find the minute, its seconds the sample (the first point at or after it sees it)."""
    now = time.time()
    if now <= start:
        return None
    step = max(300, math.ceil((now - start) / FIRST_COUNT_POINTS / 300) * 300)
    try:
        # a point past now: the last one covers the minutes since the one before
        coarse = client.range("cluster_replicas_peak", start, now + step, step=f"{step}s",
                              window=f"{step}s")
        point = coarse["timestamp"].min().timestamp()
        recent = coarse["timestamp"].max().timestamp() >= now
        fine = max(60, math.ceil((step + 300) / FIRST_COUNT_POINTS / 60) * 60)
        near = client.range("cluster_replicas", point - step - 300, point, step=f"{fine}s")
        seen = near["timestamp"].min().timestamp()  # the sample lies within the step before
        exact = client.range("cluster_replicas", seen - fine, seen, step="1s")
        return max(start, exact["timestamp"].min().timestamp()), recent
    except MetricsError:
        return None


def _until(t: float) -> str:
    """A window's end: its day when it ends at midnight, else the day and hour."""
    return _day(t) if t % DAY == 0 else f"{_minute(t)} UTC"


def _minute(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M")


def _age(seconds: float) -> str:
    minutes = max(int(seconds // 60), 1)
    if minutes < 120:
        return f"{minutes} minute{'' if minutes == 1 else 's'}"
    hours = minutes // 60
    return f"{hours} hours" if hours < 48 else f"{hours // 24} days"


def _id_order(label: str) -> tuple:
    return (0, int(label), "") if str(label).isdigit() else (1, 0, str(label))


def topic_refused(rule: str, typed: str) -> BadInput:
    """The planned-topic field's refusal: the field, the rule, what was typed."""
    typed = typed if len(typed) <= 24 else typed[:21] + "..."
    return BadInput(f"{TOPIC_FIELD}: expected {rule}, got '{typed}'")


def forecast(source: ClusterSource, days: int = 30, scenario: fc.Scenario = fc.AS_IS,
             by_days: float = 90.0, end: float | None = None, topic: str = "") -> dict:
    """The capacity forecast of one cluster over ``days`` of history under ``scenario``
    (``topic``: the planned topic as typed, for a refusal to quote; default P:RF)."""
    scenario.validate()
    h = history(source, days, end)
    snap, unread = _assignment(source)
    typed = topic or f"{scenario.topic_partitions}:{scenario.topic_rf}"
    brokers = snap.n_brokers if snap is not None else len(h["brokers"])
    if scenario.topic_partitions and scenario.topic_rf > brokers:
        # Kafka's own check (engines.placement.validate_request), said of the field: it
        # named the limits engine's "topic 'planned-topic'", a name nobody typed
        raise topic_refused(f"a replication factor of at most {brokers}, the brokers "
                            "the cluster has", typed)
    limits = snap.limits if snap is not None else source.limits
    if unread is not None and scenario.limits(limits) == Limits():
        # nothing to forecast against: an empty table and "0 brokers to add" would read
        # as "no limit in sight" when the limits were simply not read
        raise Unavailable(unread.what, f"{unread.detail}; a forecast needs the cluster's "
                          "limits and the config gives none")
    note = None if unread is None else str(unread)
    topic, verdict = _planned_topic(snap, h["brokers"], scenario, scenario.limits(limits),
                                    typed)
    answer = fc.forecast(h["times"], h["brokers"], h["broker_values"], h["cluster_values"],
                         limits, scenario, by_days, topic)
    answer["cluster_limit"] = cluster_limit(answer)
    answer.update({
        "cluster": source.name, "history": h, "window_days": days, "by_days": by_days,
        "scenario": scenario.__dict__, "planned_topic": verdict,
        "made_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "data": f"daily peaks from Prometheus at {h['prometheus']} ({h['dialect']} names), "
                f"{_day(h['start'])} to {_day(h['end'])}"
                + (f"; limits from the config ({note})" if note else ""),
    })
    if note:
        answer["warning"] = (f"the cluster's assignment was not read ({note}): the limits are "
                             "the config's or the scenario's (the cluster's own may differ)"
                             + (" and the planned topic is not checked against today's assignment"
                                if scenario.topic_partitions else ""))
    return answer


def cluster_limit(answer: dict) -> dict | None:
    """Whether the replicas projected for the plan date pass max.partitions, likely and
    cautious (None without the limit); beside brokers to add, which only answers
    max.broker.partitions.

    KIP-578: max.partitions limits "the number of partitions in the cluster overall", its
    check "based purely on the total number of partitions that exist across all brokers"
    (every broker's count summed: replicas, as the forecast's cluster series and the
    limits engine count them), and CreateTopics and CreatePartitions fail with
    POLICY_VIOLATION past it. Brokers added do not lower that total: past it, only a
    higher max.partitions or fewer partitions let topics grow again."""
    limit = answer["limits"]["max.partitions"]
    if limit is None:
        return None
    b = answer["brokers_to_add"]
    return {"limit": int(limit), **{
        name: {"replicas": b[name]["replicas"], "over": b[name]["replicas"] > limit}
        for name in ("likely", "cautious")}}


def _day(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d")


def _assignment(source: ClusterSource) -> tuple:
    """The cluster's assignment (for limits and topic placement), or None and why not."""
    try:
        return cluster_snapshot(source), None
    except Unavailable as e:
        return None, e


def _planned_topic(snap, broker_ids: list[str], scenario: fc.Scenario, limits: Limits,
                   typed: str) -> tuple[np.ndarray | None, dict | None]:
    """The planned topic's replicas per history broker as the limits engine places it, and
    whether the limits accept it today (None, None: no topic, or no assignment to place on).
    The engine's reason names the topic as typed (``typed``), not by its internal name."""
    if not scenario.topic_partitions or snap is None:
        return None, None
    result = create_topics(snap, [TopicRequest(PLANNED_TOPIC, scenario.topic_partitions,
                                               scenario.topic_rf)], limits)
    [outcome] = result.topics
    error = outcome.error and outcome.error.replace(
        f"topic '{PLANNED_TOPIC}'", f"the {TOPIC_FIELD} '{typed}'")
    verdict = {"accepted_today": outcome.ok, "error": error}
    if not outcome.ok or outcome.assignment is None:
        return None, verdict  # rejected today: the forecast spreads it as Kafka would
    added = np.bincount(outcome.assignment.ravel(), minlength=snap.n_brokers)
    by_id = dict(zip((str(b) for b in snap.broker_ids.tolist()), added.tolist(), strict=True))
    return np.array([by_id.get(b, 0) for b in broker_ids], np.float64), verdict


def table_frame(answer: dict) -> pd.DataFrame:
    """The time-to-limit table with dates (what the page, the CSV and the reports show)."""
    frame = pd.DataFrame(answer["table"])
    made = pd.Timestamp(answer["history"]["end"], unit="s", tz="UTC")
    beyond = f"after {made + pd.Timedelta(days=HORIZON_DAYS):%Y}"
    for days, date in (("days", "date"), ("earliest_days", "earliest"),
                       ("latest_days", "latest")):
        frame[date] = [None if d is None or pd.isna(d) else beyond if d > HORIZON_DAYS else
                       (made + pd.Timedelta(days=float(d))).strftime("%Y-%m-%d")
                       for d in frame[days]]
    return frame


def to_json(answer: dict) -> dict:
    """The answer with arrays as lists and NaN as null (the CLI and JSON exports)."""
    return _plain(answer)


def _plain(v):
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_plain(x) for x in v]
    if isinstance(v, np.ndarray):
        return _plain(v.tolist())
    if isinstance(v, float | np.floating):
        return None if np.isnan(v) or np.isinf(v) else float(v)
    if isinstance(v, np.integer):
        return int(v)
    return v


def fleet(sources: list[ClusterSource], days: int, scenario: fc.Scenario, by_days: float,
          spark_settings=None, end: float | None = None) -> dict:
    """Every cluster's forecast in one Spark job, the fleet sweep fed from each cluster's
    Prometheus history (a cluster whose Prometheus does not answer is listed, not fatal);
    the fleet's most urgent first."""
    scenario.validate()
    spec, missing = fleet_spec(sources, days, scenario_grid(scenario), by_days, end)
    rows = whatif.run(spec, spark_settings).to_pandas()
    rows = rows.assign(urgency=rows["days"].fillna(np.inf)).sort_values(
        ["urgency", "scenario", "cluster", "scope"], kind="stable").drop(columns="urgency")
    return {"clusters": len(spec.clusters), "missing": missing, "window_days": days,
            "made_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "rows": to_json(rows.to_dict(orient="records"))}


def fleet_sweep(sources: list[ClusterSource], grid_text: str, days: int = 30,
                end: float | None = None) -> tuple[FleetSpec, list[dict]]:
    """The What-if page's fleet sweep: every cluster's forecast from its own Prometheus
    history up to ``end`` (default: this hour) over a typed grid of the knobs
    (whatif.parse_grid's KEY=V1,V2; ...)."""
    grid = forecast_grid(whatif.parse_grid("fleet", grid_text))
    return fleet_spec(sources, days, grid, end=end)


def scenario_grid(scenario: fc.Scenario) -> dict[str, list]:
    """One scenario as a fleet sweep's grid (its limits: the cluster's own unless raised)."""
    def limit(value: int | None) -> list:
        return [SNAPSHOT_LIMIT if value is None else value]
    return forecast_grid({
        "max.broker.partitions": limit(scenario.max_broker_partitions),
        "max.partitions": limit(scenario.max_partitions),
        "growth_pct_month": [float(scenario.growth_pct_month)],
        "add_brokers": [scenario.add_brokers], "topic_partitions": [scenario.topic_partitions],
        "topic_rf": [scenario.topic_rf]}, "scenario")


def fleet_spec(sources: list[ClusterSource], days: int, grid: dict[str, list],
               by_days: float = 90.0, end: float | None = None) -> tuple[FleetSpec, list[dict]]:
    """The fleet sweep of these clusters' histories over ``grid`` (checked by
    ``forecast_grid``), and the clusters left out (their Prometheus did not answer).
    Unavailable when none answered."""
    clusters, missing = [], []
    for source in sources:
        try:
            h = history(source, days, end)
        except Unavailable as e:
            missing.append({"cluster": source.name, "error": str(e)})
            continue
        snap, _ = _assignment(source)
        limits = snap.limits if snap is not None else source.limits
        clusters.append(FleetCluster(source.name, (), None, FleetHistory(
            h["times"], tuple(h["brokers"]), h["broker_values"],
            np.asarray(h["cluster_values"], np.float64), limits.max_broker_partitions,
            limits.max_partitions)))
    if not clusters:
        raise Unavailable("Partition history", "no cluster's Prometheus answered: "
                          + "; ".join(m["error"] for m in missing))
    return FleetSpec(tuple(clusters), grid, by_days), missing
