"""The plan page while the first partitions still copy (the Apache Kafka demo's plan 5: an
"add" of one broker at 0.2 MB/s read "0 B of about 68.9 MB copied", "observed -/s" and an
observed ETA growing 1m 25s -> 3m 35s -> 4m 2s for 35 s, while Prometheus showed 14.7 MB of
reassignment bytes received). A partition's bytes still count when it finishes; beside them
the progress reads the copy the receiving brokers report now (Kafka's
ReassignmentBytesInPerSec, KIP-542, as the JMX exporter exposes it, through the catalog's
query), bases the observed ETA on it until bytes are counted, and says in words when
Prometheus cannot tell.

The Prometheus here answers the catalog's reassignment query from the twin's own counter
(the series the twin exports as Kafka's): each broker's growth over the last twin second,
what rate() over the exporter's counter gives."""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest

from backend.metrics.dialects import DIALECTS
from backend.services import execution
from backend.services.cluster import ClusterSource
from backend.twin.cluster import TwinCluster, TwinSettings
from backend.twin.gateway import TwinGateway
from dashboard.plan_views.progress import progress_view
from tests.plan_helpers import moves
from tests.servers import send_json
from tests.unit.test_execution_service import World
from tests.unit.test_executor import MB, small_cluster
from tests.unit.test_plan_view import text_of

THROTTLE = 200_000  # bytes/s: the demo's 0.2 MB/s
A0 = ("a", 0, [3, 2])  # 6 MB from broker 1 into broker 3: 30 s at the throttle


class TwinPrometheus:
    """A Prometheus HTTP API answering the reassignment bytes-in rate per broker from the
    twin's ``reassignment_in`` counter (what its exporters publish as
    kafka_server_brokertopicmetrics_reassignmentbytesin_total); every other query, or all
    of them with ``empty``, has no series."""

    def __init__(self, twin: TwinCluster) -> None:
        self.twin, self.empty, self.asked = twin, False, []
        self.history = [(twin.now_seconds, twin.counters["reassignment_in"].copy())]
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                query = parse_qs(urlparse(self.path).query).get("query", [""])[0]
                outer.asked.append(query)
                send_json(self, {"status": "success", "data": {
                    "resultType": "vector", "result": outer.answer(query)}})

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def scrape(self) -> None:
        self.history.append((self.twin.now_seconds,
                             self.twin.counters["reassignment_in"].copy()))

    def answer(self, query: str) -> list[dict]:
        if self.empty or DIALECTS["strimzi"].reassignment_bytes_in not in query:
            return []
        (t0, c0), (t1, c1) = self.history[-2:] if len(self.history) > 1 \
            else (self.history[0], self.history[0])
        rates = (c1 - c0) / max(t1 - t0, 1e-9)
        return [{"metric": {"broker": str(b)}, "value": [t1, repr(float(r))]}
                for b, r in zip(self.twin.snap.broker_ids.tolist(), rates, strict=True)]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def scraped_world(tmp_path, sizes: dict[tuple[str, int], int]) -> World:
    """A world on a noiseless twin of partitions of ``sizes`` bytes, with a stand-in
    Prometheus scraping it (stop ``prom`` and close ``store`` after)."""
    w = World(tmp_path)
    w.twin = TwinCluster(small_cluster(sizes), TwinSettings(traffic_noise=0.0))
    w.gw = TwinGateway(w.twin)
    w.prom = TwinPrometheus(w.twin)
    return w


@pytest.fixture
def world(tmp_path):
    # a-0 of 6 MB, and b-1 empty: it finishes at once and counts 0 bytes (an "add" moves
    # empty partitions too)
    w = scraped_world(tmp_path, {("a", 0): 6 * MB, ("b", 1): 0})
    cycle = w.cycle

    def scraped(n: int = 1) -> None:
        for _ in range(n):
            cycle()
            w.prom.scrape()
    w.cycle = scraped
    yield w
    w.prom.stop()
    w.store.close()


def source(w: World, url: str | None) -> ClusterSource:
    return ClusterSource("small", None, w.twin.snap.limits, prometheus_url=url,
                         metrics_ttl=0, gateway=w.gw)


def copying(w: World, plan_id: int, cycles: int = 5) -> dict:
    """The progress a few twin seconds into the batch, a-0 still copying."""
    for _ in range(60):
        w.cycle()
        p = execution.progress(w.store, plan_id, now=w.now())
        if p is not None and p["per_batch"] and p["per_batch"][0]["state"] == "running" \
                and w.twin.counters["reassignment_in"].sum() > 0:
            break
    w.cycle(cycles)
    assert ("a", 0) in {(m["topic"], m["partition"]) for m in w.twin.list_reassignments()}
    return execution.progress(w.store, plan_id, now=w.now(), source=source(w, w.prom.url))


def test_before_any_partition_finishes_the_copy_rate_and_an_eta_from_it(world):
    plan_id = world.executing(moves(A0), throttle=THROTTLE)
    p = copying(world, plan_id)
    # the old meaning stays: nothing finished, nothing counted
    assert p["partitions_done"] == 0 and p["bytes_copied"] == p["bytes_done"] == 0
    assert p["observed_rate"] is None
    live = p["copy_rate"]
    assert live["brokers"] == ["3"] and live["why"] is None
    assert live["bytes_per_second"] == pytest.approx(THROTTLE, rel=0.05)
    assert p["observed_eta_basis"] == "copy rate"
    # the bytes left less what broker 3's new replica holds already (its log size)
    assert 0 < live["copied"] < 6 * MB and live["copied_why"] is None
    assert p["observed_eta_seconds"] == pytest.approx(
        (p["bytes_total"] - live["copied"]) / THROTTLE, rel=0.05)
    assert any("reassignmentbytesin" in q and "rate(" in q for q in world.prom.asked)
    text = text_of(progress_view(p, "bar"))
    assert "copying now at 200 kB/s into broker 3 (Kafka's ReassignmentBytesInPerSec" in text
    assert "observed: no bytes counted yet (a partition's count when it finishes)" in text
    assert "at the copy rate now" in text and "observed unknown" not in text


def test_empty_partitions_done_give_no_eta_growing_with_the_clock(world):
    """b-1 (empty) finishes first: one partition done and 0 bytes. Its pace said the
    ETA was the time elapsed so far (1m 25s, then 3m 35s, ...); now the copy rate says."""
    plan_id = world.executing(moves(A0, ("b", 1, [2, 1])), throttle=THROTTLE)
    p = copying(world, plan_id, cycles=10)
    assert p["partitions_done"] == 1 and p["bytes_copied"] == 0
    assert p["observed_eta_basis"] == "copy rate"
    assert p["copy_rate"]["brokers"] == ["3"]  # b-1 is no longer in flight
    eta = p["observed_eta_seconds"]
    assert eta == pytest.approx((p["bytes_total"] - p["copy_rate"]["copied"])
                                / p["copy_rate"]["bytes_per_second"])
    # without Prometheus' answer: no time, and why, never the elapsed time as an ETA
    world.cycle(5)
    bare = execution.progress(world.store, plan_id, now=world.now())
    assert bare["copy_rate"] is None and bare["observed_eta_seconds"] is None
    assert bare["observed_eta_why"] == ("no bytes counted yet (a partition's count when it "
                                        "finishes)")
    assert "observed: none yet, no bytes counted yet" in text_of(progress_view(bare, "bar"))


def closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


@pytest.mark.parametrize(("url", "why"), [
    ("closed", "Prometheus unreachable: no live copy rate"),
    ("empty", "Prometheus has no reassignment bytes yet"),
    (None, "no Prometheus configured for this cluster"),
])
def test_without_a_rate_from_prometheus_it_says_so_and_gives_no_eta(world, url, why):
    plan_id = world.executing(moves(A0), throttle=THROTTLE)
    copying(world, plan_id)
    world.prom.empty = url == "empty"
    at = {"closed": closed_port(), "empty": world.prom.url}.get(url)
    p = execution.progress(world.store, plan_id, now=world.now(), source=source(world, at))
    assert p["copy_rate"]["bytes_per_second"] is None
    assert p["copy_rate"]["why"].startswith(why)
    assert p["observed_eta_seconds"] is None and p["observed_eta_basis"] is None
    assert p["observed_eta_why"].endswith(p["copy_rate"]["why"])
    text = text_of(progress_view(p, "bar"))
    assert f"copying now into broker 3: rate not known ({why}" in text
    assert "observed: none yet, no bytes counted yet" in text
    assert "observed unknown" not in text


def test_a_rate_of_nothing_is_no_eta(world):
    plan_id = world.executing(moves(A0), throttle=THROTTLE)
    copying(world, plan_id)
    world.prom.history.append(world.prom.history[-1])  # no growth over the last scrape
    world.prom.history[-1] = (world.prom.history[-1][0] + 1,
                              np.array(world.prom.history[-1][1]))
    p = execution.progress(world.store, plan_id, now=world.now(), source=source(world,
                                                                            world.prom.url))
    assert p["copy_rate"]["bytes_per_second"] == 0.0
    assert p["observed_eta_seconds"] is None
    assert p["observed_eta_why"].endswith("nothing copied in the last minute")


def test_once_bytes_are_counted_the_eta_is_from_the_partitions_finished(world):
    plan_id = world.executing(moves(A0, ("b", 0, [3, 4])), throttle=THROTTLE)
    for _ in range(200):
        world.cycle()
        p = execution.progress(world.store, plan_id, now=world.now(),
                               source=source(world, world.prom.url))
        if p is not None and p["bytes_copied"] > 0:
            break
    assert p["state"] == "running" and p["observed_eta_basis"] == "partitions finished"
    assert p["observed_eta_seconds"] == pytest.approx(
        (p["bytes_total"] - p["bytes_done"]) / p["observed_rate"])


def test_no_batch_in_flight_asks_no_prometheus(world):
    plan_id = world.executing(moves(A0), throttle=THROTTLE)
    world.until(plan_id, "completed", limit=120)
    p = execution.progress(world.store, plan_id, now=world.now(),
                           source=source(world, world.prom.url))
    assert p["copy_rate"] is None and p["observed_eta_seconds"] == 0.0
    assert not world.prom.asked
