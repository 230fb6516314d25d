"""`railyard alerts generate` writes rules promtool accepts, and `promtool test rules` runs
them on series that must fire and series that must not, in both naming dialects; the
Grafana dashboard's every query is one the catalog defines."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
import yaml

from backend.cli import main
from backend.metrics import catalog
from backend.metrics.dialects import DIALECTS

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(shutil.which("promtool") is None, reason="needs promtool")]

CONFIG = {"clusters": [{"name": "prod",
                        "gateway": {"type": "kafka", "bootstrap_servers": ["k:9092"]},
                        "prometheus": {"url": "http://127.0.0.1:9090", "dialect": "confluent"},
                        "limits": {"max.broker.partitions": 100, "max.partitions": 300}}],
          "server": {"host": "127.0.0.1", "port": 8050}}


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    home = tmp_path_factory.mktemp("alerts")
    (home / "railyard.yaml").write_text(yaml.safe_dump(CONFIG))
    assert main(["alerts", "generate", "--config", str(home / "railyard.yaml"),
                 "--out", str(home / "rules")]) == 0
    assert main(["alerts", "grafana", "--config", str(home / "railyard.yaml"),
                 "--out", str(home / "grafana")]) == 0
    return home


def series(name: str, labels: dict, values: str) -> dict:
    inner = ",".join(f'{k}="{v}"' for k, v in labels.items())
    return {"series": f"{name}{{{inner}}}", "values": values}


def expect(rules: dict, alert: str, labels: dict) -> dict:
    """The alert as promtool reports it: rule labels plus the series', annotations rendered."""
    [rule] = [r for r in rules if r["alert"] == alert]
    rendered = {k: re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels[m.group(1)], v)
                for k, v in rule["annotations"].items()}
    return {"exp_labels": {**rule["labels"], **labels}, "exp_annotations": rendered}


def case(rules, at: str, input_series: list[dict], fires: dict[str, list[dict]],
         silent: tuple[str, ...]) -> dict:
    checks = [{"eval_time": at, "alertname": a, "exp_alerts": [expect(rules, a, lab)
                                                               for lab in labs]}
              for a, labs in fires.items()]
    checks += [{"eval_time": at, "alertname": a, "exp_alerts": []} for a in silent]
    return {"interval": "1m", "input_series": input_series, "alert_rule_test": checks}


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_promtool_runs_the_rules_on_firing_and_quiet_series(generated, dialect):
    path = generated / "rules" / dialect / "prod.rules.yml"
    assert subprocess.run(["promtool", "check", "rules", str(path)],
                          capture_output=True).returncode == 0
    rules = yaml.safe_load(path.read_text())["groups"][0]["rules"]
    d = DIALECTS[dialect]
    pc, moving = d.partition_count, d.reassigning
    b = [{"broker": str(i)} for i in range(7)]
    tests = [
        # 85 and 95 of 100 per broker, 250 of 300 in the cluster, none of it growing
        case(rules, "10m", [series(pc, b[1], "85x20"), series(pc, b[2], "95x20"),
                            series(pc, b[3], "70x20")],
             {"RailyardBrokerPartitionsAbove80Percent": [b[1], b[2]],
              "RailyardBrokerPartitionsAbove90Percent": [b[2]],
              "RailyardClusterReplicasAbove80Percent": [{}]},
             ("RailyardClusterReplicasAbove90Percent",
              "RailyardBrokerPartitionsLimitWithin14Days",
              "RailyardClusterReplicasLimitWithin14Days")),
        # 3 a minute: far past both limits in 14 days, though far below them today
        case(rules, "2h", [series(pc, b[4], "10+0.05x120"), series(pc, b[5], "5x120")],
             {"RailyardBrokerPartitionsLimitWithin14Days": [b[4]],
              "RailyardClusterReplicasLimitWithin14Days": [{}]},
             ("RailyardBrokerPartitionsAbove80Percent",)),
        # throttled traffic and nothing moving for 15 minutes: a throttle left behind
        case(rules, "15m", [series(d.leader_byte_rate, b[1], "1000x30"),
                            series(d.follower_byte_rate, b[2], "1000x30"),
                            series(moving, b[1], "0x30")],
             {"RailyardThrottleLeftBehind": [{}]}, ()),
        # ... but not while a reassignment is in flight
        case(rules, "15m", [series(d.leader_byte_rate, b[1], "1000x30"),
                            series(d.follower_byte_rate, b[2], "1000x30"),
                            series(moving, b[1], "1x30")],
             {}, ("RailyardThrottleLeftBehind",)),
        # no throttle anywhere: Apache Kafka's leader side still reads every follower
        # fetch's response overhead (125 B/s a broker on the idle Kafka demo), and no
        # follower side series exists; nothing is throttled
        case(rules, "15m", [series(d.leader_byte_rate, b[i], "125x30") for i in (1, 2, 3)]
             + [series(moving, b[1], "0x30")],
             {}, ("RailyardThrottleLeftBehind",)),
        # lag on broker 6 climbing under a throttle during a move; broker 5's flat
        case(rules, "30m", [series(d.max_lag, b[6], "0+100x40"),
                            series(d.max_lag, b[5], "500x40"),
                            series(d.leader_byte_rate, b[1], "300000x40"),
                            series(d.follower_byte_rate, b[6], "200000x40"),
                            series(moving, b[1], "1x40")],
             {"RailyardLagGrowingUnderThrottle": [b[6]]}, ("RailyardThrottleLeftBehind",)),
        # the same lag without a throttle is not the throttle's doing
        case(rules, "30m", [series(d.max_lag, b[6], "0+100x40"),
                            series(d.leader_byte_rate, b[1], "125x40"),
                            series(moving, b[1], "1x40")],
             {}, ("RailyardLagGrowingUnderThrottle",)),
        # one principal throttled for 8 minutes, another never
        case(rules, "8m", [series(d.mutation_throttle_time,
                                  {"user": "tenant-a", "client_id": "c1"}, "50x10"),
                           series(d.mutation_throttle_time,
                                  {"user": "tenant-b", "client_id": "c2"}, "0x10")],
             {"RailyardMutationQuotaThrottling": [{"user": "tenant-a", "client_id": "c1"}]},
             ()),
    ]
    test_file = generated / f"{dialect}.test.yml"
    test_file.write_text(yaml.safe_dump({"rule_files": [str(path)], "evaluation_interval": "1m",
                                         "tests": tests}, sort_keys=False))
    run = subprocess.run(["promtool", "test", "rules", str(test_file)], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr


def test_every_alert_says_what_to_do_and_links_its_page(generated):
    rules = yaml.safe_load((generated / "rules" / "strimzi" / "prod.rules.yml").read_text())
    for r in rules["groups"][0]["rules"]:
        assert r["annotations"]["action"] and r["labels"]["cluster"] == "prod"
        assert r["annotations"]["dashboard"].startswith("http://127.0.0.1:8050/")
        assert "cluster=prod" in r["annotations"]["dashboard"]


def test_grafana_panels_query_only_catalog_concepts(generated):
    board = json.loads((generated / "grafana" / "prod.grafana.json").read_text())
    known = {catalog.promql(c, "confluent", window="$__rate_interval") for c in catalog.CATALOG}
    exprs = [t["expr"] for p in board["panels"] for t in p["targets"]]
    assert exprs and all(e in known for e in exprs)
    limits = [p for p in board["panels"] if "limit max.broker.partitions=100" in p["title"]]
    assert limits[0]["fieldConfig"]["defaults"]["thresholds"]["steps"][-1]["value"] == 100
