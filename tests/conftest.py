"""Shared test set-up: deterministic, loopback only."""

import json
import os
import sys
from collections import Counter
from pathlib import Path

import pytest

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ.setdefault("TZ", "UTC")


@pytest.fixture(autouse=True)
def _each_page_registered_once():
    """Dash's page registry is per process: a page module run twice under two names (a test
    that does `import pages.x`) makes every later app answer 500. Fail that test, not a
    later one in another file."""
    yield
    pages = sys.modules.get("dash._pages")  # never import Dash for tests that do not
    if pages is None:
        return
    paths = Counter(page["path"] for page in pages.PAGE_REGISTRY.values())
    twice = sorted(m for m, page in pages.PAGE_REGISTRY.items() if paths[page["path"]] > 1)
    assert not twice, (f"page modules {twice} share a path: use the module the app serves "
                       f"(sys.modules[page['module']]), not `import pages.x`")


@pytest.fixture(scope="session")
def kafka_cluster(tmp_path_factory):
    """Apache Kafka (deploy/kafka/pom.xml's version, fetched by `make install`): three KRaft
    brokers in racks r0, r1, r2 on 127.0.0.1, each with the JMX exporter and Railyard's
    rules; one cluster for the whole test session, stopped at its end. Tests share it:
    each names its own topics (a prefix of its module) and puts back what it changes.
    Clients of the gateway use the PLAINTEXT listener; the SSL, SASL_PLAINTEXT and
    SASL_SSL listeners beside it (``secure``) are for tests/integration/test_kafka_security.py."""
    from backend.localkafka import dist
    from backend.localkafka.cluster import LocalKafka

    if not (dist.home() / "libs").is_dir():
        pytest.fail(f"Apache Kafka's jars are missing from {dist.home()}: run `make install`")
    cluster = LocalKafka(tmp_path_factory.mktemp("kafka"), brokers=3, racks=3, secure=True)
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def kafka_gateway(kafka_cluster):
    """Railyard's Kafka gateway on the session's Apache Kafka cluster."""
    from backend.gateways.config import parse_kafka
    from backend.gateways.kafka import KafkaGateway

    gw = KafkaGateway(parse_kafka({"bootstrap_servers": kafka_cluster.bootstrap_servers,
                                   "timeout_seconds": 10}, lambda key: f"cfg: {key}"),
                      "kafka")
    yield gw
    gw.close()


def pytest_collection_modifyitems(items) -> None:
    """Tests on the session's Apache Kafka carry the ``kafka`` mark (`make e2e-kafka` runs
    them alone; `make test` runs them with the rest)."""
    for item in items:
        if "kafka_cluster" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.kafka)


@pytest.fixture
def sweep_spec(tmp_path) -> Path:
    """A limits what-if spec over a 3-broker snapshot: small enough that a sweep is
    quick, for the tests of what `railyard whatif sweep` refuses and prints."""
    snap = {"cluster": "t", "brokers": [{"id": 1}, {"id": 2}, {"id": 3}],
            "topics": [{"name": "orders", "partitions": [
                {"partition": p, "replicas": [1 + p % 3]} for p in range(6)]}]}
    (tmp_path / "snap.json").write_text(json.dumps(snap))
    path = tmp_path / "spec.json"
    path.write_text(json.dumps({"kind": "limits", "snapshot": "snap.json",
                                "workload": [{"topic": "new", "partitions": 3, "rf": 2}],
                                "grid": {"max.broker.partitions": [4, 10]}}))
    return path
