"""The limit alerts and Grafana's thresholds follow the config's near_limit_ratio (the
share the dashboard colours "near"), not a copy of its default."""

from __future__ import annotations

import yaml

from backend.cli.alerts import targets
from backend.metrics import grafana
from backend.metrics.rules import AlertTarget, rules
from backend.model.snapshot import Limits

LIMITS = Limits(max_broker_partitions=100, max_partitions=300)


def limit_alerts(t: AlertTarget) -> dict[str, tuple[str, str]]:
    return {r["alert"]: (r["labels"]["severity"], r["expr"].rsplit(" > ", 1)[1])
            for r in rules(t) if "Percent" in r["alert"]}


def test_default_ratio_keeps_the_80_and_90_percent_alerts():
    got = limit_alerts(AlertTarget("prod", LIMITS))
    assert got["RailyardBrokerPartitionsAbove80Percent"] == ("warning", "0.8 * 100")
    assert got["RailyardBrokerPartitionsAbove90Percent"] == ("critical", "0.9 * 100")
    assert got["RailyardClusterReplicasAbove90Percent"] == ("critical", "0.9 * 300")


def test_a_configured_ratio_moves_alerts_and_grafana_thresholds():
    t = AlertTarget("prod", LIMITS, near_limit_ratio=0.85)
    assert limit_alerts(t) == {
        "RailyardBrokerPartitionsAbove75Percent": ("warning", "0.75 * 100"),
        "RailyardClusterReplicasAbove75Percent": ("warning", "0.75 * 300"),
        "RailyardBrokerPartitionsAbove85Percent": ("critical", "0.85 * 100"),
        "RailyardClusterReplicasAbove85Percent": ("critical", "0.85 * 300")}
    [panel] = [p for p in grafana.dashboard(t)["panels"]
               if p["title"].startswith("Partition replicas per broker")]
    steps = panel["fieldConfig"]["defaults"]["thresholds"]["steps"]
    assert [(s["color"], s["value"]) for s in steps] == [
        ("green", None), ("orange", 75.0), ("red", 85.0), ("dark-red", 100)]


def test_alerts_cli_passes_the_configs_ratio(tmp_path):
    config = {"clusters": [{"name": "prod",
                            "gateway": {"type": "kafka", "bootstrap_servers": ["k:9092"]},
                            "limits": {"max.broker.partitions": 100}}],
              "near_limit_ratio": 0.7}
    (tmp_path / "railyard.yaml").write_text(yaml.safe_dump(config))
    [t] = targets(str(tmp_path / "railyard.yaml"), None)
    assert t.near_limit_ratio == 0.7
