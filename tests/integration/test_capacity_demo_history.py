"""The demo's capacity history: the twin's 90 days of daily partition counts (the cluster
growing into the demo snapshot) backfilled with promtool into a real Prometheus, as
`railyard demo` does, are enough for a capacity review: every window forecasts a time to
max.broker.partitions for every broker, the history ends at the snapshot's counts, and the
one large topic created halfway back is taken out as a step, not read as growth."""

from __future__ import annotations

import numpy as np
import pytest

from backend.metrics.dialects import STRIMZI
from backend.services import capacity
from backend.services.cluster import ClusterSource
from backend.twin.examples import demo_snapshot
from backend.twin.history import GROWTH_DAYS, record_growth_openmetrics, topic_creation_days
from tests.servers import history_prometheus

pytestmark = pytest.mark.integration
END = 1_706_655_600.0  # 2024-01-30T23:00Z: the history's last sample
SNAP = demo_snapshot()


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    home = tmp_path_factory.mktemp("demo-history")
    written = record_growth_openmetrics(SNAP, STRIMZI, END, home / "growth.om")
    assert written == SNAP.n_brokers * (GROWTH_DAYS + 1)  # daily midnights and the end
    with history_prometheus(home / "growth.om") as prom:
        yield ClusterSource("demo", None, SNAP.limits, prometheus_url=prom.url,
                            metrics_ttl=0)


def test_history_grows_into_the_snapshot(source):
    h = capacity.history(source, 90, end=END)
    counts = np.bincount(SNAP.replica_broker, minlength=SNAP.n_brokers)
    assert h["brokers"] == [str(b) for b in SNAP.broker_ids]
    assert not np.isnan(h["broker_values"]).any()  # a point every day
    assert np.array_equal(h["broker_values"][:, -1], counts)
    assert (np.diff(h["broker_values"], axis=1) >= 0).all()  # topics are only created
    assert h["cluster_values"][0] < h["cluster_values"][-1] == counts.sum()


@pytest.mark.parametrize("days", capacity.WINDOWS)
def test_every_window_gives_each_broker_a_time_to_its_limit(source, days):
    answer = capacity.forecast(source, days, by_days=90, end=END)
    brokers = [r for r in answer["table"] if r["scope"].startswith("broker ")]
    assert len(brokers) == SNAP.n_brokers
    assert all(r["growth_per_day"] > 0 and r["days"] is not None for r in brokers)
    fullest = answer["table"][0]
    assert fullest["scope"] == "broker 3" and 0 < fullest["days"] < 60  # weeks, not years


def test_the_large_topic_is_a_step_not_growth(source):
    created = topic_creation_days(SNAP)
    assert (created == GROWTH_DAYS // 2).any()
    answer = capacity.forecast(source, 90, end=END)
    assert answer["steps"]["cluster"] == 1 and len(answer["steps"]["brokers"]) >= 6
