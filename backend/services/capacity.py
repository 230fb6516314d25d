"""What the capacity review asks: partition history from Prometheus, the forecast of when
each KIP-578 limit is reached under the meeting's scenario, and brokers to add by a date.

History is each broker's and the cluster's daily peak of partition replicas (catalog
concepts ``partitions_per_broker_peak`` and ``cluster_replicas_peak``): Prometheus
computes the peaks, so 90 days cost 90 points per broker. A planned topic is placed by
the limits engine on the cluster's assignment when there is one (and the answer says
whether the limits accept it today)."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import numpy as np
import pandas as pd

from backend.engines import forecast as fc
from backend.engines.limits import TopicRequest, create_topics
from backend.errors import BadInput, Unavailable
from backend.metrics.client import MetricsError, PrometheusUnavailable
from backend.model.snapshot import Limits
from backend.services import monitoring
from backend.services.cluster import ClusterSource, cluster_snapshot

WINDOWS = (7, 30, 90)  # days of history a review looks at
DAY = 86_400
PLANNED_TOPIC = "planned-topic"


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
    except MetricsError as e:
        raise Unavailable("Partition history", str(e)) from None
    by = client.by
    wide = per_broker.pivot_table(index=by, columns="timestamp", values="value", aggfunc="max")
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


def _id_order(label: str) -> tuple:
    return (0, int(label), "") if str(label).isdigit() else (1, 0, str(label))


def forecast(source: ClusterSource, days: int = 30, scenario: fc.Scenario = fc.AS_IS,
             by_days: float = 90.0, end: float | None = None) -> dict:
    """The capacity forecast of one cluster over ``days`` of history under ``scenario``."""
    scenario.validate()
    h = history(source, days, end)
    snap, note = _assignment(source)
    limits = snap.limits if snap is not None else source.limits
    topic, verdict = _planned_topic(snap, h["brokers"], scenario, scenario.limits(limits))
    answer = fc.forecast(h["times"], h["brokers"], h["broker_values"], h["cluster_values"],
                         limits, scenario, by_days, topic)
    answer.update({
        "cluster": source.name, "history": h, "window_days": days, "by_days": by_days,
        "scenario": scenario.__dict__, "planned_topic": verdict,
        "made_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "data": f"daily peaks from Prometheus at {h['prometheus']} ({h['dialect']} names), "
                f"{_day(h['start'])} to {_day(h['end'])}"
                + (f"; limits from the config ({note})" if note else ""),
    })
    return answer


def _day(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d")


def _assignment(source: ClusterSource):
    """The cluster's assignment (for limits and topic placement), or None and why not."""
    try:
        return cluster_snapshot(source), None
    except Unavailable as e:
        return None, str(e)


def _planned_topic(snap, broker_ids: list[str], scenario: fc.Scenario, limits: Limits
                   ) -> tuple[np.ndarray | None, dict | None]:
    """The planned topic's replicas per history broker as the limits engine places it, and
    whether the limits accept it today (None, None: no topic, or no assignment to place on)."""
    if not scenario.topic_partitions or snap is None:
        return None, None
    result = create_topics(snap, [TopicRequest(PLANNED_TOPIC, scenario.topic_partitions,
                                               scenario.topic_rf)], limits)
    [outcome] = result.topics
    verdict = {"accepted_today": outcome.ok, "error": outcome.error}
    if not outcome.ok or outcome.assignment is None:
        return None, verdict  # rejected today: the forecast spreads it as Kafka would
    added = np.bincount(outcome.assignment.ravel(), minlength=snap.n_brokers)
    by_id = dict(zip((str(b) for b in snap.broker_ids.tolist()), added.tolist(), strict=True))
    return np.array([by_id.get(b, 0) for b in broker_ids], np.float64), verdict


def table_frame(answer: dict) -> pd.DataFrame:
    """The time-to-limit table with dates (what the page, the CSV and the reports show)."""
    frame = pd.DataFrame(answer["table"])
    made = pd.Timestamp(answer["history"]["end"], unit="s", tz="UTC")
    for days, date in (("days", "date"), ("earliest_days", "earliest"),
                       ("latest_days", "latest")):
        frame[date] = [None if d is None or pd.isna(d) else
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
    """Every cluster's forecast in one Spark job: histories read from each cluster's
    Prometheus (a cluster whose Prometheus does not answer is listed, not fatal)."""
    from backend.spark import capacity as spark_capacity
    from backend.spark import session
    scenario.validate()
    histories, missing = [], []
    for source in sources:
        try:
            h = history(source, days, end)
        except Unavailable as e:
            missing.append({"cluster": source.name, "error": str(e)})
            continue
        snap, _ = _assignment(source)
        histories.append({**h, "cluster": source.name,
                          "limits": snap.limits if snap is not None else source.limits})
    if not histories:
        raise Unavailable("Partition history", "no cluster's Prometheus answered: "
                          + "; ".join(m["error"] for m in missing))
    spark = session.start(spark_settings)
    rows = spark_capacity.fleet_forecast(spark, histories, scenario, by_days)
    return {"clusters": len(histories), "missing": missing, "window_days": days,
            "made_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "rows": to_json(rows.to_dict(orient="records"))}
