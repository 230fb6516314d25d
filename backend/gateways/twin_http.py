"""The read half of the gateway over the twin's HTTP API (backend.twin.api): what the
dashboard uses for a `gateway: {type: twin, url: ...}` cluster."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from urllib.parse import quote, urlencode

from backend.errors import BadInput, Unavailable
from backend.model.io import snapshot_from_parquet_bytes
from backend.model.snapshot import Snapshot


class TwinHttpGateway:
    """ClusterReader for a twin another process runs; Unavailable when it does not answer."""

    def __init__(self, url: str, timeout: float = 5.0) -> None:
        self.url, self.timeout = url.rstrip("/"), timeout

    def _get(self, path: str) -> bytes:
        try:
            with urllib.request.urlopen(self.url + path, timeout=self.timeout) as r:
                return r.read()
        except urllib.error.HTTPError as e:
            try:
                detail = json.loads(e.read() or b"{}").get("error", e.reason)
            except (ValueError, AttributeError):
                detail = e.reason
            if e.code == 400:
                raise BadInput(detail) from None
            raise Unavailable(f"Twin at {self.url}", f"HTTP {e.code}: {detail}") from None
        except OSError as e:  # URLError included
            reason = getattr(e, "reason", e)
            raise Unavailable(f"Twin at {self.url}", f"unreachable ({reason})") from None

    def _json(self, path: str):
        body = self._get(path)
        try:
            return json.loads(body)
        except ValueError:
            raise Unavailable(f"Twin at {self.url}", f"{path} did not answer with JSON: "
                              "is this a `railyard twin serve` API?") from None

    def describe_cluster(self) -> dict:
        return self._json("/v1/cluster")

    def describe_topics(self, names: list[str] | None = None) -> list[dict]:
        query = f"?{urlencode([('name', n) for n in names])}" if names else ""
        return self._json(f"/v1/topics{query}")

    def assignment(self) -> Snapshot:
        return snapshot_from_parquet_bytes(self._get("/v1/assignment"),
                                           f"{self.url}/v1/assignment")

    def describe_configs(self, entity_type: str, name: str) -> dict:
        return self._json(f"/v1/configs/{quote(entity_type, safe='')}/{quote(name, safe='')}")

    def find_configs(self, entity_type: str, keys: list[str]) -> dict[str, dict[str, str]]:
        query = urlencode([("key", k) for k in keys])
        return self._json(f"/v1/configs/{quote(entity_type, safe='')}?{query}")

    def describe_client_quotas(self) -> list[dict]:
        return self._json("/v1/quotas")

    def list_reassignments(self) -> list[dict]:
        return self._json("/v1/reassignments")
