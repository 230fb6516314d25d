"""Issue 24 item 6, KIP-599 on Apache Kafka: a controller_mutation_rate quota on a client
id, a burst of CreateTopics from kafka-python as that client, and Railyard's token-bucket
replay of the same burst (backend.services.quota, backend.engines.quota) predicting the
throttle time Kafka put in each answer; the ControllerMutation tokens and the throttle time
reach Prometheus through the shipped rules and the /quotas page's service shows them.

KIP-599's numbers on Kafka's defaults: burst B = rate x controller.quota.window.num (11) x
controller.quota.window.size.seconds (1); a request is admitted while the bucket holds >= 0
tokens (strict mode: CreateTopics v6+, kafka-python sends v7) and the controller charges it
topic by topic (metadata .../controller/ReplicationControlManager.java), so once a topic
drives the bucket below zero the rest of that request is rejected with
THROTTLING_QUOTA_EXCEEDED and the answer's throttle_time_ms is round(-tokens / rate x 1000)
(core .../server/ControllerMutationQuotaManager.scala throttleTimeMs).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

import pytest
from kafka import KafkaAdminClient
from kafka.protocol.admin import CreateTopicsRequest

from backend.engines.quota import DEFAULT_SAMPLES, DEFAULT_WINDOW_SECONDS, burst
from backend.metrics.client import MetricsClient
from backend.model.snapshot import Limits
from backend.services import monitoring
from backend.services import quota as quota_service
from backend.services.cluster import ClusterSource
from tests.integration.kafka_prometheus import kafka_prometheus, poll

pytestmark = pytest.mark.integration

CLIENT = "qt-burst"
RATE = 4.0  # partitions/s: burst 44
PARTITIONS = 20  # per topic: each overdraw leaves the bucket below zero for ~4 s, seen by
REQUESTS = 4  # the 2 s scrapes; requests of two topics each
BACKOFF = 0.3  # s a polite client waits beyond the throttle Kafka told it
THROTTLING_QUOTA_EXCEEDED = 89
# Kafka's clock is whole milliseconds and the throttle is Math.round()ed: 1 ms each side
ROUNDING_MS = 2


@dataclass
class Answer:
    sent: float  # time.monotonic() just before the request left
    rtt: float  # seconds until its answer
    throttle_ms: int
    admitted: list[bool]  # per topic, in request order


@pytest.fixture(scope="module")
def prometheus(kafka_cluster, tmp_path_factory):
    yield from kafka_prometheus(kafka_cluster, tmp_path_factory.mktemp("prom-quota"))


@pytest.fixture(scope="module")
def burst_answers(kafka_cluster, kafka_gateway, prometheus):
    """The quota set, the burst sent (each request at once after an unthrottled answer,
    BACKOFF after the throttle of a throttled one), Kafka's answers; quota and topics
    removed afterwards."""
    gw = kafka_gateway
    gw.alter_client_quota(None, CLIENT, RATE)
    admin = None
    made: list[str] = []
    try:
        poll("the quota to be listed", gw.describe_client_quotas,
             lambda qs: any(q["client_id"] == CLIENT for q in qs), 20)
        time.sleep(0.5)  # the active controller applies it from the same metadata record
        admin = KafkaAdminClient(bootstrap_servers=kafka_cluster.bootstrap_servers,
                                 client_id=CLIENT)
        admin.describe_cluster()  # connected and the controller known before the clock runs
        T = CreateTopicsRequest.CreatableTopic
        answers = []
        for k in range(REQUESTS):
            names = [f"qt-burst-{k}-{j}" for j in range(2)]
            request = CreateTopicsRequest(
                topics=[T(name=n, num_partitions=PARTITIONS, replication_factor=1,
                          assignments=[], configs=[]) for n in names],
                timeout_ms=10_000, validate_only=False)
            sent = time.monotonic()
            # kafka-python's create_topics drops throttle_time_ms from what it returns: the
            # same request through its controller path keeps the whole answer
            resp = admin._manager.run(admin._send_request_to_controller, request,
                                      lambda r: (), False)
            rtt = time.monotonic() - sent
            codes = {t.name: t.error_code for t in resp.topics}
            assert set(codes.values()) <= {0, THROTTLING_QUOTA_EXCEEDED}, codes
            made += [n for n in names if codes[n] == 0]
            answers.append(Answer(sent, rtt, resp.throttle_time_ms,
                                  [codes[n] == 0 for n in names]))
            time.sleep(resp.throttle_time_ms / 1000 + BACKOFF if resp.throttle_time_ms else 0)
        yield answers
    finally:
        if admin is not None:
            admin.close()
        gw.alter_client_quota(None, CLIENT, None)
        if made:
            gw.delete_topics(made)


def replayed(answers: list[Answer], tmp_path) -> list[dict]:
    """Railyard's replay of the same burst, one charge per topic (as the controller charges),
    at the time each request was sent: the `railyard quota replay` service on a workload
    file and a quotas file."""
    t0 = answers[0].sent
    lines = [{"t": round(a.sent - t0, 3), "user": "ANONYMOUS", "client_id": CLIENT,
              "op": "create_topics", "partitions": PARTITIONS}
             for a in answers for _ in a.admitted]
    workload = tmp_path / "burst.jsonl"
    workload.write_text("".join(json.dumps(line) + "\n" for line in lines))
    quotas = tmp_path / "quotas.json"
    quotas.write_text(json.dumps({"quotas": [
        {"client_id": CLIENT, "controller_mutation_rate": RATE}]}))
    out = quota_service.replay(workload, None, DEFAULT_SAMPLES, DEFAULT_WINDOW_SECONDS,
                               "strict", quotas)
    [bucket] = out["principals"]
    assert (bucket["user"], bucket["client_id"]) == ("", CLIENT)  # a client-id quota's bucket
    assert bucket["burst"] == burst(RATE) == 44.0
    per_topic = out["requests"]
    return [{"admitted": [r["admitted"] for r in per_topic[2 * k:2 * k + 2]],
             "throttle_ms": max(r["throttle_ms"] for r in per_topic[2 * k:2 * k + 2])}
            for k in range(len(answers))]


def test_the_replay_predicts_kafkas_throttle_times(burst_answers, tmp_path):
    """Admissions equal topic by topic; each throttle within the request's timing: Railyard
    replays at the time the request was sent, Kafka charged it when the controller took it
    (after the trip client -> broker -> forwarded to the active controller) and subtracts
    the time until its answer, so a throttle differs by how much later Kafka took this
    request than the first (the bucket's tokens move by rate x that lag, the throttle by
    exactly that many ms): at most the two requests' round trips, plus Kafka's rounding."""
    predicted = replayed(burst_answers, tmp_path)
    assert [p["admitted"] for p in predicted] == [a.admitted for a in burst_answers]
    # the burst did what it was built for: some requests throttled, none rejected outright
    assert any(a.throttle_ms for a in burst_answers)
    assert all(any(a.admitted) for a in burst_answers[:2])
    first = burst_answers[0]
    gaps = []
    for p, a in zip(predicted, burst_answers, strict=True):
        allowed = (a.rtt + first.rtt) * 1000 + ROUNDING_MS
        gap = p["throttle_ms"] - a.throttle_ms
        gaps.append(gap)
        assert abs(gap) <= allowed, (p, a)
        assert (p["throttle_ms"] == 0) == (a.throttle_ms == 0)
    print(f"\nKIP-599 replay vs Kafka, predicted - returned throttle ms per request: {gaps}; "
          f"round trips ms: {[round(a.rtt * 1000) for a in burst_answers]}")


@dataclass
class Span:
    start: float
    end: float
    step: float = 2.0
    refreshing: bool = True


def test_tokens_and_throttle_reach_prometheus_and_the_quotas_page(
        burst_answers, prometheus, kafka_gateway):
    client = MetricsClient(prometheus.url, "strimzi", ttl=0)
    told = max(a.throttle_ms for a in burst_answers)
    # the bucket went below zero (ControllerMutation tokens, on the active controller)
    low = poll("tokens below zero", lambda: client.instant("mutation_tokens_low", window="5m"),
               lambda f: ((f["client_id"] == CLIENT) & (f["value"] < 0)).any())
    assert set(low["user"]) == {""}  # a client-id quota: the bucket has no user tag
    # the throttle the forwarding broker told the client (Request throttle-time on KRaft)
    high = poll("a throttle time", lambda: client.instant("mutation_throttle_time_high",
                                                           window="5m"),
                lambda f: ((f["client_id"] == CLIENT) & (f["value"] > 0)).any())
    assert 0 < high.set_index("client_id").loc[CLIENT, "value"] <= told
    source = ClusterSource("kafka", None, Limits(), prometheus_url=prometheus.url,
                           metrics_ttl=0, gateway=kafka_gateway)
    # read until a scrape answers: one that timed out on a busy machine marks every series
    # of that broker stale, and the page then says "no data yet" until the next one
    page = poll("the quotas page's tokens now", lambda: monitoring.quotas(
        source, Span(time.time() - 300, time.time())), lambda p: p["now_error"] is None)
    row = next(r for r in page["now"] if r["principal"] == f"/{CLIENT}")
    assert row["burst"] == burst(RATE)  # matched to DescribeClientQuotas' entity
    assert f"/{CLIENT}" in page["throttled"]["detail"]
    for chart in ("tokens_series", "throttle_series"):
        assert f"/{CLIENT}" in set(page[chart]["series"]), chart
