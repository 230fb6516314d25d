"""Prometheus names a Kafka broker's metrics get under the two widely used JMX-exporter
rule sets (FACTS.md): Strimzi's kafka-metrics.yaml and Confluent's jmx-monitoring-stacks
kafka_broker.yml. The twin exports these names and the PromQL catalog queries them, so
both sides read them from here.

How the names arise from Kafka's MBeans:
- Strimzi lowercases names only: meters become ``..._bytesin_total`` (the ``PerSec``
  dropped), ``FetcherLagMetrics`` keeps its ``clientId`` label.
- Confluent lowercases names and label names; meters keep ``persec`` and have no
  ``_total``; its first rule (``name=(.+), topic=(.+), partition=(.+)``) swallows the
  fetcher's ``clientId=ReplicaFetcherThread-0-<leader>`` into the *name*, so consumer
  lag per partition is ``..._consumerlag_clientid_replicafetcherthread_0_<leader>``.
- The guard-rail metrics (KIP-73 byte-rate, KIP-599 ControllerMutation) are exported by
  neither; deploy/jmx-exporter/ ships the rules that give them the names below.
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
    lag_in_name: bool  # consumer lag's fetcher clientId folded into the metric name
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

    def consumer_lag_name(self, leader_id: int) -> str:
        """The series name of per-partition fetcher lag from a fetcher of ``leader_id``."""
        if self.lag_in_name:
            return f"{self.consumer_lag}_clientid_replicafetcherthread_0_{leader_id}"
        return self.consumer_lag

    @property
    def consumer_lag_selector(self) -> str:
        """A PromQL selector matching every per-partition fetcher lag series."""
        if self.lag_in_name:
            return f'{{__name__=~"{self.consumer_lag}_clientid_.+"}}'
        return self.consumer_lag


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
    lag_in_name=False,
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
    lag_in_name=True,
)

DIALECTS = {d.name: d for d in (STRIMZI, CONFLUENT)}
