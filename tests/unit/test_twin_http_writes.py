"""The write half of the twin's HTTP API: with the twin's bearer token a TwinHttpWriter
changes the twin exactly as the in-process gateway does; without it (or with another
token) a write gets 401, a twin started without a token refuses writes with 403, and
Kafka errors (injected faults) arrive as the same GatewayError."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from backend.errors import BadInput, Unavailable
from backend.gateways.base import ClusterGateway, GatewayError
from backend.gateways.config import GatewayConfig, Secret, parse_gateway
from backend.gateways.factory import open_gateway
from backend.gateways.twin_http import TwinHttpGateway, TwinHttpWriter
from backend.twin.api import TwinApi
from backend.twin.cluster import TwinCluster, TwinSettings
from backend.twin.gateway import TwinGateway
from backend.twin.generate import generate_snapshot

TOKEN = "s3cret-twin-token-4f1c"
RATE = "leader.replication.throttled.rate"


def _twin() -> TwinGateway:
    return TwinGateway(TwinCluster(generate_snapshot(4, 2, 3, 12, 3, seed=1),
                                   TwinSettings(traffic_noise=0.0)))


@pytest.fixture
def served(tmp_path):
    """(in-process gateway, the API's URL, a token file holding the API's token)."""
    local = _twin()
    api = TwinApi(local, token=TOKEN).start()
    token_file = tmp_path / "twin.token"
    token_file.write_text(TOKEN + "\n")
    try:
        yield local, api.url, Secret(file=str(token_file), where="token_file")
    finally:
        api.stop()


def _post(url: str, path: str, body: dict, token: str | None) -> tuple[int, dict, dict]:
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url + path, json.dumps(body).encode(), headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, json.loads(r.read()), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read()), dict(e.headers)


def _move(local: TwinGateway) -> dict:
    topic = local.describe_topics()[0]
    p0 = topic["partitions"][0]
    spare = next(b for b in (1, 2, 3, 4) if b not in p0["replicas"])
    return {"version": 1, "partitions": [{"topic": topic["name"], "partition": 0,
                                          "replicas": [*p0["replicas"][:-1], spare]}]}


def test_writes_with_the_token_change_the_twin_as_the_in_process_gateway(served):
    local, url, token = served
    remote = TwinHttpWriter(url, token)
    assert isinstance(remote, ClusterGateway)
    assert remote.alter_configs("broker", "1", {RATE: "1048576"}) == \
        local.describe_configs("broker", "1")
    assert local.describe_configs("broker", "1")["configs"][RATE] == "1048576"
    remote.alter_configs("broker", "1", delete=[RATE])
    assert RATE not in local.describe_configs("broker", "1")["configs"]
    plan = _move(local)
    key = (plan["partitions"][0]["topic"], 0)
    assert remote.alter_reassignments(plan) == {"started": [f"{key[0]}-0"], "cancelled": []}
    assert remote.list_reassignments() == local.list_reassignments() != []
    assert remote.cancel_reassignments([key]) == {"cancelled": [f"{key[0]}-0"]}
    assert local.list_reassignments() == []
    created = remote.create_topics([{"name": "fresh", "partitions": 2, "rf": 2}])
    assert created[0]["name"] == "fresh" and created[0]["error"] is None
    assert remote.create_partitions("fresh", 4)["error"] is None
    assert len(local.describe_topics(["fresh"])[0]["partitions"]) == 4
    assert remote.delete_topics(["fresh"])[0]["error"] is None
    assert remote.alter_client_quota("tenant", None, 2.5) == {
        "user": "tenant", "client_id": None, "controller_mutation_rate": 2.5}
    assert local.describe_client_quotas() == remote.describe_client_quotas() != []


@pytest.mark.parametrize("token", [None, "", "wrong", TOKEN + "x", TOKEN[:-1]])
def test_a_write_without_the_token_gets_401_and_changes_nothing(served, token):
    local, url, _ = served
    status, body, headers = _post(url, "/v1/configs/broker/1", {"set": {RATE: "1"}}, token)
    assert status == 401 and headers["WWW-Authenticate"].startswith("Bearer")
    assert "\n" not in body["error"] and TOKEN not in body["error"]
    assert RATE not in local.describe_configs("broker", "1")["configs"]
    status, _, _ = _post(url, "/v1/reassignments", _move(local), token)
    assert status == 401 and local.list_reassignments() == []


def test_a_wrong_token_is_a_refusal_the_executor_does_not_retry(served, tmp_path):
    _, url, _ = served
    other = tmp_path / "other.token"
    other.write_text("not-the-token\n")
    with pytest.raises(GatewayError, match="CLUSTER_AUTHORIZATION_FAILED") as e:
        TwinHttpWriter(url, Secret(file=str(other))).alter_configs("broker", "1", {RATE: "1"})
    assert not e.value.retriable and "not-the-token" not in str(e.value)


def test_reads_need_no_token(served):
    local, url, _ = served
    assert TwinHttpGateway(url).describe_configs("broker", "1") == \
        local.describe_configs("broker", "1")


def test_a_twin_without_a_token_refuses_writes_saying_how_to_enable_them(tmp_path):
    local = _twin()
    api = TwinApi(local).start()
    try:
        for token in (None, "anything"):
            status, body, _ = _post(api.url, "/v1/configs/broker/1", {"set": {RATE: "1"}},
                                    token)
            assert status == 403 and "--api-token-file" in body["error"]
            assert "\n" not in body["error"]
        assert RATE not in local.describe_configs("broker", "1")["configs"]
        assert TwinHttpGateway(api.url).describe_cluster() == local.describe_cluster()
    finally:
        api.stop()


def test_kafka_errors_arrive_as_the_same_gateway_error(served):
    local, url, token = served
    remote = TwinHttpWriter(url, token)
    local.twin.faults.add("alter_reassignments", "REASSIGNMENT_IN_PROGRESS", times=1,
                          message="a reassignment is already running")
    local.twin.faults.add("list_reassignments", "NOT_CONTROLLER", times=1)
    local.twin.faults.add("alter_configs", "POLICY_VIOLATION", times=1)
    # a refused read is a banner (Unavailable), as the Kafka gateway answers one
    with pytest.raises(Unavailable, match="list_reassignments refused: NOT_CONTROLLER"):
        remote.list_reassignments()
    for call, code, retriable in (
            (lambda: remote.alter_reassignments(_move(local)), "REASSIGNMENT_IN_PROGRESS", True),
            (lambda: remote.alter_configs("broker", "1", {RATE: "1"}), "POLICY_VIOLATION",
             False)):
        with pytest.raises(GatewayError) as e:
            call()
        assert (e.value.code, e.value.retriable) == (code, retriable)
    assert e.value.message == "injected by the scenario"
    assert local.list_reassignments() == []  # the refused write changed nothing


def test_bad_writes_are_one_line_bad_input(served):
    local, url, token = served
    remote = TwinHttpWriter(url, token)
    with pytest.raises(BadInput, match="no reassignment in progress"):
        remote.cancel_reassignments([(local.describe_topics()[0]["name"], 0)])
    with pytest.raises(BadInput, match="entity type"):
        remote.alter_configs("cluster", "x", {RATE: "1"})
    status, body, _ = _post(url, "/v1/topics", {"no": "topics"}, TOKEN)
    assert status == 400 and "malformed body" in body["error"]


def test_the_token_is_in_no_repr_url_or_error(served):
    _, url, token = served
    remote = TwinHttpWriter(url, token)
    config = parse_gateway({"type": "twin", "url": url, "token_file": token.file},
                           lambda k: f"gateway.{k}", lambda k: url)
    for text in (repr(remote), str(remote), repr(config), remote.url, repr(token)):
        assert TOKEN not in text


def test_the_gateway_config_names_the_token_file(served):
    _, url, token = served

    class Cluster:
        name, prometheus = "rehearsal", None
        gateway = GatewayConfig("twin", url=url)

    assert type(open_gateway(Cluster)) is TwinHttpGateway
    Cluster.gateway = parse_gateway({"type": "twin", "url": url, "token_file": token.file},
                                    lambda k: f"gateway.{k}", lambda k: url)
    assert Cluster.gateway.token == Secret(file=token.file, where="gateway.token_file")
    assert isinstance(open_gateway(Cluster), TwinHttpWriter)
    with pytest.raises(BadInput, match=r"gateway\.token_file: expected a file path"):
        parse_gateway({"type": "twin", "url": url, "token_file": 3},
                      lambda k: f"gateway.{k}", lambda k: url)
    missing = parse_gateway({"type": "twin", "url": url, "token_file": "/nonexistent/t"},
                            lambda k: f"gateway.{k}", lambda k: url)
    with pytest.raises(BadInput, match=r"gateway\.token_file: cannot read /nonexistent/t"):
        open_gateway(type("C", (), {"name": "x", "prometheus": None,
                                    "gateway": missing})).alter_configs("broker", "1", {})


def test_twin_serve_reads_the_token_file_and_says_writes_are_on(tmp_path, capsys):
    from backend.cli import main

    common = ["twin", "serve", "--snapshot", "demo", "--port-base", "0", "--api-port", "0",
              "--targets-file", str(tmp_path / "targets.json"), "--for", "0.2"]
    assert main([*common, "--api-token-file", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--api-token-file: cannot read {tmp_path / 'none'}" in err
    (tmp_path / "short").write_text("short\n")  # taken, once
    assert main([*common, "--api-token-file", str(tmp_path / "short")]) == 2
    assert capsys.readouterr().err.endswith(
        f"--api-token-file {tmp_path / 'short'}: the token is 5 characters, give at least 16 "
        f"(e.g. `openssl rand -hex 16`)\n")
    (tmp_path / "t").write_text(TOKEN + "\n")
    assert main([*common, "--api-token-file", str(tmp_path / "t")]) == 0
    out = capsys.readouterr().out
    assert json.loads(out)["serving"]["api_writes"] is True and TOKEN not in out


def test_a_redirect_is_not_followed_with_the_token(tmp_path):
    """Something answering at the twin's address with a redirect: urllib followed a POST's
    302 to where it pointed and carried the Authorization header there, the write token
    with it. A redirect is now an error, and the other address hears nothing."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    heard: list[dict] = []

    class Elsewhere(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            heard.append(dict(self.headers))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    elsewhere = ThreadingHTTPServer(("127.0.0.1", 0), Elsewhere)

    class Redirecting(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.send_response(302)
            self.send_header("Location", f"http://127.0.0.1:{elsewhere.server_port}/x")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    redirecting = ThreadingHTTPServer(("127.0.0.1", 0), Redirecting)
    for server in (elsewhere, redirecting):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    token = tmp_path / "twin.token"
    token.write_text(TOKEN + "\n")
    try:
        writer = TwinHttpWriter(f"http://127.0.0.1:{redirecting.server_port}",
                                Secret(file=str(token), where="token_file"))
        with pytest.raises(Unavailable, match="HTTP 302"):
            writer.alter_configs("broker", "1", {RATE: "1"})
        assert heard == []
    finally:
        for server in (elsewhere, redirecting):
            server.shutdown()
            server.server_close()
