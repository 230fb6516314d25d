"""A plan's progress during a throttled move before any partition finishes, read as
`railyard serve` reads it: a real Prometheus scraping the twin's exporters (the series
Kafka's JMX exporter publishes, ReassignmentBytesInPerSec among them: KIP-542) through the
catalog. The bytes counted stay 0 until a partition finishes; the copy rate the receiving
broker reports is not, and the observed ETA is finite from it."""

from __future__ import annotations

import time

import pytest

from backend.services import execution
from backend.services.cluster import ClusterSource
from dashboard.plan_views.progress import progress_view
from tests.plan_helpers import moves
from tests.servers import prometheus_on_twin
from tests.unit.test_execution_service import World
from tests.unit.test_plan_view import text_of

pytestmark = pytest.mark.integration
THROTTLE = 100_000  # bytes/s: a-0's 6 MB take 60 twin seconds
SCRAPE = 0.5


@pytest.fixture
def stack(tmp_path):
    world = World(tmp_path)
    try:
        with prometheus_on_twin(world.twin, "small", tmp_path, SCRAPE) as (_, prom):
            yield world, ClusterSource("small", None, world.twin.snap.limits,
                                       prometheus_url=prom.url, metrics_ttl=0,
                                       gateway=world.gw)
    finally:
        world.store.close()


def test_a_throttled_move_shows_its_copy_rate_before_any_partition_finishes(stack):
    world, source = stack
    plan_id = world.executing(moves(("a", 0, [3, 2])), throttle=THROTTLE)
    deadline, p = time.monotonic() + 30, None
    while time.monotonic() < deadline:  # a twin second a cycle, scraped between cycles
        world.cycle()
        time.sleep(0.1)
        p = execution.progress(world.store, plan_id, now=world.now(), source=source)
        if p is not None and (p["copy_rate"] or {}).get("bytes_per_second"):
            break
    assert p["state"] == "running" and p["partitions_done"] == 0
    assert p["bytes_copied"] == 0 and p["observed_rate"] is None  # counted when finished
    assert p["copy_rate"]["brokers"] == ["3"] and p["copy_rate"]["bytes_per_second"] > 0
    assert p["observed_eta_basis"] == "copy rate"
    assert 0 < p["observed_eta_seconds"] < float("inf")
    text = text_of(progress_view(p, "bar"))
    assert "copying now at" in text and "into broker 3" in text
