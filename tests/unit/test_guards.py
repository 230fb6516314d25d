"""Guard-rail stops and execution windows, the pure parts: each condition at its
threshold, stalled moves, window arithmetic across time zones, DST and the week's wrap,
and the config's one-line errors."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from backend.engines.guards import Figures, breaches, stalls
from backend.engines.windows import current_end, is_open, next_open
from backend.errors import BadInput
from backend.model.guards import GuardSettings, WeeklyRange, Windows
from dashboard.config import parse_config

DEFAULT = GuardSettings()


def names(found) -> list[str]:
    return [b.condition for b in found]


def test_nothing_breached_on_a_healthy_cluster():
    figures = Figures(offline_partitions=0, under_min_isr=0, under_replicated=0)
    assert breaches(DEFAULT, figures, frozenset({1, 2}), [], []) == []


@pytest.mark.parametrize("field,condition", [
    ("offline_partitions", "offline_partitions"), ("under_min_isr", "under_min_isr"),
    ("under_replicated", "under_replicated")])
def test_each_count_breaches_above_its_threshold(field, condition):
    found = breaches(DEFAULT, Figures(**{field: 1}), frozenset(), [], [])
    assert names(found) == [condition] and found[0].value == 1 and found[0].limit == 0
    lenient = GuardSettings(**{field: 3})
    assert breaches(lenient, Figures(**{field: 3}), frozenset(), [], []) == []
    assert names(breaches(lenient, Figures(**{field: 4}), frozenset(), [], [])) == [condition]


def test_unknown_figures_are_not_checked():
    assert breaches(DEFAULT, Figures(), frozenset({1}), [], []) == []


def test_an_unknown_figure_keeps_the_conditions_a_plan_is_held_on():
    """A missed scrape neither starts a hold nor ends one: the held conditions whose
    figures are not known stay, as "unknown"; the others go."""
    unknown = Figures(down_brokers=None, lag=None)
    every = frozenset({"offline_partitions", "under_min_isr", "under_replicated",
                       "broker_down", "stalled_move"})
    assert breaches(DEFAULT, unknown, frozenset({1}), [], []) == []
    found = breaches(DEFAULT, unknown, frozenset({1}), [], [], held=every)
    assert names(found) == ["offline_partitions", "under_min_isr", "under_replicated",
                            "broker_down", "stalled_move"]
    assert {b.value for b in found} == {"unknown"}
    assert found[2].text == ("under-replicated partitions outside the plan: not known now "
                             "(Prometheus did not answer for every broker up); held until "
                             "read again")
    # read again: a figure known and clear ends its part of the hold
    clear = Figures(offline_partitions=0, under_min_isr=0, under_replicated=0)
    assert breaches(DEFAULT, clear, frozenset({1}), [], [], held=every) == []
    assert names(breaches(DEFAULT, Figures(under_replicated=0), frozenset(), [], [],
                          held=frozenset({"under_replicated", "offline_partitions"}))) \
        == ["offline_partitions"]


def test_a_broker_down_breaches_only_when_the_next_batch_touches_it():
    figures = Figures(down_brokers=frozenset({3}))
    assert breaches(DEFAULT, figures, frozenset({1, 2}), [], []) == []
    found = breaches(DEFAULT, figures, frozenset({2, 3}), [], [])
    assert names(found) == ["broker_down"] and "broker 3 is down" in found[0].text
    off = GuardSettings(broker_down=False)
    assert breaches(off, figures, frozenset({3}), [], []) == []


def test_kip_578_limits_of_the_next_batch_are_named():
    violations = [{"broker": 4, "after": 101, "limit": 100, "received": 2},
                  {"broker": None, "after": 5001, "limit": 5000, "received": 1}]
    found = breaches(DEFAULT, Figures(), frozenset(), violations, [])
    assert names(found) == ["partition_limit", "partition_limit"]
    assert "broker 4 at 101 partitions, over max.broker.partitions 100" in found[0].text
    assert "the cluster at 5001 partitions, over max.partitions 5000" in found[1].text
    assert breaches(GuardSettings(partition_limits=False), Figures(), frozenset(),
                    violations, []) == []


def test_disabled_guards_breach_nothing():
    assert breaches(GuardSettings(enabled=False), Figures(offline_partitions=9),
                    frozenset(), [], []) == []


def test_a_stall_is_a_lag_that_has_not_fallen_for_t_minutes():
    falling = [(t, 1000.0 - t) for t in range(0, 700, 10)]
    flat = [(t, 500.0) for t in range(0, 700, 10)]
    fell_late = [(0, 900.0), (100, 900.0), (500, 800.0), (690, 800.0)]
    done = [(t, 0.0) for t in range(0, 700, 10)]
    history = {("a", 0): falling, ("a", 1): flat, ("a", 2): fell_late, ("a", 3): done}
    assert stalls(history, 690, 10) == [(("a", 1), 11.5)]
    assert stalls(history, 690, 12) == []  # not yet 12 minutes
    found = breaches(DEFAULT, Figures(), frozenset(), [], stalls(history, 690, 10))
    assert names(found) == ["stalled_move"] and "a-1 has not progressed for 12 min" \
        in found[0].text


# ---- windows ---------------------------------------------------------------------------
def ts(text: str, tz: str = "UTC") -> float:
    return datetime.fromisoformat(text).replace(tzinfo=ZoneInfo(tz)).timestamp()


NIGHTS = Windows("Europe/Paris", (WeeklyRange(0, 22 * 60, 1, 6 * 60),))  # Mon 22 - Tue 06


def test_no_ranges_is_always_open():
    assert is_open(Windows(), 0.0) and next_open(Windows(), 12.0) == 12.0
    assert current_end(Windows(), 0.0) is None


def test_a_window_in_its_time_zone():
    # Monday 2026-11-23 22:00 in Paris is 21:00 UTC (CET, UTC+1)
    assert not is_open(NIGHTS, ts("2026-11-23T20:59:59", "UTC"))
    assert is_open(NIGHTS, ts("2026-11-23T21:00:00", "UTC"))
    assert current_end(NIGHTS, ts("2026-11-23T23:00:00", "Europe/Paris")) == \
        ts("2026-11-24T06:00:00", "Europe/Paris")
    assert not is_open(NIGHTS, ts("2026-11-24T06:00:00", "Europe/Paris"))
    # from Tuesday morning the next one is the following Monday night
    assert next_open(NIGHTS, ts("2026-11-24T07:00:00", "Europe/Paris")) == \
        ts("2026-11-30T22:00:00", "Europe/Paris")


def test_a_window_keeps_local_time_across_dst():
    # Paris leaves summer time on Sunday 2026-10-25: Monday 22:00 is 20:00 UTC before,
    # 21:00 UTC after
    before = next_open(NIGHTS, ts("2026-10-13T12:00:00", "UTC"))  # Monday 19 October
    after = next_open(NIGHTS, ts("2026-10-20T12:00:00", "UTC"))  # Monday 26 October
    assert datetime.fromtimestamp(before, UTC).hour == 20
    assert datetime.fromtimestamp(after, UTC).hour == 21
    assert after - before == 7 * 86400 + 3600


def test_a_window_spanning_the_night_clocks_change_is_an_hour_longer():
    sat_night = Windows("Europe/Paris", (WeeklyRange(5, 22 * 60, 6, 6 * 60),))
    start = ts("2026-10-24T22:00:00", "Europe/Paris")
    assert current_end(sat_night, start) - start == 9 * 3600  # 8 h of wall clock + 1


def test_a_window_wraps_into_the_next_week():
    weekend = Windows("UTC", (WeeklyRange(5, 22 * 60, 0, 6 * 60),))  # Sat 22 - Mon 06
    assert is_open(weekend, ts("2026-11-29T12:00:00"))  # Sunday
    assert is_open(weekend, ts("2026-11-30T05:59:00"))  # Monday morning
    assert not is_open(weekend, ts("2026-11-30T06:00:00"))
    assert current_end(weekend, ts("2026-11-28T23:00:00")) == ts("2026-11-30T06:00:00")
    assert next_open(weekend, ts("2026-12-02T00:00:00")) == ts("2026-12-05T22:00:00")


def test_overlapping_and_adjacent_ranges_merge():
    two = Windows("UTC", (WeeklyRange(0, 0, 0, 12 * 60), WeeklyRange(0, 12 * 60, 0, 1440)))
    assert current_end(two, ts("2026-11-23T01:00:00")) == ts("2026-11-24T00:00:00")


# ---- the config ------------------------------------------------------------------------
def cluster(**extra) -> dict:
    return {"clusters": [{"name": "c", "gateway": {"type": "twin", "url": "http://127.0.0.1:1"},
                          **extra}]}


def test_the_config_has_sensible_defaults():
    c = parse_config(cluster()).clusters[0]
    assert c.guards == GuardSettings() and c.windows == Windows()


def test_the_config_reads_guards_and_windows():
    c = parse_config(cluster(
        guards={"under_replicated": 5, "stall_minutes": 15, "auto_resume": False,
                "floor": 2_000_000},
        windows={"timezone": "Europe/Paris",
                 "ranges": [{"from": "Mon 22:00", "to": "Tuesday 06:00"},
                            {"from": "sat 00:00", "to": "Sun 24:00"}]})).clusters[0]
    assert c.guards == GuardSettings(under_replicated=5, stall_minutes=15.0,
                                     auto_resume=False, floor=2_000_000)
    assert c.windows == Windows("Europe/Paris", (WeeklyRange(0, 1320, 1, 360),
                                                 WeeklyRange(5, 0, 6, 1440)))


@pytest.mark.parametrize("extra,where", [
    ({"guards": {"floor": 0}}, "clusters[0].guards.floor: expected an integer >= 1"),
    ({"guards": {"auto_resume": "yes"}}, "clusters[0].guards.auto_resume: expected true"),
    ({"guards": {"offline": 1}}, "clusters[0].guards.offline: unknown key"),
    ({"windows": {"timezone": "Mars/Base", "ranges": []}},
     "clusters[0].windows.timezone: unknown time zone"),
    ({"windows": {"ranges": [{"from": "Mon 25:00", "to": "Tue 01:00"}]}},
     "clusters[0].windows.ranges[0].from: expected a weekday and a time"),
    ({"windows": {"timezone": "UTC"}}, "clusters[0].windows.ranges: required"),
])
def test_bad_config_is_one_line_naming_the_key(extra, where):
    with pytest.raises(BadInput) as e:
        parse_config(cluster(**extra))
    assert where in str(e.value) and "\n" not in str(e.value)
