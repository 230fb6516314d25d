"""Approvals through the HTTP API: 20 clients approving at once, on SQLite and PostgreSQL.

Target (issue 11): approve p95 <= 50 ms with 20 concurrent clients. Unlike bench_store
(the plan service called in-process), this is what an API client sees: HTTP Basic, the
JSON body, Flask, a fresh read of the touched topics for the basis check, the conditional
update with its decision and chained audit row, and the answer. The server is `railyard
serve`'s: Granian, WORKERS worker processes of THREADS threads, Redis as the shared cache;
each worker reads the cluster from a twin of its own (what a metadata request costs
Railyard; the broker's side of it runs elsewhere). The 20 clients are processes of their
own with a plain keep-alive HTTP connection each; each signs in once before the clock
starts, then approves its share of 400 plans of 50 moves, the next as soon as the last
answers. Clients, server and database share this machine's cores: the load average is
printed beside every figure.
"""

from __future__ import annotations

import multiprocessing
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path

import requests

from backend.services import plans
from backend.store.store import open_store
from backend.store.workflow import Actor
from backend.twin.generate import generate_snapshot
from benchmarks import api_client
from benchmarks.common import Figure, on_both_stores, server_cpu

CLIENTS = 20
PLANS = 400
MOVES = 50
TARGET_MS = 50.0
OPERATOR = Actor("olga", "operator", "127.0.0.1")
APPROVERS = [f"approver{c}" for c in range(CLIENTS)]
WORKERS, THREADS = 2, 4  # server processes (one per core here) and threads in each


def _snapshot():
    return generate_snapshot(brokers=12, racks=3, topics=20, partitions=2000, rf=3, seed=5,
                             cluster="bench")


def _config(store_url: str, home: str, port: int, redis_url: str) -> dict:
    from werkzeug.security import generate_password_hash

    return {"clusters": [{"name": "bench", "gateway": {"type": "twin",
                                                       "url": "http://127.0.0.1:9"}}],
            "cache": {"type": "redis", "redis_url": redis_url,
                      "background_dir": f"{home}/cache"},
            "store": {"url": store_url},
            "server": {"port": port, "workers": WORKERS, "threads": THREADS},
            "auth": {"secret_key_file": f"{home}/secret_key", "users": [
                {"name": n, "role": "approver", "password_hash": generate_password_hash(
                    f"pw-{n}", "pbkdf2:sha256:1000")}
                for n in APPROVERS]}}


def _worker_app(doc: dict):
    """A worker's app: the dashboard's, with the cluster as a twin in the worker (the
    cluster read of the basis check costs what a metadata request costs Railyard: the
    broker's work is elsewhere)."""
    from backend.twin.cluster import TwinCluster
    from backend.twin.gateway import TwinGateway
    from dashboard.app import create_app
    from dashboard.config import parse_config
    from dashboard.server import set_up

    return set_up(create_app(parse_config(doc, "bench"), gateways={
        "bench": TwinGateway(TwinCluster(_snapshot()))})).server


def _serve(doc: dict) -> None:
    """The server process: `railyard serve`'s Granian workers with the bench's app."""
    from functools import partial

    from dashboard.config import parse_config
    from dashboard.server import serve_workers

    serve_workers(parse_config(doc, "bench"), partial(_worker_app, doc), lambda _url: None)


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


def _measure(store_url: str, redis_url: str) -> tuple[float, float, int, float]:
    """(p50 ms, p95 ms, approvals, the server's CPU ms per approval) of CLIENTS HTTP
    clients approving PLANS plans."""
    from tests.servers import free_port

    shas = _propose(store_url)
    ids = sorted(shas)
    port = free_port()
    with tempfile.TemporaryDirectory() as home:
        # not a daemon: daemons may not start the worker processes
        server = multiprocessing.get_context("spawn").Process(
            target=_serve, args=(_config(store_url, home, port, redis_url),))
        server.start()
        try:
            url = f"http://127.0.0.1:{port}/api/v1"
            _wait(url, server)
            # spawned: a fork would copy this process mid-way through its threads' locks
            ctx = multiprocessing.get_context("spawn")
            ready, finished = ctx.Barrier(CLIENTS + 1), ctx.Barrier(CLIENTS)
            answers = ctx.Queue()
            clients = [ctx.Process(target=api_client.run, args=(
                port, APPROVERS[c], {i: shas[i] for i in ids[c::CLIENTS]}, ready, finished,
                answers))
                for c in range(CLIENTS)]
            for p in clients:
                p.start()
            try:
                ready.wait(timeout=120)  # every client has signed in
            except threading.BrokenBarrierError:
                raise RuntimeError(f"a client did not sign in: {answers.get(timeout=5)}") \
                    from None
            cpu = [server_cpu(server.pid)]
            took = []
            for _ in clients:
                answer = answers.get(timeout=600)
                if isinstance(answer, str):
                    raise RuntimeError(f"a client failed: {answer}")
                took += answer
            for p in clients:
                p.join()
            cpu_ms = (server_cpu(server.pid) - cpu[0]) * 1000 / max(len(took), 1)
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


class _Temp:
    """tests.servers wants pytest's tmp_path_factory: its one method, for the bench."""

    def __init__(self, root: str) -> None:
        self.root = root

    def mktemp(self, name: str) -> Path:
        return Path(tempfile.mkdtemp(prefix=name, dir=self.root))


def run() -> list[Figure]:
    from tests.servers import redis_server

    with tempfile.TemporaryDirectory() as tmp:
        redis = redis_server(_Temp(tmp))
        redis_url = next(redis)
        try:
            def figure(name: str, store_url: str) -> Figure:
                p50, p95, n, cpu = _measure(store_url, redis_url)
                load = "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
                return Figure(
                    f"API approve p95 over HTTP, {CLIENTS} concurrent clients, {name}", p95,
                    "ms", TARGET_MS,
                    note=f"p50 {p50:.1f} ms over {n} approvals, {cpu:.1f} ms of the "
                         f"server's CPU each (user + sys, {WORKERS} worker processes of "
                         f"{THREADS} threads, as `railyard serve` runs them); {load}")

            return on_both_stores(figure)
        finally:
            redis.close()
