"""The Capacity page says when its forecast ran without the cluster (its limits from the
config, the assignment not read), as the CLI's answer does in its "warning"."""

from __future__ import annotations

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
