"""Under many browsers: one query in flight per question (single flight), and a slow
Prometheus told apart from one that does not answer. Real loopback HTTP servers."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from backend.cache import TtlCache
from backend.metrics.client import MetricsClient, PrometheusSlow, PrometheusUnavailable
from tests.servers import free_port, send_json


@pytest.mark.parametrize("ttl", [0, 60])
def test_concurrent_callers_share_one_computation(ttl):
    cache = TtlCache("metrics", ttl=ttl)
    calls, start = [], threading.Barrier(20)

    def compute():
        calls.append(1)
        time.sleep(0.3)  # long enough for every caller to arrive while it runs
        return "answer"

    def caller(out, i):
        start.wait()
        out[i] = cache.fetch(("q",), compute)
    out = [None] * 20
    threads = [threading.Thread(target=caller, args=(out, i)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == ["answer"] * 20 and len(calls) == 1


def test_a_failure_reaches_every_waiter_and_is_not_kept():
    cache = TtlCache("metrics", ttl=60)
    start, errors = threading.Barrier(5), []

    def compute():
        time.sleep(0.2)
        raise RuntimeError("down")

    def caller():
        start.wait()
        try:
            cache.fetch(("q",), compute)
        except RuntimeError as e:
            errors.append(str(e))
    threads = [threading.Thread(target=caller) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == ["down"] * 5
    assert cache.fetch(("q",), lambda: "up") == "up"  # the next ask tries again


class SlowPrometheus(BaseHTTPRequestHandler):
    """Answers every query correctly, but only after 2 s."""

    def do_GET(self) -> None:
        time.sleep(2)
        send_json(self, {"status": "success", "data": {"resultType": "vector", "result": []}})

    def log_message(self, *args) -> None:
        pass


def test_a_slow_prometheus_is_slow_not_unreachable():
    server = ThreadingHTTPServer(("127.0.0.1", 0), SlowPrometheus)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        client = MetricsClient(url, timeout=0.5, ttl=0)
        with pytest.raises(PrometheusSlow, match=r"is slow \(timed out after 0.5 s\)"):
            client.instant("bytes_in_per_broker")
    finally:
        server.shutdown()
        server.server_close()
    nobody = MetricsClient(f"http://127.0.0.1:{free_port()}", timeout=0.5, ttl=0)
    with pytest.raises(PrometheusUnavailable, match="is not answering") as e:
        nobody.instant("bytes_in_per_broker")
    assert not isinstance(e.value, PrometheusSlow)
