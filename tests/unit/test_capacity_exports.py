"""The Capacity page's exports are shown disabled, their tooltip saying why, when the page
already knows they would be refused: a cluster with no partition history yet had HTML
report, PDF and CSV links that looked ready and only answered one line once clicked. The
server still refuses such an export on its own."""

from __future__ import annotations

from backend.errors import BadInput, Unavailable
from backend.metrics.client import MetricMissing
from backend.services import capacity, monitoring
from components import capacity as cap
from tests.unit.test_auth import login_token
from tests.unit.test_capacity_forecast_cli import history
from tests.unit.test_plan_view import app, as_user, page, text_of  # noqa: F401 (a fixture)

VIEW = {"cluster": "demo", "end": None}
KNOBS = ("30", "", "", "200", "", "", "")


class NoHistory:
    """A Prometheus that answers but holds no partition counts (nothing scraped yet)."""

    url = "http://prometheus.test:9090"

    def range(self, *args, **kwargs):
        raise MetricMissing("no series")


def draw(app):  # noqa: F811
    ctx = as_user(app, "olga")
    try:
        return page("/capacity").draw(*KNOBS, VIEW)
    finally:
        ctx.pop()


def exports(outputs: tuple) -> list[tuple]:
    """(title, aria-disabled) of the HTML, PDF and CSV links, as the callback sets them."""
    state = outputs[5:]
    assert len(state) == 6, outputs
    return [tuple(state[i:i + 2]) for i in range(0, 6, 2)]


def test_no_history_disables_the_exports_and_says_why(app, monkeypatch):  # noqa: F811
    monkeypatch.setattr(monitoring, "metrics_client", lambda source: NoHistory())
    outputs = draw(app)
    assert "Partition history: Prometheus at http://prometheus.test:9090 has no partition " \
           "counts" in text_of(outputs[0])  # the banner, as before
    links = exports(outputs)
    assert [disabled for _, disabled in links] == ["true"] * 3
    title = links[0][0]
    assert title.startswith("No history for cluster demo yet: exports need a forecast")
    assert "has no partition counts from" in title and {t for t, _ in links} == {title}

    # the server refuses the same export on its own (the page only shows it disabled)
    client = app.server.test_client()
    client.post("/login", data={"username": "vera", "password": "x", "next": "/",
                                "csrf_token": login_token(client)})
    refused = client.get("/reports/capacity.csv?cluster=demo")
    body = refused.get_data(as_text=True)
    assert refused.status_code == 503 and body.count("\n") == 1, body
    assert "has no partition counts" in body


def test_a_forecast_keeps_the_exports_enabled(app, monkeypatch):  # noqa: F811
    monkeypatch.setattr(capacity, "history", history)
    links = exports(draw(app))
    assert links == [(None, "false")] * 3


def test_every_refusal_the_page_knows_of_disables_them_with_its_reason():
    down = cap.export_refusal("prod", Unavailable("Prometheus at http://p:9090",
                                                  "unreachable (refused)"))
    assert down == ("Nothing to export for cluster prod: Prometheus at http://p:9090: "
                    "unreachable (refused)")
    bad = cap.export_refusal("prod", BadInput("add brokers: give a whole number"))
    assert bad == "Nothing to export for cluster prod: add brokers: give a whole number"
    assert cap.export_links(bad, 2) == [bad, "true", bad, "true"]
    assert cap.export_links(None, 1) == [None, "false"]
