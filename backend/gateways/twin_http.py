"""The gateway over the twin's HTTP API (backend.twin.api): what Railyard uses for a
`gateway: {type: twin, url: ..., token_file: ...}` cluster. Without a token it is the read
half (TwinHttpGateway), all the dashboard needs; with the twin's token it is the whole
ClusterGateway (TwinHttpWriter), so an executor in `railyard serve` can run plans on a
twin that `railyard twin serve` runs in another process.

A Kafka error the twin answers to a write (409 with ``kafka_error``) is raised as the
GatewayError the in-process gateway raises, so the executor retries it the same way; a
refused read (503) is Unavailable, as the Kafka gateway answers one; a write the twin
refuses (no token, a wrong one, writes disabled) is
CLUSTER_AUTHORIZATION_FAILED, which is not retried."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import replace
from urllib.parse import quote, urlencode

from backend.errors import BadInput, Unavailable, shown_url
from backend.gateways.base import UNAUTHENTICATED, GatewayError
from backend.gateways.config import Secret
from backend.model.io import snapshot_from_parquet_bytes
from backend.model.snapshot import Snapshot

MAX_QUERY = 8000  # characters of a GET's query: http.server refuses lines over 64 KiB


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """The twin's API never redirects: a redirect is answered as the HTTP error it is,
    never followed (urllib carries a request's Authorization header to where it points,
    the write token with it)."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


_OPENER = urllib.request.build_opener(_NoRedirects)


class TwinHttpGateway:
    """ClusterReader for a twin another process runs; Unavailable when it does not answer."""

    def __init__(self, url: str, timeout: float = 5.0) -> None:
        self.url, self.timeout = url.rstrip("/"), timeout
        self.shown = shown_url(self.url)  # what messages show: a query's secrets masked

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.shown!r})"

    def _request(self, path: str, body: bytes | None = None, headers: dict | None = None,
                 timeout: float | None = None) -> bytes:
        req = urllib.request.Request(self.url + path, data=body, headers=headers or {},
                                     method="GET" if body is None else "POST")
        try:
            with _OPENER.open(req, timeout=timeout or self.timeout) as r:
                return r.read()
        except urllib.error.HTTPError as e:
            try:
                answer = json.loads(e.read() or b"{}")
            except ValueError:
                answer = {}
            if not isinstance(answer, dict):
                answer = {}
            detail = answer.get("error", e.reason)
            if e.code == 409 and answer.get("kafka_error"):
                raise GatewayError(str(answer["kafka_error"]), answer.get("message", "")) \
                    from None
            if e.code == 400:
                raise BadInput(detail) from None
            if e.code in (401, 403):  # a refusal, as Kafka's: retrying will not help
                raise GatewayError("CLUSTER_AUTHORIZATION_FAILED",
                                   f"twin at {self.shown}: {detail}") from None
            if e.code == 503 and "error" in answer:  # the twin says why it cannot answer
                raise Unavailable(f"Twin at {self.shown}", str(detail)) from None
            raise Unavailable(f"Twin at {self.shown}", f"HTTP {e.code}: {detail}") from None
        except OSError as e:  # URLError and timeouts included
            reason = getattr(e, "reason", e)
            raise Unavailable(f"Twin at {self.shown}", f"unreachable ({reason})") from None

    def _json(self, path: str, body: bytes | None = None, headers: dict | None = None,
              timeout: float | None = None):
        answer = self._request(path, body, headers, timeout)
        try:
            return json.loads(answer)
        except ValueError:
            raise Unavailable(f"Twin at {self.shown}", f"{path} did not answer with JSON: "
                              "is this a `railyard twin serve` API?") from None

    def describe_cluster(self) -> dict:
        return self._json("/v1/cluster")

    def describe_topics(self, names: list[str] | None = None,
                        missing_ok: bool = False) -> list[dict]:
        if names is None:
            return self._json("/v1/topics")
        flag = [("missing_ok", "true")] if missing_ok else []
        queries = [urlencode([("name", n) for n in batch] + flag) for batch in _batches(names)]
        return [t for q in queries for t in self._json(f"/v1/topics?{q}")]

    def assignment(self) -> Snapshot:
        """The twin's Parquet snapshot, with the reassignments in flight (the Parquet file
        does not carry them; listed first, as the Kafka gateway does)."""
        moving = tuple(self.list_reassignments())
        return replace(self._parquet("/v1/assignment"), in_flight=moving)

    def topics_assignment(self, names: list[str]) -> Snapshot:
        """The twin's Parquet of those topics alone; the whole assignment, sliced here,
        when their names would not fit in one URL."""
        batches = _batches(names)
        if len(batches) != 1:
            return self._parquet("/v1/assignment").only_topics(names)
        return self._parquet(f"/v1/assignment?{urlencode([('topic', n) for n in batches[0]])}")

    def _parquet(self, path: str) -> Snapshot:
        return snapshot_from_parquet_bytes(self._request(path), f"{self.shown}{path}")

    def describe_configs(self, entity_type: str, name: str) -> dict:
        return self._json(_configs_path(entity_type, name))

    def find_configs(self, entity_type: str, keys: list[str]) -> dict[str, dict[str, str]]:
        query = urlencode([("key", k) for k in keys])
        return self._json(f"/v1/configs/{quote(entity_type, safe='')}?{query}")

    def describe_client_quotas(self) -> list[dict]:
        return self._json("/v1/quotas")

    def list_reassignments(self) -> list[dict]:
        return self._json("/v1/reassignments")

    def replica_sizes(self, wanted: dict[int, list[tuple[str, int]]]
                      ) -> dict[tuple[str, int, int], int]:
        """ReplicaSizeReader over the API, in batches of URL-sized queries."""
        keys = [f"{b}:{t}:{p}" for b, partitions in wanted.items() for t, p in partitions]
        return {(str(t), int(p), int(b)): int(size)
                for batch in _batches(keys, "replica")
                for t, p, b, size in self._json(
                    "/v1/replica-sizes?" + urlencode([("replica", k) for k in batch]))}


class TwinHttpWriter(TwinHttpGateway):
    """The whole ClusterGateway over the twin's API: writes carry the twin's token (read
    from ``token`` at each write, never kept in a repr, a URL or a log). Reads keep the
    reader's short timeout (pages wait on them); a write may take longer (a 100k-move
    plan), and one that times out is retried by the executor, which sends again only
    what is neither in flight nor done."""

    def __init__(self, url: str, token: Secret, timeout: float = 5.0,
                 write_timeout: float = 30.0) -> None:
        super().__init__(url, timeout)
        self._token, self.write_timeout = token, write_timeout

    def _post(self, path: str, body: dict):
        headers = {"Content-Type": "application/json",
                   "Authorization": f"Bearer {self._token.read()}"}
        return self._json(path, json.dumps(body).encode(), headers, self.write_timeout)

    def alter_configs(self, entity_type: str, name: str, set_: dict | None = None,
                      delete: list[str] | None = None) -> dict:
        return self._post(_configs_path(entity_type, name), {"set": set_, "delete": delete})

    def alter_reassignments(self, plan: dict) -> dict:
        return self._post("/v1/reassignments", plan)

    def cancel_reassignments(self, partitions: list[tuple[str, int]] | None = None) -> dict:
        return self._post("/v1/reassignments/cancel", {
            "partitions": None if partitions is None else [list(k) for k in partitions]})

    def principal(self) -> tuple[str | None, str]:
        """As a Kafka broker without authentication names Railyard's connection."""
        return UNAUTHENTICATED

    def create_topics(self, topics: list[dict], user: str = "", client_id: str = "") -> list[dict]:
        return self._post("/v1/topics", {"topics": topics, "user": user, "client_id": client_id})

    def create_partitions(self, topic: str, total: int, user: str = "",
                          client_id: str = "") -> dict:
        return self._post(f"/v1/topics/{quote(topic, safe='')}/partitions",
                          {"total": total, "user": user, "client_id": client_id})

    def delete_topics(self, names: list[str], user: str = "", client_id: str = "") -> list[dict]:
        return self._post("/v1/topics/delete", {"names": names, "user": user,
                                                "client_id": client_id})

    def alter_client_quota(self, user: str | None, client_id: str | None,
                           rate: float | None) -> dict:
        return self._post("/v1/quotas", {"user": user, "client_id": client_id, "rate": rate})

    def partition_deletion_enabled(self) -> bool:
        """Whether the twin accepts DeletePartitions (it implements the KIP); asked each
        time, as the twin may run with delete.topic.partition.enable off."""
        return bool(self._json("/v1/partition-deletion")["enabled"])

    def delete_partitions(self, topic: str, total: int, delay_ms: int, user: str = "",
                          client_id: str = "") -> dict:
        return self._post(f"/v1/topics/{quote(topic, safe='')}/partitions/delete",
                          {"total": total, "delay_ms": delay_ms, "user": user,
                           "client_id": client_id})


def _batches(names: list[str], key: str = "topic") -> list[list[str]]:
    """``names`` in batches whose query (``&key=N`` each) stays under MAX_QUERY: a plan
    touching thousands of topics would exceed the server's URL limit."""
    batches: list[list[str]] = []
    size = MAX_QUERY
    for n in names:
        cost = len(quote(n, safe="")) + len(f"&{key}=")
        if size + cost > MAX_QUERY:
            batches.append([])
            size = 0
        batches[-1].append(n)
        size += cost
    return batches


def _configs_path(entity_type: str, name: str) -> str:
    return f"/v1/configs/{quote(entity_type, safe='')}/{quote(name, safe='')}"
