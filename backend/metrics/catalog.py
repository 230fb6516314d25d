"""Every PromQL query Railyard runs, keyed by concept, for both naming dialects.

Templates name metrics through the dialect (backend.metrics.dialects), so one concept is
one query whichever rule set the cluster's JMX exporter uses. ``by`` is the label that
identifies a broker in the scrape config (``broker`` for the twin and `railyard
prometheus up`; often ``instance`` or ``pod`` elsewhere); ``window`` is the rate window.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from backend.errors import BadInput
from backend.metrics.dialects import DIALECTS, Dialect


@dataclass(frozen=True)
class Concept:
    template: str
    labels: tuple[str, ...]  # label columns of the answer ("{by}" = the broker label)
    unit: str
    help: str


def _counter_rate(metric: str, selector: str = "") -> str:
    return f"sum by ({{by}}) (rate({{d.{metric}}}{selector}[{{window}}]))"


def _most_at_once(metric: str, by: str = "") -> str:
    """The most of the summed gauge within the window, read on a 15 s grid (``by``: " by
    ({by}) " for each broker's, "" for the cluster's)."""
    return f"max_over_time((sum{by}({{d.{metric}}}))[{{window}}:15s])"


CATALOG: dict[str, Concept] = {
    # ---- partitions and replicas (KIP-578 guard rail) ------------------------------------
    "partitions_per_broker": Concept(
        "sum by ({by}) ({d.partition_count})", ("{by}",), "replicas",
        "Partition replicas hosted per broker (ReplicaManager PartitionCount)"),
    "leaders_per_broker": Concept(
        "sum by ({by}) ({d.leader_count})", ("{by}",), "partitions", "Leaders per broker"),
    # every KRaft controller publishes GlobalPartitionCount and OfflinePartitionsCount
    # (metadata .../controller/metrics/ControllerMetadataMetricsPublisher.java runs on each
    # one; only ZooKeeper mode zeroed them on inactive controllers): a sum would count the
    # cluster once per controller, so one controller's value (the highest) stands for it
    "cluster_partitions": Concept(
        "max({d.global_partitions})", (), "partitions",
        "Partitions in the cluster (GlobalPartitionCount, one controller's)"),
    "cluster_replicas": Concept(
        "sum({d.partition_count})", (), "replicas", "Partition replicas in the cluster"),
    "partitions_per_broker_peak": Concept(
        "max_over_time((sum by ({by}) ({d.partition_count}))[{window}:5m])", ("{by}",),
        "replicas", "Most partition replicas each broker hosted over the window (its daily "
        "peak with a 1d window): the history capacity forecasts fit"),
    "cluster_replicas_peak": Concept(
        "max_over_time((sum({d.partition_count}))[{window}:5m])", (), "replicas",
        "Most partition replicas the cluster hosted over the window (max.partitions counts "
        "replicas)"),
    "partitions_per_broker_in_14d": Concept(
        "predict_linear((sum by ({by}) ({d.partition_count}))[{window}:5m], 14 * 86400)",
        ("{by}",), "replicas", "Partition replicas per broker in 14 days at the growth of "
        "the window (Prometheus' least-squares predict_linear)"),
    "cluster_replicas_in_14d": Concept(
        "predict_linear((sum({d.partition_count}))[{window}:5m], 14 * 86400)", (), "replicas",
        "Partition replicas in the cluster in 14 days at the growth of the window"),
    # ---- health --------------------------------------------------------------------------
    "brokers_up": Concept("sum by ({by}) (up)", ("{by}",), "bool",
                          "1 when the broker's exporter answered the last scrape"),
    "under_replicated_per_broker": Concept(
        "sum by ({by}) ({d.under_replicated})", ("{by}",), "partitions",
        "Under-replicated partitions led by each broker"),
    "under_min_isr_per_broker": Concept(
        "sum by ({by}) ({d.under_min_isr})", ("{by}",), "partitions",
        "Partitions below min.insync.replicas led by each broker"),
    "reassigning_per_broker": Concept(
        "sum by ({by}) ({d.reassigning})", ("{by}",), "partitions",
        "Partitions being reassigned, counted by their leader"),
    # the cluster's most over the window (``window`` = a chart's step), read on a 15 s grid
    # (components.timerange.GRID, the finest step a chart takes, and a common scrape
    # interval): an outage of minutes falls between the points of a 7-day chart (one every
    # 42 min). The most of the cluster's sum, not the sum of each broker's most: brokers
    # peaking minutes apart were never under-replicated together
    "under_replicated_peak": Concept(
        _most_at_once("under_replicated"), (), "partitions",
        "Most under-replicated partitions in the cluster at once over the window"),
    "under_min_isr_peak": Concept(
        _most_at_once("under_min_isr"), (), "partitions",
        "Most partitions below min.insync.replicas at once over the window"),
    "reassigning_peak": Concept(
        _most_at_once("reassigning"), (), "partitions",
        "Most partitions being reassigned at once over the window"),
    # each broker's most (the incident report's per-leader charts and its leaders reporting)
    "under_replicated_peak_per_broker": Concept(
        _most_at_once("under_replicated", " by ({by}) "), ("{by}",),
        "partitions", "Most under-replicated partitions each broker led over the window"),
    "under_min_isr_peak_per_broker": Concept(
        _most_at_once("under_min_isr", " by ({by}) "), ("{by}",),
        "partitions", "Most partitions below min.insync.replicas each broker led over the "
        "window"),
    "reassigning_peak_per_broker": Concept(
        _most_at_once("reassigning", " by ({by}) "), ("{by}",),
        "partitions", "Most partitions being reassigned each broker led over the window"),
    "offline_partitions_peak": Concept(
        "max(max_over_time({d.offline_partitions}[{window}]))", (), "partitions",
        "Most partitions without a leader over the window (one controller's count)"),
    # where a cluster's data ends, when a window's end shows none: {window} is a subquery's
    # "range:resolution" (timestamp() of a *_over_time result would be the query time)
    "newest_sample": Concept("max(max_over_time(timestamp(up)[{window}]))", (), "s",
                             "When Prometheus last scraped any broker (epoch seconds)"),
    "active_controllers": Concept("sum({d.active_controller})", (), "brokers",
                                  "Active controllers (1 when healthy)"),
    "offline_partitions": Concept("max({d.offline_partitions})", (), "partitions",
                                  "Partitions without a leader (one controller's count)"),
    # ---- traffic -------------------------------------------------------------------------
    # per broker from the all-topics meter (the series without a topic label; Kafka marks
    # it with every topic's): 100 series at 200k partitions instead of 58k per-topic ones
    # (3.4 s against 9-17 s for one instant query on a busy 2-core machine)
    "bytes_in_per_broker": Concept(_counter_rate("bytes_in", '{{topic=""}}'), ("{by}",),
                                   "bytes/s", "Produce bytes/s per broker (all topics)"),
    "bytes_in_per_topic": Concept(
        'sum by (topic) (rate({d.bytes_in}{{topic!=""}}[{window}]))', ("topic",), "bytes/s",
        "Produce bytes/s per topic"),
    # the same for the topics named in ``topics`` only (a regex alternation): whether
    # producers still write to a shrink migration's old topic, without every topic's series
    "bytes_in_of_topics": Concept(
        'sum by (topic) (rate({d.bytes_in}{{topic=~"{topics}"}}[{window}]))', ("topic",),
        "bytes/s", "Produce bytes/s of the named topics"),
    "bytes_out_per_broker": Concept(_counter_rate("bytes_out", '{{topic=""}}'), ("{by}",),
                                    "bytes/s", "Consumer fetch bytes/s per broker"),
    "replication_bytes_in_per_broker": Concept(
        _counter_rate("replication_bytes_in"), ("{by}",), "bytes/s",
        "Follower fetch bytes/s received per broker"),
    "replication_bytes_out_per_broker": Concept(
        _counter_rate("replication_bytes_out"), ("{by}",), "bytes/s",
        "Replication bytes/s sent per broker"),
    "reassignment_bytes_in_per_broker": Concept(
        _counter_rate("reassignment_bytes_in"), ("{by}",), "bytes/s",
        "Reassignment bytes/s received per broker"),
    "reassignment_bytes_out_per_broker": Concept(
        _counter_rate("reassignment_bytes_out"), ("{by}",), "bytes/s",
        "Reassignment bytes/s sent per broker"),
    # ---- replication throttles (KIP-73) -------------------------------------------------------
    "leader_throttled_rate": Concept(
        "sum by ({by}) ({d.leader_byte_rate})", ("{by}",), "bytes/s",
        "Throttled replication bytes/s sent (LeaderReplication byte-rate)"),
    "follower_throttled_rate": Concept(
        "sum by ({by}) ({d.follower_byte_rate})", ("{by}",), "bytes/s",
        "Throttled replication bytes/s fetched (FollowerReplication byte-rate)"),
    "replica_lag_sum_per_broker": Concept(
        "sum by ({by}) ({d.consumer_lag})", ("{by}",), "messages",
        "KIP-73's SumReplicaLag, derived: FetcherLagMetrics ConsumerLag summed per broker"),
    "max_lag_growth_per_broker": Concept(
        "deriv((max by ({by}) ({d.max_lag}))[{window}:1m])", ("{by}",), "messages/s",
        "How fast each broker's MaxLag grows over the window (> 0: followers fall behind)"),
    "max_lag_per_broker": Concept(
        "max by ({by}) ({d.max_lag})", ("{by}",), "messages",
        "ReplicaFetcherManager MaxLag per broker"),
    "log_bytes_per_broker": Concept(
        "sum by ({by}) ({d.log_size})", ("{by}",), "bytes", "Log bytes stored per broker"),
    "replica_bytes_behind": Concept(
        "sum(max by (topic, partition) ({d.log_size}) - on (topic, partition) group_right "
        "{d.log_size})", (), "bytes",
        "Bytes replicas still have to copy: each replica's log below its partition's largest "
        "(what reassignments and catching-up followers have left)"),
    # the same over the topics named in ``topics`` (a regex alternation): the partitions in
    # flight, from the gateway. Prometheus then reads those topics' series only, not every
    # replica's (600k log-size series at 200k partitions: a minute per evaluation)
    "replica_bytes_behind_in": Concept(
        'max by (topic, partition) ({d.log_size}{{topic=~"{topics}"}}) - on (topic, partition) '
        'group_right {d.log_size}{{topic=~"{topics}"}}', ("{by}", "topic", "partition"),
        "bytes", "Bytes each replica of the named topics still has to copy (its log below its "
        "partition's largest)"),
    # ---- controller mutation quota (KIP-599) ------------------------------------------------
    "mutation_tokens": Concept(
        "max by (user, client_id) ({d.mutation_tokens})", ("user", "client_id"), "tokens",
        "Tokens left per principal (< 0: throttled)"),
    "mutation_rate": Concept(
        "max by (user, client_id) ({d.mutation_rate})", ("user", "client_id"),
        "partitions/s", "Partition mutations/s per principal"),
    # over a whole window (``window`` = its length): a throttle lasts seconds, and a
    # principal throttled at 02:14 counts in a review of 02:00-03:00 though not at 03:00
    "mutation_tokens_low": Concept(
        "min by (user, client_id) (min_over_time({d.mutation_tokens}[{window}]))",
        ("user", "client_id"), "tokens", "Fewest tokens per principal over the window"),
    # KRaft controllers never record ControllerMutation throttle-time (NaN: requests reach
    # them forwarded, core .../RequestHandlerHelper.scala throttles only non-forwarded
    # ones); the forwarding broker records what it told the client in its Request
    # throttle-time (sendForwardedResponse). ">= 0" drops NaN, so either source counts.
    "mutation_throttle_time_high": Concept(
        "max by (user, client_id) (max_over_time({d.mutation_throttle_time}[{window}]) >= 0 "
        "or max_over_time({d.request_throttle_time}[{window}]) >= 0)",
        ("user", "client_id"), "ms", "Largest throttle time per principal over the window"),
    "mutation_throttle_time": Concept(
        "max by (user, client_id) ({d.mutation_throttle_time} >= 0 "
        "or {d.request_throttle_time} >= 0)", ("user", "client_id"), "ms",
        "Average throttle time per principal"),
}

OVERVIEW = ("brokers_up", "partitions_per_broker", "under_replicated_per_broker",
            "under_min_isr_per_broker", "reassigning_per_broker", "offline_partitions",
            "leader_throttled_rate", "follower_throttled_rate", "max_lag_per_broker",
            "mutation_tokens")
"""The guard-rail overview a page shows first (backend.services.monitoring). Lag comes as
MaxLag here: summing per-partition fetcher lag touches every follower's series (seconds
at 200k partitions), so replica_lag_sum_per_broker is for detail views."""


def dialect(name: str | Dialect) -> Dialect:
    if isinstance(name, Dialect):
        return name
    try:
        return DIALECTS[name]
    except KeyError:
        raise BadInput(f"unknown metrics dialect '{name}' (known: "
                       f"{', '.join(sorted(DIALECTS))})") from None


def concept(name: str) -> Concept:
    try:
        return CATALOG[name]
    except KeyError:
        raise BadInput(f"unknown metric concept '{name}'") from None


def promql(name: str, dialect_name: str | Dialect = "strimzi", window: str = "1m",
           by: str = "broker", topics: str = ".+") -> str:
    """The PromQL of a concept in a dialect (``topics``: a regex of topic names, for the
    concepts that take one)."""
    return concept(name).template.format(d=dialect(dialect_name), window=window, by=by,
                                         topics=topics)


def topic_regex(topics: Iterable[str]) -> str:
    """A PromQL ``=~`` alternation matching exactly these topics. Kafka's names are
    ``[a-zA-Z0-9._-]`` (org.apache.kafka.common.internals.Topic, LEGAL_CHARS): '.' is the
    one regex character among them. Not ``re.escape``: its ``\\-`` is no escape a PromQL
    string knows, and the whole query would fail to parse."""
    return "|".join(sorted({t.replace(".", "[.]") for t in topics}))


def label_columns(name: str, by: str = "broker") -> list[str]:
    return [lab.format(by=by) for lab in concept(name).labels]
