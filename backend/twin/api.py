"""The twin's HTTP API on 127.0.0.1: how `railyard serve` in another process reads and
changes a twin that `railyard twin serve` runs (backend.gateways.twin_http is its client).

Every request must be addressed to the API (its Host header 127.0.0.1:PORT,
localhost:PORT or [::1]:PORT), else it answers 421 and nothing else: backend.twin.hosts.

Reads (GET, the ClusterReader half) are open to anyone on the loopback:

  /v1/cluster                    describe_cluster
  /v1/topics[?name=T&name=U]     describe_topics (&missing_ok=true: leave out unknown names)
  /v1/assignment[?topic=T&topic=U]  the assignment as a Parquet snapshot (of those topics:
                                 topics_assignment)
  /v1/configs/{broker|topic}/N   describe_configs
  /v1/configs/{broker|topic}?key=K&key=L   find_configs
  /v1/quotas                     describe_client_quotas
  /v1/reassignments              list_reassignments
  /v1/partition-deletion         {enabled}: whether DeletePartitions is accepted (the KIP)
  /v1/replica-sizes?replica=B:T:P&...  replica_sizes: [[topic, partition, broker, bytes]]

Writes (POST, JSON bodies, the rest of the ClusterGateway) need ``Authorization: Bearer
TOKEN`` with the token of `--api-token-file`: 401 without it or with another one, 403 when
the twin was started without a token (writes disabled):

  /v1/configs/{broker|topic}/N   alter_configs          {set, delete}
  /v1/reassignments              alter_reassignments    Kafka's plan JSON
  /v1/reassignments/cancel       cancel_reassignments   {partitions: [[topic, p]] | null}
  /v1/topics                     create_topics          {topics, user, client_id}
  /v1/topics/delete              delete_topics          {names, user, client_id}
  /v1/topics/N/partitions        create_partitions      {total, user, client_id}
  /v1/quotas                     alter_client_quota     {user, client_id, rate}
  /v1/topics/N/partitions/delete delete_partitions      {total, delay_ms, user, client_id}

A Kafka error (an injected fault, REASSIGNMENT_IN_PROGRESS) answers 409 with its code in
``kafka_error``, so the client raises the same GatewayError the in-process gateway does.
"""

from __future__ import annotations

import hmac
import json
import threading
from http.server import ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

from backend.errors import BadInput, Unavailable
from backend.gateways.base import (
    ClusterGateway,
    ClusterReader,
    GatewayError,
    PartitionDeleter,
    ReplicaSizeReader,
    can_delete_partitions,
)
from backend.model.io import snapshot_to_parquet_bytes
from backend.twin.hosts import ServedHostsOnly

PARQUET = "application/vnd.apache.parquet"
MAX_BODY = 64 << 20  # a 100k-move plan is a few MB
WRITES_DISABLED = ("writes are disabled on this twin: start it with `railyard twin serve "
                   "--api-token-file FILE` and give the cluster's gateway token_file: FILE")


def _parts(path: str) -> list[str]:
    parts = [unquote(p) for p in path.strip("/").split("/")]
    if parts[:1] != ["v1"]:
        raise LookupError(path)
    return parts[1:]


def _reads(gw: ClusterReader, path: str, query: dict) -> tuple[str, object]:
    match _parts(path):
        case ["cluster"]:
            return "json", gw.describe_cluster()
        case ["topics"]:
            return "json", gw.describe_topics(query.get("name"),
                                              missing_ok=query.get("missing_ok") == ["true"])
        case ["assignment"] if "topic" in query:
            return PARQUET, snapshot_to_parquet_bytes(gw.topics_assignment(query["topic"]))
        case ["assignment"]:
            return PARQUET, snapshot_to_parquet_bytes(gw.assignment())
        case ["configs", entity_type]:
            return "json", gw.find_configs(entity_type, query.get("key", []))
        case ["configs", entity_type, name]:
            return "json", gw.describe_configs(entity_type, name)
        case ["quotas"]:
            return "json", gw.describe_client_quotas()
        case ["reassignments"]:
            return "json", gw.list_reassignments()
        case ["partition-deletion"]:
            return "json", {"enabled": can_delete_partitions(gw)}
        case ["replica-sizes"] if isinstance(gw, ReplicaSizeReader):
            sizes = gw.replica_sizes(_replicas(query.get("replica", [])))
            return "json", [[t, p, b, size] for (t, p, b), size in sizes.items()]
    raise LookupError(path)


def _replicas(keys: list[str]) -> dict[int, list[tuple[str, int]]]:
    """``B:T:P`` query values as replica_sizes takes them (a topic name has no colon:
    Kafka allows only ASCII letters, digits, '.', '_' and '-')."""
    wanted: dict[int, list[tuple[str, int]]] = {}
    for key in keys:
        broker, topic, partition = key.split(":") if key.count(":") == 2 else ("", "", "")
        if not (broker.isdigit() and topic and partition.isdigit()):
            raise BadInput(f"replica: expected BROKER:TOPIC:PARTITION, got {key[:80]!r}")
        wanted.setdefault(int(broker), []).append((topic, int(partition)))
    return wanted


def _writes(gw: ClusterGateway, path: str, body: dict) -> object:
    """The write ``path`` names, with ``body``'s arguments (BadInput when malformed)."""
    who = {"user": str(body.get("user") or ""), "client_id": str(body.get("client_id") or "")}
    try:
        match _parts(path):
            case ["configs", entity_type, name]:
                return gw.alter_configs(entity_type, name, body.get("set"), body.get("delete"))
            case ["reassignments"]:
                return gw.alter_reassignments(body)
            case ["reassignments", "cancel"]:
                keys = body.get("partitions")
                return gw.cancel_reassignments(
                    None if keys is None else [(str(t), int(p)) for t, p in keys])
            case ["topics"]:
                return gw.create_topics(body["topics"], **who)
            case ["topics", "delete"]:
                return gw.delete_topics([str(n) for n in body["names"]], **who)
            case ["topics", topic, "partitions"]:
                return gw.create_partitions(topic, int(body["total"]), **who)
            case ["topics", topic, "partitions", "delete"] if isinstance(gw, PartitionDeleter):
                return gw.delete_partitions(topic, int(body["total"]), int(body["delay_ms"]),
                                            **who)
            case ["quotas"]:
                rate = body.get("rate")
                return gw.alter_client_quota(body.get("user"), body.get("client_id"),
                                             None if rate is None else float(rate))
    except (KeyError, TypeError, ValueError) as e:
        if isinstance(e, BadInput):
            raise
        raise BadInput(f"POST {path}: malformed body ({type(e).__name__}: {e})") from None
    raise LookupError(path)


class TwinApi:
    """Serves ``gateway`` on 127.0.0.1:``port`` (0: any free port) from a thread; writes
    only with ``token`` (None: writes refused)."""

    def __init__(self, gateway: ClusterGateway, port: int = 0,
                 token: str | None = None) -> None:
        expected = None if token is None else token.encode()  # only the closure holds it

        class Handler(ServedHostsOnly):
            served_what = "the twin's API"

            def refuse_host(self, status: int, message: str) -> None:
                self._send(status, "json", {"error": message})

            def do_GET(self) -> None:
                url = urlsplit(self.path)
                self._answer(lambda: _reads(gateway, url.path, parse_qs(url.query)), url.path)

            def do_POST(self) -> None:
                url = urlsplit(self.path)
                if expected is None:
                    return self._send(403, "json", {"error": WRITES_DISABLED})
                if not self._authorised():
                    return self._send(401, "json", {"error": "a write needs the twin's token: "
                                                    "Authorization: Bearer TOKEN"},
                                      {"WWW-Authenticate": 'Bearer realm="railyard-twin"'})
                self._answer(lambda: ("json", _writes(gateway, url.path, self._body())),
                             url.path)

            def _authorised(self) -> bool:
                scheme, _, given = self.headers.get("Authorization", "").partition(" ")
                return scheme.lower() == "bearer" and hmac.compare_digest(
                    given.strip().encode(), expected)

            def _body(self) -> dict:
                length = int(self.headers.get("Content-Length") or 0)
                if length > MAX_BODY:
                    raise BadInput(f"request body of {length} bytes is over {MAX_BODY}")
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    raise BadInput(f"POST {self.path}: the body is not JSON") from None
                if not isinstance(body, dict):
                    raise BadInput(f"POST {self.path}: the body must be a JSON object")
                return body

            def _answer(self, call, path: str) -> None:
                try:
                    kind, body = call()
                except LookupError:
                    return self._send(404, "json", {"error": f"no such resource: {path}"})
                except BadInput as e:
                    return self._send(400, "json", {"error": str(e)})
                except GatewayError as e:
                    return self._send(409, "json", {"error": str(e), "kafka_error": e.code,
                                                    "message": e.message})
                except Unavailable as e:  # a read the cluster refused
                    return self._send(503, "json", {"error": e.detail})
                self._send(200, kind, body)

            def _send(self, status: int, kind: str, body, headers: dict | None = None) -> None:
                data = body if kind == PARQUET else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", PARQUET if kind == PARQUET
                                 else "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:  # quiet: the twin logs its own events
                pass

        self.writable = token is not None
        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True,
                                        name="twin-api")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> TwinApi:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
