"""A plan's observed ETA half way through its first partition's copy, read as `railyard
serve` reads it: a real Prometheus scraping the twin's exporters for the receiving
broker's ReassignmentBytesInPerSec (KIP-542), and the twin's gateway for the new
replica's log size (as Kafka's DescribeLogDirs, KIP-113, reports it). The bytes left are
the plan's less what the new replica holds, so with half of it copied the ETA is half of
what every byte left at the same rate gives (the ETA before this change)."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from backend.services import execution, monitoring
from backend.services.cluster import ClusterSource
from backend.twin.cluster import TwinCluster, TwinSettings
from backend.twin.gateway import TwinGateway
from tests.plan_helpers import moves
from tests.servers import prometheus_on_twin
from tests.unit.test_eta_in_flight import held_by_3
from tests.unit.test_execution_service import World
from tests.unit.test_executor import MB, small_cluster

pytestmark = pytest.mark.integration
THROTTLE = 200_000  # bytes/s: a-0's 10 MB take 50 twin seconds
SCRAPE = 0.5


@pytest.fixture
def stack(tmp_path):
    world = World(tmp_path)
    world.twin = TwinCluster(small_cluster({("a", 0): 10 * MB}),  # the plan counts 10 MB
                             TwinSettings(traffic_noise=0.0))
    world.gw = TwinGateway(world.twin)
    try:
        with prometheus_on_twin(world.twin, "small", tmp_path, SCRAPE) as (_, prom):
            yield world, ClusterSource("small", None, world.twin.snap.limits,
                                       prometheus_url=prom.url, metrics_ttl=0,
                                       gateway=world.gw)
    finally:
        world.store.close()


def test_with_half_copied_the_eta_is_half_of_every_byte_at_the_rate(stack):
    world, source = stack
    deadline = time.monotonic() + 60
    # Prometheus has scraped broker 3's counter (0) before anything copies, so the copy
    # below is an increase it sees
    while not isinstance(monitoring.reassignment_rates(source), dict) \
            or "3" not in monitoring.reassignment_rates(source):
        assert time.monotonic() < deadline, "Prometheus never scraped the twin's exporters"
        time.sleep(SCRAPE)
    plan_id = world.executing(moves(("a", 0, [3, 2])), throttle=THROTTLE)
    while held_by_3(world) < 5 * MB and time.monotonic() < deadline:
        world.cycle()  # a twin second a cycle, scraped between cycles
        time.sleep(0.1)
    held = held_by_3(world)
    assert 5 * MB <= held < 5 * MB + THROTTLE  # within one twin second of half
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
    assert p["observed_eta_seconds"] / before == pytest.approx(0.5, abs=THROTTLE / (10 * MB))
