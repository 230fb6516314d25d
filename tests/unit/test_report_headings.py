"""The printable reports say each section's heading once: a chart drew its own title
("Partition replicas per broker") just under the section heading that said the same."""

from __future__ import annotations

import re
from html import escape

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from backend.services import incident
from components import capacity as cap
from components import charts, reports, timerange
from dashboard.reports import capacity_documents, incident_documents
from tests.unit.test_capacity_reports import answer as capacity_answer

START = 1_704_067_200  # 2024-01-01T00:00Z


def headings(page: str) -> list[str]:
    return re.findall(r"<h2>(.*?)</h2>", page)


def incident_answer() -> dict:
    """What services.incident.report answers, from made-up series (no Prometheus): each
    chart's title is its section's heading."""
    times = pd.date_range(pd.Timestamp(START, unit="s", tz="UTC"), periods=20, freq="3min")

    def frame(by: str) -> pd.DataFrame:
        return pd.DataFrame({"timestamp": times, "value": np.linspace(0, 2e6, 20), by: "1",
                             "client_id": "c"})
    series = {k: frame("user" if k.startswith("mutation") else "broker")
              for k in incident.SERIES}
    series["lag"] = "no MaxLag series in this Prometheus (x)"  # an empty chart's title too
    return {"cluster": "prod", "made_at": "2024-01-01T01:00:00+00:00", "data": "made up",
            "plan_events": "no plan store", "health": pd.DataFrame({"minutes": [3.0]}),
            "brokers": pd.DataFrame({"broker": ["1"]}),
            "principals": pd.DataFrame({"principal": ["a"]}),
            "throttled": {"sent": 2e6, "fetched": 1e6},
            "limits": {"max.broker.partitions": 100}, "series": series, "by": "broker"}


def test_each_incident_heading_is_said_once():
    w = timerange.viewable("abs", "2024-01-01T00:00", "2024-01-01T01:00", START + 7200)
    page = incident_documents(incident_answer(), w)[0]()
    said = headings(page)
    titles = [escape(title) for _, title, _ in incident.SERIES.values()]
    assert set(titles) <= set(said)
    for heading in said:
        assert page.count(heading) == 1, heading  # not again as the chart's title


def test_each_capacity_heading_is_said_once_and_the_charts_are_headed_by_their_titles():
    page = capacity_documents(capacity_answer(), "2024-03-31")[0]()
    said = headings(page)
    assert said[-2:] == ["Partition replicas in the cluster, last 30 days and forecast",
                         f"Partition replicas per broker (the {cap.BROKER_LINES} most "
                         "urgent), last 30 days and forecast"]
    for heading in said:
        assert page.count(heading) == 1, heading


def test_a_figure_loses_its_title_and_keeps_its_plot_size():
    frame = pd.DataFrame({"time": pd.to_datetime([0, 60], unit="s"), "value": [1.0, 2.0],
                          "series": ["a", "a"]})
    built = charts.time_series(frame, "Rates<br>last 15 min", "bytes/s")
    drawn = charts.empty("Nothing & more", "no samples")
    for figure in (built, drawn):
        before = figure["layout"] if isinstance(figure, dict) else \
            figure.to_plotly_json()["layout"]
        after = reports.untitled(figure)["layout"]
        assert after["title"]["text"] == ""
        assert after["height"] - after["margin"]["t"] == \
            before["height"] - before["margin"]["t"]
    assert reports.figure_title(built) == "Rates last 15 min"
    assert reports.figure_title(go.Figure(layout={"title": {"text": "a &amp; b"}})) == "a & b"
    page = reports.html_document("t", {}, [("Rates", built)])
    assert page.count("Rates last 15 min") == 0 and page.count("Rates<br>") == 0


def test_the_throttle_note_diagnoses_a_starved_move_only_while_partitions_moved():
    """An incident window after a finished move on the Apache Kafka demo read "sent 390
    B/s, fetched 0 B/s ... the move could not finish": the leaders' meter was fading, and
    nothing was being reassigned."""
    from dashboard.reports import throttle_note

    faded = throttle_note({"sent": 390.0, "fetched": 0.0, "reassigning": 0.0})
    assert "could not finish" not in faded
    assert "No partition was being reassigned in this window" in faded
    starved = "the moving replicas got little or nothing"
    assert starved in throttle_note({"sent": 1e6, "fetched": 1e4, "reassigning": 3.0})
    assert starved in throttle_note({"sent": 1e6, "fetched": 1e4, "reassigning": None})
    assert throttle_note({"sent": 0.0, "fetched": 0.0, "reassigning": 0.0}) == \
        "No throttled replication in this window."


def test_the_leader_sides_floor_is_not_read_as_throttled_data():
    """On an idle Apache Kafka with no throttle the leader side read 125 B/s a broker: every
    follower fetch's response overhead is recorded there (KafkaApis's
    sizeOfThrottledPartitions), while the follower side records throttled partitions only."""
    from dashboard.reports import throttle_note

    idle = throttle_note({"sent": 379.0, "fetched": None, "reassigning": 0.0})
    assert "the sent figure is Kafka's floor, not throttled data" in idle
    assert "fading after a move" not in idle
    fading = throttle_note({"sent": 5e5, "fetched": 2e5, "reassigning": 0.0})
    assert "fading after a move" in fading and "floor" not in fading
