"""The monitoring pages' one callback skeleton (dashboard.monitoring_view.monitored): a
window before the cluster's data makes every card and figure say so, not guess at
exporters; a service that cannot answer gives empty figures titled per slot; a past
window's "now" figures say when its end is."""

from __future__ import annotations

import html
from types import SimpleNamespace

import pandas as pd
import pytest

from backend.errors import Unavailable
from backend.metrics.client import MetricMissing
from components import monitor, timerange
from dashboard import monitoring_view
from tests.unit.test_dashboard import app, served_page  # noqa: F401 (fixture)

END = 1_704_070_800.0  # 2024-01-01 01:00 UTC: where the incident's recorded metrics end
STATE = {"cluster": "incident", "range": "6h", "from": None, "to": None}
EXPORTERS = "no data yet for x: the brokers do not export it, or Prometheus has not scraped"


@pytest.fixture
def wired(monkeypatch):
    """The skeleton with a source whose data ends at END, drawing straight away."""
    source = SimpleNamespace(name="incident")
    monkeypatch.setattr(monitoring_view.runtime, "current",
                        lambda: SimpleNamespace(source=lambda name: source))
    monkeypatch.setattr(monitoring_view.caches, "drawn",
                        lambda page, state, w, build: build())
    monkeypatch.setattr(monitoring_view.monitoring, "data_ends_before",
                        lambda source, w: END)
    return source


def said(fig) -> str:
    """What an empty figure says, its wrapped lines joined."""
    return " ".join(html.unescape(a.text.replace("<br>", " ")) for a in fig.layout.annotations)


def draw_cards(answer: dict, view: monitor.View) -> tuple:
    fig = answer["figure"]
    return ([view.note(fig)], view.figure(answer["series"], "Partition health", "partitions"))


def test_cards_and_figures_give_the_real_reason_when_the_data_ends_before(wired):
    answer = {"figure": {"value": None, "error": EXPORTERS, "why": "no data"},
              "series": MetricMissing(EXPORTERS)}
    cards, fig, notes = monitoring_view.monitored(
        "overview", "/", STATE, lambda source, w: answer, draw_cards, ("Partition health",))
    [note] = cards
    assert note == "no data in this window: the cluster's metrics end at 2024-01-01 01:00 UTC"
    assert said(fig) == note
    assert "metrics end at 2024-01-01 01:00 UTC" in str(notes)  # the banner links there


def test_data_ending_inside_the_window_explains_the_empty_figures_at_its_end(wired):
    """A review of 00:00-06:00 of a cluster whose metrics end at 01:00 (or a window ending
    in the future): the cards at the window's end say where the data ends, not that the
    brokers do not export it; the charts draw the hour there is; the banner links there."""
    state = {**STATE, "range": "abs", "from": "2024-01-01T00:00", "to": "2024-01-01T06:00"}
    series = pd.DataFrame({"time": [pd.Timestamp("2024-01-01 00:30", tz="UTC")], "value": [3.0],
                           "series": ["under-replicated"]})
    answer = {"figure": {"value": None, "error": EXPORTERS, "why": "no data"},
              "series": series}
    cards, fig, notes = monitoring_view.monitored(
        "overview", "/", state, lambda source, w: answer, draw_cards, ("Partition health",))
    assert cards == ["no data at the window's end: the cluster's metrics end at "
                     "2024-01-01 01:00 UTC"]
    assert list(fig["data"][0]["y"]) == [3.0]  # the hour there is, drawn
    assert "No data at this window's end: cluster incident's metrics end at 2024-01-01 " \
        "01:00 UTC" in str(notes)
    answer["series"] = MetricMissing(EXPORTERS)  # a chart's own error stays its own
    _, fig, _ = monitoring_view.monitored(
        "overview", "/", {**state, "to": "2024-01-01T05:00"}, lambda source, w: answer,
        draw_cards, ("Partition health",))
    assert said(fig) == EXPORTERS


def test_a_service_that_cannot_answer_gives_one_titled_empty_figure_per_slot(wired):
    def ask(source, w):
        raise Unavailable("Prometheus at http://p", "unreachable")

    cards, tokens, rate, notes = monitoring_view.monitored(
        "quotas", "/quotas", STATE, ask, draw_cards, ("Tokens per principal", "Mutation rate"))
    assert cards == []
    assert tokens.layout.title.text == "Tokens per principal"
    assert rate.layout.title.text == "Mutation rate"
    assert "unreachable" in str(notes[0])


def test_a_window_carries_its_end():
    w = timerange.window("abs", "2024-01-01T00:00", "2024-01-01T01:00", now=END + 86400)
    assert w.end_label == "2024-01-01 01:00 UTC"
    assert monitor.View("c", w, None).when == "at 2024-01-01 01:00 UTC"
    live = timerange.window("live", None, None, now=END)
    assert monitor.View("c", live, None).when == "now"
    fine = monitor.View("c", live, None)
    assert fine.note({"error": "Prometheus at http://p is slow"}) == \
        "Prometheus at http://p is slow"  # with data in the window, the error as it was


def test_the_eta_card_says_why_the_charts_still_show_a_move_that_ended(app):  # noqa: F811
    """After a move the cards said nothing was moving while the "now" chart still showed
    throttled bytes: the card says the rates are minute averages that fade."""

    throttles = served_page("/throttles")
    live = monitor.View("c", timerange.window("live", None, None, now=END), None)
    idle = {"error": None, "moving": 0, "moving_why": None, "eta_seconds": None}
    seen = throttles._eta_cards(idle, {"moving": 0, "eta_seconds": None,
                                       "note": "no reassignment in progress"}, live)[0]
    assert "nothing moving" in str(seen) and "fading" in str(seen)


def test_a_broker_reading_above_its_throttle_is_explained_not_hidden(app, monkeypatch):  # noqa: F811
    """Kafka's measured throttled rate reads over the throttle at a move's start (a
    broker idle before it may copy up to the rate x 11 s at once: SimpleRate's window,
    KIP-73's 11 one-second samples). The chart shows the bar over its line; a banner
    says why, naming only the brokers over it by more than rounding."""
    throttles = served_page("/throttles")
    monkeypatch.setattr(throttles.plan_views, "events_in", lambda *a: [])
    past = monitor.View("c", timerange.window("abs", "2024-01-01T00:00", "2024-01-01T01:00",
                                              now=END + 86400), None)
    rates = {"brokers": ["1", "2", "3"], "leader": [240_000.0, 60_500.0, None],
             "follower": [0.0, None, 30_000.0], "error": None,
             "configured": {"leader": [60_000, 60_000, None],
                            "follower": [60_000, 60_000, 60_000]}}
    idle = {"error": None, "moving": 0, "moving_why": None, "eta_seconds": None}
    answer = {"rates": rates, "observed_eta": idle, "predicted_eta": None,
              "rates_series": MetricMissing("x"), "lag_series": MetricMissing("x"),
              "reassign_series": MetricMissing("x")}
    throttles._draw(answer, past)
    [note] = [str(n) for n in past.notes if "above the configured throttle" in str(n)]
    assert "Broker 1 reads above" in note and "rate x 11 s" in note  # 60.5 kB/s on 2 is rounding
    calm = monitor.View("c", past.window, None)
    throttles._draw({**answer, "rates": {**rates, "leader": [59_000.0, 0.0, None]}}, calm)
    assert not [n for n in calm.notes if "above the configured throttle" in str(n)]
    unknown = monitor.View("c", past.window, None)  # no configured rates: nothing to say
    throttles._draw({**answer, "rates": {**rates, "configured": None}}, unknown)
    assert not [n for n in unknown.notes if "above the configured throttle" in str(n)]


def test_the_leader_sides_floor_without_any_follower_throttle_is_explained(app,  # noqa: F811
                                                                           monkeypatch):
    """On the idle Apache Kafka demo, with no throttle set, the leader side read 125 B/s a
    broker (every follower fetch's response overhead: KafkaApis's sizeOfThrottledPartitions)
    and the chart drew it as throttled traffic; the page now says what it is."""
    throttles = served_page("/throttles")
    monkeypatch.setattr(throttles.plan_views, "events_in", lambda *a: [])
    none = [None, None, None]
    rates = {"brokers": ["1", "2", "3"], "leader": [125.0, 121.0, 130.0],
             "follower": none, "error": None,
             "configured": {"leader": none, "follower": none}}
    idle = {"error": None, "moving": 0, "moving_why": None, "eta_seconds": None}
    answer = {"rates": rates, "observed_eta": idle, "predicted_eta": None,
              "rates_series": MetricMissing("x"), "lag_series": MetricMissing("x"),
              "reassign_series": MetricMissing("x")}
    view = monitor.View("c", timerange.window("abs", "2024-01-01T00:00", "2024-01-01T01:00",
                                              now=END + 86400), None)
    throttles._draw(answer, view)
    assert [n for n in view.notes if "The leader side never reads 0" in str(n)]
    moving = monitor.View("c", view.window, None)  # a follower fetches throttled bytes
    throttles._draw({**answer, "rates": {**rates, "follower": [0.0, 900.0, None]}}, moving)
    assert not [n for n in moving.notes if "The leader side never reads 0" in str(n)]


def test_moving_with_nothing_behind_yet_says_so_not_0_s(app):  # noqa: F811
    """On Apache Kafka the card said "0 s, 0.0 MB left" for the first seconds of a move:
    the new replicas' log sizes were not scraped yet."""
    throttles = served_page("/throttles")
    live = monitor.View("c", timerange.window("live", None, None, now=END), None)
    starting = {"error": None, "moving": 5, "moving_why": None, "eta_seconds": None,
                "remaining_bytes": 0.0, "rate": 2.9e5, "basis": "partitions in flight"}
    seen = str(throttles._eta_cards(starting, None, live)[0])
    assert "none behind" in seen and "first scrape" in seen
    assert "stalled" not in seen and "0 s" not in seen



def test_the_observed_eta_card_says_what_its_pace_is(app):  # noqa: F811
    """Live: how fast the bytes left shrank over the last 2 min, 'measuring' before the
    moves have run that long (not 'stalled'), 'stalled' when they did not shrink; a past
    window divides by the copy rate and says the move may take longer."""
    throttles = served_page("/throttles")
    live = monitor.View("c", timerange.window("live", None, None, now=END), None)
    base = {"error": None, "moving": 150, "moving_why": None, "remaining_bytes": 9.97e8,
            "basis": "partitions in flight", "bound": False, "measuring": False}
    shown = [str(throttles._eta_cards({**base, **o}, None, live)[0]) for o in (
        {"rate": 4.63e5, "eta_seconds": 2152.0},
        {"rate": None, "eta_seconds": None, "measuring": True},
        {"rate": 0.0, "eta_seconds": None},
        {"rate": 1e6, "eta_seconds": 997.0, "bound": True, "basis": "every partition"})]
    assert "36 min" in shown[0] and "997.0 MB left, shrinking 0.46 MB/s over the last 2 min" \
        in shown[0]
    assert "measuring" in shown[1] and "once these moves have run 2 min" in shown[1]
    assert "stalled" not in shown[1]
    assert "stalled" in shown[2] and "not shrinking over the last 2 min" in shown[2]
    assert "at 1.00 MB/s copied" in shown[3] and "may take longer" in shown[3]


def test_the_predicted_eta_card_says_it_counts_from_the_moves_start_at_today_s_sizes(app):  # noqa: F811
    """On the demo the card read 46, 48, then 61 min for one move that took 42: the
    engine times the moves from their start at the logs' sizes now, which grow while
    producers write. The card says so when Prometheus gives no bytes behind, and says
    "from now" when it does."""
    throttles = served_page("/throttles")
    live = monitor.View("c", timerange.window("live", None, None, now=END), None)
    idle = {"error": None, "moving": 0, "moving_why": None, "eta_seconds": None}
    predicted = {"moving": 150, "eta_seconds": 3660.0, "throttle": 1e6, "note": None}
    shown = str(throttles._eta_cards(idle, predicted, live)[2])
    assert "150 moves at 1.00 MB/s (the slowest)" in shown
    assert "from their start at the logs' sizes now (it grows while producers write)" in shown
    # with Prometheus' bytes behind per new replica it counts from now
    now = str(throttles._eta_cards(idle, predicted | {"from_now": True}, live)[2])
    assert "61 min" in now
    assert "from now, for the bytes their new replicas still lack" in now
    assert "from their start" not in now


def test_the_quotas_charts_say_each_point_is_its_steps_extreme(app):  # noqa: F811
    """A KIP-599 throttle lasts seconds: each point of the tokens and throttle-time charts
    is the fewest tokens / longest throttle in its step (monitoring.quotas), and the
    titles say so with the step of the window shown (15 s live, 90 s over 6 h...)."""
    quotas = served_page("/quotas")
    frame = MetricMissing("x")
    answer = {"now": [], "now_error": None, "tokens_series": frame, "rate_series": frame,
              "throttle_series": frame, "quotas_set": None,
              "throttled": {"value": 0.0, "error": None, "why": None, "detail": []}}
    for key, each in (("live", "15 s"), ("6h", "90 s")):
        view = monitor.View("c", timerange.window(key, None, None, now=END), None)
        _, _, tokens, _, throttle = quotas._draw(answer, view)
        assert tokens.layout.title.text.startswith(f"Tokens per principal, the fewest in "
                                                   f"each {each}")
        assert throttle.layout.title.text.startswith(f"Throttle time, the longest in each "
                                                     f"{each}")


def test_the_partition_health_chart_says_each_point_is_its_steps_most(app):  # noqa: F811
    """An outage of minutes falls between the points of a week's chart (one every 42 min):
    each point of the Overview's partition-health chart is the most partitions
    under-replicated, under min ISR, offline or reassigning at once in its step
    (monitoring.health), and the title says so."""
    overview = served_page("/")
    none = {"value": 0.0, "error": None, "why": None, "detail": []}
    frame = MetricMissing("x")
    answer = {"figures": dict.fromkeys(("under_replicated", "under_min_isr", "offline",
                                        "reassigning", "brokers_down", "throttles",
                                        "throttled_principals"), none),
              "health_series": frame, "partitions_series": frame, "partitions_shown": None}
    source = SimpleNamespace(limits=SimpleNamespace(max_broker_partitions=4000))
    for key, each in (("live", "15 s"), ("6h", "90 s"), ("7d", "42 min")):
        view = monitor.View("c", timerange.window(key, None, None, now=END), source)
        _, health, _ = overview._health(answer, view)
        assert health.layout.title.text.startswith(f"Partition health, the most in each "
                                                   f"{each}")


def test_a_past_window_without_partition_counts_warns_rather_than_alarms(app, monkeypatch):  # noqa: F811
    """A review whose data ends before the window does has no partition counts at its end:
    the Overview's limit chart says so (services.monitoring.partitions_at, where the data
    ends) as a warning beside the banner that links there, not as a red alert; a live
    cluster that does not answer stays an error."""
    overview = served_page("/")
    ended = Unavailable("Prometheus at http://p", "no partition counts at the end of the "
                        "window (the cluster's metrics end at 2024-01-01 01:00 UTC)")

    def refuse(*_):
        raise ended
    monkeypatch.setattr(overview.limits, "guard_rails_at", refuse)
    monkeypatch.setattr(overview.limits, "guard_rails", refuse)
    past = timerange.window("abs", "2024-01-01T00:00", "2024-01-01T06:00", now=END)
    live = timerange.window("live", None, None, now=END)
    for w, kind in ((past, "banner-warning"), (live, "banner-error")):
        _, _, [note] = overview._assignment_view(SimpleNamespace(), w)
        assert kind in note.className and "metrics end at 2024-01-01 01:00" in note.children


def test_the_quotas_page_says_why_a_cluster_without_quotas_charts_nothing(app):  # noqa: F811
    """Kafka meters partition mutations only where a quota applies: "no data yet" read as
    a scrape not yet done (the Apache Kafka demo, half an hour in)."""
    window = timerange.window("live", None, None, now=END)
    missing = MetricMissing("no series")
    q = {"now": [], "now_error": str(missing), "quotas_set": 0,
         "throttled": {"value": None, "detail": [], "error": str(missing), "why": "no data"},
         "tokens_series": missing, "rate_series": missing, "throttle_series": missing}
    for quotas_set, said in ((0, True), (1, False), (None, False)):
        view = monitor.View("demo", window, None)
        served_page("/quotas")._draw({**q, "quotas_set": quotas_set}, view)
        assert any("No controller_mutation_rate quota is set" in str(n)
                   for n in view.notes) is said, quotas_set


def test_brokers_throttled_in_a_past_window_are_the_ones_fetching_throttled_bytes():
    """Without the gateway's configured rates the Overview counts brokers moving throttled
    bytes: on the follower side, which records throttled partitions only. The leader side
    read 125 B/s on every broker of an idle Apache Kafka (its per-fetch floor), and every
    broker counted as throttled."""
    from backend.services import monitoring

    leader = pd.DataFrame({"broker": ["1", "2", "3"], "value": [125.0, 121.0, 130.0]})
    past = SimpleNamespace(refreshing=False)
    idle = monitoring.throttles_in_force(None, past, leader, MetricMissing("no series"))
    assert (idle["value"], idle["detail"], idle["basis"]) == (0.0, [], "observed")
    follower = pd.DataFrame({"broker": ["3", "2"], "value": [5e5, 0.0]})
    moving = monitoring.throttles_in_force(None, past, leader, follower)
    assert (moving["value"], moving["detail"]) == (1.0, ["3"])
