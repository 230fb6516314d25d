"""The twin at scale (issue 5 §5): 100 brokers, 200k partitions (RF 3).

Targets: one simulated second costs at most 50 ms of CPU; one scrape of all 100
exporters (over HTTP, after the values changed) at most 1 s in total; the catalog's
overview queries answer in at most 200 ms from a real Prometheus scraping them.
"""

from __future__ import annotations

import tempfile
import time
import urllib.request

from backend.metrics import catalog
from backend.metrics.client import MetricMissing, MetricsClient
from backend.metrics.dialects import STRIMZI
from backend.metrics.server import PrometheusProcess, scrape_config
from backend.services import monitoring
from backend.twin.cluster import TwinCluster
from backend.twin.exporter import Exporters
from backend.twin.gateway import TwinGateway
from backend.twin.generate import generate_snapshot
from backend.twin.scenario import move_plan, throttled_reassign
from benchmarks.common import Figure, best_of

BROKERS, PARTITIONS = 100, 200_000


def _cpu_per_second(twin: TwinCluster, seconds: int = 20) -> float:
    t0 = time.process_time()
    twin.advance(seconds)
    return (time.process_time() - t0) / seconds * 1000


def _scrape_all(targets: dict[int, str]) -> int:
    total = 0
    for target in targets.values():
        with urllib.request.urlopen(f"http://{target}/metrics", timeout=30) as r:
            total += len(r.read())
    return total


def run() -> list[Figure]:
    snap = generate_snapshot(BROKERS, 4, 2000, PARTITIONS, 3, seed=1)
    twin = TwinCluster(snap)
    twin.advance(2)
    figures = [Figure("twin: CPU per simulated second (steady)", _cpu_per_second(twin), "ms",
                      50, note=f"{BROKERS} brokers, {PARTITIONS:,} partitions, RF 3")]
    for src in range(1, 21):  # 20 throttled moves of 50 partitions each
        throttled_reassign(TwinGateway(twin), move_plan(twin.snap, src, 100 - src, 50), 5e6)
    twin.advance(2)
    figures.append(Figure("twin: CPU per simulated second (1,000 throttled moves in flight)",
                          _cpu_per_second(twin), "ms", 50,
                          note="includes moves completing (assignment rebuilds)"))
    exporters = Exporters(twin, STRIMZI).start()
    home = tempfile.mkdtemp(prefix="bench-twin-")
    prom = PrometheusProcess(home)
    try:
        _scrape_all(exporters.targets)  # label prefixes are built once per assignment

        def scrape():
            twin.advance(1)
            return _scrape_all(exporters.targets)
        secs, size = best_of(scrape, repeat=3)
        figures.append(Figure("twin: one scrape of all exporters", secs, "s", 1.0,
                              note=f"{size / 1e6:.0f} MB of text, "
                                   f"{twin.snap.n_replicas:,} log-size series"))
        prom.write_config(scrape_config(exporters.targets, "bench", 10.0))
        prom.start()
        client = MetricsClient(prom.url, "strimzi", ttl=0, timeout=30)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if len(client.instant("partitions_per_broker")) == BROKERS:
                    break
            except MetricMissing:
                pass
            time.sleep(1)
        secs, answers = best_of(lambda: monitoring.overview_now(client), repeat=5)
        ok = sum(a["ok"] for a in answers.values())
        figures.append(Figure("prometheus: overview queries (all of catalog.OVERVIEW)", secs * 1000,
                              "ms", 200, note=f"{ok}/{len(catalog.OVERVIEW)} answered"))
    finally:
        prom.stop()
        exporters.stop()
    return figures
