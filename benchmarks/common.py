"""Shared pieces for benchmarks: a figure with its target, timing and peak memory."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass
class Figure:
    """One measured figure. ``higher_is_better`` picks the direction of the target."""

    name: str
    value: float
    unit: str
    target: float
    higher_is_better: bool = False
    note: str = ""

    @property
    def meets(self) -> bool:
        return self.value >= self.target if self.higher_is_better else self.value <= self.target

    def line(self) -> str:
        sign = ">=" if self.higher_is_better else "<="
        mark = "ok " if self.meets else "MISS"
        note = f"  [{self.note}]" if self.note else ""
        return (f"{mark} {self.name}: {self.value:,.3f} {self.unit} "
                f"(target {sign} {self.target:,} {self.unit}){note}")


def server_cpu(pid: int) -> float:
    """User + system CPU seconds so far of process ``pid`` and its workers (`railyard
    serve` answers requests in child processes: the parent alone shows none of it)."""
    import psutil

    server = psutil.Process(pid)
    return sum(sum(p.cpu_times()[:2]) for p in [server, *server.children(recursive=True)])


def own_peak_rss_mb() -> float:
    """This process's peak resident memory (VmHWM). Not ru_maxrss: Linux carries the
    parent's peak across fork and exec, so a child of `make bench`, which runs every
    benchmark in one process, would report the whole run's peak."""
    with open("/proc/self/status") as status:
        kb = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    return kb / 1024


def best_of(fn: Callable[[], Any], repeat: int = 3) -> tuple[float, Any]:
    """Fastest wall time of ``repeat`` runs (seconds) and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def on_both_stores(figure: Callable[[str, str], Figure]) -> list[Figure]:
    """``figure(name, url)`` on a SQLite file and on a PostgreSQL server started for it
    (skipped, with a line saying why, when PostgreSQL cannot start)."""
    figures = []
    with tempfile.TemporaryDirectory() as tmp:
        figures.append(figure("SQLite (WAL)", f"sqlite:///{tmp}/bench.db"))
    from tests.servers import postgres_server

    server = postgres_server()
    try:
        url = next(server)
    except BaseException as e:
        print(f"   PostgreSQL not measured: {e}")
        return figures
    try:
        figures.append(figure("PostgreSQL", url))
    finally:
        server.close()
    return figures


def wait_recorded(prom_url: str, timeout: float = 300) -> None:
    """Until Railyard's recording rules have recorded, as on a Prometheus that has been
    running a while (the pages then read one series per rule, not the full expression)."""
    import json
    import urllib.parse
    import urllib.request

    from backend.metrics.recording import RECORDED

    deadline = time.monotonic() + timeout
    for name in RECORDED.values():
        q = urllib.parse.quote(f"count({name})")
        while True:
            with urllib.request.urlopen(f"{prom_url}/api/v1/query?query={q}", timeout=10) as r:
                if json.load(r)["data"]["result"]:
                    break
            if time.monotonic() > deadline:
                raise TimeoutError(f"{name} was not recorded within {timeout:g} s")
            time.sleep(1)
