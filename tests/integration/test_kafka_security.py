"""TLS and SASL on Apache Kafka 4.1.1 (issue 24, item 7): Railyard's Kafka gateway and
`railyard snapshot capture` against the session cluster's SSL, SASL_PLAINTEXT and SASL_SSL
listeners, with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512, passwords read from files. A wrong
password or an untrusted certificate is one line on stderr and exit 3 with nothing written;
a missing password file is bad input (exit 2). The listeners, the test CA and the users
come from `kafka_cluster` (LocalKafka with ``secure=True``, backend/localkafka/security.py).
"""

from __future__ import annotations

import json
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.integration
RAILYARD = [str(Path(sys.executable).parent / "railyard")]
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
# every kind of listener with every mechanism it takes
CASES = [("SSL", None)] + [(listener, m) for listener in ("SASL_PLAINTEXT", "SASL_SSL")
                           for m in MECHANISMS]
IDS = [f"{lis}-{m or 'tls'}" for lis, m in CASES]
DEADLINE = 30.0


@pytest.fixture(scope="module")
def security(kafka_cluster) -> dict:
    return kafka_cluster.describe()["security"]


def gateway_config(security: dict, listener: str, mechanism: str | None,
                   password_file: str | None = None, ca_file: str | None = None) -> dict:
    """The `gateway:` mapping a user writes for one listener (secrets as files)."""
    lis = next(x for x in security["listeners"] if x["name"] == listener)
    cfg: dict = {"type": "kafka", "bootstrap_servers": lis["bootstrap_servers"],
                 "security_protocol": lis["security_protocol"], "timeout_seconds": 10}
    if lis["tls"]:
        cfg["tls"] = {"ca_file": ca_file or security["ca_file"]}  # hostname checked
    if mechanism is not None:
        user = next(u for u in security["users"] if u["mechanism"] == mechanism)
        cfg["sasl"] = {"mechanism": mechanism, "username": user["username"],
                       "password": {"file": password_file or user["password_file"]}}
    return cfg


def open_gateway(cfg: dict):
    from backend.gateways.config import parse_kafka
    from backend.gateways.kafka import KafkaGateway
    return KafkaGateway(parse_kafka(cfg, lambda key: f"gateway.{key}"), "secure")


def config_file(tmp_path: Path, cfg: dict) -> Path:
    path = tmp_path / "railyard.yaml"
    path.write_text(yaml.safe_dump({"clusters": [{"name": "secure", "gateway": cfg}]}))
    return path


def capture(config: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*RAILYARD, "snapshot", "capture", "--config", str(config),
                           "--cluster", "secure", "--out", str(out)],
                          capture_output=True, text=True, timeout=120)


def wrong_password(tmp_path: Path) -> Path:
    path = tmp_path / "wrong-password"
    path.write_text("not-the-password\n")
    return path


def other_ca(tmp_path: Path) -> Path:
    """A CA that did not sign the brokers' certificate."""
    key, cert = tmp_path / "other-ca.key", tmp_path / "other-ca.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-subj", "/CN=Not the brokers' CA", "-days", "1"],
                   check=True, capture_output=True, timeout=60)
    return cert


def test_cluster_json_names_each_listener_and_files_never_a_password(kafka_cluster, security):
    assert [(x["name"], x["tls"], x["sasl_mechanisms"]) for x in security["listeners"]] == [
        ("SSL", True, []), ("SASL_PLAINTEXT", False, list(MECHANISMS)),
        ("SASL_SSL", True, list(MECHANISMS))]
    for lis in security["listeners"]:
        assert lis["bootstrap_servers"] == [f"127.0.0.1:{b.secure_ports[lis['name']]}"
                                            for b in kafka_cluster.brokers]
    assert [u["mechanism"] for u in security["users"]] == list(MECHANISMS)
    text = (kafka_cluster.root / "cluster.json").read_text()
    assert json.loads(text)["security"] == security
    logs = "".join(p.read_text(errors="replace") for p in kafka_cluster.root.glob("broker-*/*.log"))
    for user in security["users"]:
        path = Path(user["password_file"])
        password = path.read_text().splitlines()[0]
        assert len(password) >= 16
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert password not in text and password not in logs
    assert Path(security["ca_file"]).read_text().startswith("-----BEGIN CERTIFICATE-----")
    assert not list(kafka_cluster.root.glob("security/*.key"))  # the CA's key is gone


@pytest.mark.parametrize(("listener", "mechanism"), CASES, ids=IDS)
def test_gateway_reads_and_writes_over_each_listener(security, listener, mechanism):
    gw = open_gateway(gateway_config(security, listener, mechanism))
    name = f"sec-{listener}-{mechanism or 'tls'}".lower()
    try:
        brokers = gw.describe_cluster()["brokers"]
        assert [(b["id"], b["rack"], b["alive"]) for b in brokers] == \
            [(1, "r0", True), (2, "r1", True), (3, "r2", True)]
        [made] = gw.create_topics([{"name": name, "partitions": 3, "rf": 2}])
        assert made["error"] is None, made
        deadline = time.monotonic() + DEADLINE
        while not (found := gw.describe_topics([name], missing_ok=True)):  # KRaft: a moment
            assert time.monotonic() < deadline, f"{name} not listed after create"
            time.sleep(0.2)
        [topic] = found
        assert len(topic["partitions"]) == 3
        assert all(len(p["replicas"]) == 2 for p in topic["partitions"])
        [gone] = gw.delete_topics([name])
        assert gone["error"] is None, gone
        deadline = time.monotonic() + DEADLINE
        while gw.describe_topics([name], missing_ok=True):
            assert time.monotonic() < deadline, f"{name} still listed after delete"
            time.sleep(0.2)
    finally:
        gw.delete_topics([name])  # UNKNOWN_TOPIC_OR_PARTITION when deleted above
        gw.close()


@pytest.mark.parametrize(("listener", "mechanism"), CASES, ids=IDS)
def test_snapshot_capture_over_each_listener(security, tmp_path, listener, mechanism):
    from backend.model.io import load_snapshot
    out = tmp_path / "secure.parquet"
    done = capture(config_file(tmp_path, gateway_config(security, listener, mechanism)), out)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["brokers"] == 3
    assert load_snapshot(out).n_partitions == answer["partitions"]


def one_line_exit_3(done: subprocess.CompletedProcess, out: Path) -> str:
    assert done.returncode == 3, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("railyard snapshot: unavailable: Kafka at 127.0.0.1:")
    assert not out.exists()
    return lines[0]


@pytest.mark.parametrize(("listener", "mechanism"),
                         [("SASL_PLAINTEXT", m) for m in MECHANISMS]
                         + [("SASL_SSL", "SCRAM-SHA-512")],
                         ids=[*MECHANISMS, "SASL_SSL-SCRAM-SHA-512"])
def test_a_wrong_password_is_one_line_exit_3_and_nothing_written(security, tmp_path,
                                                                  listener, mechanism):
    bad = wrong_password(tmp_path)
    out = tmp_path / "never.parquet"
    started = time.monotonic()
    line = one_line_exit_3(capture(config_file(tmp_path, gateway_config(
        security, listener, mechanism, password_file=str(bad))), out), out)
    assert f"{listener} connection refused: " in line
    assert "SaslAuthenticationFailedError: Authentication failed" in line
    assert "not-the-password" not in line
    # refused at once, not after timeout_seconds of retries (10 s in the config)
    assert time.monotonic() - started < 10


@pytest.mark.parametrize("listener", ["SSL", "SASL_SSL"])
def test_an_untrusted_certificate_is_one_line_exit_3_and_nothing_written(security, tmp_path,
                                                                         listener):
    out = tmp_path / "never.parquet"
    cfg = gateway_config(security, listener, "PLAIN" if listener == "SASL_SSL" else None,
                         ca_file=str(other_ca(tmp_path)))
    line = one_line_exit_3(capture(config_file(tmp_path, cfg), out), out)
    assert f"{listener} connection refused: " in line
    assert "CERTIFICATE_VERIFY_FAILED" in line


def test_a_missing_password_file_is_bad_input_exit_2(security, tmp_path):
    missing = tmp_path / "no-such-password"
    out = tmp_path / "never.parquet"
    config = config_file(tmp_path, gateway_config(
        security, "SASL_PLAINTEXT", "SCRAM-SHA-256", password_file=str(missing)))
    done = capture(config, out)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f"railyard snapshot: error: {config}: clusters[0].gateway.sasl.password: cannot "
        f"read {missing} (No such file or directory)"]
    assert not out.exists()
