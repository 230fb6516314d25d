"""A plan's progress during a throttled move before any partition finishes, read as
`railyard serve` reads it: a real Prometheus scraping the twin's exporters (the series
Kafka's JMX exporter publishes, ReassignmentBytesInPerSec among them: KIP-542) through the
catalog. The bytes counted stay 0 until a partition finishes; the copy rate the receiving
broker reports is not, and the observed ETA is finite from it. The bytes left are the
plan's less what the new replica holds (the twin's gateway reports its log size as Kafka's
DescribeLogDirs does, KIP-113): half copied, the ETA is half of every byte at the rate."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from backend.services import execution, monitoring
from backend.services.cluster import ClusterSource
from backend.twin.cluster import TwinCluster, TwinSettings
from backend.twin.gateway import TwinGateway
from dashboard.plan_views.progress import progress_view
from tests.plan_helpers import moves
from tests.servers import prometheus_on_twin
from tests.unit.test_eta_in_flight import held_by_3
from tests.unit.test_execution_service import World
from tests.unit.test_executor import MB, small_cluster
from tests.unit.test_plan_view import text_of

pytestmark = pytest.mark.integration
THROTTLE = 100_000  # bytes/s: a-0's 6 MB take 60 twin seconds
SCRAPE = 0.5


@pytest.fixture
def stack(tmp_path, request):
    """The world's twin scraped by a real Prometheus; parametrised (indirect) with
    partition sizes, a twin of those partitions instead."""
    world = World(tmp_path)
    sizes = getattr(request, "param", None)
    if sizes is not None:
        world.twin = TwinCluster(small_cluster(sizes), TwinSettings(traffic_noise=0.0))
        world.gw = TwinGateway(world.twin)
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


HALF_THROTTLE = 200_000  # bytes/s: a-0's 10 MB (the plan counts 10 MB) take 50 twin seconds


@pytest.mark.parametrize("stack", [{("a", 0): 10 * MB}], indirect=True)
def test_with_half_copied_the_eta_is_half_of_every_byte_at_the_rate(stack):
    world, source = stack
    deadline = time.monotonic() + 60
    # Prometheus has scraped broker 3's counter (0) before anything copies, so the copy
    # below is an increase it sees
    while not isinstance(monitoring.reassignment_rates(source), dict) \
            or "3" not in monitoring.reassignment_rates(source):
        assert time.monotonic() < deadline, "Prometheus never scraped the twin's exporters"
        time.sleep(SCRAPE)
    plan_id = world.executing(moves(("a", 0, [3, 2])), throttle=HALF_THROTTLE)
    while held_by_3(world) < 5 * MB and time.monotonic() < deadline:
        world.cycle()  # a twin second a cycle, scraped between cycles
        time.sleep(0.1)
    held = held_by_3(world)
    assert 5 * MB <= held < 5 * MB + HALF_THROTTLE  # within one twin second of half
    # the twin stands still now: Prometheus' rate over its last minute stays, and so do the
    # log sizes the progress reads (through a gateway whose reads none has kept yet)
    time.sleep(2 * SCRAPE)
    p = execution.progress(world.store, plan_id, now=world.now(), source=replace(
        source, gateway=TwinGateway(world.twin)))
    assert p["state"] == "running" and p["bytes_copied"] == 0 and p["partitions_done"] == 0
    rate = p["copy_rate"]["bytes_per_second"]
    assert p["copy_rate"]["brokers"] == ["3"] and rate > 0
    assert p["copy_rate"]["copied"] == held and p["copy_rate"]["copied_why"] is None
    assert p["observed_eta_basis"] == "copy rate"
    assert p["observed_eta_seconds"] == pytest.approx((10 * MB - held) / rate)
    before = 10 * MB / rate  # the ETA with every byte left at the same rate
    assert p["observed_eta_seconds"] / before == pytest.approx(0.5, abs=HALF_THROTTLE / (10 * MB))
