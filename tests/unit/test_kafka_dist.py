"""Apache Kafka from Maven Central: one version everywhere, and the brokers `railyard kafka
up` configures (pure parts; tests/integration/test_kafka_up.py starts them)."""

from __future__ import annotations

import json
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


@pytest.mark.parametrize(("make", "dir_", "message"), [
    (lambda d: (d / "s.json").write_text("{}"), "s.json",
     "--dir {d}/s.json: exists and is not a folder"),
    (lambda d: (d / "s.json").write_text("{}"), "s.json/k", "s.json is a file, not a folder"),
    (lambda d: (d / "full").mkdir() or (d / "full" / "x").write_text("x"), "full",
     "--dir {d}/full: the folder is not empty (it holds x)"),
])
def test_a_dir_that_is_no_empty_folder_is_one_line(tmp_path, capsys, make, dir_, message):
    """A file was a FileExistsError traceback; a non-empty folder got the brokers' files
    written among its own."""
    from tests.unit.helpers import run_cli
    make(tmp_path)
    before = sorted(p.name for p in tmp_path.rglob("*"))
    code, out, err = run_cli(capsys, "kafka", "up", "--dir", tmp_path / dir_, "--for", 1)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert message.format(d=tmp_path) in err
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


@pytest.mark.parametrize("heap", ["lots", "0m", "1.5g", "320", "-1g", "1gb"])
def test_a_heap_the_jvm_would_refuse_is_one_line_before_anything_starts(tmp_path, capsys,
                                                                        heap):
    """--heap lots started every broker, exited 3 ("broker 1: exited with code 1") and left
    the broker folders behind."""
    from tests.unit.helpers import run_cli
    code, out, err = run_cli(capsys, "kafka", "up", "--dir", tmp_path / "k", f"--heap={heap}",
                             "--for", 1)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "--heap: expected a Java heap size like 320m or 1g" in err and f"'{heap}'" in err
    assert not (tmp_path / "k").exists()


@pytest.mark.parametrize("heap", ["320m", "1G", "512K", "2g"])
def test_jvm_heap_sizes_are_taken(tmp_path, heap):
    assert LocalKafka(tmp_path / "k", brokers=1, racks=1, heap=heap).heap == heap


def test_cluster_ids_are_kafkas_22_character_base64():
    ids = {cluster_id() for _ in range(50)}
    assert len(ids) == 50 and all(re.fullmatch(r"[A-Za-z0-9_-]{22}", i) for i in ids)


def test_a_cluster_id_never_starts_with_a_dash(monkeypatch):
    """1 in 64 random UUIDs encode with a leading '-', which `kafka-storage format -t`
    reads as an option; Kafka's Uuid.randomUuid draws again, and so does cluster_id."""
    import uuid as uuid_module
    dash = uuid_module.UUID(bytes=bytes([0xF8]) + bytes(15))  # base64 '-A...'
    draws = iter([dash, dash, uuid_module.UUID(int=1)])
    monkeypatch.setattr(uuid_module, "uuid4", lambda: next(draws))
    assert cluster_id() == "AAAAAAAAAAAAAAAAAAAAAQ"


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


def test_secure_adds_ssl_and_sasl_client_listeners_beside_plaintext(tmp_path):
    from backend.localkafka.security import LISTENERS, MECHANISMS
    plain, k = LocalKafka(tmp_path / "p"), LocalKafka(tmp_path / "s", secure=True)
    b = k.brokers[0]
    assert list(b.secure_ports) == list(LISTENERS) == ["SSL", "SASL_PLAINTEXT", "SASL_SSL"]
    ports = [p for x in k.brokers for p in (x.port, x.controller_port, x.exporter_port,
                                            *x.secure_ports.values()) if p]
    assert len(set(ports)) == len(ports)
    props = k.properties(b)
    assert props["inter.broker.listener.name"] == "PLAINTEXT"  # brokers talk as before
    assert props["advertised.listeners"].split(",") == [
        f"PLAINTEXT://127.0.0.1:{b.port}",
        *(f"{n}://127.0.0.1:{b.secure_ports[n]}" for n in LISTENERS)]
    assert props["listener.security.protocol.map"].split(",") == [
        "CONTROLLER:PLAINTEXT", "PLAINTEXT:PLAINTEXT", "SSL:SSL",
        "SASL_PLAINTEXT:SASL_PLAINTEXT", "SASL_SSL:SASL_SSL"]
    assert props["ssl.keystore.type"] == "PEM"
    for name in ("sasl_plaintext", "sasl_ssl"):
        assert props[f"listener.name.{name}.sasl.enabled.mechanisms"] == ",".join(MECHANISMS)
        plain_user = k.security.users[0]
        assert f'user_{plain_user.username}="{plain_user.password}"' in \
            props[f"listener.name.{name}.plain.sasl.jaas.config"]
    # without secure, nothing changes
    p = plain.properties(plain.brokers[0])
    assert p["listener.security.protocol.map"] == "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT"
    assert not any(key.startswith(("ssl.", "listener.name.")) for key in p)
    assert "security" not in plain.describe()


def test_scram_users_are_formatted_salted_never_with_their_password(tmp_path):
    import base64
    import hashlib
    k = LocalKafka(tmp_path, secure=True)
    args = k.security.format_args
    assert args == k.security.format_args  # one salt per user, the same for every broker
    scram = [u for u in k.security.users if u.mechanism.startswith("SCRAM")]
    assert args[::2] == ["--add-scram"] * len(scram) == ["--add-scram"] * 2
    for user, arg in zip(scram, args[1::2], strict=True):
        assert user.password not in arg
        m = re.fullmatch(rf'{user.mechanism}=\[name={user.username},iterations=4096,'
                         r'salt="([^"]+)",saltedpassword="([^"]+)"\]', arg)
        assert m, arg
        digest = "sha" + user.mechanism.rsplit("-", 1)[1]
        assert base64.b64decode(m[2]) == hashlib.pbkdf2_hmac(
            digest, user.password.encode(), base64.b64decode(m[1]), 4096)


def test_cluster_json_names_password_files_not_passwords(tmp_path):
    k = LocalKafka(tmp_path, secure=True)
    doc = k.describe()
    text = json.dumps(doc)
    assert all(u.password not in text and u.password not in repr(u) for u in k.security.users)
    assert [u["password_file"] for u in doc["security"]["users"]] == [
        str(tmp_path / "security" / "passwords" / u.username) for u in k.security.users]
    assert doc["security"]["ca_file"] == str(tmp_path / "security" / "ca.pem")
    assert doc["brokers"][0]["listeners"] == k.brokers[0].secure_ports


def test_kafka_up_documents_secure(capsys):
    from backend.cli import build_parser
    with pytest.raises(SystemExit):
        build_parser(["kafka", "up", "--help"]).parse_args(["kafka", "up", "--help"])
    text = "".join(capsys.readouterr().out.split())  # argparse wraps at hyphens
    assert "--secure" in text and "SASL_SSL" in text and "SCRAM-SHA-512" in text
