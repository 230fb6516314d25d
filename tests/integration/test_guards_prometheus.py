"""The guards' figures as `railyard serve` reads them: a real Prometheus scraping the
twin's exporters (the series Kafka's JMX exporter publishes) through the catalog, and
the twin's gateway. An injected offline partition (the only replica's broker stopped)
pauses a running plan with the batch in flight at the floor; once the broker is back and
Prometheus says so, the plan resumes by itself and completes with nothing left set. And
scrapes that fail while the plan is held keep it held: a missed scrape is not a clear."""

from __future__ import annotations

import threading
import time

import pytest

from backend.executor.guards import GUARD, Watch
from backend.model.guards import GuardSettings, Windows
from backend.services.cluster import ClusterSource
from backend.services.guards import ClusterHealth
from backend.twin.exporter import Exporters
from tests.executor_rig import Rig
from tests.servers import prometheus_on_twin
from tests.unit.test_executor_guards import PLAN, cluster, rates

pytestmark = pytest.mark.integration
MB = 1_000_000
SCRAPE = 0.5


@pytest.fixture
def stack(tmp_path):
    rig = Rig(cluster(), tmp_path / "store.db")
    with prometheus_on_twin(rig.twin, "g", tmp_path, SCRAPE) as (exporters, prom):
        source = ClusterSource("g", None, rig.twin.snap.limits, prometheus_url=prom.url,
                               metrics_ttl=0, gateway=rig.gw)
        yield rig, ClusterHealth(source), exporters


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
    rig, health, _ = stack
    until(rig, lambda _: health.figures([]).offline_partitions is not None)  # scraped
    assert health.figures([]).offline_partitions == 0
    rig.watch = Watch(GuardSettings(resume_after_seconds=3, floor=50_000), Windows(), health)
    rig.executor = rig.new_executor()
    rig.start(1, PLAN, 100_000, per_broker=1)  # 80 s a batch
    until(rig, lambda ex: ex.phase == "running")
    moving = [(r["topic"], r["partition"]) for r in rig.gw.list_reassignments()]
    # what a stall is judged on: the new replica's bytes still to copy, once scraped (a
    # read Prometheus did not answer is None: not yet, as for the executor's guards)
    def copying(_) -> bool:
        lag = health.figures(moving).lag
        return lag is not None and len(lag) == len(moving) and all(v > 0 for v in lag.values())

    until(rig, copying)
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


def silence(exporters: Exporters, ids: set[int]) -> None:
    """These brokers' exporters stop answering (the brokers stay up): scrapes fail."""
    for server, collector in zip(exporters.servers, exporters.collectors, strict=True):
        if collector.broker_id in ids:
            server.shutdown()
            server.server_close()


def revive(exporters: Exporters, ids: set[int]) -> None:
    """They answer again, on the ports Prometheus scrapes."""
    for i, collector in enumerate(exporters.collectors):
        if collector.broker_id in ids:
            old = exporters.servers[i]
            exporters.servers[i] = server = type(old)(old.server_address,
                                                      old.RequestHandlerClass)
            thread = threading.Thread(target=server.serve_forever, daemon=True)
            thread.start()
            exporters.threads.append(thread)


def test_failed_scrapes_keep_a_held_plan_held_until_read_clear(stack):
    """The controllers' exporters (brokers 1-3, the ones that publish the offline count;
    broker 4 publishes 0) stop answering while an offline partition holds the plan: the
    plan stays held, saying the figure is not known, for many times its resume delay.
    Back, they show the partition still offline; once it is not, it resumes."""
    rig, health, exporters = stack
    until(rig, lambda _: health.figures([]).offline_partitions == 0)
    rig.watch = Watch(GuardSettings(resume_after_seconds=3, floor=50_000), Windows(), health)
    rig.executor = rig.new_executor()
    rig.start(1, PLAN, 100_000, per_broker=1)  # 80 s a batch
    until(rig, lambda ex: ex.phase == "running")
    rig.twin.fail_broker(5)
    held_at = until(rig, lambda ex: ex.state == "paused").batch
    silence(exporters, {1, 2, 3})
    until(rig, lambda _: health.figures([]).offline_partitions is None)
    deadline = time.monotonic() + 5  # 50 ticks: resume_after_seconds many times over
    while time.monotonic() < deadline:
        ex = rig.step(1)
        assert ex.state == "paused" and ex.batch == held_at, "a missed scrape resumed it"
        time.sleep(0.1)
    assert [(c["condition"], c["value"]) for c in ex.hold["conditions"]] == [
        ("offline_partitions", "unknown")]
    assert "not known now" in ex.hold["text"]
    revive(exporters, {1, 2, 3})
    ex = until(rig, lambda ex: ex.hold["conditions"][0]["value"] == 1)
    assert ex.state == "paused" and ex.batch == held_at
    rig.twin.recover_broker(5)
    until(rig, lambda ex: ex.state == "running" and ex.hold is None)
    rig.watch.health = None  # the rest at the twin's speed
    assert rig.run(1).state == "completed" and rig.throttle_configs() == {}
