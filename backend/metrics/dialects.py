"""Prometheus names a Kafka broker's metrics get under the two widely used JMX-exporter
rule sets: Strimzi's packaging/examples/metrics/kafka-metrics.yaml and Confluent's
jmx-monitoring-stacks shared-assets/jmx-exporter/kafka_broker.yml. The twin exports these
names and the PromQL catalog queries them, so both sides read them from here.

How the names arise from Kafka's MBeans:
- Strimzi lowercases names only: meters become ``..._bytesin_total`` (the ``PerSec``
  dropped), ``FetcherLagMetrics`` keeps its ``clientId`` label.
- Confluent lowercases names and label names; meters keep ``persec`` and have no
  ``_total``. Per-partition fetcher lag is ``kafka_server_fetcherlagmetrics_consumerlag``
  with ``clientid``, ``topic`` and ``partition`` labels: Confluent's rule for
  ``name=(.+), clientId=(.+), topic=(.+), partition=(.*)`` comes before its
  ``name, topic, partition`` rule since jmx-monitoring-stacks' April 2023 rules (before
  that the clientId was folded into the name, ``..._consumerlag_clientid_<fetcher>``,
  which Railyard no longer queries).
- The guard-rail metrics (KIP-73 byte-rate, KIP-599 ControllerMutation) are exported by
  neither; deploy/jmx-exporter/ ships the rules that give them the names below. Confluent's
  current exclude list no longer hides ``kafka.server`` beans, so appending those rules is
  enough there.
- On KRaft the controller never records ControllerMutation ``throttle-time`` (clients'
  requests reach it forwarded, and core .../RequestHandlerHelper.scala
  sendResponseMaybeThrottleWithControllerQuota throttles only non-forwarded ones): the
  broker that forwarded the request records the throttle the client was told in its
  ``kafka.server:type=Request`` ``throttle-time`` (sendForwardedResponse), which
  deploy/jmx-exporter/ exports as ``kafka_server_request_throttle_time``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Dialect:
    name: str
    bytes_in: str
    bytes_out: str
    replication_bytes_in: str
    replication_bytes_out: str
    reassignment_bytes_in: str
    reassignment_bytes_out: str
    counter_type: str  # how the meters are typed: "counter" or "unknown" (untyped)
    client_label: str  # FetcherLagMetrics / ReplicaFetcherManager clientId label
    partition_count: str = "kafka_server_replicamanager_partitioncount"
    leader_count: str = "kafka_server_replicamanager_leadercount"
    under_replicated: str = "kafka_server_replicamanager_underreplicatedpartitions"
    under_min_isr: str = "kafka_server_replicamanager_underminisrpartitioncount"
    reassigning: str = "kafka_server_replicamanager_reassigningpartitions"
    active_controller: str = "kafka_controller_kafkacontroller_activecontrollercount"
    offline_partitions: str = "kafka_controller_kafkacontroller_offlinepartitionscount"
    global_partitions: str = "kafka_controller_kafkacontroller_globalpartitioncount"
    log_size: str = "kafka_log_log_size"
    consumer_lag: str = "kafka_server_fetcherlagmetrics_consumerlag"
    max_lag: str = "kafka_server_replicafetchermanager_maxlag"
    leader_byte_rate: str = "kafka_server_leaderreplication_byte_rate"
    follower_byte_rate: str = "kafka_server_followerreplication_byte_rate"
    mutation_rate: str = "kafka_server_controllermutation_mutation_rate"
    mutation_tokens: str = "kafka_server_controllermutation_tokens"
    mutation_throttle_time: str = "kafka_server_controllermutation_throttle_time"
    # what a forwarding broker told the client (KRaft): type=Request throttle-time
    request_throttle_time: str = "kafka_server_request_throttle_time"


STRIMZI = Dialect(
    name="strimzi",
    bytes_in="kafka_server_brokertopicmetrics_bytesin_total",
    bytes_out="kafka_server_brokertopicmetrics_bytesout_total",
    replication_bytes_in="kafka_server_brokertopicmetrics_replicationbytesin_total",
    replication_bytes_out="kafka_server_brokertopicmetrics_replicationbytesout_total",
    reassignment_bytes_in="kafka_server_brokertopicmetrics_reassignmentbytesin_total",
    reassignment_bytes_out="kafka_server_brokertopicmetrics_reassignmentbytesout_total",
    counter_type="counter",
    client_label="clientId",
)

CONFLUENT = Dialect(
    name="confluent",
    bytes_in="kafka_server_brokertopicmetrics_bytesinpersec",
    bytes_out="kafka_server_brokertopicmetrics_bytesoutpersec",
    replication_bytes_in="kafka_server_brokertopicmetrics_replicationbytesinpersec",
    replication_bytes_out="kafka_server_brokertopicmetrics_replicationbytesoutpersec",
    reassignment_bytes_in="kafka_server_brokertopicmetrics_reassignmentbytesinpersec",
    reassignment_bytes_out="kafka_server_brokertopicmetrics_reassignmentbytesoutpersec",
    counter_type="unknown",
    client_label="clientid",
)

DIALECTS = {d.name: d for d in (STRIMZI, CONFLUENT)}
