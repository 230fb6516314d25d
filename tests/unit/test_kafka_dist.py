"""Apache Kafka from Maven Central: one version everywhere, and the brokers `railyard kafka
up` configures (pure parts; tests/integration/test_kafka_up.py starts them)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from backend.errors import BadInput
from backend.localkafka import dist
from backend.localkafka.cluster import LocalKafka, cluster_id, free_ports

ROOT = Path(__file__).resolve().parents[2]
POM = ROOT / "deploy" / "kafka" / "pom.xml"


def pom_property(name: str) -> str:
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    return ET.parse(POM).getroot().find(f"m:properties/m:{name}", ns).text


def test_one_kafka_and_exporter_version_in_pom_code_dockerfile_and_compose():
    assert pom_property("kafka.version") == dist.KAFKA_VERSION
    assert pom_property("jmx-exporter.version") == dist.JMX_EXPORTER_VERSION
    docker = (ROOT / "deploy" / "kafka" / "Dockerfile").read_text()
    assert f"FROM apache/kafka:{dist.KAFKA_VERSION}\n" in docker
    v = dist.JMX_EXPORTER_VERSION
    assert f"jmx_prometheus_javaagent/{v}/jmx_prometheus_javaagent-{v}.jar" in docker
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    assert compose["x-kafka"]["image"] == f"railyard-kafka:{dist.KAFKA_VERSION}"


def test_the_install_script_fetches_the_poms_version_into_dists_home():
    script = (ROOT / "scripts" / "install.sh").read_text()
    assert "dependency:copy-dependencies" in script and "deploy/kafka/pom.xml" in script
    assert re.search(r"kafka_home=var/kafka/\$kafka_version", script)


def test_dists_home_is_where_the_install_script_puts_the_jars(monkeypatch):
    monkeypatch.delenv(dist.HOME_ENV, raising=False)
    assert dist.home() == ROOT / "var" / "kafka" / dist.KAFKA_VERSION


def test_missing_jars_name_make_install(tmp_path, monkeypatch):
    monkeypatch.setenv(dist.HOME_ENV, str(tmp_path))
    with pytest.raises(Exception, match=r"no jars in .*make install"):
        dist.libs()


def test_three_brokers_in_three_racks_all_controllers(tmp_path):
    k = LocalKafka(tmp_path, brokers=5, racks=2)
    assert [b.rack for b in k.brokers] == ["r0", "r1", "r0", "r1", "r0"]
    assert [b.controller_port is not None for b in k.brokers] == [True] * 3 + [False] * 2
    ports = [p for b in k.brokers for p in (b.port, b.controller_port, b.exporter_port) if p]
    assert len(set(ports)) == len(ports)
    props = k.properties(k.brokers[0])
    assert props["process.roles"] == "broker,controller"
    assert props["controller.quorum.voters"] == ",".join(
        f"{b.id}@127.0.0.1:{b.controller_port}" for b in k.brokers[:3])
    assert props["broker.rack"] == "r0" and props["listeners"].startswith("PLAINTEXT://127.0.0.1:")
    four = k.properties(k.brokers[3])
    assert four["process.roles"] == "broker" and "CONTROLLER://" not in four["listeners"]
    assert four["advertised.listeners"] == f"PLAINTEXT://127.0.0.1:{k.brokers[3].port}"


def test_every_listener_binds_loopback_only(tmp_path):
    k = LocalKafka(tmp_path, brokers=3, racks=3)
    for b in k.brokers:
        hosts = re.findall(r"//([^:]+):", k.properties(b)["listeners"])
        assert hosts and set(hosts) == {"127.0.0.1"}


@pytest.mark.parametrize(("brokers", "racks", "message"), [
    (0, 1, "--brokers must be 1 to 64, got 0"),
    (2, 3, r"--racks must be 1 to the number of brokers \(2\), got 3"),
])
def test_bad_sizes_are_one_line(tmp_path, brokers, racks, message):
    with pytest.raises(BadInput, match=message):
        LocalKafka(tmp_path, brokers=brokers, racks=racks)


def test_a_folder_holding_a_clusters_data_is_refused(tmp_path):
    (tmp_path / "broker-1" / "data").mkdir(parents=True)
    (tmp_path / "broker-1" / "data" / "meta.properties").write_text("node.id=1\n")
    with pytest.raises(BadInput, match="already holds a cluster's data"):
        LocalKafka(tmp_path)


def test_cluster_ids_are_kafkas_22_character_base64():
    ids = {cluster_id() for _ in range(50)}
    assert len(ids) == 50 and all(re.fullmatch(r"[A-Za-z0-9_-]{22}", i) for i in ids)


def test_free_ports_are_distinct():
    ports = free_ports(30)
    assert len(set(ports)) == 30


def test_targets_are_file_sd_groups_the_prometheus_verb_reads(tmp_path):
    from backend.cli.prometheus import scrape_targets
    k = LocalKafka(tmp_path, brokers=3, racks=3)
    groups = k.targets()
    assert groups[1] == {"targets": [f"127.0.0.1:{k.brokers[1].exporter_port}"],
                         "labels": {"broker": "2", "rack": "r1", "cluster": "kafka"}}
    targets, cluster, dialect = scrape_targets(groups, "t.json")
    assert targets == {str(b.id): f"127.0.0.1:{b.exporter_port}" for b in k.brokers}
    assert (cluster, dialect) == ("kafka", "strimzi")
    with pytest.raises(BadInput, match=r"t\.json: expected"):
        scrape_targets([{"targets": []}], "t.json")
