"""The adaptive throttle's tick (issue 28): read every throttled broker's traffic from a
real Prometheus scraping the twin at the demo's scale (100 brokers, 200k partitions),
decide (engines.throttle.adaptive_rates), and set the configs that changed, for a running
100,000-move plan. Target: p95 <= 200 ms.

The plan runs as the executor runs it (the default concurrency limits: its first batch
in flight, every broker throttled). Every tick looks (interval 0) and asks Prometheus
afresh (no cached answers); the network capacity alternates between two values
(the measured tick lowers every rate, a tick on the same answer raises them back) so
that every tick also rewrites rates (the "set configs" part), as a burst starting and
ending would. The read alone, and decide-and-set alone, are measured too.

The twin's exporters answer from a child process, as a broker's JMX exporter answers from
the broker's JVM: in this process, their rendering of 200k-partition expositions at every
scrape held the GIL against the tick being timed (p95 240 ms against 116 ms apart, the same
minute).
"""

from __future__ import annotations

import os
import signal
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from backend.engines.batches import CLUSTER, PER_BROKER
from backend.executor.adaptive import ControlSettings, ThrottleControl
from backend.metrics.client import MetricMissing, MetricsClient
from backend.metrics.dialects import STRIMZI
from backend.metrics.server import PrometheusProcess, scrape_config
from backend.services import throttle_traffic
from backend.services.cluster import ClusterSource
from backend.twin.exporter import Exporters
from backend.twin.generate import generate_snapshot
from benchmarks.bench_throttle import random_reassignment
from benchmarks.common import Figure
from tests.executor_rig import Rig

TARGET_MS = 200.0
BROKERS, PARTITIONS, MOVES = 100, 200_000, 100_000
CEILING, FLOOR = 50_000_000, 5_000_000


def _wait_scraped(client: MetricsClient, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if len(client.instant("replication_bytes_in_per_broker")) == BROKERS:
                return
        except MetricMissing:
            pass
        time.sleep(1)
    raise RuntimeError("Prometheus did not scrape every broker in time")


class _ExportersApart:
    """The twin's exporters serving from a forked child (the twin as it was at the fork:
    the bench does not advance it while it ticks)."""

    def __init__(self, exporters: Exporters) -> None:
        self.targets = exporters.targets
        parent = os.getpid()
        self.pid = os.fork()
        if self.pid == 0:  # the child serves until the bench stops it or is gone itself
            exporters.start()
            while os.getppid() == parent:
                time.sleep(1)
            os._exit(0)
        for server in exporters.servers:
            server.server_close()

    def stop(self) -> None:
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)


class _Answered:
    """The last answer again: the tick without Prometheus (decide and set only)."""

    def __init__(self, traffic) -> None:
        self.traffic = traffic

    def broker_traffic(self, brokers: list[int]):
        return self.traffic


def tick_times(tmp: Path, ticks: int = 40) -> tuple[list[float], list[float], list[float],
                                                    int, int]:
    """(ms per controller tick, per read alone, per tick on an answer already read,
    brokers throttled, ticks that set configs); the plan is switched to adaptive as a
    user would (the rig starts it fixed)."""
    snap = generate_snapshot(BROKERS, 4, 2000, PARTITIONS, 3, seed=7)
    snap = replace(snap, part_size=snap.part_size * 10)  # nothing finishes meanwhile
    plan = random_reassignment(snap, MOVES, seed=1).to_kafka_json(snap)
    rig = Rig(snap, tmp / "adaptive.db")
    rig.start(1, plan, CEILING, per_broker=PER_BROKER, cluster=CLUSTER)
    rig.executor.tick(1, rig.now)  # starts the batch: the throttles at the ceiling
    rig.twin.advance(1.0)
    exporters = _ExportersApart(Exporters(rig.twin, STRIMZI))
    prom = PrometheusProcess(tmp / "prom")
    try:
        prom.write_config(scrape_config(exporters.targets, "bench", 15.0))
        prom.start()
        source = ClusterSource("bench", None, snap.limits, prometheus_url=prom.url,
                               prometheus_timeout=30, metrics_ttl=0)
        _wait_scraped(throttle_traffic.metrics_client(source))
        reader = throttle_traffic.PrometheusTraffic(source)
        rig.records.set_throttle_mode(1, "adaptive", FLOOR, "bench", rig.now)
        ex = rig.records.get(1)
        spec = rig.executor._plan_of(1)[1]
        book = rig.executor._book(ex)
        out, reads, local, changed = [], [], [], 0
        for _ in range(ticks):
            # 20 MB/s of capacity lowers every rate, 125 MB/s raises it back: each tick sets
            settings = ControlSettings(interval_seconds=0, network_capacity=20e6)
            control = ThrottleControl(rig.records, rig.journal, reader, settings)
            before = len(rig.journal.entries)
            t0 = time.perf_counter()
            control.tick(1, spec, book, rig.now, bytes_left=10**12)
            out.append((time.perf_counter() - t0) * 1000)
            changed += any(a == "throttle_adjusted" for _, a, _, _ in rig.journal.entries[before:])
            t0 = time.perf_counter()
            answer = reader.broker_traffic(
                sorted({int(r["name"]) for r in book.records() if r["entity_type"] == "broker"}))
            reads.append((time.perf_counter() - t0) * 1000)
            again = ThrottleControl(rig.records, rig.journal, _Answered(answer), replace(
                settings, network_capacity=125e6))
            t0 = time.perf_counter()
            again.tick(1, spec, book, rig.now, bytes_left=10**12)
            local.append((time.perf_counter() - t0) * 1000)
        brokers = len({r["name"] for r in book.records() if r["entity_type"] == "broker"})
        return out, reads, local, brokers, changed
    finally:
        prom.stop()
        exporters.stop()


def run() -> list[Figure]:
    load = f"load {os.getloadavg()[0]:.2f}"
    with tempfile.TemporaryDirectory() as d:
        times, reads, local, brokers, changed = tick_times(Path(d))
    p95 = float(np.percentile(times, 95))
    return [Figure(f"adaptive throttle tick on a {MOVES:,}-move plan (read Prometheus, "
                   "decide, set configs), p95", p95, "ms", TARGET_MS,
                   note=f"p50 {np.percentile(times, 50):.0f} ms, max {max(times):.0f} ms over "
                        f"{len(times)} ticks, {changed} of them setting configs; the read "
                        f"alone (4 catalog queries at once) p50 {np.percentile(reads, 50):.0f} "
                        f"ms, p95 {np.percentile(reads, 95):.0f} ms; decide and set alone p50 "
                        f"{np.percentile(local, 50):.0f} ms, p95 {np.percentile(local, 95):.0f} "
                        f"ms; {brokers} "
                        f"brokers throttled; {BROKERS} brokers, {PARTITIONS:,} partitions, "
                        f"a real Prometheus scraping the twin; {load}")]


if __name__ == "__main__":
    for fig in run():
        print(fig.line())
