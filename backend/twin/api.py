"""The twin's read-only HTTP API on 127.0.0.1: how `railyard serve` in another process reads
a twin that `railyard twin serve` runs (backend.gateways.twin_http is its client).

GET only, the read half of the gateway (ClusterReader): nothing here is authenticated, so
nothing here changes the cluster; changes go through scenarios and the CLI.

  /v1/cluster                    describe_cluster
  /v1/topics[?name=T&name=U]     describe_topics
  /v1/assignment                 the assignment as a Parquet snapshot
  /v1/configs/{broker|topic}/N   describe_configs
  /v1/configs/{broker|topic}?key=K&key=L   find_configs
  /v1/quotas                     describe_client_quotas
  /v1/reassignments              list_reassignments
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

from backend.errors import BadInput
from backend.gateways.base import ClusterReader
from backend.model.io import snapshot_to_parquet_bytes

PARQUET = "application/vnd.apache.parquet"


def _routes(gw: ClusterReader, path: str, query: dict) -> tuple[str, object]:
    parts = [unquote(p) for p in path.strip("/").split("/")]
    if parts[:1] != ["v1"]:
        raise LookupError(path)
    match parts[1:]:
        case ["cluster"]:
            return "json", gw.describe_cluster()
        case ["topics"]:
            return "json", gw.describe_topics(query.get("name"))
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
    raise LookupError(path)


class TwinApi:
    """Serves ``gateway``'s reads on 127.0.0.1:``port`` (0: any free port) from a thread."""

    def __init__(self, gateway: ClusterReader, port: int = 0) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                url = urlsplit(self.path)
                try:
                    kind, body = _routes(gateway, url.path, parse_qs(url.query))
                except LookupError:
                    return self._send(404, "json", {"error": f"no such resource: {url.path}"})
                except BadInput as e:
                    return self._send(400, "json", {"error": str(e)})
                self._send(200, kind, body)

            def _send(self, status: int, kind: str, body) -> None:
                data = body if kind == PARQUET else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", PARQUET if kind == PARQUET
                                 else "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:  # quiet: the twin logs its own events
                pass

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
