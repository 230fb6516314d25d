"""The gateway over a real Kafka cluster, on kafka-python's KafkaAdminClient.

Every request is built here by a small pure function (unit-tested field by field against
what Kafka's own tools send) and sent through the admin client's protocol layer, so the
results keep what Railyard needs and the client's helpers drop: per-topic error codes of
DescribeConfigs, the KIP-599 ``throttle_time_ms`` of CreateTopics/CreatePartitions/
DeleteTopics, and the client-quota APIs kafka-python has no call for (docs/deploy.md lists
which call uses which API).

Apache Kafka cannot delete partitions, so this gateway is no PartitionDeleter
(backend.gateways.base): a shrink runs as its migration here.

A cluster that does not answer, refuses the credentials, or lacks an API raises
backend.errors.Unavailable naming the bootstrap servers and the Kafka error, in one line
(the executor retries it). A write the cluster refuses raises GatewayError with Kafka's
error name (retried only when Kafka calls it retriable); bad arguments raise BadInput
before anything is sent.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from itertools import chain
from typing import TYPE_CHECKING, Any

import kafka.errors as Errors
import numpy as np
from kafka import KafkaAdminClient, TopicPartition
from kafka.protocol.admin import (
    AlterClientQuotasRequest,
    AlterPartitionReassignmentsRequest,
    CreatePartitionsRequest,
    CreateTopicsRequest,
    DeleteTopicsRequest,
    DescribeClientQuotasRequest,
    DescribeConfigsRequest,
    DescribeLogDirsRequest,
    IncrementalAlterConfigsRequest,
    ListPartitionReassignmentsRequest,
)
from kafka.protocol.consumer.offsets import OffsetSpec

from backend.errors import BadInput, Unavailable
from backend.gateways import kafka_eof  # noqa: F401 (a failed login's answer is kept)
from backend.gateways.base import GatewayError
from backend.gateways.config import KafkaConnection
from backend.model.csr import offsets_from_lengths
from backend.model.snapshot import DEFAULT_RETENTION_MS, Snapshot

if TYPE_CHECKING:
    from backend.metrics.client import MetricsClient

DEFAULT_BROKER = "<default>"  # the cluster-wide broker entity, "" on the wire
TOPIC, BROKER = 2, 4  # ConfigResourceType
SET, DELETE = 0, 1  # IncrementalAlterConfigs operations
MUTATION_RATE = "controller_mutation_rate"  # KIP-599 quota key
CONNECT_GRACE_SECONDS = 2.0  # beyond the bootstrap timeout before giving up on a connect
# DescribeConfigs sources that mean "set on this very entity": Railyard records and
# restores only those (a default or a static server.properties value is not its to undo)
OWN_SOURCE = {TOPIC: 1, BROKER: 2}  # DYNAMIC_TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG
DEFAULT_BROKER_SOURCE = 3  # DYNAMIC_DEFAULT_BROKER_CONFIG
FIND_BATCH = 1000  # topics per DescribeConfigs when sweeping for configs
READ_BACK_POLL_SECONDS = 0.05  # between reads while a write spreads to the brokers

log = logging.getLogger(__name__)


# ---- requests (pure) ------------------------------------------------------------------------
def resource(entity_type: str, name: str) -> tuple[int, str]:
    """Kafka's (resource type, name) for Railyard's 'broker'/'topic' entity; BadInput else."""
    if entity_type == "topic":
        if not name:
            raise BadInput("a topic config needs the topic's name")
        return TOPIC, name
    if entity_type == "broker":
        if name == DEFAULT_BROKER:
            return BROKER, ""
        if not str(name).isdigit():
            raise BadInput(f"broker must be an id or '{DEFAULT_BROKER}', got '{name}'")
        return BROKER, str(int(name))
    raise BadInput(f"entity type must be 'broker' or 'topic', got '{entity_type}'")


def describe_configs_request(resources: list[tuple[int, str]],
                             keys: list[str] | None = None) -> DescribeConfigsRequest:
    """All configs (keys None) or only ``keys`` of each resource."""
    return DescribeConfigsRequest(resources=[(t, n, keys) for t, n in resources],
                                  include_synonyms=False)


def incremental_alter_configs_request(entity_type: str, name: str, set_: dict | None,
                                      delete: list[str] | None
                                      ) -> IncrementalAlterConfigsRequest:
    """As kafka-configs --alter --add-config k=v --delete-config k sends it (KIP-339)."""
    rtype, rname = resource(entity_type, name)
    set_, delete = set_ or {}, delete or []
    both = set(set_) & set(delete)
    if both:
        raise BadInput(f"config '{sorted(both)[0]}' is both set and deleted")
    if not set_ and not delete:
        raise BadInput("nothing to alter: give configs to set or delete")
    entries = [(k, SET, str(v)) for k, v in set_.items()] + [(k, DELETE, None) for k in delete]
    return IncrementalAlterConfigsRequest(resources=[(rtype, rname, entries)],
                                          validate_only=False)


def reassignment_moves(plan: Any) -> dict[tuple[str, int], list[int]]:
    """Kafka's plan JSON {version, partitions: [{topic, partition, replicas}]} as moves."""
    parts = plan.get("partitions") if isinstance(plan, dict) else None
    if not isinstance(parts, list) or not parts:
        raise BadInput('reassignment: expected {"version": 1, "partitions": [...]}')
    moves: dict[tuple[str, int], list[int]] = {}
    for i, p in enumerate(parts):
        topic = p.get("topic") if isinstance(p, dict) else None
        pid = p.get("partition") if isinstance(p, dict) else None
        reps = p.get("replicas") if isinstance(p, dict) else None
        if not isinstance(topic, str) or not topic or not _int(pid) or pid < 0 \
                or not isinstance(reps, list) or not reps or not all(_int(r) for r in reps) \
                or len(set(reps)) != len(reps):
            raise BadInput(f"reassignment: partitions[{i}]: expected {{topic, partition, "
                           "replicas: [distinct broker ids]}")
        if (topic, pid) in moves:
            raise BadInput(f"reassignment: {topic}-{pid} is listed twice")
        moves[(topic, pid)] = list(reps)
    return moves


def alter_reassignments_request(moves: dict[tuple[str, int], list[int] | None],
                                timeout_ms: int) -> AlterPartitionReassignmentsRequest:
    """KIP-455: a replica list starts (or retargets) a move; None cancels it."""
    R = AlterPartitionReassignmentsRequest.ReassignableTopic
    by_topic: dict[str, list] = {}
    for (topic, pid), reps in sorted(moves.items()):
        by_topic.setdefault(topic, []).append(
            R.ReassignablePartition(partition_index=pid, replicas=reps))
    return AlterPartitionReassignmentsRequest(
        timeout_ms=timeout_ms, topics=[R(name=t, partitions=ps) for t, ps in by_topic.items()])


def create_topics_request(topics: list[dict], timeout_ms: int) -> CreateTopicsRequest:
    """[{name, partitions, rf}]: the broker places the replicas (kafka-topics --create);
    [{name, assignment: [[broker, ...] per partition]}]: placed as given
    (kafka-topics --create --replica-assignment)."""
    T = CreateTopicsRequest.CreatableTopic
    out = []
    for i, t in enumerate(topics):
        name, parts, rf = t.get("name"), t.get("partitions"), t.get("rf", 3)
        manual = t.get("assignment")
        if manual is not None:
            if not isinstance(name, str) or not name or not isinstance(manual, list) \
                    or not manual or not all(isinstance(r, list) and r and all(_int(b) for b in r)
                                             and len(r) == len(manual[0]) for r in manual):
                raise BadInput(f"topics[{i}]: expected {{name, assignment: [[broker ids] per "
                               "partition, all of one length]}")
            out.append(T(name=name, num_partitions=-1, replication_factor=-1, configs=[],
                         assignments=[T.CreatableReplicaAssignment(partition_index=p,
                                                                   broker_ids=list(r))
                                      for p, r in enumerate(manual)]))
            continue
        if not isinstance(name, str) or not name or not _int(parts) or parts < 1 \
                or not _int(rf) or rf < 1:
            raise BadInput(f"topics[{i}]: expected {{name, partitions >= 1, rf >= 1}}")
        out.append(T(name=name, num_partitions=parts, replication_factor=rf,
                     assignments=[], configs=[]))
    return CreateTopicsRequest(topics=out, timeout_ms=timeout_ms, validate_only=False)


def create_partitions_request(topic: str, total: int, timeout_ms: int
                              ) -> CreatePartitionsRequest:
    """kafka-topics --alter --partitions TOTAL: the broker places the new ones."""
    if not _int(total) or total < 1:
        raise BadInput(f"partitions must be a positive total, got {total!r}")
    return CreatePartitionsRequest(
        topics=[CreatePartitionsRequest.CreatePartitionsTopic(name=topic, count=total,
                                                              assignments=None)],
        timeout_ms=timeout_ms, validate_only=False)


def delete_topics_request(names: list[str], timeout_ms: int) -> DeleteTopicsRequest:
    if not names or not all(isinstance(n, str) and n for n in names):
        raise BadInput("delete: give one or more topic names")
    return DeleteTopicsRequest(
        topics=[DeleteTopicsRequest.DeleteTopicState(name=n) for n in names],
        timeout_ms=timeout_ms)


def describe_log_dirs_request(partitions: list[tuple[str, int]]) -> DescribeLogDirsRequest:
    """DescribeLogDirs of only ``partitions`` (KIP-113's topic filter, as kafka-log-dirs
    --describe --topic-list asks), not every log the broker holds."""
    by_topic: dict[str, list[int]] = {}
    for topic, pid in sorted(set(partitions)):
        by_topic.setdefault(topic, []).append(pid)
    T = DescribeLogDirsRequest.DescribableLogDirTopic
    return DescribeLogDirsRequest(topics=[T(topic=t, partitions=ps)
                                          for t, ps in by_topic.items()])


def describe_client_quotas_request() -> DescribeClientQuotasRequest:
    """Every quota entity (no filter component, not strict), as kafka-configs --describe
    --entity-type users --entity-type clients asks for all of them."""
    return DescribeClientQuotasRequest(components=[], strict=False)


def alter_client_quotas_request(user: str | None, client_id: str | None,
                                rate: float | None) -> AlterClientQuotasRequest:
    """kafka-configs --alter --entity-type users [--entity-name U | --entity-default]
    [--entity-type clients ...] --add-config controller_mutation_rate=R (or
    --delete-config when ``rate`` is None)."""
    if user is None and client_id is None:
        raise BadInput("a quota names a user, a client id, or both ('<default>' for the "
                       "default entity)")
    if rate is not None and not rate > 0:
        raise BadInput(f"{MUTATION_RATE} must be > 0, got {rate}")
    E = AlterClientQuotasRequest.EntryData
    entity = [E.EntityData(entity_type=kind, entity_name=None if v == DEFAULT_BROKER else v)
              for kind, v in (("user", user), ("client-id", client_id)) if v is not None]
    op = E.OpData(key=MUTATION_RATE, value=float(rate or 0.0), remove=rate is None)
    return AlterClientQuotasRequest(entries=[E(entity=entity, ops=[op])], validate_only=False)


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


# Metadata's answers for a topic that is not there: unknown, or a name no topic can have
# (Kafka answers INVALID_TOPIC_EXCEPTION for ".", "a b", ...: Topic.validate)
_NO_SUCH_TOPIC = ("UNKNOWN_TOPIC_OR_PARTITION", "INVALID_TOPIC_EXCEPTION")

# Kafka's own names where kafka-python spells a code differently or not at all (every code
# of Kafka 4.1's clients/.../common/protocol/Errors.java compared with kafka-python's)
KAFKA_NAMES = {-1: "UNKNOWN_SERVER_ERROR", 6: "NOT_LEADER_OR_FOLLOWER", 10: "MESSAGE_TOO_LARGE",
               17: "INVALID_TOPIC_EXCEPTION", 39: "INVALID_REPLICA_ASSIGNMENT",
               128: "INVALID_REGULAR_EXPRESSION"}


def error_of(code: int, message: str | None = None) -> tuple[str | None, str | None]:
    """(Kafka error name, message) for a result's error code; (None, None) when it is 0."""
    cls = Errors.for_code(code)
    if cls is Errors.NoError:
        return None, None
    return (KAFKA_NAMES.get(code) or getattr(cls, "message", None) or cls.__name__,
            message or getattr(cls, "description", None) or cls.__name__)


def quotas_from(resp: Any) -> list[dict]:
    """DescribeClientQuotas' entities with a controller_mutation_rate; a null entity name
    is the default entity ('<default>'), a missing entity type is None."""
    out = []
    for entry in resp.entries or []:
        rate = next((v.value for v in entry.values if v.key == MUTATION_RATE), None)
        if rate is None:
            continue
        names = {e.entity_type: DEFAULT_BROKER if e.entity_name is None else e.entity_name
                 for e in entry.entity}
        out.append({"user": names.get("user"), "client_id": names.get("client-id"),
                    MUTATION_RATE: rate})
    return sorted(out, key=lambda q: (str(q["user"]), str(q["client_id"])))


def shows_quota(quotas: list[dict], user: str | None, client_id: str | None,
                rate: float | None) -> bool:
    """Whether quotas_from's list shows the entity at ``rate`` (absent when None)."""
    got = next((q[MUTATION_RATE] for q in quotas
                if q["user"] == user and q["client_id"] == client_id), None)
    return got == (None if rate is None else float(rate))


def reassignments_from(resp: Any) -> list[dict]:
    """In-flight moves of a ListPartitionReassignments answer. A partition with nothing
    adding or removing is not moving (Kafka never lists one; Tansu lists every partition
    that way)."""
    return [{"topic": t.name, "partition": p.partition_index, "replicas": list(p.replicas),
             "adding": list(p.adding_replicas), "removing": list(p.removing_replicas)}
            for t in sorted(resp.topics, key=lambda t: t.name)
            for p in sorted(t.partitions, key=lambda p: p.partition_index)
            if p.adding_replicas or p.removing_replicas]


def log_sizes_from(resp: Any) -> list[tuple[str, int, int]]:
    """(topic, partition, bytes) of each replica a DescribeLogDirs answer reports: its
    current log in each log dir that answered, not the future one an intra-broker move
    (AlterReplicaLogDirs) copies to (an offline log dir has nothing to report)."""
    return [(t.name, p.partition_index, p.partition_size)
            for d in resp.results if not d.error_code
            for t in d.topics for p in t.partitions if not p.is_future_key]


def reassign_outcome(resp: Any, cancelling: bool) -> tuple[list[str], list[tuple]]:
    """(partitions accepted, [(partition, error code, message)] refused) of an
    AlterPartitionReassignments answer. Cancelling a move that finished meanwhile is not a
    refusal, unless nothing at all was in flight (BadInput, as the twin says)."""
    ok, failed = [], []
    for t in resp.responses:
        for p in t.partitions:
            key = f"{t.name}-{p.partition_index}"
            if p.error_code:
                failed.append((key, p.error_code, p.error_message))
            else:
                ok.append(key)
    if cancelling:
        gone = [f for f in failed if error_of(f[1])[0] == "NO_REASSIGNMENT_IN_PROGRESS"]
        if gone and len(gone) == len(failed) and not ok:
            raise BadInput(f"no reassignment in progress for {gone[0][0]}")
        failed = [f for f in failed if f not in gone]
    return ok, failed


def own_configs(result: Any, rtype: int, rname: str) -> dict[str, str]:
    """The configs set on this entity itself (not defaults, not static, not inherited)."""
    own = DEFAULT_BROKER_SOURCE if rtype == BROKER and rname == "" else OWN_SOURCE[rtype]
    return {c.name: c.value for c in result.configs
            if c.config_source == own and c.value is not None}


def shows_write(result: Any, rtype: int, rname: str, set_: dict, delete: list[str]) -> bool:
    """Whether a DescribeConfigs answer already shows an IncrementalAlterConfigs: every set
    key has its new value (from any source: Tansu labels what it stores DEFAULT_CONFIG) and
    no deleted key is still set on the entity itself."""
    values = {(c.name, c.value) for c in result.configs}
    own = own_configs(result, rtype, rname)
    return all((k, str(v)) in values for k, v in set_.items()) \
        and not any(k in own for k in delete)


# ---- the gateway ----------------------------------------------------------------------------
class _AskAfresh(Exception):
    """The client's view of the cluster is stale: _call asks once more on a fresh client."""


class _LastError(logging.Handler):
    """Keeps kafka-python's last connection error, the cause behind a bootstrap timeout,
    and the first refusal no retry cures: bad SASL credentials or an untrusted certificate
    (kafka-python retries them until its timeout, and Kafka answers repeated failed logins
    by just closing the socket, which would hide the cause). Records from threads that ran
    before this attempt began (an earlier attempt's client, still retrying) are not its own."""

    REFUSALS = ("SaslAuthenticationFailedError", "CERTIFICATE_VERIFY_FAILED")

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.last: str | None = None
        self.refused: str | None = None
        self.before = {t.ident for t in threading.enumerate()}

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.startswith("kafka.net.connection") and record.thread not in self.before:
            self.last = record.getMessage().rsplit(">: ", 1)[-1]
            if self.refused is None and any(r in self.last for r in self.REFUSALS):
                cause = self.last.removeprefix("Connection lost: ")
                self.refused = re.sub(r"\b(\w+: )\1", r"\1", cause)  # "X: X: why" -> "X: why"


class KafkaGateway:
    """ClusterGateway over a Kafka cluster. Connects on first use and again after a
    failure, so a dashboard started before its cluster comes up recovers by itself."""

    def __init__(self, conn: KafkaConnection, cluster: str = "kafka",
                 metrics: MetricsClient | None = None) -> None:
        self.conn, self.cluster, self.metrics = conn, cluster, metrics
        self.what = f"Kafka at {conn.servers}"
        self.timeout_ms = int(conn.timeout_seconds * 1000)
        self.notes: list[str] = []  # what the last assignment() could not learn
        self._admin: KafkaAdminClient | None = None
        self._failed: tuple[float, Unavailable] | None = None  # (until, why) after a failure
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"KafkaGateway({self.conn.servers}, {self.conn.security_protocol})"

    def close(self) -> None:
        with self._lock:
            admin, self._admin = self._admin, None
        if admin is not None:
            admin.close()

    # -- sending --
    def _client(self) -> KafkaAdminClient:
        """The connected client. After a failed connection, calls within the next
        ``timeout_seconds`` fail at once with the same error instead of each waiting out
        the timeout again (a page asks several questions per refresh)."""
        with self._lock:
            if self._admin is None:
                if self._failed is not None and time.monotonic() < self._failed[0]:
                    raise self._failed[1]
                try:
                    self._admin = self._connect()
                except Unavailable as e:
                    self._failed = (time.monotonic() + self.conn.timeout_seconds, e)
                    raise
                self._failed = None
            return self._admin

    def _connect(self) -> KafkaAdminClient:
        """A new client, with a hard deadline: kafka-python 3.0 waits forever for a TLS
        handshake the server never completes, so it connects on a thread of its own (left
        behind, as a daemon, when it does not return)."""
        kwargs = self.conn.admin_kwargs()  # BadInput when a secret is missing
        seen, box = _LastError(), {}

        def build() -> None:
            try:
                box["admin"] = KafkaAdminClient(**kwargs)
            except Exception as e:  # handed to the caller below
                box["error"] = e

        logging.getLogger("kafka").addHandler(seen)
        try:
            worker = threading.Thread(target=build, name="railyard-kafka-connect", daemon=True)
            worker.start()
            deadline = time.monotonic() + self.conn.timeout_seconds + CONNECT_GRACE_SECONDS
            while worker.is_alive() and seen.refused is None and time.monotonic() < deadline:
                worker.join(0.05)
        finally:
            logging.getLogger("kafka").removeHandler(seen)
        if seen.refused is not None and "admin" not in box:  # the worker gives up by itself
            raise Unavailable(self.what, f"{self.conn.security_protocol} connection refused: "
                              f"{seen.refused}")
        cause = f" (last error: {seen.last})" if seen.last else ""
        if worker.is_alive():
            raise Unavailable(self.what, f"no answer within {self.conn.timeout_seconds:g} s "
                              f"while connecting ({self.conn.security_protocol}){cause}")
        e = box.get("error")
        if isinstance(e, Errors.KafkaError):
            raise Unavailable(self.what, f"{_describe(e)}{cause}")
        if isinstance(e, OSError | ValueError):  # bad TLS files, unresolvable names
            raise Unavailable(self.what, f"{type(e).__name__}: {e}")
        if e is not None:
            raise e
        return box["admin"]

    def _call(self, api: str, fn: Callable[[KafkaAdminClient], Any], read: bool = False) -> Any:
        """Run ``fn`` with the client; Kafka's failures become one-line Unavailable. Asked
        once more on a fresh client:
        - a broker the client's metadata does not know yet (one that just came back):
          kafka-python raises UnknownBrokerIdError before it sends anything (net/manager.py
          get_connection), so nothing is sent twice;
        - a ``read`` whose broker went away: the fresh client's metadata names only live
          brokers, and in KRaft the "controller" a client sends to is any one of them
          (Kafka's KRaftMetadataCache.getControllerId: a random alive broker), so a
          stopped broker is not asked again. A write is not resent: the lost connection
          may have delivered it."""
        try:
            return self._call_once(api, fn, read=read)
        except _AskAfresh:
            self.close()
            return self._call_once(api, fn, retry=False)

    def _call_once(self, api: str, fn: Callable[[KafkaAdminClient], Any],
                   retry: bool = True, read: bool = False) -> Any:
        admin = self._client()
        try:
            return fn(admin)
        except Errors.IncompatibleBrokerVersion:
            raise Unavailable(self.what, f"the broker does not support {api}") from None
        except (Errors.KafkaError, OSError) as e:
            if retry and (isinstance(e, Errors.UnknownBrokerIdError)
                          or (read and isinstance(e, Errors.KafkaConnectionError))):
                raise _AskAfresh from e
            if not isinstance(e, Errors.BrokerResponseError):
                self.close()  # a lost connection: start afresh next time
            raise Unavailable(self.what, f"{api} failed: {_describe(e)}") from None

    def _send(self, api: str, request: Any, node_id: int | None = None,
              controller: bool = False, read: bool = False) -> Any:
        async def go(admin: KafkaAdminClient):
            if controller:
                return await admin._send_request_to_controller(request)
            return await admin._manager.send(request, node_id=node_id)
        return self._call(api, lambda admin: admin._manager.run(go, admin), read=read)

    def _refused(self, api: str, code: int, message: str | None = None) -> None:
        """A read the cluster refused as a whole: the page shows it as a banner."""
        name, msg = error_of(code, message)
        if name is not None:
            raise Unavailable(self.what, f"{api} refused: {name}: {msg}")

    def _rejected(self, api: str, code: int, message: str | None = None) -> None:
        """A write the cluster refused: GatewayError with Kafka's error name."""
        name, msg = error_of(code, message)
        if name is not None:
            raise GatewayError(name, f"{api} on {self.conn.servers}: {msg}")

    # -- reads --
    def describe_cluster(self) -> dict:
        meta = self._call("DescribeCluster", lambda a: a.describe_cluster(), read=True)
        ctrl = meta.get("controller_id", -1)
        return {"cluster": meta.get("cluster_id"),
                "controller": ctrl if ctrl is not None and ctrl >= 0 else None,
                "brokers": sorted(({"id": b["broker_id"], "rack": b.get("rack"),
                                    "alive": not b.get("is_fenced", False)}
                                   for b in meta["brokers"]), key=lambda b: b["id"])}

    def describe_topics(self, names: list[str] | None = None,
                        missing_ok: bool = False) -> list[dict]:
        if names is not None and not names:
            return []  # an empty list would read like None, every topic, to some clients
        topics = self._call("Metadata", lambda a: a.describe_topics(names), read=True)
        out = []
        for t in sorted(topics, key=lambda t: t["name"]):
            err, msg = error_of(t["error_code"])
            missing = err in _NO_SUCH_TOPIC
            if missing and missing_ok:
                continue
            if missing:
                raise BadInput(f"no topic '{t['name']}' on {self.conn.servers}")
            if err is not None:
                raise Unavailable(self.what, f"Metadata for topic '{t['name']}': {err}: {msg}")
            out.append({"name": t["name"], "internal": bool(t.get("is_internal")),
                        "partitions": [{"partition": p["partition_index"],
                                        "leader": p["leader_id"],
                                        "replicas": list(p["replica_nodes"]),
                                        "isr": list(p["isr_nodes"])}
                                       for p in sorted(t["partitions"],
                                                       key=lambda p: p["partition_index"])]})
        return out

    def describe_configs(self, entity_type: str, name: str) -> dict:
        """Only the configs set on the entity itself (what the executor records and puts
        back); defaults and static server.properties values are left out."""
        rtype, rname = resource(entity_type, name)
        return {"entity_type": entity_type, "name": name,
                "configs": own_configs(self._config_result(entity_type, name), rtype, rname)}

    def _config_result(self, entity_type: str, name: str, node: int | None = None) -> Any:
        """The DescribeConfigs result for one entity, every config with its source, from
        ``node`` (any broker when None; a broker's own configs always from that broker)."""
        rtype, rname = resource(entity_type, name)
        if rtype == BROKER and rname:
            node = self._broker_node(rname)
        resp = self._send("DescribeConfigs", describe_configs_request([(rtype, rname)]), node,
                          read=True)
        result = resp.results[0]
        err, msg = error_of(result.error_code, result.error_message)
        if err in _NO_SUCH_TOPIC:
            raise BadInput(f"no topic '{name}' on {self.conn.servers}")
        if err is not None:
            raise Unavailable(self.what, f"DescribeConfigs {entity_type} '{name}': {err}: {msg}")
        return result

    def find_configs(self, entity_type: str, keys: list[str]) -> dict[str, dict[str, str]]:
        """Topics: DescribeConfigs for FIND_BATCH topics at a time (all their configs:
        some brokers drop a request naming keys, Tansu among them); brokers: the default
        entity and each live broker (a broker answers for its own configs)."""
        keys = list(keys)
        if entity_type == "broker":
            names = [DEFAULT_BROKER] + [str(b["id"]) for b in self.describe_cluster()["brokers"]
                                        if b["alive"]]
            found = {n: self.describe_configs("broker", n)["configs"] for n in names}
        elif entity_type == "topic":
            names = [t["name"] for t in self.describe_topics()]
            found = {}
            for i in range(0, len(names), FIND_BATCH):
                resp = self._send("DescribeConfigs", describe_configs_request(
                    [(TOPIC, n) for n in names[i:i + FIND_BATCH]]), read=True)
                found.update({r.resource_name: own_configs(r, TOPIC, r.resource_name)
                              for r in resp.results if not r.error_code})  # deleted since
        else:
            raise BadInput(f"entity type must be 'broker' or 'topic', got '{entity_type}'")
        got = {n: {k: cfg[k] for k in keys if k in cfg} for n, cfg in found.items()}
        return {n: cfg for n, cfg in sorted(got.items()) if cfg}

    def _broker_node(self, rname: str) -> int:
        """Broker configs are answered by that broker: BadInput for an id not in the
        cluster (as kafka-configs refuses it)."""
        ids = [b["id"] for b in self.describe_cluster()["brokers"]]
        if int(rname) not in ids:
            raise BadInput(f"no broker {rname} on {self.conn.servers} (brokers: "
                           f"{', '.join(map(str, ids))})")
        return int(rname)

    def describe_client_quotas(self) -> list[dict]:
        return self._quotas(None)

    def _quotas(self, node: int | None) -> list[dict]:
        """DescribeClientQuotas answered by ``node`` (any broker when None)."""
        resp = self._send("DescribeClientQuotas", describe_client_quotas_request(), node,
                          read=True)
        self._refused("DescribeClientQuotas", resp.error_code, resp.error_message)
        return quotas_from(resp)

    def list_reassignments(self) -> list[dict]:
        resp = self._send("ListPartitionReassignments",
                          ListPartitionReassignmentsRequest(timeout_ms=self.timeout_ms,
                                                            topics=None), controller=True,
                          read=True)
        self._refused("ListPartitionReassignments", resp.error_code, resp.error_message)
        return reassignments_from(resp)

    def assignment(self) -> Snapshot:
        """Brokers, racks and replicas from the cluster; the reassignments in flight
        (ListPartitionReassignments, so a plan is computed against each moving partition's
        target); retention.ms per topic; each partition's log size (DescribeLogDirs,
        largest replica) and write rate (the topic's Prometheus bytes-in spread evenly over
        its partitions) when known, else 0 with a line in ``notes`` saying why."""
        notes: list[str] = []
        brokers = self.describe_cluster()["brokers"]
        moving = tuple(self.list_reassignments())  # before Metadata: none ends unseen
        topics = self.describe_topics()
        snap = topics_snapshot(self.cluster, topics, brokers)
        named = sorted(set(snap.broker_ids.tolist()) - {b["id"] for b in brokers})
        if named:
            notes.append(f"replicas name brokers the cluster does not list: {named}")
        sizes = self._log_sizes(notes)
        rates = self._topic_rates(notes)
        names = [t["name"] for t in topics]
        parts = [(t["name"], p["partition"], len(t["partitions"]))
                 for t in topics for p in t["partitions"]]
        snap = replace(
            snap, in_flight=moving,
            topic_retention_ms=np.asarray(self._retention(names, notes), np.int64),
            part_size=np.array([sizes.get((n, p), 0) for n, p, _ in parts], np.int64),
            part_rate=np.array([rates.get(n, 0.0) / count for n, _, count in parts],
                               np.float64), notes=tuple(notes))
        self.notes = notes  # set after a whole read only (`railyard snapshot capture`)
        return snap

    def topics_assignment(self, names: list[str]) -> Snapshot:
        """One Metadata request for the named topics (not the cluster's), as a snapshot."""
        return topics_snapshot(self.cluster, self.describe_topics(names, missing_ok=True))

    def group_lags(self, topic: str) -> dict[str, int]:
        """ListGroups (every broker), OffsetFetch for the groups found, ListOffsets for the
        topic's ends: each group's lag on ``topic`` (``lags_from``)."""
        listed = self._call("ListGroups", lambda a: a.list_groups(), read=True)
        ids = sorted({g["group_id"] for g in listed if g.get("group_type") != "share"})
        if not ids:
            return {}
        committed = self._call("OffsetFetch", lambda a: a.list_group_offsets(ids), read=True)
        found = self.describe_topics([topic], missing_ok=True)
        if not found:
            return {}
        parts = [TopicPartition(topic, p["partition"]) for p in found[0]["partitions"]]

        def offsets(spec: OffsetSpec) -> dict[int, int]:
            got = self._call("ListOffsets", lambda a: a.list_partition_offsets(
                dict.fromkeys(parts, spec)), read=True)
            return {tp.partition: o.offset for tp, o in got.items()}
        return lags_from(topic, {g: {(tp.topic, tp.partition): o.offset
                                     for tp, o in offs.items()}
                                 for g, offs in committed.items()},
                         offsets(OffsetSpec.LATEST), offsets(OffsetSpec.EARLIEST))

    def _log_sizes(self, notes: list[str]) -> dict[tuple[str, int], int]:
        sizes: dict[tuple[str, int], int] = {}
        try:
            for node in [b["id"] for b in self.describe_cluster()["brokers"] if b["alive"]]:
                resp = self._send("DescribeLogDirs", DescribeLogDirsRequest(topics=None), node,
                                  read=True)
                for topic, pid, size in log_sizes_from(resp):
                    sizes[(topic, pid)] = max(sizes.get((topic, pid), 0), size)
        except Unavailable as e:
            notes.append(f"log sizes unknown (0): {e}")
            return {}
        return sizes

    def replica_sizes(self, wanted: dict[int, list[tuple[str, int]]]
                      ) -> dict[tuple[str, int, int], int]:
        """DescribeLogDirs of the partitions ``wanted`` names per broker, sent to those
        brokers only (each answers for its own logs): Unavailable when one does not
        answer or refuses, as a whole."""
        sizes: dict[tuple[str, int, int], int] = {}
        for node, partitions in sorted(wanted.items()):
            if not partitions:
                continue
            resp = self._send("DescribeLogDirs", describe_log_dirs_request(partitions),
                              int(node), read=True)
            self._refused("DescribeLogDirs", resp.error_code)
            sizes.update({(topic, pid, int(node)): size
                          for topic, pid, size in log_sizes_from(resp)})
        return sizes

    def _retention(self, names: list[str], notes: list[str]) -> list[int]:
        if not names:
            return []
        try:
            resp = self._send("DescribeConfigs", describe_configs_request(
                [(TOPIC, n) for n in names], ["retention.ms"]), read=True)
        except Unavailable as e:
            notes.append(f"retention.ms unknown (Kafka's default used): {e}")
            return [DEFAULT_RETENTION_MS] * len(names)
        found = {r.resource_name: c.value for r in resp.results for c in r.configs
                 if c.name == "retention.ms" and c.value is not None}
        return [int(found[n]) if n in found and found[n].lstrip("-").isdigit()
                else DEFAULT_RETENTION_MS for n in names]

    def _topic_rates(self, notes: list[str]) -> dict[str, float]:
        if self.metrics is None:
            notes.append("write rates unknown (0): no Prometheus configured for this cluster")
            return {}
        from backend.metrics.client import MetricsError
        try:
            frame = self.metrics.instant("bytes_in_per_topic")
        except MetricsError as e:
            notes.append(f"write rates unknown (0): {e}")
            return {}
        return dict(zip(frame["topic"], frame["value"].astype(float), strict=True))

    # -- writes --
    def alter_configs(self, entity_type: str, name: str, set_: dict | None = None,
                      delete: list[str] | None = None) -> dict:
        request = incremental_alter_configs_request(entity_type, name, set_, delete)
        rtype, rname = resource(entity_type, name)
        node = self._broker_node(rname) if rtype == BROKER and rname else None
        resp = self._send("IncrementalAlterConfigs", request, node)
        r = resp.responses[0]
        err, msg = error_of(r.error_code, r.error_message)
        if err in ("UNKNOWN_TOPIC_OR_PARTITION", "INVALID_CONFIG", "INVALID_REQUEST"):
            raise BadInput(f"{entity_type} '{name}': {err}: {msg}")
        self._rejected(f"IncrementalAlterConfigs {entity_type} '{name}'", r.error_code,
                       r.error_message)
        return self._read_back(entity_type, name, set_ or {}, delete or [])

    def _read_back(self, entity_type: str, name: str, set_: dict, delete: list[str]) -> dict:
        """describe_configs once every broker that may answer it shows the write just
        accepted. In KRaft the controller commits an alter before answering, but each
        broker applies it from the metadata log a moment later: read at once, Apache Kafka
        4.1 showed the values from before the write (on topics and the default entity,
        about one alter in two), and any broker may answer the next read (the executor's
        record of a prior value among them). Polls up to ``timeout_seconds``; after that
        (a sensitive key reads back as null) answers what was read, the write being
        accepted."""
        rtype, rname = resource(entity_type, name)
        pending = [None] if rtype == BROKER and rname else self._live_nodes()
        deadline = time.monotonic() + self.conn.timeout_seconds
        result = None
        while True:
            for node in list(pending):
                result = self._config_result(entity_type, name, node)
                if shows_write(result, rtype, rname, set_, delete):
                    pending.remove(node)
            if not pending or time.monotonic() >= deadline:
                break
            time.sleep(READ_BACK_POLL_SECONDS)
        return {"entity_type": entity_type, "name": name,
                "configs": own_configs(result, rtype, rname)}

    def _live_nodes(self) -> list[int]:
        return [b["id"] for b in self.describe_cluster()["brokers"] if b["alive"]]

    def alter_reassignments(self, plan: dict) -> dict:
        moves = reassignment_moves(plan)
        return self._reassign(moves, "started")

    def cancel_reassignments(self, partitions: list[tuple[str, int]] | None = None) -> dict:
        if partitions is None:
            partitions = [(r["topic"], r["partition"]) for r in self.list_reassignments()]
        if not partitions:
            return {"cancelled": []}
        out = self._reassign({(t, p): None for t, p in partitions}, "cancelled")
        return {"cancelled": out["cancelled"]}

    def _reassign(self, moves: dict, done: str) -> dict:
        resp = self._send("AlterPartitionReassignments",
                          alter_reassignments_request(moves, self.timeout_ms), controller=True)
        self._rejected("AlterPartitionReassignments", resp.error_code, resp.error_message)
        ok, failed = reassign_outcome(resp, cancelling=done == "cancelled")
        if failed:
            key, code, message = failed[0]
            more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
            self._rejected(f"AlterPartitionReassignments {key}{more}", code, message)
        return {"started": [], "cancelled": [], done: ok}

    def principal(self) -> tuple[str | None, str]:
        """This connection's KafkaPrincipal name and client id: the SASL user name (PLAIN
        and SCRAM's default principal), ANONYMOUS without authentication; with a TLS
        client certificate the brokers' ssl.principal.mapping.rules name it, so None."""
        c = self.conn
        if c.sasl is not None:
            return c.sasl.username, c.client_id
        if c.tls is not None and c.tls.cert_file:
            return None, c.client_id
        return "ANONYMOUS", c.client_id

    def create_topics(self, topics: list[dict], user: str = "", client_id: str = "") -> list[dict]:
        """The connection's own principal is charged (KIP-599, ``principal``): ``user``
        and ``client_id`` only matter to the twin, which simulates several principals."""
        resp = self._send("CreateTopics", create_topics_request(topics, self.timeout_ms),
                          controller=True)
        return [_result(t.name, t.error_code, t.error_message, resp.throttle_time_ms)
                for t in resp.topics]

    def create_partitions(self, topic: str, total: int, user: str = "",
                          client_id: str = "") -> dict:
        resp = self._send("CreatePartitions",
                          create_partitions_request(topic, total, self.timeout_ms),
                          controller=True)
        r = resp.results[0]
        return _result(r.name, r.error_code, r.error_message, resp.throttle_time_ms)

    def delete_topics(self, names: list[str], user: str = "", client_id: str = "") -> list[dict]:
        """Answers in the order asked (the twin's order): Kafka's controller answers
        DeleteTopics in the order of a hash map."""
        resp = self._send("DeleteTopics", delete_topics_request(names, self.timeout_ms),
                          controller=True)
        asked = {n: i for i, n in reversed(list(enumerate(names)))}
        return [_result(r.name, r.error_code, getattr(r, "error_message", None),
                        resp.throttle_time_ms)
                for r in sorted(resp.responses, key=lambda r: asked.get(r.name, len(names)))]

    def alter_client_quota(self, user: str | None, client_id: str | None,
                           rate: float | None) -> dict:
        resp = self._send("AlterClientQuotas", alter_client_quotas_request(user, client_id,
                                                                           rate))
        e = resp.entries[0]
        self._rejected("AlterClientQuotas", e.error_code, e.error_message)
        # as for configs (_read_back): each broker applies the controller's record a
        # moment later, so a page reading quotas right after showed the old rate; wait
        # until every live broker shows the new one (up to timeout_seconds)
        pending = self._live_nodes()
        deadline = time.monotonic() + self.conn.timeout_seconds
        while True:
            pending = [n for n in pending
                       if not shows_quota(self._quotas(n), user, client_id, rate)]
            if not pending or time.monotonic() >= deadline:
                break
            time.sleep(READ_BACK_POLL_SECONDS)
        return {"user": user, "client_id": client_id, MUTATION_RATE: rate}


def lags_from(topic: str, committed: dict[str, dict[tuple[str, int], int]],
              ends: dict[int, int], starts: dict[int, int]) -> dict[str, int]:
    """Records each group has still to read of ``topic``, as kafka-consumer-groups
    --describe's LAG (LOG-END-OFFSET - CURRENT-OFFSET) summed over the partitions, for the
    groups with a committed offset on it; a partition such a group has none for counts
    from the log's start (what it would read under auto.offset.reset=earliest).
    ``committed``: group -> (topic, partition) -> offset (-1: none)."""
    out = {}
    for group, offsets in committed.items():
        mine = {p: o for (t, p), o in offsets.items() if t == topic and o >= 0}
        if mine:
            out[group] = sum(max(end - mine.get(p, starts.get(p, 0)), 0)
                             for p, end in ends.items())
    return dict(sorted(out.items()))


def topics_snapshot(cluster: str, topics: list[dict], brokers: list[dict] = ()) -> Snapshot:
    """describe_topics' answer as a snapshot of those topics alone: their replicas, leader
    first, on the ``brokers`` describe_cluster listed and any other broker a replica names
    (racks unknown for those); no log sizes or write rates."""
    partitions = [t["partitions"] for t in topics]
    counts = np.fromiter(map(len, partitions), np.int64, len(partitions))
    replicas = [p["replicas"] for p in chain.from_iterable(partitions)]
    lengths = np.fromiter(map(len, replicas), np.int64, len(replicas))
    flat = np.fromiter(chain.from_iterable(replicas), np.int64, int(lengths.sum()))
    ids = np.union1d(np.array([b["id"] for b in brokers], np.int64), flat)
    racks = {b["id"]: b.get("rack") for b in brokers}
    return Snapshot.build(cluster, ids, [racks.get(b) for b in ids.tolist()],
                          [t["name"] for t in topics],
                          np.repeat(np.arange(len(topics)), counts),
                          offsets_from_lengths(lengths), np.searchsorted(ids, flat),
                          topic_internal=[bool(t.get("internal")) for t in topics])


def _result(name: str, code: int, message: str | None, throttle_ms: int) -> dict:
    err, msg = error_of(code, message)
    return {"name": name, "error": err, "message": msg, "throttle_time_ms": throttle_ms}


def _describe(e: BaseException) -> str:
    """``ErrorName: message`` in one line, without kafka-python's '[Error N]' prefix."""
    text = " ".join(str(e).split())
    name = type(e).__name__
    return text if text.startswith(name) else f"{name}: {text}" if text else name
