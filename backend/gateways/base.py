"""How Railyard reads and changes a cluster: one interface, implemented by the twin
(backend.twin.gateway), the twin's HTTP API (backend.gateways.twin_http) and a Kafka
admin-client gateway. ClusterReader is the read half, all the dashboard needs; a twin over
HTTP is a ClusterGateway only when it is given the twin's write token. Readers raise
backend.errors.Unavailable when the cluster does not answer.

Shapes follow Kafka's Admin API: replica lists and ISRs are broker ids, configs are
strings, per-topic results carry a Kafka error name (None when it succeeded), a message
and ``throttle_time_ms`` (KIP-599)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from backend.model.snapshot import Snapshot


@runtime_checkable
class ClusterReader(Protocol):
    def describe_cluster(self) -> dict:
        """{cluster, controller, brokers: [{id, rack, alive}]}"""

    def describe_topics(self, names: list[str] | None = None,
                        missing_ok: bool = False) -> list[dict]:
        """[{name, internal, partitions: [{partition, leader, replicas, isr}]}]: every
        topic, or only ``names`` (one Metadata request for them, not the whole cluster). A
        named topic the cluster does not have is BadInput, or left out with
        ``missing_ok`` (a plan's re-check then reports it deleted)."""

    def assignment(self) -> Snapshot:
        """The current assignment as a snapshot (log sizes and write rates as known)."""

    def topics_assignment(self, names: list[str]) -> Snapshot:
        """Only the named topics' replicas now, leader first, read from the cluster (a
        name it does not have is absent): what a plan's basis is re-checked on, a few
        topics instead of a 200k-partition cluster's whole assignment. Log sizes and write
        rates are not read (0 where the gateway does not have them at hand)."""

    def describe_configs(self, entity_type: str, name: str) -> dict:
        """{entity_type, name, configs: {key: value}} for 'broker' (id or '<default>') or
        'topic'."""

    def find_configs(self, entity_type: str, keys: list[str]) -> dict[str, dict[str, str]]:
        """{name: {key: value}} of every 'broker' ('<default>' included) or 'topic' with
        any of ``keys`` set on itself: one sweep of the cluster instead of one
        describe_configs per entity (leftover throttles on a 10k-topic cluster)."""

    def describe_client_quotas(self) -> list[dict]:
        """[{user, client_id, controller_mutation_rate}]: KIP-599 quota entities; None = not
        part of the entity, '<default>' = the default entity (Admin.describeClientQuotas)."""

    def list_reassignments(self) -> list[dict]:
        """[{topic, partition, replicas, adding, removing}]"""


# How long a broker's Metadata answer may trail the controller. In KRaft the controller
# answers CreateTopics and ListPartitionReassignments (brokers forward them) from its
# committed state; a broker learns of it by fetching the metadata log, so on a busy
# cluster its Metadata can miss a created topic, or show a finished move at its old
# replicas, for a while (Kafka's own tests wait for it: TestUtils.waitUntilTrue).
METADATA_LAG_SECONDS = 10.0
RAILYARD_CLIENT_ID = "railyard"  # the client id Railyard's requests carry unless configured
# how Kafka names a connection without authentication that carries the default client id
UNAUTHENTICATED = ("ANONYMOUS", RAILYARD_CLIENT_ID)


@runtime_checkable
class ClusterGateway(ClusterReader, Protocol):
    def principal(self) -> tuple[str | None, str]:
        """(user, client id) that KIP-599 charges this gateway's mutations to, as Kafka's
        quota callback sees them (DefaultQuotaCallback.quotaMetricTags); user None when
        only the brokers know it."""

    def alter_configs(self, entity_type: str, name: str, set_: dict | None = None,
                      delete: list[str] | None = None) -> dict:
        """Incremental alter; answers describe_configs' shape."""

    def alter_reassignments(self, plan: dict) -> dict:
        """Kafka's plan JSON {version, partitions}; {started: [...], cancelled: [...]}"""

    def cancel_reassignments(self, partitions: list[tuple[str, int]] | None = None) -> dict:
        """{cancelled: ["topic-partition", ...]}; all in flight when ``partitions`` is None."""

    def create_topics(self, topics: list[dict], user: str = "", client_id: str = "") -> list[dict]:
        """topics: [{name, partitions, rf}]; per topic {name, error, message, throttle_time_ms}"""

    def create_partitions(self, topic: str, total: int, user: str = "",
                          client_id: str = "") -> dict:
        """{name, error, message, throttle_time_ms}"""

    def delete_topics(self, names: list[str], user: str = "", client_id: str = "") -> list[dict]:
        """per topic {name, error, message, throttle_time_ms}"""

    def alter_client_quota(self, user: str | None, client_id: str | None,
                           rate: float | None) -> dict:
        """Set (``rate`` None: remove) one KIP-599 controller_mutation_rate quota; the
        entity as describe_client_quotas names it. {user, client_id,
        controller_mutation_rate}"""


@runtime_checkable
class PartitionDeleter(Protocol):
    """A cluster implementing the delete-partitions KIP (Apache Kafka does not: its
    Admin.createPartitions only adds partitions, and nothing removes one).
    Its describe_topics gives each partition the Metadata API's ``mode`` (ReadWrite,
    ReadOnly, None); a partition the cluster no longer lists was removed."""

    def partition_deletion_enabled(self) -> bool:
        """delete.topic.partition.enable: whether DeletePartitions is accepted."""

    def delete_partitions(self, topic: str, total: int, delay_ms: int, user: str = "",
                          client_id: str = "") -> dict:
        """DeletePartitions (kafka-topics --alter --partitions TOTAL
        --delete-partitions-delay MS): keep ``total`` partitions; {name, error, message,
        throttle_time_ms, partitions: [{partition, mode, error}]}"""


@runtime_checkable
class GroupReader(Protocol):
    """A cluster whose consumer groups' committed offsets Railyard can read (Apache Kafka;
    the twin models traffic, not groups)."""

    def group_lags(self, topic: str) -> dict[str, int]:
        """Records each consumer group with a committed offset on ``topic`` has still to
        read of it (kafka-consumer-groups --describe's LAG, summed): group -> records."""


@runtime_checkable
class ReplicaSizeReader(Protocol):
    """A cluster that reports each replica's log size on its broker (Apache Kafka's
    DescribeLogDirs, KIP-113; the twin): a replica a reassignment adds starts empty and
    its log grows as it copies, so its size is what the move has copied to it."""

    def replica_sizes(self, wanted: dict[int, list[tuple[str, int]]]
                      ) -> dict[tuple[str, int, int], int]:
        """{(topic, partition, broker): bytes} of the replicas ``wanted`` names per broker
        id (only those brokers are asked, and only of those partitions); a replica the
        broker does not report is absent."""


def can_delete_partitions(gw: ClusterReader) -> bool:
    """The capability a shrink's execution asks for: a gateway that implements the KIP's
    calls and a cluster that has them enabled."""
    return isinstance(gw, PartitionDeleter) and gw.partition_deletion_enabled()


# Kafka error codes a client retries (the request may succeed when sent again).
RETRIABLE = frozenset({"REQUEST_TIMED_OUT", "NOT_CONTROLLER", "REASSIGNMENT_IN_PROGRESS",
                       "BROKER_NOT_AVAILABLE", "LEADER_NOT_AVAILABLE", "NETWORK_EXCEPTION",
                       "THROTTLING_QUOTA_EXCEEDED", "CONCURRENT_TRANSACTIONS"})


class GatewayError(RuntimeError):
    """The cluster refused or failed a request: ``code`` is Kafka's error name. A caller
    in the middle of a run (the executor) retries the retriable ones with backoff."""

    def __init__(self, code: str, message: str = "") -> None:
        super().__init__(f"{code}: {message}" if message else code)
        self.code, self.message = code, message
        self.retriable = code in RETRIABLE
