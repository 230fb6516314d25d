"""The Capacity page says when its forecast ran without the cluster (its limits from the
config, the assignment not read), as the CLI's answer does in its "warning"."""

from __future__ import annotations

import numpy as np

from backend.errors import Unavailable
from backend.services import capacity
from tests.unit.test_capacity_forecast_cli import history
from tests.unit.test_plan_view import app, as_user, page, text_of  # noqa: F401 (a fixture)


def test_a_forecast_without_the_cluster_says_so(app, monkeypatch):  # noqa: F811
    monkeypatch.setattr(capacity, "history", history)
    monkeypatch.setattr(capacity, "_assignment", lambda source: (
        None, Unavailable("Twin at http://127.0.0.1:9", "unreachable (no answer)")))
    ctx = as_user(app, "olga")
    try:
        notes, answer, rows, *_ = page("/capacity").draw(
            "30", "", "", "200", "", "", "", {"cluster": "demo", "end": None})
    finally:
        ctx.pop()
    assert rows and "brokers" in text_of(answer), text_of(notes)
    assert ("The forecast ran without the cluster: the cluster's assignment was not read "
            "(Twin at http://127.0.0.1:9") in text_of(notes)


def test_the_growth_field_says_it_is_added_to_the_measured_trend(app):  # noqa: F811
    """The field had no help: -20 was typed as if it were the whole growth."""
    from components.help import TERMS
    ctx = as_user(app, "olga")
    try:
        knobs = page("/capacity").layout(cluster="demo")
    finally:
        ctx.pop()
    growth = _label(knobs, "Growth +% / month")
    assert growth is not None and growth.className == "term"
    assert growth.title == TERMS["growth"] and "on top of the trend measured" in growth.title


def _label(node, text: str):
    """The component in ``node`` whose children are ``text``."""
    if getattr(node, "children", None) == text:
        return node
    children = getattr(node, "children", None)
    for child in children if isinstance(children, list) else [children]:
        if child is not None and not isinstance(child, str):
            found = _label(child, text)
            if found is not None:
                return found
    return None


def nine_brokers(source, days, end=None):
    """The demo snapshot's brokers 1-9, each growing (capacity.history, no Prometheus)."""
    h = history(source, days, end)
    values = np.vstack([h["broker_values"][0] + 10 * b for b in range(9)])
    return {**h, "brokers": [str(b) for b in range(1, 10)], "broker_values": values,
            "cluster_values": values.sum(0)}


def _draw(app, monkeypatch, topic: str, mbp: str = ""):  # noqa: F811
    monkeypatch.setattr(capacity, "history", nine_brokers)
    ctx = as_user(app, "olga")
    try:
        return page("/capacity").draw("30", "", "", mbp, "", topic, "",
                                      {"cluster": "demo", "end": None})
    finally:
        ctx.pop()


def test_a_planned_topic_wider_than_the_cluster_names_the_field_and_what_was_typed(
        app, monkeypatch):  # noqa: F811
    """It said "topic 'planned-topic': replication factor: 12 larger than available
    brokers: 9", a name the user never typed."""
    notes, answer, rows, *_ = _draw(app, monkeypatch, "100:12")
    assert text_of(notes) == ("planned topic: expected a replication factor of at most 9, "
                              "the brokers the cluster has, got '100:12'")
    assert rows == [] and text_of(answer) == ""


def test_a_planned_topic_the_limits_refuse_today_is_named_as_typed(app, monkeypatch):  # noqa: F811
    notes, _, rows, *_ = _draw(app, monkeypatch, "100:3", mbp="200")
    said = text_of(notes)
    assert said.startswith("The planned topic would be refused today: max.broker.partitions="
                           "200 would be exceeded: the planned topic '100:3' needs 100 x 3 "
                           "replicas"), said
    assert "planned-topic" not in said and rows


def test_the_limit_column_shows_the_brokers_room_in_words_that_fit(app, monkeypatch):  # noqa: F811
    """It showed "max.broker.partitions x brok...": the row says "max.broker.partitions x 9"
    (its scope's brokers), on the page as in the reports, which take the same table."""
    _, _, rows, *_ = _draw(app, monkeypatch, "")
    [room] = [r for r in rows if r["scope"] == "cluster over 9 brokers"]
    assert room["limit_name"] == "max.broker.partitions x 9"
    assert {r["limit_name"] for r in rows if r is not room} == {"max.broker.partitions",
                                                                "max.partitions"}
