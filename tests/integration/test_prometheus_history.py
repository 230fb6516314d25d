"""Incident review against a recorded hour: the twin renders incident.yaml as OpenMetrics,
promtool backfills it into a TSDB, a test Prometheus serves it, and queries over fixed
time ranges tell the incident's story."""

from __future__ import annotations

from itertools import pairwise
from types import SimpleNamespace

import pytest

from backend.errors import Unavailable
from backend.metrics.client import MetricMissing, MetricsClient
from backend.metrics.dialects import STRIMZI
from backend.model.snapshot import Limits
from backend.services import limits, monitoring
from backend.services.cluster import ClusterSource
from backend.twin.cluster import TwinCluster
from backend.twin.examples import INCIDENT_SCENARIO, incident_snapshot
from backend.twin.history import record_openmetrics
from backend.twin.scenario import ScenarioRunner, load_scenario
from tests.servers import history_prometheus

pytestmark = pytest.mark.integration
EPOCH = 1_704_067_200  # 2024-01-01T00:00:00Z: the incident's t=0
STEP = 30


def at(minutes: float) -> float:
    return EPOCH + minutes * 60


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    home = tmp_path_factory.mktemp("history")
    scenario = load_scenario(INCIDENT_SCENARIO)
    runner = ScenarioRunner(TwinCluster(incident_snapshot(), scenario.settings), scenario)
    record_openmetrics(runner, STRIMZI, scenario.duration, STEP, EPOCH, home / "incident.om")
    with history_prometheus(home / "incident.om") as prom:
        yield MetricsClient(prom.url, "strimzi", ttl=0)


def values(client, concept, minutes, window="2m") -> dict[str, float]:
    frame = client.instant(concept, at=at(minutes), window=window)
    key = "broker" if "broker" in frame else frame.columns[0]
    return dict(zip(frame[key], frame["value"], strict=True))


def test_broker_crosses_its_partition_limit_at_the_second_move(history):
    before, after = values(history, "partitions_per_broker", 19), \
        values(history, "partitions_per_broker", 25)
    limit = incident_snapshot().limits.max_broker_partitions
    assert before["3"] <= limit < after["3"]
    answers = monitoring.overview_now(history, incident_snapshot().limits, at=at(25))
    headroom = answers["partition_headroom"]["frame"].set_index("broker")
    assert bool(headroom.loc["3", "over_limit"]) and headroom.loc["3", "headroom"] < 0


def test_throttle_below_write_rate_lag_climbs_and_the_move_never_finishes(history):
    lag = [values(history, "replica_lag_sum_per_broker", m)["6"] for m in (10, 20, 30, 50)]
    assert all(b > a for a, b in pairwise(lag))
    assert values(history, "reassigning_per_broker", 59)  # still moving at the end
    # the in-sync followers' keep-up writes alone exceed the 300 KB/s throttle on the
    # leaders (KIP-73 counts them), so the new replica on broker 6 gets nothing: like Kafka,
    # which makes the FollowerReplication sensor on a broker's first throttled bytes, the
    # twin then exports no follower byte-rate at all (it exported 0s before issue 24)
    with pytest.raises(MetricMissing):
        values(history, "follower_throttled_rate", 30)
    assert max(values(history, "leader_throttled_rate", 30).values()) > 300_000


def test_tenant_trips_the_mutation_quota(history):
    frame = history.range("mutation_tokens", at(9), at(12), step="30s")
    assert frame["user"].unique().tolist() == ["tenant-a"]
    assert frame["value"].min() < 0  # a request drove the bucket negative
    throttle = history.range("mutation_throttle_time", at(10), at(10.5), step="30s")
    assert throttle["value"].max() > 0


def test_broker_failure_window(history):
    assert values(history, "brokers_up", 42)["5"] == 0
    assert values(history, "brokers_up", 46)["5"] == 1
    urp = [sum(values(history, "under_replicated_per_broker", m).values()) for m in (39, 42, 55)]
    # after recovery the returning replicas catch up, except those the stuck move's
    # leader throttle starves (they are on its throttled-replica list)
    assert urp[0] == 0 and urp[1] > urp[2]


def test_a_throttle_in_the_window_counts_though_it_is_over_at_its_end(history):
    """tenant-a is throttled around 00:10 for seconds; a review of the hour sees it, as
    does the quotas page, although at 01:00 nobody is throttled any more."""
    source = ClusterSource("incident", None, Limits(), prometheus_url=history.url,
                           metrics_ttl=0)
    hour = SimpleNamespace(start=at(0), end=at(60), step=STEP, refreshing=False)
    tokens_at_end = values(history, "mutation_tokens", 60)
    assert all(v >= 0 for v in tokens_at_end.values())  # nobody throttled at the end
    quotas = monitoring.quotas(source, hour)["throttled"]
    # a user quota: one bucket for all the user's clients
    assert quotas["value"] == 1 and quotas["detail"] == ["tenant-a"]
    health = monitoring.health(source, hour)["figures"]["throttled_principals"]
    assert health["detail"] == ["tenant-a"]  # a user quota: one bucket for all its clients
    # and a window after the throttle ended sees nobody
    later = SimpleNamespace(start=at(30), end=at(60), step=STEP, refreshing=False)
    assert monitoring.quotas(source, later)["throttled"]["value"] == 0


def test_where_the_data_is_when_a_window_has_none(history):
    source = ClusterSource("incident", None, Limits(), prometheus_url=history.url,
                           metrics_ttl=0)
    today = SimpleNamespace(start=at(60 * 24 * 400), end=at(60 * 24 * 400 + 360), step=60,
                            refreshing=True)
    assert monitoring.data_ends_before(source, today) == at(60)  # the last scrape, 01:00
    hour = SimpleNamespace(start=at(0), end=at(60), step=STEP, refreshing=False)
    assert monitoring.data_ends_before(source, hour) is None  # this window has data
    # a review of 00:00-06:00 holds the incident, but nothing at its end: the figures
    # there say where the data ends, not that the brokers do not export it
    longer = SimpleNamespace(start=at(0), end=at(360), step=90, refreshing=False)
    assert monitoring.data_ends_before(source, longer) == at(60)
    year = SimpleNamespace(start=at(30), end=at(60 * 24 * 365), step=3600, refreshing=False)
    assert monitoring.data_ends_before(source, year) == at(60)  # as one ending in the future
    with pytest.raises(Unavailable, match="no partition counts at the end of the window "
                       r"\(the cluster's metrics end at 2024-01-01 01:00 UTC\)"):
        limits.guard_rails_at(source, longer)
