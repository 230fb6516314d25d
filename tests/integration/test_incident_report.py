"""The incident report of the twin's recorded incident hour, from a real Prometheus and a
real SQLite plan store: what was throttled, how far replicas lagged, partition counts
against the limit, the plan events of the window; as HTML (self-contained), CSV and PDF."""

from __future__ import annotations

import shutil
import subprocess
from datetime import UTC, datetime, timedelta

import pytest

from backend.errors import Unavailable
from backend.metrics.dialects import STRIMZI
from backend.metrics.server import PrometheusProcess, backfill_openmetrics
from backend.services import incident, plans, printing
from backend.services.cluster import ClusterSource
from backend.store.store import open_store
from backend.twin.cluster import TwinCluster
from backend.twin.examples import INCIDENT_SCENARIO, incident_snapshot
from backend.twin.history import record_openmetrics
from backend.twin.scenario import ScenarioRunner, load_scenario
from components import timerange
from dashboard.reports import incident_documents
from tests.plan_helpers import OPERATOR, moves, orders_cluster

pytestmark = pytest.mark.integration
EPOCH = 1_704_067_200  # the incident's t=0
T0 = datetime.fromtimestamp(EPOCH, UTC)


@pytest.fixture(scope="module")
def answer(tmp_path_factory):
    home = tmp_path_factory.mktemp("incident")
    scenario = load_scenario(INCIDENT_SCENARIO)
    runner = ScenarioRunner(TwinCluster(incident_snapshot(), scenario.settings), scenario)
    record_openmetrics(runner, STRIMZI, scenario.duration, 30, EPOCH, home / "incident.om")
    prom = PrometheusProcess(home / "prom")
    backfill_openmetrics(home / "incident.om", prom.data_dir)
    prom.write_config({"global": {"scrape_interval": "1m"}, "scrape_configs": []})
    store = open_store(f"sqlite:///{home / 'plans.db'}")
    snap = orders_cluster()
    for minutes, cluster in ((15, "incident"), (90, "incident"), (20, "other")):
        plans.propose(store, OPERATOR, cluster=cluster, kind="reassignment",
                      content=moves(("orders", 0, [3, 4])), preview={}, snapshot=snap,
                      now=T0 + timedelta(minutes=minutes))
    source = ClusterSource("incident", None, incident_snapshot().limits,
                           prometheus_url=prom.url, metrics_ttl=0)
    try:
        prom.start(retention="100y")
        yield incident.report(source, EPOCH, EPOCH + 3600, store=store)
    finally:
        prom.stop()
        store.close()


def test_the_window_tells_what_was_throttled_and_where_limits_stood(answer):
    brokers = answer["brokers"].set_index("broker")
    limit = incident_snapshot().limits.max_broker_partitions
    assert brokers.loc["3", "peak replicas"] > limit  # broker 3 crossed its limit
    assert brokers.loc["3", "peak % of limit"] > 100
    assert brokers["peak throttled sent (B/s)"].max() > 300_000  # KIP-73 leader throttle
    assert brokers.loc["6", "peak lag (messages)"] > 0
    principals = answer["principals"]
    assert principals.iloc[0]["user"] == "tenant-a" and principals.iloc[0]["throttled"]


def test_plan_events_are_the_clusters_in_the_window(answer):
    events = answer["plan_events"]
    assert events["action"].tolist() == ["propose"] and events["at"].iloc[0].endswith("00:15:00")


def test_html_is_self_contained_and_csv_and_pdf_say_what_they_are(answer):
    w = timerange.window("abs", "2024-01-01T00:00", "2024-01-01T01:00", 0)
    html, csv = incident_documents(answer, w)
    page = html()
    assert "<script src" not in page and "Plotly.newPlot" in page
    for text in ("incident", "2024-01-01 00:00 to 2024-01-01 01:00", "Prometheus at",
                 "tenant-a", "propose"):
        assert text in page
    lines = csv().splitlines()
    assert lines[0] == "# Cluster: incident" and "# plan events" in lines
    if not shutil.which("pdftotext"):
        pytest.skip("pdftotext (poppler-utils) is not installed")
    try:
        pdf = printing.html_to_pdf(page)
    except Unavailable as e:
        pytest.skip(str(e))
    text = subprocess.run(["pdftotext", "-", "-"], input=pdf, capture_output=True).stdout
    assert b"Incident review: incident" in text and b"tenant-a" in text
