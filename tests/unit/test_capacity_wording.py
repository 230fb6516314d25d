"""Capacity's words agree with what they head, and a caveat does not read as an alarm.

The reports headed the answer line "Brokers to add" (HTML and PDF section, CSV key) while
the line led with "past max.partitions ... Adding brokers cannot fix that" (KIP-578:
max.partitions counts every broker's partitions together, so no broker added lowers it):
now that line is headed "Cluster limit (max.partitions)", and "Brokers to add" otherwise.
A history too short for a forecast (Prometheus has scraped the cluster for hours, or not
yet) was a red banner, the page's alarm, while nothing was wrong with the cluster: now it
is the page's caveat, amber, in the same words."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from backend.engines import forecast as fc
from backend.errors import Unavailable
from backend.metrics.client import PrometheusUnavailable, QueryFailed
from backend.model.snapshot import Limits
from backend.services import capacity, monitoring, printing
from components import capacity as cap
from dashboard import reports
from tests.unit.test_capacity_cluster_limit import CANNOT
from tests.unit.test_capacity_exports import NoHistory, draw
from tests.unit.test_capacity_reports import answer
from tests.unit.test_capacity_short_history import MinutesOfHistory
from tests.unit.test_plan_view import app  # noqa: F401 (a fixture)

LABEL = "2024-03-31"
CSS = Path(__file__).resolve().parents[2] / "assets" / "railyard.css"


def with_max_partitions(limit: int) -> dict:
    """test_capacity_reports' answer (two brokers, about 1,700 replicas growing ~14 a day,
    max.broker.partitions = 1,200, one broker added) against max.partitions = ``limit``, as
    services.capacity.forecast answers it (its cluster_limit verdict too)."""
    a = answer()
    h = a["history"]
    a.update(fc.forecast(h["times"], h["brokers"], h["broker_values"], h["cluster_values"],
                         Limits(1_200, limit), fc.Scenario(add_brokers=1), by_days=60))
    a["cluster_limit"] = capacity.cluster_limit(a)
    return a


def cap_documents(a: dict) -> tuple[str, str]:
    """The capacity report's HTML and CSV, as dashboard.reports makes them."""
    html, csv = reports.capacity_documents(a, LABEL)
    return html(), csv()


def headings(html: str) -> list[str]:
    return re.findall(r"<h2>(.*?)</h2>", html)


def test_the_reports_head_a_max_partitions_line_with_the_cluster_limit():
    a = with_max_partitions(2_000)
    assert a["cluster_limit"]["likely"]["over"]  # the case: the line leads with it
    html, csv = cap_documents(a)
    line = cap.brokers_to_add_text(a, LABEL, cap.table_records(capacity.table_frame(a)))
    assert CANNOT in line
    assert headings(html)[1] == "Cluster limit (max.partitions)"
    assert "Brokers to add" not in html
    lines = csv.splitlines()
    assert f"# Cluster limit (max.partitions): {line}" in lines
    assert not [x for x in lines if x.startswith("# Brokers to add")]


@pytest.mark.parametrize("limit", [None, 100_000])
def test_a_line_about_brokers_keeps_its_heading(limit):
    """No max.partitions, or one the date's replicas stay under, even cautiously."""
    a = answer() if limit is None else with_max_partitions(limit)
    assert limit is None or not a["cluster_limit"]["cautious"]["over"]
    html, csv = cap_documents(a)
    assert headings(html)[1] == "Brokers to add"
    assert any(x.startswith("# Brokers to add: By 2024-03-31: ") for x in csv.splitlines())


def test_a_line_over_only_cautiously_is_headed_by_the_cluster_limit_too():
    """The cautious figure alone passes it: the line still leads with max.partitions."""
    a = with_max_partitions(2_000)
    likely = a["brokers_to_add"]["likely"]["replicas"]
    a["cluster_limit"] = {"limit": likely + 1, "likely": {"replicas": likely, "over": False},
                          "cautious": {"replicas": likely + 50, "over": True}}
    assert headings(cap_documents(a)[0])[1] == "Cluster limit (max.partitions)"


def test_the_pdf_heads_it_so_too():
    if not shutil.which("pdftotext"):
        pytest.skip("pdftotext (poppler-utils) is not installed")
    try:
        pdf = printing.html_to_pdf(cap_documents(with_max_partitions(2_000))[0])
    except Unavailable as e:
        pytest.skip(str(e))
    text = " ".join(subprocess.run(["pdftotext", "-", "-"], input=pdf, capture_output=True,
                                   check=True).stdout.decode().split())
    assert "Cluster limit (max.partitions) By 2024-03-31: " in text, text
    assert "Brokers to add" not in text


def css_rule(selector: str) -> dict[str, str]:
    """The declarations of ``selector``'s rule in the dashboard's stylesheet."""
    body = re.search(rf"(?m)^{re.escape(selector)}\s*\{{([^}}]*)\}}", CSS.read_text())
    assert body, selector
    return dict(tuple(p.strip() for p in d.split(":", 1))
                for d in body.group(1).split(";") if d.strip())


@pytest.mark.parametrize("prometheus", [NoHistory, MinutesOfHistory])
def test_too_short_a_history_is_a_caveat_not_an_alarm(app, monkeypatch,  # noqa: F811
                                                      prometheus):
    """No partition counts yet, or counts for minutes: the page's amber caveat (as a bad
    knob or a forecast without the cluster), announced as a status, not red and an alert;
    its words as they were."""
    monkeypatch.setattr(monitoring, "metrics_client", lambda source: prometheus())
    [shown] = draw(app)[0]
    assert shown.className == "banner banner-warning" and shown.role == "status"
    assert shown.children.startswith("Partition history: Prometheus at "
                                     "http://prometheus.test:9090 has no partition counts")
    assert "a forecast needs daily peaks of ReplicaManager PartitionCount" in shown.children
    style = css_rule(".banner-warning")
    assert style["border-color"] == "var(--near)" and style["background"] == "#fff6e0"
    assert css_rule(".banner-error")["border-color"] == "var(--over)"


class Failing:
    """A Prometheus that fails the history's query: ``error`` raised."""

    url = "http://prometheus.test:9090"

    def __init__(self, error: Exception) -> None:
        self.error = error

    def range(self, *args, **kwargs):
        raise self.error


@pytest.mark.parametrize("error", [PrometheusUnavailable("connection refused"),
                                   QueryFailed("query timed out")])
def test_prometheus_failing_is_still_an_error(app, monkeypatch, error):  # noqa: F811
    monkeypatch.setattr(monitoring, "metrics_client", lambda source: Failing(error))
    [shown] = draw(app)[0]
    assert shown.className == "banner banner-error" and shown.role == "alert"
    assert str(error) in shown.children
