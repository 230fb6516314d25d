"""The Overview's partition-health chart over 6 hours has a point every 90 s, and so has
the incident report of those hours: a broker outage of 30 s falls between two of them, and
charting the count at each point showed a healthy cluster (the report: no episode). Here,
from a real Prometheus backfilled with promtool (a sample every 15 s on three brokers),
each point is the most partitions under-replicated, under min ISR, offline or reassigning
at once within its step: the most of the cluster's sum, not the sum of each broker's most
(brokers peaking 15 s apart were never under-replicated together)."""

from __future__ import annotations

import pytest

from backend.model.snapshot import Limits
from backend.services import incident, monitoring
from backend.services.cluster import ClusterSource
from components import timerange
from tests.servers import history_prometheus

pytestmark = pytest.mark.integration
EPOCH = 1_704_067_200  # 2024-01-01 00:00 UTC: the 90 s steps start here
HOURS = 6
SCRAPE = 15
URP = "kafka_server_replicamanager_underreplicatedpartitions"
UNDER_MIN_ISR = "kafka_server_replicamanager_underminisrpartitioncount"
REASSIGNING = "kafka_server_replicamanager_reassigningpartitions"
OFFLINE = "kafka_controller_kafkacontroller_offlinepartitionscount"
# (metric, broker) -> {seconds after EPOCH: value}; every other sample is 0. Chart points
# fall at 3600, 3690, 7200, 7290, 10800, 10890: each episode lies strictly between two
EPISODES = {
    (URP, "1"): {3630: 5, 3645: 2},
    (URP, "2"): {3645: 4},  # at 3645 the cluster has 6; broker 1's 5 was 15 s earlier
    (UNDER_MIN_ISR, "2"): {3645: 1},
    (OFFLINE, "1"): {7230: 1},
    (REASSIGNING, "3"): {10815: 7, 10830: 7},
}


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    home = tmp_path_factory.mktemp("health-history")
    times = range(0, HOURS * 3600 + 1, SCRAPE)
    lines = []
    for metric in (URP, UNDER_MIN_ISR, REASSIGNING, OFFLINE):
        lines.append(f"# TYPE {metric} gauge")
        for broker in ("1", "2", "3"):
            at = EPISODES.get((metric, broker), {})
            lines += [f'{metric}{{broker="{broker}"}} {at.get(t, 0)} {EPOCH + t}'
                      for t in times]
    (home / "health.om").write_text("\n".join([*lines, "# EOF", ""]))
    with history_prometheus(home / "health.om") as prom:
        yield ClusterSource("health", None, Limits(), prometheus_url=prom.url, metrics_ttl=0)


def test_the_health_chart_shows_an_outage_between_two_points(source):
    w = timerange.window("abs", "2024-01-01T00:00", "2024-01-01T06:00", 0)
    assert w.step == 90 and all(t % w.step for at in EPISODES.values() for t in at)
    chart = monitoring.health(source, w)["health_series"]
    seen = {name: [(int(t.timestamp()) - EPOCH, v) for t, v in
                   zip(rows["time"], rows["value"], strict=True) if v]
            for name, rows in chart.groupby("series")}
    assert seen == {"under-replicated": [(3690, 6)], "under min ISR": [(3690, 1)],
                    "offline": [(7290, 1)], "reassigning": [(10890, 7)]}
    # every step has its point: nothing between the episodes went missing
    assert chart.groupby("series").size().tolist() == [HOURS * 3600 // 90 + 1] * 4


def test_the_incident_report_finds_an_outage_between_two_points(source):
    answer = incident.report(source, EPOCH, EPOCH + HOURS * 3600)
    assert answer["step"] == 90
    [episode] = answer["health"].to_dict(orient="records")
    assert episode["from"] == episode["to"] == "2024-01-01 01:01:30"  # the step ending there
    assert episode["peak under-replicated"] == 6  # at once: broker 1's 5 came 15 s earlier
    assert episode["peak under min ISR"] == 1 and episode["leaders reporting"] == "1, 2"
    brokers = answer["brokers"].set_index("broker")  # each leader's own most
    assert brokers["peak under-replicated"].to_dict() == {"1": 5, "2": 4, "3": 0}
    assert brokers["peak reassigning"].to_dict() == {"1": 0, "2": 0, "3": 7}
