"""Approvals through the HTTP API: 20 clients approving at once, on SQLite and PostgreSQL.

Target (issue 11): approve p95 <= 50 ms with 20 concurrent clients. Unlike bench_store
(the plan service called in-process), this is what an API client sees: HTTP Basic, the
JSON body, Flask, a fresh read of the twin for the basis check, the conditional update
with its decision and chained audit row, and the answer. The server runs in its own
process (the dashboard's app on a threaded WSGI server, the twin in it), the 20 clients
are threads of this one; each client signs in once before the clock starts, then approves
its share of 400 plans of 50 moves. The machine is shared: the load average is printed
beside every figure.
"""

from __future__ import annotations

import multiprocessing
import os
import statistics
import tempfile
import threading
import time

import requests

from backend.services import plans
from backend.store.store import open_store
from backend.store.workflow import Actor
from backend.twin.generate import generate_snapshot
from benchmarks.common import Figure, on_both_stores

CLIENTS = 20
PLANS = 400
MOVES = 50
TARGET_MS = 50.0
OPERATOR = Actor("olga", "operator", "127.0.0.1")
APPROVERS = [f"approver{c}" for c in range(CLIENTS)]


def _snapshot():
    return generate_snapshot(brokers=12, racks=3, topics=20, partitions=2000, rf=3, seed=5,
                             cluster="bench")


def _serve(store_url: str, home: str, port: int) -> None:
    """The server process: the dashboard's app on the twin, API and all."""
    import logging

    from werkzeug.security import generate_password_hash
    from werkzeug.serving import make_server

    from backend.twin.cluster import TwinCluster
    from backend.twin.gateway import TwinGateway
    from dashboard.app import create_app
    from dashboard.config import parse_config

    doc = {"clusters": [{"name": "bench", "gateway": {"type": "twin",
                                                      "url": "http://127.0.0.1:9"}}],
           "cache": {"background_dir": f"{home}/cache"}, "store": {"url": store_url},
           "server": {"port": port},
           "auth": {"secret_key_file": f"{home}/secret_key", "users": [
               {"name": n, "role": "approver", "password_hash": generate_password_hash(
                   f"pw-{n}", "pbkdf2:sha256:1000")} for n in APPROVERS]}}
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line per request
    app = create_app(parse_config(doc, "bench"),
                     gateways={"bench": TwinGateway(TwinCluster(_snapshot()))})
    make_server("127.0.0.1", port, app.server, threaded=True).serve_forever()


def _propose(store_url: str) -> dict[int, str]:
    """PLANS plans of MOVES moves each (reversed replica lists), by the operator."""
    snap = _snapshot()
    store = open_store(store_url)
    try:
        shas = {}
        for i in range(PLANS):
            start = (i * MOVES) % snap.n_partitions
            content = {"version": 1, "partitions": [
                {"topic": str(snap.topic_names[snap.part_topic[r]]),
                 "partition": int(snap.part_id[r]),
                 "replicas": list(reversed(snap.replicas_of(r)))}
                for r in range(start, start + MOVES)]}
            plan = plans.propose(store, OPERATOR, cluster="bench", kind="reassignment",
                                 content=content, preview={}, snapshot=snap)
            shas[plan.id] = plan.sha256
    finally:
        store.close()
    return shas


def _measure(store_url: str) -> tuple[float, float, int, float]:
    """(p50 ms, p95 ms, approvals, the server's CPU ms per approval) of CLIENTS HTTP
    clients approving PLANS plans."""
    import psutil

    from tests.servers import free_port

    shas = _propose(store_url)
    ids = sorted(shas)
    port = free_port()
    with tempfile.TemporaryDirectory() as home:
        server = multiprocessing.get_context("spawn").Process(
            target=_serve, args=(store_url, home, port), daemon=True)
        server.start()
        try:
            url = f"http://127.0.0.1:{port}/api/v1"
            _wait(url, server)
            ready = threading.Barrier(CLIENTS)
            took: list[float] = []
            lock = threading.Lock()

            def client(c: int) -> None:
                http = requests.Session()
                http.auth = (APPROVERS[c], f"pw-{APPROVERS[c]}")
                http.get(f"{url}/plans?state=completed", timeout=60).raise_for_status()
                if ready.wait() == 0:
                    cpu.append(sum(served.cpu_times()[:2]))
                for plan_id in ids[c::CLIENTS]:
                    t0 = time.perf_counter()
                    answer = http.post(f"{url}/plans/{plan_id}/approve",
                                       json={"sha256": shas[plan_id]}, timeout=60)
                    ms = (time.perf_counter() - t0) * 1000
                    answer.raise_for_status()
                    with lock:
                        took.append(ms)

            served, cpu = psutil.Process(server.pid), []
            threads = [threading.Thread(target=client, args=(c,)) for c in range(CLIENTS)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            cpu_ms = (sum(served.cpu_times()[:2]) - cpu[0]) * 1000 / max(len(took), 1)
        finally:
            server.terminate()
            server.join(20)
    if len(took) != PLANS:
        raise RuntimeError(f"{PLANS - len(took)} approvals failed")
    q = statistics.quantiles(took, n=100)
    return q[49], q[94], len(took), cpu_ms


def _wait(url: str, server: multiprocessing.Process, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not server.is_alive():
            raise RuntimeError("the API server exited")
        try:
            requests.get(f"{url}/plans", timeout=2)
            return
        except requests.ConnectionError:
            time.sleep(0.3)
    raise TimeoutError(f"{url} did not answer in {timeout} s")


def _figure(name: str, store_url: str) -> Figure:
    p50, p95, n, cpu = _measure(store_url)
    load = "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    return Figure(f"API approve p95 over HTTP, {CLIENTS} concurrent clients, {name}", p95,
                  "ms", TARGET_MS,
                  note=f"p50 {p50:.1f} ms over {n} approvals, {cpu:.1f} ms of the server's "
                       f"CPU each (user + sys; one server process, its Python threads share "
                       f"one core at a time); {load}")


def run() -> list[Figure]:
    return on_both_stores(_figure)
