"""End to end on the twin through /api/v1: `railyard twin serve` (token file, a scenario
injecting one REASSIGNMENT_IN_PROGRESS) in one process, `railyard serve` (an operator and
an approver, the twin's gateway with its token_file) in another, and a real Prometheus
scraping the twin's exporters. The operator proposes a drain with a throttle, the approver
approves it, the operator executes it; while it moves, Prometheus shows the throttled
rates at the throttle and non-zero replica lag; afterwards no throttle config is left on
any broker or touched topic, and the token is in no log and no audit entry."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from werkzeug.security import generate_password_hash

from backend.gateways.twin_http import TwinHttpGateway
from backend.metrics.client import MetricMissing, MetricsClient
from backend.metrics.server import PrometheusProcess, scrape_config
from backend.model.io import save_snapshot
from backend.model.snapshot import Snapshot
from backend.twin.replication import EMPTY_FETCH_RESPONSE_BYTES, IDLE_FETCHES_PER_SECOND
from tests.e2e.conftest import start_dashboard
from tests.plan_helpers import api_call
from tests.servers import stop

pytestmark = pytest.mark.integration

MB = 1_000_000
THROTTLE = 2 * MB  # bytes/s, per broker and side (KIP-73)
SPEED = 4.0  # simulated seconds per wall second
TOKEN = "e2e-twin-write-token-9d2a"
USERS = {"olga": ("operator", "o-pass-1"), "arne": ("approver", "a-pass-1")}
THROTTLE_KEYS = ("leader.replication.throttled.rate", "follower.replication.throttled.rate",
                 "leader.replication.throttled.replicas",
                 "follower.replication.throttled.replicas")


def rehearsal() -> Snapshot:
    """Brokers 1-4, two topics, RF 2; broker 4 holds 5 replicas of 16 MB each (so the
    drain is one batch under the 5-moves-per-broker limit) and the write rate is far
    below the throttle (the moves complete)."""
    reps = [[1, 4], [2, 3], [3, 4], [4, 1], [1, 2], [2, 4],  # orders
            [3, 1], [4, 2], [1, 3], [2, 1]]  # events
    return Snapshot.build("rehearsal", [1, 2, 3, 4], [None] * 4, ["orders", "events"],
                          [0] * 6 + [1] * 4, np.arange(0, 2 * len(reps) + 1, 2),
                          [b - 1 for r in reps for b in r],
                          part_size=[16 * MB] * len(reps), part_rate=[1000.0] * len(reps))


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    tmp: Path = tmp_path_factory.mktemp("execute-twin")
    save_snapshot(rehearsal(), tmp / "rehearsal.parquet")
    (tmp / "twin.token").write_text(TOKEN + "\n")
    (tmp / "faults.yaml").write_text(yaml.safe_dump({
        "name": "one fault", "settings": {"traffic_noise": 0.0},
        "events": [{"at": 0, "action": "gateway_fault", "op": "alter_reassignments",
                    "error": "REASSIGNMENT_IN_PROGRESS", "calls": 1}]}))
    twin_log = tmp / "twin.log"
    twin = subprocess.Popen(
        [str(Path(sys.executable).parent / "railyard"), "twin", "serve",
         "--snapshot", str(tmp / "rehearsal.parquet"), "--scenario", str(tmp / "faults.yaml"),
         "--speed", str(SPEED), "--port-base", "0", "--api-port", "0",
         "--api-token-file", str(tmp / "twin.token"),
         "--targets-file", str(tmp / "targets.json")],
        stdout=subprocess.PIPE, stderr=twin_log.open("w"), text=True)
    prom = dashboard = None
    try:
        serving = json.loads(twin.stdout.readline())["serving"]
        assert serving["api_writes"] is True
        prom = PrometheusProcess(tmp / "prom")
        prom.write_config(scrape_config(serving["targets"], "rehearsal", 0.5), "strimzi",
                          rules_interval=0.5)
        prom.start()
        config = {
            "clusters": [{"name": "rehearsal",
                          "gateway": {"type": "twin", "url": serving["api"],
                                      "token_file": str(tmp / "twin.token")},
                          "prometheus": {"url": prom.url, "dialect": "strimzi"}}],
            "auth": {"secret_key_file": str(tmp / "secret_key"), "users": [
                {"name": n, "role": r, "password_hash": generate_password_hash(p)}
                for n, (r, p) in USERS.items()]}}
        dashboard = start_dashboard(tmp, config)
        yield {"api": dashboard.url + "/api/v1", "twin": TwinHttpGateway(serving["api"]),
               "metrics": MetricsClient(prom.url, "strimzi", ttl=0),
               "logs": [dashboard.log, twin_log, tmp / "railyard.yaml"]}
    finally:
        if dashboard is not None:
            stop(dashboard.proc)
        if prom is not None:
            prom.stop()
        stop(twin)


def call(api: str, user: str, method: str, path: str, body: dict | None = None) -> dict:
    return api_call(api, user, USERS[user][1], method, path, body)


def by_broker(client: MetricsClient, concept: str) -> dict[int, float]:
    try:
        frame = client.instant(concept)
    except MetricMissing:
        return {}
    return {int(b): float(v) for b, v in zip(frame["broker"], frame["value"], strict=True)}


def test_drain_proposed_approved_executed_with_the_throttle_and_nothing_left(stack):
    api, twin, metrics = stack["api"], stack["twin"], stack["metrics"]
    proposed = call(api, "olga", "POST", "/plans", {
        "cluster": "rehearsal", "kind": "reassignment", "title": "drain broker 4",
        "throttle": THROTTLE, "generate": {"goal": "drain", "brokers": [4]}})
    plan_id = proposed["id"]
    plan = call(api, "arne", "GET", f"/plans/{plan_id}")
    moves = plan["content"]["partitions"]
    assert len(moves) == 5 and all(4 not in m["replicas"] for m in moves)
    assert call(api, "arne", "POST", f"/plans/{plan_id}/approve",
                {"sha256": plan["sha256"], "comment": "rehearsal"})["state"] == "approved"
    assert call(api, "olga", "POST", f"/plans/{plan_id}/execute")["state"] == "executing"

    # while it moves: the twin holds the throttle configs, Prometheus shows the
    # throttled rates at the throttle (KIP-73: never above it) and replicas lagging
    # the leader side also records its followers' fetch overhead (Kafka's
    # KafkaApis.sizeOfThrottledPartitions): one fetcher per other broker at most
    floor = (rehearsal().n_brokers - 1) * IDLE_FETCHES_PER_SECOND * EMPTY_FETCH_RESPONSE_BYTES
    seen_rate, seen_lag, seen_config, progress = 0.0, 0.0, False, []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ex = call(api, "olga", "GET", f"/plans/{plan_id}")["execution"]
        if ex is not None:
            progress.append(ex["partitions_done"])
            if ex["state"] in ("completed", "failed", "cancelled"):
                break
        if twin.list_reassignments():
            rates = by_broker(metrics, "follower_throttled_rate") | {
                -b: v for b, v in by_broker(metrics, "leader_throttled_rate").items()}
            assert all(v <= THROTTLE * 1.000001 + (floor if b < 0 else 0)
                       for b, v in rates.items()), rates
            seen_rate = max([seen_rate, *rates.values()])
            seen_lag = max([seen_lag, *by_broker(metrics, "max_lag_per_broker").values()])
            seen_config |= str(THROTTLE) in json.dumps(
                [twin.describe_configs("broker", str(b))["configs"] for b in (1, 2, 3, 4)])
        time.sleep(0.3)
    assert ex["state"] == "completed", ex
    assert ex["partitions_done"] == ex["partitions_total"] == 5 and progress == sorted(progress)
    assert seen_config, "the throttle rates were never seen on the brokers"
    assert seen_rate == pytest.approx(THROTTLE, rel=0.05), seen_rate
    assert seen_lag > 0
    assert call(api, "arne", "GET", f"/plans/{plan_id}")["state"] == "completed"

    # nothing left: no throttle config on any broker (nor the default) or touched topic
    brokers = [str(b["id"]) for b in twin.describe_cluster()["brokers"]] + ["<default>"]
    topics = sorted({m["topic"] for m in moves})
    for entity_type, names in (("broker", brokers), ("topic", topics)):
        for name in names:
            configs = twin.describe_configs(entity_type, name)["configs"]
            assert not set(configs) & set(THROTTLE_KEYS), (entity_type, name, configs)
    assert not any(4 in p["replicas"] for t in twin.describe_topics() for p in t["partitions"])

    # the fault the scenario injected travelled over HTTP and was retried; the audit log
    # has every step and never the token
    audit = call(api, "arne", "GET", f"/audit?plan={plan_id}")["entries"]
    actions = [e["action"] for e in audit]
    assert actions[:3] == ["propose", "approve", "execute"] and actions[-1] == "complete"
    retries = [e["detail"] for e in audit if e["action"] == "execution_retry"]
    assert len(retries) == 1 and retries[0]["error"].startswith("REASSIGNMENT_IN_PROGRESS")
    assert {"config_set", "batch_started", "config_restored", "batch_finished"} <= set(actions)
    assert TOKEN not in json.dumps(audit)
    for log in stack["logs"]:
        assert TOKEN not in log.read_text(), log
