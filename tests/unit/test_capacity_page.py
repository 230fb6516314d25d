"""The Capacity page says when its forecast ran without the cluster (its limits from the
config, the assignment not read), as the CLI's answer does in its "warning"."""

from __future__ import annotations

import numpy as np
import pytest

from backend.errors import BadInput, Unavailable
from backend.services import capacity, capacity_view
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


def test_a_bad_plan_date_or_window_names_the_field_as_the_page_labels_it(app):  # noqa: F811
    """The banner said "by: expected a date like 2025-06-30, got '30/06/2025'", the URL's
    key, while the field is labelled "Brokers by (YYYY-MM-DD)"; a window the page cannot
    send (its History buttons are 7, 30 and 90 days) said "window". Typed on the page, the
    refusal names the field; typed into a URL, it keeps the URL's key (the one in front
    of what was typed there)."""
    ctx = as_user(app, "olga")
    try:
        draw = page("/capacity").draw
        for knobs, said in (
                (("30", "", "", "", "", "", "30/06/2025"),
                 "brokers by: expected a date like 2025-06-30, got '30/06/2025'"),
                (("30", "", "", "", "", "", "2001-01-01"),
                 "brokers by: 2001-01-01 is before the forecast's day"),
                (("30", "", "", "", "", "", "2999-01-01"),
                 "brokers by: give a date within 10 years of the forecast's day, got "
                 "2999-01-01"),
                (("5", "", "", "", "", "", ""), "history: expected one of 7, 30, 90 days")):
            notes, answer, rows, _, _, title, *_ = draw(*knobs, {"cluster": "demo",
                                                                 "end": None})
            assert text_of(notes) == said and rows == [] and text_of(answer) == ""
            assert title == f"Nothing to export for cluster demo: {said}"  # the exports' tip
        knobs = page("/capacity").layout(cluster="demo", window="5")
        url_by = capacity_view.parse_view({"cluster": "demo", "by": "30/06/2025"})
    finally:
        ctx.pop()
    assert "window: expected one of 7, 30, 90 days; showing the defaults instead" in \
        text_of(knobs)
    with pytest.raises(BadInput, match=r"^by: expected a date like 2025-06-30, got "
                                       r"'30/06/2025'$"):
        capacity_view.by_days(url_by, 1_706_655_600.0)
