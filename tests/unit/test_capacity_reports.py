"""Capacity page state and exports: the URL's knobs checked one line at a time, the HTML
report self-contained and saying what it is, the CSV the same table, and the report
routes behind the dashboard's sign-in."""

from __future__ import annotations

import numpy as np
import pytest

from backend.engines import forecast as fc
from backend.errors import BadInput
from backend.model.snapshot import Limits
from backend.services import capacity_view
from backend.services.capacity import table_frame, to_json
from dashboard.reports import capacity_documents
from tests.unit.test_auth import make_app, sign_in

END = 1_706_655_600.0  # 2024-01-30T23:00Z


def answer() -> dict:
    """What services.capacity.forecast answers, from a known history (no Prometheus)."""
    times = END - np.arange(30)[::-1] * 86_400.0
    days = np.arange(30, dtype=float)
    brokers = np.vstack([500 + 10 * days, 500 + 4 * days + np.where(days >= 15, 300, 0)])
    out = fc.forecast(times, ["1", "2"], brokers, brokers.sum(axis=0), Limits(1_200, 3_000),
                      fc.Scenario(add_brokers=1), by_days=60)
    out.update({"cluster": "prod", "window_days": 30, "by_days": 60,
                "scenario": fc.Scenario(add_brokers=1).__dict__, "planned_topic": None,
                "made_at": "2024-01-31T08:00:00+00:00", "data": "daily peaks from test",
                "history": {"times": times, "brokers": ["1", "2"], "broker_values": brokers,
                            "cluster_values": brokers.sum(axis=0), "start": times[0],
                            "end": END}})
    return out


def test_state_from_the_url_and_back():
    state = capacity_view.parse_view({"cluster": "prod", "window": "90", "add": "2",
                                      "topic": "100:3", "by": "2024-06-30",
                                      "end": "2024-01-30T23:00"})
    assert (state["window"], state["add"], state["topic"]) == (90, 2, "100:3")
    assert capacity_view.scenario(state) == fc.Scenario(0.0, 2, None, None, 100, 3)
    days, label = capacity_view.by_days(state, END)
    assert label == "2024-06-30" and days == pytest.approx(151.04, abs=0.01)
    with pytest.raises(BadInput, match="by: give a date within 10 years of the forecast's day"):
        capacity_view.by_days({**state, "by": "9999-12-31"}, END)  # pandas' dates end in 2262


@pytest.mark.parametrize("query, message", [
    ({"window": "5"}, "window: expected one of 7, 30, 90"),
    ({"add": "-1"}, "add brokers: give a whole number from 0 to 1,000, got -1"),
    ({"add": "2.5"}, "add brokers: give a whole number from 0 to 1,000, got 2.5"),
    ({"mbp": "lots"}, "max.broker.partitions: give a whole number of at least 1, or leave it "
                      "empty for the cluster's current limit, got 'lots'"),
    # KIP-578 has no "0: unlimited"; 0 was taken as a limit nothing fits under
    ({"mp": "0"}, "^max.partitions: give a whole number of at least 1, or leave it empty for "
                  "the cluster's current limit, got 0$"),
    ({"mbp": "0"}, "^max.broker.partitions: give a whole number of at least 1, or leave it "
                   "empty for the cluster's current limit, got 0$"),
    ({"mbp": "1e18"}, "max.broker.partitions: 1e18 is past the largest value, 2,147,483,647"),
    ({"growth": "-101"}, r"growth \+% / month: give a number from 0 to 1,000, got -101"),
    # the forecast never answers fewer replicas than today's: -20 read as 0 in silence
    ({"growth": "-20"}, r"^growth \+% / month: give a number from 0 to 1,000, got -20$"),
    ({"topic": "100x3"}, "topic: expected PARTITIONS:RF"),
    ({"end": "yesterday"}, "end: expected a UTC time"),
])
def test_bad_knobs_are_one_line(query, message):
    with pytest.raises(BadInput, match=message):
        capacity_view.parse_view(query)


@pytest.mark.parametrize("typed, rule", [
    ("100x3", "PARTITIONS:RF like 100:3"),
    ("1_000:3", "PARTITIONS:RF like 100:3"),  # int() took it as 1000
    ("100:3:1", "PARTITIONS:RF like 100:3"),
    ("0:3", "at least 1 partition and a replication factor of at least 1"),
    ("100:-1", "at least 1 partition and a replication factor of at least 1"),
    ("10000000:3", "at most 5,000,000 partitions"),
    ("10:40000", "a replication factor of at most 32,767"),
    ("5000000:4", "at most 15,000,000 replicas (partitions x RF)"),
])
def test_the_planned_topic_field_refuses_in_one_shape(typed, rule):
    """The field, the rule, what was typed: it said "topic: ..." for some and "topic
    '10000000:3': partition count ..." (the input read as a topic's name) for others."""
    with pytest.raises(BadInput) as e:
        capacity_view.parse_view({"topic": typed})
    assert str(e.value) == f"planned topic: expected {rule}, got '{typed}'"


def test_html_report_is_self_contained_and_says_what_it_is():
    a = answer()
    html, csv = capacity_documents(a, "2024-03-31")
    page = html()
    assert "<script src" not in page and "<link" not in page  # opens with no network
    assert page.count("Plotly.newPlot") == 2 and "plotly.js (basic - minified) v" in page
    for text in ("Capacity review: prod", "last 30 days to 2024-01-30 23:00 UTC",
                 "1 broker added", "2024-01-31T08:00:00+00:00", "daily peaks from test",
                 "max.broker.partitions = 1,200", "By 2024-03-31"):
        assert text in page, text
    lines = csv().splitlines()
    assert lines[:2] == ["# Cluster: prod", "# Window: last 30 days to 2024-01-30 23:00 UTC"]
    # the answer the page leads with, as the HTML report gives it (the CSV left it out)
    verdict = next(line for line in lines if line.startswith("# Brokers to add: "))
    assert verdict.removeprefix("# Brokers to add: ").startswith("By 2024-03-31: ")
    assert verdict.removeprefix("# Brokers to add: ") in page
    header = lines.index("# time to limit") + 1
    assert lines[header].startswith("scope,limit,value,now (trend),growth / day,days left")
    assert len(lines) - header - 1 == len(a["table"])
    # every column the report formats is one the table has (a renamed header was skipped
    # in silence): counts whole, days with one decimal
    from dashboard.reports import CAPACITY_COLUMNS
    assert set(CAPACITY_COLUMNS) <= set(lines[header].split(","))
    for row in lines[header + 1:]:
        value, now = row.split(",")[2:4]
        assert value.isdigit() and (now.isdigit() or now == ""), row


def test_table_dates_and_json():
    a = answer()
    frame = table_frame(a)
    assert list(frame["days"]) == sorted(frame["days"], key=lambda d: np.inf if d is None else d)
    first = frame.iloc[0]
    assert first["date"] == (np.datetime64("2024-01-30T23:00") + np.timedelta64(
        round(first["days"] * 24), "h")).astype("datetime64[D]").astype(str)
    plain = to_json({"x": np.array([1.0, np.nan]), "y": np.float64(np.inf)})
    assert plain == {"x": [1.0, None], "y": None}


def test_report_routes_need_sign_in_and_answer_in_one_line(tmp_path):
    from tests.unit.test_auth import USERS
    app = make_app(tmp_path, {"users": USERS, "secret_key_file": str(tmp_path / "key")})
    client = app.server.test_client()
    assert client.get("/reports/capacity.csv?cluster=a").status_code == 302
    assert client.get("/reports/incident.html?cluster=a").status_code == 302
    sign_in(client, "vera")  # a viewer may read reports
    bad = client.get("/reports/capacity.csv?cluster=a&window=5")
    assert bad.status_code == 400 and bad.get_data(as_text=True).count("\n") == 1
    down = client.get("/reports/capacity.csv?cluster=a")  # the cluster has no Prometheus
    assert down.status_code == 503 and "no Prometheus configured" in down.get_data(as_text=True)
    bad_window = client.get("/reports/incident.csv?cluster=a&range=abs&from=x&to=y")
    assert bad_window.status_code == 400
    assert client.get("/reports/capacity.docx?cluster=a").status_code == 404


@pytest.mark.parametrize("report", ["incident.csv", "incident.html", "incident.pdf",
                                    "capacity.csv", "capacity.html", "capacity.pdf"])
def test_a_report_of_a_cluster_the_config_lacks_is_400_naming_it(tmp_path, monkeypatch,
                                                                  report):
    """cluster=nope answered 200 with the first cluster's report (incident-a-....csv):
    now 400 in the words of the monitoring pages' banner, and no report is made."""
    from backend.services import incident, printing
    from dashboard import reports
    from tests.unit.test_auth import USERS
    app = make_app(tmp_path, {"users": USERS, "secret_key_file": str(tmp_path / "key")})
    client = app.server.test_client()
    sign_in(client, "vera")

    def made(*_args, **_kwargs):
        raise AssertionError("a report was made")
    for module, name in ((incident, "report"), (reports, "capacity_answer"),
                         (printing, "html_to_pdf")):
        monkeypatch.setattr(module, name, made)
    for asked, shown in (("nope", "'nope'"), ("<script>", "'<script>'"),
                         ("a\nb", "'a\\nb'")):
        got = client.get(f"/reports/{report}", query_string={"cluster": asked, "range": "1h"})
        assert got.status_code == 400 and got.mimetype == "text/plain"
        assert got.get_data(as_text=True) == (
            f"No cluster is called {shown} in this dashboard's config (clusters: a)\n")


def test_downloads_are_named_after_what_they_cover_with_one_charset(tmp_path, monkeypatch):
    import pandas as pd

    from backend.services import incident
    from dashboard import reports
    from tests.unit.test_auth import USERS
    app = make_app(tmp_path, {"users": USERS, "secret_key_file": str(tmp_path / "key")})
    client = app.server.test_client()
    sign_in(client, "vera")
    monkeypatch.setattr(reports, "capacity_answer", lambda view: (answer(), "2024-03-31"))
    got = client.get("/reports/capacity.csv?cluster=a")
    assert got.status_code == 200 and got.headers["Content-Type"] == "text/csv; charset=utf-8"
    assert got.headers["Content-Disposition"] == \
        'attachment; filename="capacity-prod-2024-01-30.csv"'  # the forecast's day
    html = client.get("/reports/capacity.html?cluster=a")
    assert html.headers["Content-Type"] == "text/html; charset=utf-8"

    def report(source, start, end, store=None):
        return {"cluster": source.name, "made_at": "2026-11-26T17:00:00+00:00", "data": "test",
                "brokers": pd.DataFrame({"broker": ["1"]}), "principals": pd.DataFrame(),
                "plan_events": "none", "series": {k: "no data" for k in incident.SERIES},
                "limits": {"max.broker.partitions": None}, "by": "broker",
                "health": pd.DataFrame(columns=incident.HEALTH_COLUMNS),
                "throttled": {"sent": None, "fetched": None}}
    monkeypatch.setattr(incident, "report", report)
    got = client.get("/reports/incident.csv?cluster=a&range=abs&from=2024-01-01T00:00"
                     "&to=2024-01-01T01:00")
    assert got.status_code == 200 and got.headers["Content-Type"] == "text/csv; charset=utf-8"
    assert got.headers["Content-Disposition"] == \
        'attachment; filename="incident-a-20240101T0000Z-20240101T0100Z.csv"'


def test_the_brokers_to_add_line_names_a_broker_that_fills_first():
    """The cluster's total fits by the date (add 0 brokers) while one broker reaches
    max.broker.partitions before it: the line says which and when, not only "add 0"."""
    from components import capacity as cap

    fits = {"brokers_to_add": {"days_ahead": 90.0, "broker_ceiling": 12_500, "brokers_now": 9,
                               "likely": {"replicas": 101_839, "brokers_to_add": 0},
                               "cautious": {"replicas": 102_290, "brokers_to_add": 0}}}
    rows = [{"scope": "broker 3", "limit_name": "max.broker.partitions", "days": 21.5,
             "date": "2026-12-19"},
            {"scope": "cluster", "limit_name": "max.partitions", "days": 229.3,
             "date": "2027-07-14"}]
    head = ("By 2027-02-25: 101,839 replicas likely (102,290 cautious) on 9 brokers of "
            "12,500: no broker to add.")
    assert cap.brokers_to_add_text(fits, "2027-02-25", rows) == (
        f"{head} Broker 3 reaches max.broker.partitions first, on 2026-12-19: new replicas "
        "skip it from then (KIP-578), so rebalance before.")
    later = [{**rows[0], "days": 120.0, "date": "2027-03-27"}, rows[1]]
    assert cap.brokers_to_add_text(fits, "2027-02-25", later) == head
    assert cap.brokers_to_add_text(fits, "2027-02-25", [{**rows[0], "days": None,
                                                         "date": None}]) == head
    grows = {"brokers_to_add": {**fits["brokers_to_add"],
                                "likely": {"replicas": 113_000, "brokers_to_add": 1},
                                "cautious": {"replicas": 126_000, "brokers_to_add": 2}}}
    assert cap.brokers_to_add_text(grows, "2027-02-25", rows).endswith(
        "on 9 brokers of 12,500: add 1 broker (2 to be safe).")  # not "1 broker(s)"


def test_csv_cells_a_spreadsheet_would_run_open_as_text():
    """The incident CSV's principals carry client ids Kafka's clients choose: a cell
    =HYPERLINK(...) ran as a formula in the spreadsheet it was opened in (OWASP: CSV
    injection). Each such text cell gets a leading '; numbers, negative ones too, stay."""
    import pandas as pd

    from components.reports import csv_document

    frame = pd.DataFrame({"user": ["tenant-a"] * 5,
                          "client_id": ['=HYPERLINK("https://evil.example","x")', "+1", "-2",
                                        "@SUM(A1)", "app-1"],
                          "throttle_ms": [-1.0, 0.0, 1.5, 2.0, 3.0]})
    lines = csv_document({"cluster": "prod"}, {"principals": frame}).splitlines()
    assert lines == ["# cluster: prod", "# principals", "user,client_id,throttle_ms",
                     'tenant-a,"\'=HYPERLINK(""https://evil.example"",""x"")",-1.0',
                     "tenant-a,'+1,0.0", "tenant-a,'-2,1.5", "tenant-a,'@SUM(A1),2.0",
                     "tenant-a,app-1,3.0"]
    assert frame["client_id"][0].startswith("=")  # the caller's frame is unchanged
