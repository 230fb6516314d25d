"""The Overview's "Throttled principals" card gives the Quotas page's reason when the
cluster has no controller_mutation_rate quota (Kafka creates no mutation sensors without
one: ControllerMutationQuotaManager), not "no data yet ... the brokers do not export it,
or Prometheus has not scraped them yet"; and the Overview's and the throttle cards' counts
read "1 broker", "1 partition"."""

from __future__ import annotations

from types import SimpleNamespace

from backend.errors import Unavailable
from backend.metrics.client import MetricMissing
from components import monitor, tables, timerange
from tests.unit.test_dashboard import app, served_page  # noqa: F401 (fixture)
from tests.unit.test_monitoring_view import END, EXPORTERS

OK = {"value": 0.0, "error": None, "why": None, "detail": []}
UNREAD = {"value": None, "error": EXPORTERS, "why": "no data", "detail": []}


def card_text(card) -> tuple[str, str | None]:
    value, note = card.children[1], card.children[2]
    return value.children, None if note is None else note.children


def health_cards(overview, throttled: dict, quotas_set, monkeypatch) -> list:
    def quotas(_source):
        if quotas_set is Unavailable:
            raise Unavailable("the gateway of c", "unreachable")
        return quotas_set
    monkeypatch.setattr(overview.monitoring, "quotas_set", quotas)
    figures = {**dict.fromkeys(("under_replicated", "under_min_isr", "offline", "reassigning",
                                "brokers_down", "throttles"), OK),
               "throttled_principals": throttled}
    answer = {"figures": figures, "health_series": MetricMissing("x"),
              "partitions_series": MetricMissing("x"), "partitions_shown": None}
    source = SimpleNamespace(limits=SimpleNamespace(max_broker_partitions=4000))
    view = monitor.View("c", timerange.window("live", None, None, now=END), source)
    cards, _, _ = overview._health(answer, view)
    return cards


def test_no_quota_set_is_the_reason_the_card_gives(app, monkeypatch):  # noqa: F811
    overview = served_page("/")
    value, note = card_text(health_cards(overview, UNREAD, 0, monkeypatch)[-1])
    assert value == "no quota"
    assert note.startswith("no controller_mutation_rate quota is set on this cluster")
    assert "scraped" not in note
    # a quota set (or no answer about quotas): the metric's own reason, as before
    for quotas_set in (1, None, Unavailable):
        value, note = card_text(health_cards(overview, UNREAD, quotas_set,
                                             monkeypatch)[-1])
        assert value == "no data" and note == EXPORTERS, quotas_set
    # a figure that was read is shown, whatever the quotas
    value, _ = card_text(health_cards(overview, {**OK, "value": 2.0,
                                                 "detail": ["a", "b"]}, 0, monkeypatch)[-1])
    assert value == "2"


def test_the_quotas_page_card_says_no_quota_too(app):  # noqa: F811
    quotas = served_page("/quotas")
    missing = MetricMissing("no series")
    q = {"now": [], "now_error": str(missing), "quotas_set": 0, "throttled": UNREAD,
         "tokens_series": missing, "rate_series": missing, "throttle_series": missing}
    view = monitor.View("demo", timerange.window("live", None, None, now=END), None)
    cards = quotas._draw(q, view)[0]
    assert card_text(cards[0])[0] == "no quota"
    view = monitor.View("demo", timerange.window("live", None, None, now=END), None)
    assert card_text(quotas._draw({**q, "quotas_set": 1}, view)[0][0])[0] == "-"


def test_counts_of_one_are_singular(app):  # noqa: F811
    overview = served_page("/")
    g = {"limits": {"max.partitions": None}, "cluster_partitions": 3, "near_limit_ratio": 0.9,
         "cluster_capacity": None, "near": [], "over": [], "topics": 1, "partitions": 3,
         "brokers": [{"id": 1, "capacity": 10}], "racks": ["a"]}
    assert card_text(overview._assignment_cards(g)[-1])[1] == "1 broker in 1 rack"
    two = {**g, "brokers": [{"id": 1, "capacity": 10}, {"id": 2, "capacity": 9}],
           "racks": ["a", "b"]}
    assert card_text(overview._assignment_cards(two)[-1])[1] == "2 brokers in 2 racks"
    r = {"eta_seconds": 60.0, "diagnosis": None, "kip73_move_time_seconds": 60.0,
         "kip73_diagnosis": None, "moved_partitions": 1, "bytes_to_move": 1e9, "brokers": [],
         "fetch_response_ok": True, "fetch_response_max_bytes": 1, "max_fetch_response_bytes": 1,
         "suggested_throttle": None}
    moving = next(c for c in tables.throttle_cards(r) if c.children[0].children == "Moving")
    assert card_text(moving)[0] == "1 partition"


def test_quotas_set_is_the_quotas_pages_count(monkeypatch):
    """monitoring.quotas_set (the Overview's) and monitoring.quotas' quotas_set (the
    Quotas page's) are one answer: 0 on a twin without quotas, 1 once one is set, None
    without a gateway."""
    from backend.model.snapshot import Limits
    from backend.services import monitoring
    from backend.services.cluster import ClusterSource
    from backend.twin.cluster import TwinCluster, TwinSettings
    from backend.twin.gateway import TwinGateway
    from backend.twin.generate import generate_snapshot

    monkeypatch.setattr(monitoring, "_query", lambda _s, _span, jobs: dict.fromkeys(
        jobs, MetricMissing("no series")))
    twin = TwinCluster(generate_snapshot(6, 3, 10, 120, 3, seed=3, limits=Limits(100)),
                       TwinSettings())
    window = timerange.window("live", None, None, now=END)
    for name, setup, want in (("a", None, 0), ("b", ("tenant", None, 2.0), 1)):
        if setup:
            twin.set_mutation_quota(*setup)
        source = ClusterSource(name, None, Limits(), gateway=TwinGateway(twin))
        assert monitoring.quotas_set(source) == want
        assert monitoring.quotas(source, window)["quotas_set"] == want
    assert monitoring.quotas_set(ClusterSource("c", None, Limits())) is None
