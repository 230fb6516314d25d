"""Real Prometheus scraping real twin exporters: every catalog concept returns what the
twin holds, in both naming dialects; Prometheus down or a metric missing is a typed error."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from backend.metrics import catalog
from backend.metrics.client import MetricMissing, MetricsClient, PrometheusUnavailable
from backend.metrics.dialects import DIALECTS
from backend.metrics.recording import RECORDED
from backend.metrics.server import PrometheusProcess, free_port, scrape_config
from backend.services import monitoring
from backend.twin.cluster import TwinCluster, TwinSettings
from backend.twin.examples import demo_snapshot
from backend.twin.exporter import Exporters, _figures
from backend.twin.gateway import TwinGateway
from backend.twin.generate import generate_snapshot
from backend.twin.scenario import move_plan, throttled_reassign
from dashboard.caches import make_cache
from tests.integration.kafka_prometheus import poll
from tests.servers import redis_server

pytestmark = pytest.mark.integration
SCRAPE = 0.5


def wait_until(predicate, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except MetricMissing:
            pass
        time.sleep(0.2)
    raise AssertionError(f"condition not met in time: {predicate.__doc__ or predicate}")


def scraped(client: MetricsClient, concept: str, series: int):
    """``client.instant(concept)`` once it has ``series`` series: a scrape that timed out
    on a busy machine marks every series of that exporter stale until its next scrape
    (0.5 s), and the answer then lacks them."""
    return poll(f"{series} series of {concept}", lambda: client.instant(concept),
                lambda got: len(got) == series, timeout=10)


@pytest.fixture(scope="module", params=sorted(DIALECTS))
def stack(request, tmp_path_factory):
    """A twin mid-incident, its exporters, and Prometheus scraping them every 0.5 s."""
    dialect = DIALECTS[request.param]
    snap = generate_snapshot(6, 3, 10, 120, 3, seed=3)
    twin = TwinCluster(snap, TwinSettings(seed=2, traffic_noise=0.0, min_insync_replicas=2))
    twin.set_mutation_quota("tenant", None, 1.0)
    twin.create_topics([{"name": f"n{i}", "partitions": 4, "rf": 3} for i in range(4)],
                       user="tenant", client_id="app")
    throttled_reassign(TwinGateway(twin), move_plan(twin.snap, 1, 6, 4), 2e4)
    twin.fail_broker(5)
    exporters = Exporters(twin, dialect).start()
    prom = PrometheusProcess(tmp_path_factory.mktemp(f"prom-{dialect.name}"))
    stop = threading.Event()

    def clock():  # one simulated second per wall second, so counters have rates
        while not stop.wait(0.25):
            twin.advance(0.25)
    ticker = threading.Thread(target=clock, daemon=True)
    try:
        prom.write_config(scrape_config(exporters.targets, "it", SCRAPE), dialect.name,
                          rules_interval=SCRAPE)  # the rules see each scrape here
        prom.start()
        ticker.start()
        yield twin, prom, MetricsClient(prom.url, dialect.name, ttl=0), stop, ticker
    finally:
        stop.set()
        if ticker.is_alive():
            ticker.join(timeout=5)
        prom.stop()
        exporters.stop()


def by_broker(frame) -> dict[int, float]:
    return {int(b): v for b, v in zip(frame["broker"], frame["value"], strict=True)}


def test_rates_follow_the_twins_traffic(stack):
    twin, _, client, _, _ = stack
    wait_until(lambda: len(client.instant("bytes_in_per_broker", window="3s")) == 5)
    time.sleep(3.5)  # rate() divides by the whole window: wait until the series fill it
    got = by_broker(client.instant("bytes_in_per_broker", window="3s"))
    with twin.lock:
        lead = twin.state.leader
        expected = np.bincount(lead[lead >= 0], weights=twin.state.base_rate[lead >= 0],
                               minlength=6)
    for pos, bid in enumerate(twin.snap.broker_ids.tolist()):
        if bid != 5:
            assert got[bid] == pytest.approx(expected[pos], rel=0.25)
    for concept in ("bytes_out_per_broker", "replication_bytes_in_per_broker",
                    "replication_bytes_out_per_broker", "reassignment_bytes_in_per_broker",
                    "reassignment_bytes_out_per_broker", "bytes_in_per_topic"):
        assert len(client.instant(concept, window="3s")) > 0


def test_every_gauge_concept_returns_what_the_twin_holds(stack):
    twin, _, client, stop, ticker = stack
    stop.set()
    ticker.join(timeout=5)
    time.sleep(3 * SCRAPE)  # let Prometheus scrape the frozen twin
    with twin.lock:
        fig = _figures(twin)
        ids = twin.snap.broker_ids.tolist()
        alive = twin.state.alive.copy()
        lag = twin.state.lag.copy()
        follower = fig.follower
        rb = twin.snap.replica_broker
        log_bytes = np.bincount(rb, weights=np.floor(np.maximum(
            twin.state.log_size[twin.snap.replica_partition] - lag, 0)), minlength=6)
        lag_sum = np.bincount(rb[follower], weights=fig.lag_msgs[follower], minlength=6)
        rp, live = twin.snap.replica_partition, alive[rb]
        size = np.floor(np.maximum(twin.state.log_size[rp] - lag, 0))[live]
        largest = np.zeros(twin.snap.n_partitions)
        np.maximum.at(largest, rp[live], size)
        behind = float((largest[rp[live]] - size).sum())
        in_flight = np.bincount(rp, weights=twin.state.adding | twin.state.removing,
                                minlength=twin.snap.n_partitions) > 0
        behind_in_flight = float((largest[rp[live]] - size)[in_flight[rp[live]]].sum())
        quota = twin.quotas.metrics(twin.time_ms)[0]
    expect = {
        "partitions_per_broker": fig.gauges["partition_count"],
        "leaders_per_broker": fig.gauges["leader_count"],
        "under_replicated_per_broker": fig.gauges["under_replicated"],
        "under_min_isr_per_broker": fig.gauges["under_min_isr"],
        "reassigning_per_broker": fig.gauges["reassigning"],
        "leader_throttled_rate": fig.gauges["leader_byte_rate"],
        "follower_throttled_rate": fig.gauges["follower_byte_rate"],
        "max_lag_per_broker": fig.gauges["max_lag"],
        "replica_lag_sum_per_broker": lag_sum,
        "log_bytes_per_broker": log_bytes,
        "brokers_up": alive.astype(float),
    }
    # KIP-73 byte-rate only on brokers that moved throttled bytes (Kafka's sensor is made on
    # the first ones): the others export no series, as on Apache Kafka (issue 24)
    sensor = {"leader_throttled_rate": fig.sensors["leader_byte_rate"],
              "follower_throttled_rate": fig.sensors["follower_byte_rate"]}
    for concept, values in expect.items():
        has = sensor.get(concept, np.ones(len(ids), bool))
        if not has.any():
            with pytest.raises(MetricMissing):
                client.instant(concept)
            continue
        want = {bid: float(values[p]) for p, bid in enumerate(ids) if has[p] and (
            alive[p] or concept == "brokers_up")}
        got = by_broker(scraped(client, concept, len(want)))
        assert got == pytest.approx(want), concept
    assert fig.gauges["reassigning"].sum() > 0 and lag_sum.sum() > 0
    single = {"cluster_partitions": twin.snap.n_partitions,
              "cluster_replicas": fig.gauges["partition_count"][alive].sum(),
              "active_controllers": 1, "offline_partitions": fig.gauges["offline_partitions"].sum(),
              "replica_bytes_behind": behind}
    for concept, value in single.items():
        assert scraped(client, concept, 1)["value"].tolist() == [pytest.approx(value)], concept
    # live pages ask for the partitions in flight only, read from the gateway
    moves = TwinGateway(twin).list_reassignments()
    _, concept, topics = monitoring._behind_job(moves)["behind"]
    got = monitoring._moving_only(client.instant(concept, topics=topics), moves)
    assert got["value"].sum() == pytest.approx(behind_in_flight)
    assert 0 < behind_in_flight <= behind  # followers elsewhere would not count
    for concept, key in (("mutation_tokens", "tokens"), ("mutation_rate", "mutation_rate"),
                         ("mutation_throttle_time", "throttle_time")):
        frame = client.instant(concept)
        assert frame[["user", "client_id"]].values.tolist() == [["tenant", ""]]
        assert frame["value"].tolist() == [pytest.approx(quota[key])], concept
    # over a window that saw only the frozen twin, the extremes are today's values
    for concept, key in (("mutation_tokens_low", "tokens"),
                         ("mutation_throttle_time_high", "throttle_time")):
        frame = client.instant(concept, window="1s")
        assert frame["value"].tolist() == [pytest.approx(quota[key])], concept
    newest = client.instant("newest_sample", window="1m:1s")["value"].item()
    assert time.time() - 5 < newest <= time.time()
    assert set(catalog.CATALOG) == set(expect) | set(single) | {
        "mutation_tokens_low", "mutation_throttle_time_high",
        "newest_sample", "replica_bytes_behind_in",  # the window-wide and in-flight ones
        # history and trend concepts: checked on backfilled history and by promtool
        # (test_capacity_history.py, test_partition_health_history.py, test_alert_rules.py)
        "under_replicated_peak", "under_min_isr_peak", "reassigning_peak",
        "offline_partitions_peak", "under_replicated_peak_per_broker",
        "under_min_isr_peak_per_broker", "reassigning_peak_per_broker",
        "partitions_per_broker_peak", "cluster_replicas_peak", "partitions_per_broker_in_14d",
        "cluster_replicas_in_14d", "max_lag_growth_per_broker",
        "mutation_tokens", "mutation_rate", "mutation_throttle_time", "bytes_in_per_broker",
        "bytes_out_per_broker", "replication_bytes_in_per_broker",
        "replication_bytes_out_per_broker", "reassignment_bytes_in_per_broker",
        "reassignment_bytes_out_per_broker", "bytes_in_per_topic",
        # a migration's old topic: test_migration_checks.py, on the twin's Prometheus
        "bytes_in_of_topics"}



def test_expensive_concepts_read_railyards_recording_rules(stack):
    """The Prometheus Railyard starts records the heavy lag concept; a client reads the
    recorded series and gets what the full expression gives (the twin is frozen here)."""
    _, prom, client, stop, ticker = stack
    stop.set()  # freeze the twin, so both answers describe the same scrape
    ticker.join(timeout=5)
    for concept, name in RECORDED.items():
        wait_until(lambda n=name: client.prom.custom_query(f"count({n})"))
        time.sleep(3 * SCRAPE)  # the rule has evaluated the frozen twin's last scrape
        fresh = MetricsClient(prom.url, client.dialect.name, ttl=0)
        assert fresh.promql(concept) == name
        recorded = fresh.instant(concept)
        full = client.prom.custom_query(catalog.promql(concept, client.dialect))
        want = sorted(float(s["value"][1]) for s in full)
        assert sorted(recorded["value"]) == pytest.approx(want, rel=1e-9)
    missing = MetricsClient(prom.url, client.dialect.name, ttl=0, by="instance")
    assert missing.promql("replica_lag_sum_per_broker") == catalog.promql(
        "replica_lag_sum_per_broker", client.dialect, by="instance")  # no rule: the full one

def test_overview_service_and_range_queries(stack):
    twin, _, client, _, _ = stack
    now = time.time()
    answers = monitoring.overview_now(client, twin.snap.limits)
    with twin.lock:
        idle = {f"{side}_throttled_rate" for side in ("leader", "follower")
                if not _figures(twin).sensors[f"{side}_byte_rate"].any()}
    # a throttle no broker has moved bytes under has no byte-rate series (Kafka's sensor is
    # made on the first throttled bytes): that figure alone says "no data"
    assert all(a["ok"] for name, a in answers.items() if name not in idle)
    assert all(not answers[name]["ok"] for name in idle)
    window = monitoring.overview_window(client, now - 5, now, step="1s")
    assert window["partitions_per_broker"]["ok"]
    assert len(window["partitions_per_broker"]["frame"]) >= 5
    assert monitoring.to_json(answers)["brokers_up"]["rows"][0]["timestamp"].endswith("+00:00")


def test_missing_metric_is_a_typed_error_not_zeros(stack):
    _, prom, _, _, _ = stack
    other = "confluent" if stack[2].dialect.name == "strimzi" else "strimzi"
    client = MetricsClient(prom.url, other, ttl=0)
    with pytest.raises(MetricMissing, match="no data yet for produce bytes/s per topic"):
        client.instant("bytes_in_per_topic")
    answer = monitoring.overview_now(client, concepts=("bytes_in_per_topic",))
    assert answer["bytes_in_per_topic"] == {
        "ok": False, "error": "MetricMissing", "unit": "bytes/s",
        "message": answer["bytes_in_per_topic"]["message"]}


def test_prometheus_down_is_a_typed_error():
    client = MetricsClient(f"http://127.0.0.1:{free_port()}", timeout=1.0)
    with pytest.raises(PrometheusUnavailable, match="not answering"):
        client.instant("partitions_per_broker")
    assert monitoring.overview_now(client)["partitions_per_broker"]["error"] == \
        "PrometheusUnavailable"


def test_cli_twin_serve_then_prometheus_up_and_down(tmp_path):
    """`railyard twin serve` + `railyard prometheus up|down`, as an operator runs them."""
    import json
    import subprocess
    import sys

    targets = tmp_path / "targets.json"
    railyard = [sys.executable, "-c", "import sys; from backend.cli import main; sys.exit(main())"]
    twin = subprocess.Popen([*railyard, "twin", "serve", "--snapshot", "demo", "--port-base", "0",
                             "--speed", "5", "--for", "60", "--targets-file", str(targets),
                             "--api-port", "0"],
                            stdout=subprocess.PIPE, text=True)
    home = tmp_path / "prom"
    try:
        started = json.loads(twin.stdout.readline())
        assert len(started["serving"]["targets"]) == 9
        # the dashboard's view of that twin: its read-only HTTP API
        from backend.gateways.twin_http import TwinHttpGateway
        gw = TwinHttpGateway(started["serving"]["api"])
        assert len(gw.describe_cluster()["brokers"]) == 9
        assert gw.assignment().n_partitions == demo_snapshot().n_partitions
        up = subprocess.run([*railyard, "prometheus", "up", "--port", "0", "--scrape-interval",
                             "1", "--home", str(home), "--targets-file", str(targets)],
                            capture_output=True, text=True, timeout=60)
        assert up.returncode == 0, up.stderr
        client = MetricsClient(json.loads(up.stdout)["url"], ttl=0)
        wait_until(lambda: len(client.instant("partitions_per_broker")) == 9, timeout=30)
        again = subprocess.run([*railyard, "prometheus", "up", "--home", str(home),
                                "--targets-file", str(targets)], capture_output=True, text=True)
        assert again.returncode == 2 and "already running" in again.stderr
    finally:
        down = subprocess.run([*railyard, "prometheus", "down", "--home", str(home)],
                              capture_output=True, text=True, timeout=60)
        twin.terminate()
        twin.wait(timeout=30)
    assert json.loads(down.stdout)["stopped"] is True


redis_url = pytest.fixture(scope="module")(redis_server)


def test_answers_are_shared_through_redis_when_configured(stack, redis_url):
    """With the dashboard's cache in Redis, one process's answer serves the others."""
    import redis

    _, prom, live, _, _ = stack
    wait_until(lambda: len(live.instant("partitions_per_broker")) == 5)  # broker 5 is down
    first = MetricsClient(prom.url, live.dialect.name, ttl=60,
                          cache=make_cache(redis_url, default_timeout=60))
    frame = first.instant("partitions_per_broker")
    assert len(frame) == 5
    assert redis.Redis.from_url(redis_url).keys("railyard:*")
    other = MetricsClient(prom.url, live.dialect.name, ttl=60,
                          cache=make_cache(redis_url, default_timeout=60))
    other.prom = None  # this client cannot reach Prometheus: the answer must come from Redis
    assert other.instant("partitions_per_broker").equals(frame)
