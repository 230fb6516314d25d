"""A cluster Prometheus has scraped for minutes, as `railyard demo --kafka`'s: /capacity
read "Prometheus at ... has no partition counts from 2026-10-31 to 2026-11-29 ... (pick
a window its data covers ...)" while it held minutes of them, taken after the window's
end at the top of the hour, and no window could work. The refusal now says when its
counts begin and from when a forecast can be made; an hour later, with one day of peaks,
it says the same instead of the growth fit's "need at least two days" (a BadInput the
page showed as a bad knob). On a real Prometheus holding 40 minutes of counts."""

from __future__ import annotations

import numpy as np
import pytest

from backend.errors import Unavailable
from backend.model.snapshot import Limits
from backend.services import capacity
from backend.services.cluster import ClusterSource
from tests.servers import history_prometheus

pytestmark = pytest.mark.integration
HOUR = 1_710_086_400  # 2024-03-10T16:00Z
FIRST = HOUR + 3600 + 398  # the first scrape: 17:06:38
LAST = FIRST + 40 * 60


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    home = tmp_path_factory.mktemp("short-history")
    name = "kafka_server_replicamanager_partitioncount"
    lines = [f"# TYPE {name} gauge"]
    for b in ("1", "2", "3"):
        lines += [f'{name}{{broker="{b}"}} 12 {t}' for t in np.arange(FIRST, LAST, 15)]
    (home / "short.om").write_text("\n".join([*lines, "# EOF", ""]))
    with history_prometheus(home / "short.om") as prom:
        yield ClusterSource("kafka", None, Limits(), prometheus_url=prom.url, metrics_ttl=0)


@pytest.mark.parametrize("days", capacity.WINDOWS)
def test_counts_after_the_windows_end_say_when_they_begin(source, days):
    with pytest.raises(Unavailable) as e:
        capacity.history(source, days, end=HOUR + 3600)  # the top of the hour before them
    said = str(e.value)
    assert said.startswith(f"Partition history: Prometheus at {source.prometheus_url} has no "
                           "partition counts from ")
    assert " to 2024-03-10 17:00 UTC; its counts begin 2024-03-10 17:06 UTC (" in said
    assert said.endswith(" ago), after the window's end: a forecast needs daily peaks of "
                         "ReplicaManager PartitionCount on at least two days, so the first "
                         "can be made as of about 2024-03-11 18:00 UTC"), said


def test_one_day_of_counts_is_refused_the_same_way(source):
    with pytest.raises(Unavailable) as e:
        capacity.history(source, 7, end=HOUR + 2 * 3600)
    said = str(e.value)
    assert "has partition counts on only 1 day from 2024-03-04 to 2024-03-10 18:00 UTC; its " \
           "counts begin 2024-03-10 17:06 UTC (" in said
    assert said.endswith("so the first can be made as of about 2024-03-11 18:00 UTC"), said


def test_a_window_long_after_the_counts_still_says_it_has_none(source):
    """The counts a day before a window that ends weeks later: nothing to wait for."""
    with pytest.raises(Unavailable) as e:
        capacity.history(source, 7, end=HOUR + 30 * 86_400)
    assert str(e.value).endswith("has no partition counts from 2024-04-03 to 2024-04-09 16:00 "
                                 "UTC: a forecast needs daily peaks of ReplicaManager "
                                 "PartitionCount over those days (pick a window its data "
                                 "covers, or wait until it has been scraped for days)")


def test_one_day_in_a_window_past_it_has_nothing_to_wait_for(source):
    with pytest.raises(Unavailable) as e:
        capacity.history(source, 7, end=HOUR + 3 * 86_400)
    assert str(e.value).endswith("has partition counts on only 1 day from 2024-03-07 to "
                                 "2024-03-13 16:00 UTC: a forecast needs daily peaks of "
                                 "ReplicaManager PartitionCount on at least two days (pick a "
                                 "window its data covers)")
