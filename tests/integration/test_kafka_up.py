"""`railyard kafka up` as a user runs it: one broker (the session's three-broker cluster is
the `kafka_cluster` fixture), cluster.json and targets.json, SIGTERM stops every broker, and
a broker that cannot start is one line naming it and its log, exit 3."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import psutil
import pytest

pytestmark = pytest.mark.integration
RAILYARD = [str(Path(sys.executable).parent / "railyard")]


def _brokers_of(pid: int) -> list[psutil.Process]:
    return [p for p in psutil.Process(pid).children(recursive=True)
            if "kafka.Kafka" in " ".join(p.cmdline())]


def test_up_writes_cluster_json_serves_metrics_and_stops_on_sigterm(tmp_path):
    proc = subprocess.Popen([*RAILYARD, "kafka", "up", "--dir", str(tmp_path / "k"),
                             "--brokers", "1", "--racks", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line, proc.stderr.read()
        printed = json.loads(line)
        doc = json.loads((tmp_path / "k" / "cluster.json").read_text())
        assert printed == doc
        assert doc["kafka_version"] == "4.1.1"
        [b] = doc["brokers"]
        assert (b["id"], b["rack"]) == (1, "r0")
        assert doc["bootstrap_servers"] == [f"127.0.0.1:{b['port']}"]
        with urllib.request.urlopen(b["exporter_url"], timeout=5) as r:
            text = r.read().decode()
        assert "kafka_server_replicamanager_partitioncount" in text
        groups = json.loads(Path(doc["targets_file"]).read_text())
        assert groups == [{"targets": [b["exporter_url"].split("/")[2]],
                           "labels": {"broker": "1", "rack": "r0", "cluster": "kafka"}}]
        brokers = _brokers_of(proc.pid)
        assert len(brokers) == 1
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
        _gone, alive = psutil.wait_procs(brokers, timeout=10)
        assert not alive
        assert (tmp_path / "k" / "broker-1" / "data" / "meta.properties").exists()  # kept
    finally:
        if proc.poll() is None:
            proc.kill()


def test_a_broker_that_cannot_start_is_one_line_naming_it_and_its_log(tmp_path):
    out = subprocess.run([*RAILYARD, "kafka", "up", "--dir", str(tmp_path / "k"),
                          "--brokers", "1", "--racks", "1", "--heap", "1k"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 3
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("railyard kafka: unavailable: Kafka broker 1:")
    assert str(tmp_path / "k" / "broker-1") in lines[0]
    assert not (tmp_path / "k" / "cluster.json").exists()


def test_the_session_cluster_has_three_racked_brokers(kafka_cluster, kafka_gateway):
    brokers = kafka_gateway.describe_cluster()["brokers"]
    assert [(b["id"], b["rack"], b["alive"]) for b in brokers] == \
        [(1, "r0", True), (2, "r1", True), (3, "r2", True)]
    doc = json.loads((kafka_cluster.root / "cluster.json").read_text())
    assert doc == kafka_cluster.describe()
