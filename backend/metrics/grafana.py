"""A Grafana dashboard of the guard-rail panels, for teams that live in Grafana.

Every panel's query is a catalog concept's PromQL in the cluster's dialect (rates over
Grafana's $__rate_interval), so Grafana and Railyard show the same numbers; limits are
drawn as thresholds at the alert rules' levels (rules.limit_levels)."""

from __future__ import annotations

from backend.metrics import catalog
from backend.metrics.rules import AlertTarget, limit_levels

RATE_WINDOW = "$__rate_interval"
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}

# (concept, title, unit, limit the panel is drawn against)
PANELS = (
    ("partitions_per_broker", "Partition replicas per broker", "short", "max.broker.partitions"),
    ("cluster_replicas", "Partition replicas in the cluster", "short", "max.partitions"),
    ("reassigning_per_broker", "Partitions being reassigned", "short", None),
    ("leader_throttled_rate", "Throttled replication sent (KIP-73)", "Bps", None),
    ("follower_throttled_rate", "Throttled replication fetched (KIP-73)", "Bps", None),
    ("max_lag_per_broker", "Replica lag (MaxLag)", "short", None),
    ("under_replicated_per_broker", "Under-replicated partitions", "short", None),
    ("mutation_tokens", "Controller mutation tokens (KIP-599, < 0: throttled)", "short", None),
    ("mutation_throttle_time", "Controller mutation throttle time (KIP-599)", "ms", None),
)


def _legend(concept: str, by: str) -> str:
    labels = catalog.label_columns(concept, by)
    return " ".join(f"{{{{{lab}}}}}" for lab in labels) or concept


def dashboard(t: AlertTarget) -> dict:
    """The dashboard JSON (Grafana's import format) for one cluster."""
    limits = {"max.broker.partitions": t.limits.max_broker_partitions,
              "max.partitions": t.limits.max_partitions}
    panels = []
    for i, (concept, title, unit, limit_name) in enumerate(PANELS):
        steps = [{"color": "green", "value": None}]
        limit = limits.get(limit_name) if limit_name else None
        if limit is not None:
            colours = {"warning": "orange", "critical": "red"}
            steps += [{"color": colours[severity], "value": share * limit}
                      for share, severity in limit_levels(t.near_limit_ratio)]
            steps.append({"color": "dark-red", "value": limit})
            title = f"{title} (limit {limit_name}={limit})"
        panels.append({
            "id": i + 1, "type": "timeseries", "title": title, "datasource": DATASOURCE,
            "gridPos": {"h": 8, "w": 12, "x": 12 * (i % 2), "y": 8 * (i // 2)},
            "fieldConfig": {"defaults": {
                "unit": unit, "thresholds": {"mode": "absolute", "steps": steps},
                "custom": {"thresholdsStyle": {"mode": "line" if limit else "off"}}},
                "overrides": []},
            "targets": [{"refId": "A", "datasource": DATASOURCE, "legendFormat":
                         _legend(concept, t.by),
                         "expr": catalog.promql(concept, t.dialect, window=RATE_WINDOW,
                                                by=t.by)}],
        })
    return {
        "title": f"Railyard guard rails: {t.cluster}", "uid": f"railyard-{t.cluster}"[:40],
        "tags": ["railyard", "kafka"], "timezone": "utc", "schemaVersion": 39,
        "time": {"from": "now-6h", "to": "now"}, "refresh": "30s",
        "templating": {"list": [{"name": "datasource", "type": "datasource",
                                 "query": "prometheus", "label": "Prometheus"}]},
        "links": [{"title": "Railyard", "type": "link", "targetBlank": True,
                   "url": f"{t.dashboard_url.rstrip('/')}/?cluster={t.cluster}"}],
        "panels": panels,
    }
