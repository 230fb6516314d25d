"""The live pages under 20 users: 20 concurrent clients for 60 s asking what the data
callbacks of /throttles and / ask (monitoring.throttles, monitoring.health), on the demo
cluster and on a 100-broker, 200k-partition twin, each scraped by a real Prometheus
started the way Railyard starts it (with its recording rules).

Target (issue 15): 0 errors, data callbacks p95 <= 500 ms. The clients are threads of one
process sharing one metric-answer cache, as the dashboard's request threads do; each asks
for the live "last 1 h" view with the window end on the dashboard's 15 s grid, so browsers
refreshing together ask the same questions. A query slower than the client's 5 s timeout
or an unreachable Prometheus counts as an error, as does any exception.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from backend.gateways.twin_http import TwinHttpGateway
from backend.metrics.server import PrometheusProcess, scrape_config
from backend.model.io import save_snapshot
from backend.services import monitoring
from backend.services.cluster import ClusterSource
from backend.twin.examples import demo_snapshot
from backend.twin.generate import generate_snapshot
from benchmarks.common import Figure, wait_recorded

CLIENTS = 20
SECONDS = float(os.environ.get("RAILYARD_BENCH_LOAD_SECONDS", "60"))
GRID = 15  # s: the dashboard's window grid
TARGET_MS = 500.0


@dataclass(frozen=True)
class LiveHour:
    """The live 'last 1 h' view the pages ask for."""

    start: float
    end: float
    step: float = 15.0
    refreshing: bool = True


def _window() -> LiveHour:
    end = float(int(time.time()) // GRID * GRID)
    return LiveHour(end - 3600, end)


def _load(source: ClusterSource) -> tuple[dict[str, list[float]], list[str]]:
    """CLIENTS threads for SECONDS: latencies per callback, and the errors."""
    times: dict[str, list[float]] = {"throttles": [], "overview": []}
    errors: list[str] = []
    lock = threading.Lock()
    stop = time.monotonic() + SECONDS

    def client(i: int) -> None:
        calls = [("throttles", monitoring.throttles), ("overview", monitoring.health)]
        n = i
        while time.monotonic() < stop:
            name, call = calls[n % 2]
            n += 1
            t0 = time.perf_counter()
            try:
                answer = call(source, _window())
                failed = _first_error(answer)
            except Exception as e:  # an unreachable Prometheus, a bug: all are errors
                failed = f"{type(e).__name__}: {e}"
            with lock:
                times[name].append(time.perf_counter() - t0)
                if failed:
                    errors.append(failed)
            time.sleep(0.2)  # a browser's think time between callbacks

    threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return times, errors


def _first_error(answer) -> str | None:
    """A timed-out or unreachable query inside an answer (pages show these as banners)."""
    if isinstance(answer, dict):
        for v in answer.values():
            found = _first_error(v)
            if found:
                return found
    if isinstance(answer, monitoring.PrometheusUnavailable):
        return str(answer)
    return None


def _stack(snap, home: Path, scrape: float):
    """`railyard twin serve` in its own process (its exporters must not share the clients'
    interpreter), Prometheus scraping it, and the source the pages would build."""
    from tests.servers import stop as stop_process

    home.mkdir(parents=True)
    save_snapshot(snap, home / "snap.parquet")
    targets = home / "targets.json"
    twin = subprocess.Popen([str(Path(sys.executable).parent / "railyard"), "twin", "serve",
                             "--snapshot", str(home / "snap.parquet"), "--port-base", "0",
                             "--api-port", "0", "--targets-file", str(targets)],
                            stdout=subprocess.DEVNULL, stderr=(home / "twin.log").open("w"))
    prom = PrometheusProcess(home / "prom")

    def close() -> None:
        prom.stop()
        stop_process(twin)
    try:
        deadline = time.monotonic() + 300
        while not targets.exists() and time.monotonic() < deadline:
            time.sleep(0.5)
        doc = json.loads(targets.read_text())
        prom.write_config(scrape_config(doc["targets"], snap.cluster, scrape))
        prom.start()
    except BaseException:
        close()
        raise
    source = ClusterSource(snap.cluster, None, snap.limits, prometheus_url=prom.url,
                           gateway=TwinHttpGateway(doc["api"]))
    return source, prom, close


def run() -> list[Figure]:
    figures = []
    big = generate_snapshot(100, 10, 2000, 200_000, 3, seed=7, cluster="big")
    with tempfile.TemporaryDirectory(prefix="railyard-bench-load-") as tmp:
        for label, snap, scrape in (("demo", demo_snapshot(), 5.0),
                                    ("100 brokers/200k", big, 15.0)):
            source, prom, close = _stack(snap, Path(tmp) / label.split()[0], scrape)
            try:
                wait_recorded(prom.url)
                load = os.getloadavg()[0]
                times, errors = _load(source)
                load_after = os.getloadavg()[0]
            finally:
                close()
            note = (f"{CLIENTS} clients x {SECONDS:g} s, live last 1 h, recording rules on; "
                    f"load average {load:.1f} at start, {load_after:.1f} at the end")
            if errors:
                note += f"; first error: {errors[0][:120]}"
            figures.append(Figure(f"live pages under {CLIENTS} clients: errors ({label})",
                                  len(errors), "errors", 0, note=note))
            for name, ts in times.items():
                figures.append(Figure(
                    f"{name} data callback p95 under {CLIENTS} clients ({label}, "
                    f"{len(ts)} calls)", float(np.percentile(ts, 95)) * 1000 if ts else
                    float("inf"), "ms", TARGET_MS, note=note))
    return figures
