"""Capacity forecasts from a real Prometheus holding 30 days of backfilled partition counts:
the daily peaks come back from the catalog's queries, the forecast finds the growth and
the one-off step, and `railyard capacity forecast` answers from a dashboard config.

Two samples a day (the day's count at 00:00, a dip at 01:00): promtool writes one block
per 2 h span holding samples, so a day costs one block instead of twelve."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from backend.cli import main
from backend.engines.planner import under_provisioned
from backend.model.snapshot import Limits
from backend.services import capacity
from backend.services.cluster import ClusterSource
from tests.servers import history_prometheus

pytestmark = pytest.mark.integration
EPOCH = 1_704_067_200  # 2024-01-01T00:00:00Z
DAYS = 30
GROWTH = {"1": 10.0, "2": 10.0, "3": 10.0, "4": 4.0}  # replicas a day
STEP_DAY, STEP = 15, 300  # broker 4 gets a big topic's 300 replicas on day 15
LIMITS = Limits(1_200, 5_000)
END = EPOCH + (DAYS - 1) * 86_400 + 23 * 3600  # the last sample's hour


def counts(broker: str, t: np.ndarray) -> np.ndarray:
    days = (t - EPOCH) // 86_400
    return 500 + np.floor(GROWTH[broker] * days) + (STEP if broker == "4" else 0) * (
        days >= STEP_DAY)


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory):
    home = tmp_path_factory.mktemp("capacity")
    t = np.sort(np.r_[np.arange(DAYS) * 86_400, np.arange(DAYS) * 86_400 + 3600] + EPOCH)
    dip = np.where((t - EPOCH) % 86_400 == 0, 0, 3)
    name = "kafka_server_replicamanager_partitioncount"
    lines = [f"# TYPE {name} gauge"]
    for b in GROWTH:
        lines += [f'{name}{{broker="{b}"}} {v:.0f} {s}'
                  for s, v in zip(t, counts(b, t) - dip, strict=True)]
    (home / "history.om").write_text("\n".join([*lines, "# EOF", ""]))
    with history_prometheus(home / "history.om") as prom:
        yield prom.url


def test_history_is_the_daily_peaks(prometheus):
    source = ClusterSource("history", None, LIMITS, prometheus_url=prometheus, metrics_ttl=0)
    h = capacity.history(source, 30, end=END)
    assert h["brokers"] == ["1", "2", "3", "4"]
    day = (h["times"] - EPOCH) // 86_400
    expected = np.vstack([counts(b, EPOCH + day * 86_400) for b in h["brokers"]])
    assert np.array_equal(h["broker_values"], expected)
    assert np.array_equal(h["cluster_values"], expected.sum(axis=0))


def test_forecast_finds_growth_and_the_step(prometheus):
    source = ClusterSource("history", None, LIMITS, prometheus_url=prometheus, metrics_ttl=0)
    answer = capacity.forecast(source, 30, by_days=60, end=END)
    rows = {r["scope"]: r for r in answer["table"]}
    assert answer["steps"]["brokers"] == {"4": 1}
    assert rows["broker 1"]["growth_per_day"] == pytest.approx(10)
    assert rows["broker 4"]["growth_per_day"] == pytest.approx(4)  # not fooled by the step
    assert rows["broker 1"]["days"] == pytest.approx((1200 - 790) / 10, abs=0.1)
    assert rows["broker 4"]["days"] == pytest.approx((1200 - 916) / 4, abs=0.1)
    assert answer["table"][0]["scope"] == "broker 1"  # most urgent first
    total = 790 * 3 + 916 + 34 * 60
    expected = under_provisioned(total, 1_200, 4)
    assert answer["brokers_to_add"]["likely"]["brokers_to_add"] == expected["brokers_to_add"]
    assert "from Prometheus at" in answer["data"] and answer["cluster"] == "history"


def test_cli_answers_from_a_dashboard_config(prometheus, tmp_path, capsys):
    config = tmp_path / "railyard.yaml"
    config.write_text(yaml.safe_dump({"clusters": [{
        "name": "history", "gateway": {"type": "twin", "url": "http://127.0.0.1:9"},
        "prometheus": {"url": prometheus},
        "limits": {"max.broker.partitions": 1200, "max.partitions": 5000}}]}))
    assert main(["capacity", "forecast", "--config", str(config), "--window", "7",
                 "--end", "2024-01-30T23:00", "--add-brokers", "2"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["cluster"] == "history" and answer["scenario"]["add_brokers"] == 2
    assert "table" in answer and "history" not in answer
    assert main(["capacity", "forecast", "--config", str(config), "--by", "soon"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--by" in err
    with pytest.raises(SystemExit) as done:  # no history up to now
        main(["capacity", "forecast", "--config", str(config)])
    assert done.value.code == 3
    assert "unavailable: Partition history" in capsys.readouterr().err
