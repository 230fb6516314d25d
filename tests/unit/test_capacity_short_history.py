"""`railyard demo --kafka` has no capacity history, and said nothing of it: its log now
says so (the twin's demo backfills 90 days; a cluster the demo created minutes ago has no
past), and /capacity's banner and disabled exports say when Prometheus's partition counts
begin and from when a forecast can be made, where they read "has no partition counts from
2026-10-31 to 2026-11-29" while Prometheus held minutes of them
(tests/integration/test_capacity_short_history.py asks a real Prometheus)."""

from __future__ import annotations

import time

import pandas as pd

from backend.metrics.client import MetricMissing
from backend.services import monitoring
from dashboard.demo_stack import NO_HISTORY_LINE, DemoSettings, DemoStack
from tests.unit.test_capacity_exports import draw, exports
from tests.unit.test_plan_view import app, text_of  # noqa: F401 (a fixture)

HOUR = time.time() // 3600 * 3600  # the forecast's window ends here
FIRST = HOUR + 60  # Prometheus's first partition count: after it


class MinutesOfHistory:
    """A Prometheus that has scraped the cluster since FIRST, and still does: no daily
    peak up to the top of the hour, counts since."""

    url = "http://prometheus.test:9090"

    def range(self, concept, start, end, step="15s", window="1m"):
        if concept == "partitions_per_broker_peak":
            raise MetricMissing("no series")
        # the first point that sees it (by the second, at it), and the window's peaks go
        # on to the point past now
        seen = [FIRST if step == "1s" else FIRST + 60]
        if concept == "cluster_replicas_peak":
            seen.append(end)
        return pd.DataFrame({"timestamp": pd.to_datetime(seen, unit="s", utc=True),
                             "value": 36.0})


def test_the_banner_and_the_exports_say_when_the_counts_begin(app, monkeypatch):  # noqa: F811
    monkeypatch.setattr(monitoring, "metrics_client", lambda source: MinutesOfHistory())
    outputs = draw(app)
    begin = time.strftime("%Y-%m-%d %H:%M", time.gmtime(FIRST))
    ready = time.strftime("%Y-%m-%d %H:%M", time.gmtime(HOUR + 86_400 + 3600))
    said = text_of(outputs[0])
    assert f"; its counts begin {begin} UTC (" in said, said
    assert said.endswith(f"ago), after the window's end: a forecast needs daily peaks of "
                         "ReplicaManager PartitionCount on at least two days, so the first "
                         f"can be made as of about {ready} UTC"), said
    title = exports(outputs)[0][0]
    assert title.startswith("No history for cluster demo yet: exports need a forecast")
    assert f"its counts begin {begin} UTC" in title


def test_the_kafka_demo_says_it_backfills_no_history(tmp_path):
    said: list[str] = []
    DemoStack(DemoSettings(home=tmp_path, kafka=True))._history(tmp_path / "data", said.append)
    assert said == [NO_HISTORY_LINE] and not (tmp_path / "data").exists()
    assert NO_HISTORY_LINE.startswith("prometheus: no partition history backfilled (Apache "
                                      "Kafka's cluster is new): /capacity forecasts once "
                                      "Prometheus holds its partition counts on two days")
