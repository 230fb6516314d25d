"""DNS rebinding: the twin's API answered any Host, and reads need no credentials, so a page
on an attacker's domain, its name re-pointed at 127.0.0.1, could read the twin's cluster
from a user's browser. The API and the exporters now answer only requests addressed to
them (backend/twin/hosts.py): 421 and one line for any other Host, reads and writes alike,
nothing changed."""

from __future__ import annotations

import http.client
import json

import pytest

from backend.gateways.config import Secret
from backend.gateways.twin_http import TwinHttpGateway, TwinHttpWriter
from backend.metrics.dialects import STRIMZI
from backend.twin.api import TwinApi
from backend.twin.cluster import TwinCluster, TwinSettings
from backend.twin.exporter import Exporters
from backend.twin.gateway import TwinGateway
from backend.twin.generate import generate_snapshot
from backend.twin.hosts import served_hosts

TOKEN = "s3cret-token-0123456789"
RATE = "leader.replication.throttled.rate"


def twin() -> TwinCluster:
    return TwinCluster(generate_snapshot(3, 0, 2, 6, 2, seed=1), TwinSettings(traffic_noise=0.0))


def request(port: int, method: str, path: str, hosts: list[str], body: dict | None = None,
            token: str | None = None) -> tuple[int, bytes]:
    """``method path`` on 127.0.0.1:``port`` with exactly ``hosts`` as its Host headers."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for host in hosts:
            conn.putheader("Host", host)
        data = b"" if body is None else json.dumps(body).encode()
        if token is not None:
            conn.putheader("Authorization", f"Bearer {token}")
        if body is not None:
            conn.putheader("Content-Type", "application/json")
            conn.putheader("Content-Length", str(len(data)))
        conn.endheaders(data or None)
        answer = conn.getresponse()
        return answer.status, answer.read()
    finally:
        conn.close()


def test_served_hosts_are_the_bound_address_and_for_loopback_its_names():
    assert served_hosts("127.0.0.1", 9400) == {"127.0.0.1:9400", "localhost:9400",
                                                "[::1]:9400"}
    assert served_hosts("::1", 9400) == {"[::1]:9400", "localhost:9400", "127.0.0.1:9400"}
    assert served_hosts("10.0.0.5", 9400) == {"10.0.0.5:9400"}  # no loopback names
    assert "localhost" in served_hosts("127.0.0.1", 80)  # port 80 goes unsaid


@pytest.mark.parametrize("token", [TOKEN, None], ids=["writable", "read-only"])
def test_the_api_answers_only_requests_addressed_to_it(token, monkeypatch):
    gateway = TwinGateway(twin())
    api = TwinApi(gateway, token=token).start()
    port = api.server.server_address[1]
    try:
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}",
                     f"LocalHost:{port}"):
            status, body = request(port, "GET", "/v1/cluster", [host])
            assert status == 200 and json.loads(body)["brokers"], host
        for hosts in ([f"evil.example:{port}"], ["evil.example"], [f"127.0.0.1:{port + 1}"],
                      ["127.0.0.1"], [], [f"127.0.0.1:{port}", f"evil.example:{port}"]):
            for method, path, body in (("GET", "/v1/cluster", None),
                                       ("GET", "/v1/reassignments", None),
                                       ("POST", "/v1/configs/broker/1",
                                        {"set": {RATE: "1"}})):
                status, answer = request(port, method, path, hosts, body, token)
                assert status == 421, (hosts, method, path)
                error = json.loads(answer)["error"]
                assert "\n" not in error and f"127.0.0.1:{port}" in error, error
        # no refused write went through
        assert RATE not in gateway.describe_configs("broker", "1")["configs"]
        status, answer = request(port, "GET", "/v1/cluster", [f"evil.example:{port}"])
        assert json.loads(answer) == {"error": (
            f"Host 'evil.example:{port}' refused: the twin's API answers only requests "
            f"addressed to 127.0.0.1:{port}, [::1]:{port}, localhost:{port} (a name another "
            "site re-pointed at this machine is refused: DNS rebinding)")}
        # the clients Railyard uses address it by its URL: 127.0.0.1 or localhost
        assert TwinHttpGateway(api.url).describe_cluster()["brokers"]
        assert TwinHttpGateway(f"http://localhost:{port}").list_reassignments() == []
        if token is not None:
            monkeypatch.setenv("TWIN_TOKEN", TOKEN)
            writer = TwinHttpWriter(f"http://localhost:{port}", Secret(env="TWIN_TOKEN"))
            writer.alter_configs("broker", "1", {RATE: "7"})
            assert gateway.describe_configs("broker", "1")["configs"][RATE] == "7"
    finally:
        api.stop()


def test_exporters_answer_only_their_own_address_and_prometheus_still_scrapes():
    """Prometheus sends its target's host:port as Host (the targets file's 127.0.0.1:PORT):
    scraping works as before (tests/integration/test_prometheus_twin.py scrapes with a real
    Prometheus); a page elsewhere gets 421."""
    exporters = Exporters(twin(), STRIMZI).start()
    try:
        for target in exporters.targets.values():
            port = int(target.rpartition(":")[2])
            status, body = request(port, "GET", "/metrics", [target])
            assert status == 200 and b"kafka_server_replicamanager_partitioncount" in body
            status, body = request(port, "GET", "/metrics", [f"localhost:{port}"])
            assert status == 200
            status, body = request(port, "GET", "/metrics", [f"evil.example:{port}"])
            assert status == 421 and b"kafka_server" not in body
            assert b"this exporter answers only requests addressed to" in body
    finally:
        exporters.stop()
