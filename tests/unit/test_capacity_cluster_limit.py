"""The capacity answer says first when the forecast passes max.partitions (a new user's
report): on the twin demo with a 3000:3 topic planned, the page read "By 2027-06-30:
127,187 replicas likely ... on 9 brokers of 12,500: add 2 brokers" while its chart showed
the cluster crossing max.partitions = 120,000, and with +50% a month "add 10 brokers" at
twice max.partitions. KIP-578 counts every broker's partitions together against
max.partitions and fails CreateTopics and CreatePartitions past it whatever the broker
count, so no broker added fixes it. The page, the CSV and the PDF take the same sentence
(components.capacity.brokers_to_add_text), the CLI's JSON the same verdict
(``cluster_limit``)."""

from __future__ import annotations

import json

from backend.services import capacity
from components import capacity as cap
from dashboard import reports
from tests.unit.helpers import run_cli
from tests.unit.test_capacity_forecast_cli import config, history  # noqa: F401 (a fixture)
from tests.unit.test_plan_view import app, as_user, page, text_of  # noqa: F401 (a fixture)

CANNOT = ("Adding brokers cannot fix that: past max.partitions CreateTopics and "
          "CreatePartitions fail whatever the broker count (KIP-578); raise max.partitions "
          "or remove partitions.")


def demo_answer(likely: int, cautious: int, add: int, safe: int) -> dict:
    """The twin demo's answer by 2027-06-30 with 3000:3 planned (its figures)."""
    return {"brokers_to_add": {"days_ahead": 213.0, "broker_ceiling": 12_500,
                               "brokers_now": 9,
                               "likely": {"replicas": likely, "brokers_to_add": add},
                               "cautious": {"replicas": cautious, "brokers_to_add": safe}},
            "cluster_limit": {"limit": 120_000,
                              "likely": {"replicas": likely, "over": likely > 120_000},
                              "cautious": {"replicas": cautious, "over": cautious > 120_000}}}


def cluster_row(days: float, date: str, earliest: str) -> dict:
    return {"scope": "cluster", "limit_name": "max.partitions", "days": days, "date": date,
            "earliest": earliest}


BROKER_3 = {"scope": "broker 3", "limit_name": "max.broker.partitions", "days": 21.5,
            "date": "2026-12-21", "earliest": "2026-12-20"}


def test_passing_max_partitions_is_said_first_with_its_date_and_what_fixes_it():
    rows = [BROKER_3, cluster_row(160.3, "2027-05-09", "2027-05-03")]
    text = cap.brokers_to_add_text(demo_answer(127_187, 128_466, 2, 2), "2027-06-30", rows)
    assert text == (
        "By 2027-06-30: 127,187 replicas likely (128,466 cautious), past max.partitions = "
        f"120,000 from 2027-05-09. {CANNOT} Per broker (max.broker.partitions), on 9 "
        "brokers of 12,500: add 2 brokers (2 to be safe).")


def test_when_only_the_cluster_limit_binds_no_broker_is_to_add():
    """max.partitions raised past it, the per-broker limit raised too: brokers fit, the
    cluster does not; and a broker filling first is still named."""
    rows = [BROKER_3, cluster_row(10.0, "2026-12-09", "2026-12-08")]
    text = cap.brokers_to_add_text(demo_answer(127_187, 128_466, 0, 0), "2027-06-30", rows)
    assert text.startswith("By 2027-06-30: 127,187 replicas likely (128,466 cautious), past "
                           "max.partitions = 120,000 from 2026-12-09. ")
    assert text.endswith(f"{CANNOT} Per broker (max.broker.partitions), on 9 brokers of "
                         "12,500: no broker to add. Broker 3 reaches max.broker.partitions "
                         "first, on 2026-12-21: new replicas skip it from then (KIP-578), so "
                         "rebalance before.")


def test_over_only_cautiously_or_already_over():
    rows = [cluster_row(250.0, "2027-08-06", "2027-06-20")]
    maybe = cap.brokers_to_add_text(demo_answer(119_000, 121_000, 0, 0), "2027-06-30", rows)
    assert maybe.startswith("By 2027-06-30: 119,000 replicas likely (121,000 cautious): the "
                            "cautious figure passes max.partitions = 120,000, from "
                            f"2027-06-20. {CANNOT}")
    over = cap.brokers_to_add_text(demo_answer(130_000, 131_000, 2, 2), "2027-06-30",
                                   [cluster_row(0.0, "2026-11-29", "2026-11-29")])
    assert over.startswith("By 2027-06-30: 130,000 replicas likely (131,000 cautious), over "
                           f"max.partitions = 120,000 already. {CANNOT}")


def test_under_max_partitions_the_line_is_as_it_was():
    rows = [BROKER_3, cluster_row(300.0, "2027-09-25", "2027-09-01")]
    assert cap.brokers_to_add_text(demo_answer(113_000, 118_000, 1, 1), "2027-06-30",
                                   rows) == (
        "By 2027-06-30: 113,000 replicas likely (118,000 cautious) on 9 brokers of 12,500: "
        "add 1 broker (1 to be safe).")


def test_the_cli_answer_says_whether_max_partitions_is_passed(config, capsys):  # noqa: F811
    """Two brokers growing from 310 replicas by ~4 a day: 680 or so in 90 days."""
    code, out, _ = run_cli(capsys, "capacity", "forecast", "--config", config,
                           "--max-broker-partitions", 200, "--max-partitions", 500)
    answer = json.loads(out)
    assert code == 0
    limit = answer["cluster_limit"]
    assert limit["limit"] == 500 and limit["likely"]["over"] and limit["cautious"]["over"]
    assert limit["likely"]["replicas"] == answer["brokers_to_add"]["likely"]["replicas"]
    room = {**answer, "limits": {**answer["limits"], "max.partitions": 5000}}
    assert not capacity.cluster_limit(room)["cautious"]["over"]
    assert capacity.cluster_limit({**answer, "limits": {"max.partitions": None}}) is None


def test_the_page_and_the_csv_say_it_first(app, monkeypatch):  # noqa: F811
    monkeypatch.setattr(capacity, "history", history)
    ctx = as_user(app, "olga")
    try:
        _, said, rows, *_ = page("/capacity").draw(
            "30", "", "", "200", "500", "", "", {"cluster": "demo", "end": None})
        answer, label = reports.capacity_answer(
            {"cluster": "demo", "window": 30, "growth": 0.0, "add": 0, "mbp": 200, "mp": 500,
             "topic": "", "by": "", "end": ""})
    finally:
        ctx.pop()
    said = text_of(said)
    cluster = next(r for r in rows if r["scope"] == "cluster")
    assert said.startswith("By "), said
    assert f", past max.partitions = 500 from {cluster['date']}. {CANNOT}" in said, said
    assert "Per broker (max.broker.partitions), on 2 brokers of 200: add " in said
    _, csv = reports.capacity_documents(answer, label)
    assert f"# Cluster limit (max.partitions): {said}" in csv().splitlines()
