"""A cluster Prometheus has scraped for minutes, as `railyard demo --kafka`'s: /capacity
read "Prometheus at ... has no partition counts from 2026-10-31 to 2026-11-29 ... (pick
a window its data covers ...)" while it held minutes of them, taken after the window's
end at the top of the hour, and no window could work. The refusal now says when its
counts begin and, while they go on, from when a forecast can be made; an hour later, with
one day of peaks, it says the same instead of the growth fit's "need at least two days"
(a BadInput the page showed as a bad knob). On a real Prometheus: 40 minutes of counts up
to now, and an hour of them in 2024 (counts that stopped: nothing to wait for)."""

from __future__ import annotations

import math
import time
from types import SimpleNamespace

import numpy as np
import pytest

from backend.errors import Unavailable
from backend.model.snapshot import Limits
from backend.services import capacity
from backend.services.cluster import ClusterSource
from tests.servers import history_prometheus

pytestmark = pytest.mark.integration
NAME = "kafka_server_replicamanager_partitioncount"
OLD = 1_710_345_600  # 2024-03-13T16:00Z: an hour of counts from then, on the minute


def minute(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(t))


def until(t: float) -> str:
    """A window's end as the refusal writes it: the day alone when it ends at midnight (as
    test_capacity_browser's "to 2023-12-01"), which the scraped window does when this runs
    from 00:40 to 01:40 UTC (its counts, from 40 minutes before, begin in the 00 hour)."""
    return time.strftime("%Y-%m-%d", time.gmtime(t)) if t % 86_400 == 0 \
        else f"{minute(t)} UTC"


def prometheus(home, name: str, times) -> ClusterSource:
    lines = [f"# TYPE {NAME} gauge"]
    for b in ("1", "2", "3"):
        lines += [f'{NAME}{{broker="{b}"}} 12 {t}' for t in times]
    (home / f"{name}.om").write_text("\n".join([*lines, "# EOF", ""]))
    return history_prometheus(home / f"{name}.om")


@pytest.fixture(scope="module")
def scraped(tmp_path_factory):
    """Counts every 15 s from 40 minutes ago (first at hh:mm:38) to now, as Prometheus
    scraping a new cluster holds; the source, the first count, the top of its hour (a
    window ending there has none of them) and the first hour a day after it."""
    home = tmp_path_factory.mktemp("scraped")
    now = math.floor(time.time())
    first = now - 2400 - (now - 2400) % 60 + 38
    with prometheus(home, "scraped", np.arange(first, now - 5, 15)) as prom:
        yield SimpleNamespace(
            source=ClusterSource("kafka", None, Limits(), prometheus_url=prom.url,
                                 metrics_ttl=0),
            first=first, top=first // 3600 * 3600,
            ready=math.ceil((first + 86_400) / 3600) * 3600)


@pytest.fixture(scope="module")
def stopped(tmp_path_factory):
    """An hour of counts from OLD, none since (the recorded incident is so)."""
    home = tmp_path_factory.mktemp("stopped")
    with prometheus(home, "stopped", range(OLD, OLD + 3600, 30)) as prom:
        yield ClusterSource("hour", None, Limits(), prometheus_url=prom.url, metrics_ttl=0)


@pytest.mark.parametrize("days", capacity.WINDOWS)
def test_counts_after_the_windows_end_say_when_they_begin(scraped, days):
    with pytest.raises(Unavailable) as e:
        capacity.history(scraped.source, days, end=scraped.top)  # the hour before them
    said = str(e.value)
    assert said.startswith(f"Partition history: Prometheus at {scraped.source.prometheus_url}"
                           " has no partition counts from ")
    assert (f" to {until(scraped.top)}; its counts begin {minute(scraped.first)} UTC "
            "(") in said, said
    assert said.endswith(" minutes ago), after the window's end: a forecast needs daily peaks "
                         "of ReplicaManager PartitionCount on at least two days, so the "
                         f"first can be made as of about {minute(scraped.ready)} UTC"), said


def test_one_day_of_counts_is_refused_the_same_way(scraped):
    with pytest.raises(Unavailable) as e:
        capacity.history(scraped.source, 7, end=scraped.top + 3600)
    said = str(e.value)
    assert "has partition counts on only 1 day from " in said
    assert f"; its counts begin {minute(scraped.first)} UTC (" in said
    assert said.endswith(f"so the first can be made as of about {minute(scraped.ready)} UTC")


def test_counts_that_stopped_are_nothing_to_wait_for(stopped):
    """A first count on the minute is that minute (the recorded incident's, 00:00:00, read
    23:59), and a day with none since does not promise a forecast."""
    with pytest.raises(Unavailable) as e:
        capacity.history(stopped, 7, end=OLD + 3600)
    said = str(e.value)
    assert "has partition counts on only 1 day from 2024-03-07 to 2024-03-13 17:00 UTC; its " \
           "counts begin 2024-03-13 16:00 UTC (" in said, said
    assert said.endswith(" days ago), and none are recent: a forecast needs daily peaks of "
                         "ReplicaManager PartitionCount on at least two days (pick a window "
                         "its data covers)"), said


def test_one_day_in_a_window_past_it_has_nothing_to_wait_for(stopped):
    with pytest.raises(Unavailable) as e:
        # the points of 18:00: one day holds the hour and the 5 minutes Prometheus
        # looks back past its last sample
        capacity.history(stopped, 7, end=OLD + 3 * 86_400 + 7200)
    assert str(e.value).endswith("has partition counts on only 1 day from 2024-03-10 to "
                                 "2024-03-16 18:00 UTC: a forecast needs daily peaks of "
                                 "ReplicaManager PartitionCount on at least two days (pick a "
                                 "window its data covers)")


def test_a_window_long_after_the_counts_still_says_it_has_none(stopped):
    with pytest.raises(Unavailable) as e:
        capacity.history(stopped, 7, end=OLD + 30 * 86_400)
    assert str(e.value).endswith("has no partition counts from 2024-04-06 to 2024-04-12 16:00 "
                                 "UTC: a forecast needs daily peaks of ReplicaManager "
                                 "PartitionCount over those days (pick a window its data "
                                 "covers, or wait until it has been scraped for days)")
