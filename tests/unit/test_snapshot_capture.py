"""`railyard snapshot capture`: a live cluster's assignment written as a snapshot through
the gateway its config names; a cluster that does not answer gives exit 3, one line on
stderr naming the bootstrap servers and the error, and no file."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from backend.cli import main
from backend.gateways.factory import open_gateway
from backend.gateways.kafka import KafkaGateway
from backend.gateways.twin_http import TwinHttpGateway
from backend.model.io import load_snapshot
from backend.twin.api import TwinApi
from backend.twin.cluster import TwinCluster, TwinSettings
from backend.twin.gateway import TwinGateway
from backend.twin.generate import generate_snapshot
from dashboard.config import parse_config
from tests.servers import free_port


def _config(tmp_path, clusters: list[dict]) -> str:
    path = tmp_path / "railyard.yaml"
    path.write_text(yaml.safe_dump({"clusters": clusters}))
    return str(path)


@pytest.fixture
def twin_api():
    twin = TwinGateway(TwinCluster(generate_snapshot(5, 3, 4, 40, 3, seed=7),
                                   TwinSettings(traffic_noise=0.0)))
    api = TwinApi(twin).start()
    try:
        yield twin, api.url
    finally:
        api.stop()


@pytest.mark.parametrize("suffix", [".json", ".parquet"])
def test_capture_from_a_twin(tmp_path, capsys, twin_api, suffix):
    twin, url = twin_api
    cfg = _config(tmp_path, [{"name": "lab", "gateway": {"type": "twin", "url": url},
                              "limits": {"max.broker.partitions": 900}}])
    out = tmp_path / f"lab{suffix}"
    assert main(["snapshot", "capture", "--config", cfg, "--cluster", "lab",
                 "--out", str(out)]) == 0
    answer = yaml.safe_load(capsys.readouterr().out)
    assert answer["written"] == str(out) and answer["partitions"] == 40
    assert answer["notes"] == []
    got, want = load_snapshot(out), twin.assignment()
    assert got.limits.max_broker_partitions == 900
    assert np.array_equal(got.broker_ids[got.replica_broker],
                          want.broker_ids[want.replica_broker])
    assert list(got.topic_names) == list(want.topic_names)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([out.name, "railyard.yaml"])


def test_unreachable_kafka_exits_3_and_writes_nothing(tmp_path, capsys):
    port = free_port()
    cfg = _config(tmp_path, [{"name": "prod", "gateway": {
        "type": "kafka", "bootstrap_servers": [f"127.0.0.1:{port}"], "timeout_seconds": 1}}])
    out = tmp_path / "prod.json"
    assert main(["snapshot", "capture", "--config", cfg, "--cluster", "prod",
                 "--out", str(out)]) == 3
    err = capsys.readouterr().err
    assert err.startswith(f"railyard snapshot: unavailable: Kafka at 127.0.0.1:{port}: "
                          "KafkaTimeoutError: ")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["railyard.yaml"]


@pytest.mark.parametrize(("cluster", "out", "message"), [
    ("nope", "x.json", "no cluster named 'nope' (clusters: prod)"),
    ("prod", "x.csv", "x.csv: a snapshot file ends in .json or .parquet"),
])
def test_bad_input_exits_2(tmp_path, capsys, cluster, out, message):
    cfg = _config(tmp_path, [{"name": "prod", "gateway": {
        "type": "kafka", "bootstrap_servers": ["127.0.0.1:9"], "timeout_seconds": 1}}])
    assert main(["snapshot", "capture", "--config", cfg, "--cluster", cluster,
                 "--out", str(tmp_path / out)]) == 2
    assert message in capsys.readouterr().err


def test_the_factory_opens_each_gateway_type():
    config = parse_config({"clusters": [
        {"name": "t", "gateway": {"type": "twin", "url": "http://127.0.0.1:9400"}},
        {"name": "k", "gateway": {"type": "kafka", "bootstrap_servers": "k1:9092,k2:9092"},
         "prometheus": {"url": "http://127.0.0.1:9090"}},
        {"name": "bare", "gateway": {"type": "kafka", "bootstrap_servers": ["k1:9092"]}}]})
    twin, kafka, bare = (open_gateway(c) for c in config.clusters)
    assert isinstance(twin, TwinHttpGateway) and twin.url == "http://127.0.0.1:9400"
    assert isinstance(kafka, KafkaGateway) and kafka.what == "Kafka at k1:9092,k2:9092"
    assert kafka.cluster == "k" and kafka.metrics.url == "http://127.0.0.1:9090"
    assert isinstance(bare, KafkaGateway) and bare.metrics is None
