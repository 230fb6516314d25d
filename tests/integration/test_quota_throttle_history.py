"""A controller mutation throttle (KIP-599) lasts seconds: the Quotas page's charts and the
incident report must show one that falls between two of their points. Here, from a real
Prometheus backfilled with promtool: a principal with KIP-599's example quota of 2
partition mutations/s (burst 2 x 11 windows x 1 s = 22 tokens) creates 25 partitions at
once, 5 s after a 15 s step began: its bucket goes to -3 tokens and Kafka throttles it
for 3 / 2 s = 1,500 ms, while the samples either side (5 s apart) are back above zero.
Charting the value at each step's end showed neither; each point is now the extreme of
its step."""

from __future__ import annotations

import pytest

from backend.model.snapshot import Limits
from backend.services import incident, monitoring
from backend.services.cluster import ClusterSource
from components import timerange
from tests.servers import history_prometheus

pytestmark = pytest.mark.integration
EPOCH = 1_704_067_200  # 2024-01-01 00:00 UTC: the 15 s steps start here
MINUTES = 10
SCRAPE = 5
RATE, BURST = 2.0, 22.0  # KIP-599: quota 2/s, quota.window.num 11 x 1 s
BURST_AT = EPOCH + 65  # the sample after the 25 creations (steps end at 60 and 75)


def tokens_at(t: int) -> float:
    """22 until the burst; 22 - 25 = -3 at it; then refilled at 2/s up to 22."""
    return BURST if t < BURST_AT else min(BURST, BURST - 25 + RATE * (t - BURST_AT))


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    home = tmp_path_factory.mktemp("quota-history")
    times = range(EPOCH, EPOCH + MINUTES * 60, SCRAPE)
    tokens, throttle = ("kafka_server_controllermutation_tokens",
                        "kafka_server_controllermutation_throttle_time")
    lines = [f"# TYPE {tokens} gauge",
             *(f'{tokens}{{broker="1",user="tenant-b"}} {tokens_at(t)} {t}' for t in times),
             f"# TYPE {throttle} gauge",
             *(f'{throttle}{{broker="1",user="tenant-b"}} '
               f'{-tokens_at(t) / RATE * 1000 if tokens_at(t) < 0 else 0} {t}' for t in times)]
    (home / "quota.om").write_text("\n".join([*lines, "# EOF", ""]))
    with history_prometheus(home / "quota.om") as prom:
        yield ClusterSource("quota", None, Limits(), prometheus_url=prom.url, metrics_ttl=0)


def test_the_quotas_charts_show_a_throttle_between_two_points(source):
    w = timerange.window("abs", "2024-01-01T00:00", "2024-01-01T00:10", 0)
    assert w.step == 15 and (BURST_AT - EPOCH) % w.step  # the burst is between two points
    q = monitoring.quotas(source, w)
    assert q["throttled"]["detail"] == ["tenant-b"]
    throttle, tokens = q["throttle_series"], q["tokens_series"]
    assert throttle["value"].max() == 1500.0  # 3 tokens short at 2/s
    assert tokens["value"].min() == -3.0
    # the point of the step holding the burst, and only that one
    assert throttle.loc[throttle["value"] > 0, "time"].tolist() == \
        tokens.loc[tokens["value"] < 0, "time"].tolist() == [tokens["time"].iloc[5]]


def test_the_incident_report_names_a_throttle_between_two_points(source):
    answer = incident.report(source, EPOCH, EPOCH + MINUTES * 60)
    assert answer["step"] == 15
    [row] = answer["principals"].to_dict(orient="records")
    assert row["user"] == "tenant-b" and row["throttled"]
    assert row["max throttle time (ms)"] == 1500.0 and row["fewest tokens"] == -3.0
