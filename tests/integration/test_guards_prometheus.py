"""The guards' figures as `railyard serve` reads them: a real Prometheus scraping the
twin's exporters (the series Kafka's JMX exporter publishes) through the catalog, and
the twin's gateway. An injected offline partition (the only replica's broker stopped)
pauses a running plan with the batch in flight at the floor; once the broker is back and
Prometheus says so, the plan resumes by itself and completes with nothing left set."""

from __future__ import annotations

import time

import pytest

from backend.executor.guards import GUARD, Watch
from backend.metrics.dialects import DIALECTS
from backend.metrics.server import PrometheusProcess, scrape_config
from backend.model.guards import GuardSettings, Windows
from backend.services.cluster import ClusterSource
from backend.services.guards import ClusterHealth
from backend.twin.exporter import Exporters
from tests.executor_rig import Rig
from tests.unit.test_executor_guards import PLAN, cluster, rates

pytestmark = pytest.mark.integration
MB = 1_000_000
SCRAPE = 0.5


@pytest.fixture
def stack(tmp_path):
    rig = Rig(cluster(), tmp_path / "store.db")
    exporters = Exporters(rig.twin, DIALECTS["strimzi"]).start()
    prom = PrometheusProcess(tmp_path / "prom")
    try:
        prom.write_config(scrape_config(exporters.targets, "g", SCRAPE), "strimzi",
                          rules_interval=SCRAPE)
        prom.start()
        source = ClusterSource("g", None, rig.twin.snap.limits, prometheus_url=prom.url,
                               metrics_ttl=0, gateway=rig.gw)
        yield rig, ClusterHealth(source)
    finally:
        prom.stop()
        exporters.stop()


def until(rig: Rig, done, wall: float = 30.0):
    """Tick the executor (one twin second a tick, a tenth of a wall second between ticks,
    so Prometheus scrapes what the twin does) until ``done(execution)``."""
    deadline = time.monotonic() + wall
    while time.monotonic() < deadline:
        ex = rig.step(1)
        if done(ex):
            return ex
        time.sleep(0.1)
    raise AssertionError(f"not reached in {wall} s: {ex}")


def test_an_offline_partition_read_from_prometheus_pauses_and_its_end_resumes(stack):
    rig, health = stack
    until(rig, lambda _: health.figures([]).offline_partitions is not None)  # scraped
    assert health.figures([]).offline_partitions == 0
    rig.watch = Watch(GuardSettings(resume_after_seconds=3, floor=50_000), Windows(), health)
    rig.executor = rig.new_executor()
    rig.start(1, PLAN, 100_000, per_broker=1)  # 80 s a batch
    until(rig, lambda ex: ex.phase == "running")
    moving = [(r["topic"], r["partition"]) for r in rig.gw.list_reassignments()]
    # what a stall is judged on: the new replica's bytes still to copy, once scraped
    until(rig, lambda _: all(v > 0 for v in health.figures(moving).lag.values())
          and len(health.figures(moving).lag) == len(moving))
    rig.twin.fail_broker(5)
    ex = until(rig, lambda ex: ex.state == "paused")
    assert ex.hold["kind"] == GUARD and ex.hold["conditions"][0] == {
        "condition": "offline_partitions", "value": 1, "limit": 0,
        "text": "1 offline partitions (more than 0)"}
    assert rates(rig) == {"50000"}  # the batch in flight at the floor
    rig.twin.recover_broker(5)
    ex = until(rig, lambda ex: ex.state == "running" and ex.hold is None)
    assert "execution_released" in rig.journal.actions(1)
    rig.watch.health = None  # the rest at the twin's speed
    assert rig.run(1).state == "completed" and rig.throttle_configs() == {}
