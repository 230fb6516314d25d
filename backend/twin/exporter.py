"""Prometheus targets for the twin: one per simulated broker, with the names and labels a
real broker gets from the JMX-exporter rules of the chosen dialect (backend.metrics.dialects).

``broker_families`` reads one broker's figures straight from the twin's arrays.
``TwinCollector`` is a prometheus_client Collector over them; its ``exposition`` renders
the same families in the text format from cached label prefixes and vectorised values,
about 30x faster than prometheus_client's per-sample formatting, which is what keeps a
scrape of 200k partitions (600k log-size series) well under a second. The HTTP server
serves that text; a dead broker answers 503, so Prometheus records it as down; a request
addressed to another Host answers 421 (backend.twin.hosts).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer

import numpy as np
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from backend.metrics.dialects import Dialect
from backend.metrics.tags import client_label, user_label
from backend.twin.cluster import TwinCluster
from backend.twin.hosts import ServedHostsOnly


@dataclass
class Family:
    """One metric family of one broker: label columns and a value per series."""

    name: str  # the sample name (counters include _total where the dialect has it)
    kind: str  # gauge | counter | unknown
    help: str
    labels: tuple[str, ...]
    columns: list[list[str]] | Callable[[], list[list[str]]]  # label values per label
    prefixes: list[str] | None = None  # 'name{labels} ' per series (cached by the caller)
    values: np.ndarray = field(default_factory=lambda: np.zeros(0))
    integer: bool = False  # values are whole numbers (rendered without a decimal point)

    def __post_init__(self) -> None:
        if self.prefixes is None:
            self.prefixes = _prefixes(self.name, self.labels, self.label_columns())

    def label_columns(self) -> list[list[str]]:
        return self.columns() if callable(self.columns) else self.columns


@dataclass
class _Figures:
    """Cluster-wide per-broker figures, computed once per simulated instant for all brokers."""

    stamp: tuple[int, int]
    replicas_of: list[np.ndarray]  # replica indexes hosted by each broker position
    follower: np.ndarray  # bool per replica: an online partition's follower
    lag_msgs: np.ndarray  # float per replica
    gauges: dict[str, np.ndarray]  # per broker position
    sensors: dict[str, np.ndarray]  # bool per broker position: the byte-rate bean exists


def _figures(twin: TwinCluster) -> _Figures:
    st, snap = twin.state, twin.snap
    stamp = (twin.time_ms, twin.version)
    cached = st.derived.get("figures")
    if cached is not None and cached.stamp == stamp:
        return cached
    n_b, n_p = snap.n_brokers, snap.n_partitions
    rp, rb = snap.replica_partition, snap.replica_broker

    def structure():
        order = np.argsort(rb, kind="stable")
        bounds = np.concatenate(([0], np.cumsum(np.bincount(rb, minlength=n_b))))
        return [order[bounds[i]:bounds[i + 1]] for i in range(n_b)]

    replicas_of = st.cached("replicas_of", structure)
    follower = ~st.is_leader_replica & (st.replica_leader_broker >= 0)
    lag_msgs = np.floor(st.lag / twin.settings.message_bytes)
    isr_size = st.isr_size()
    adding = np.bincount(rp, weights=st.adding, minlength=n_p)
    moving = np.bincount(rp, weights=st.adding | st.removing, minlength=n_p) > 0
    min_isr = st.cached("min_isr", twin.min_isr)
    lead = np.maximum(st.leader, 0)
    online = st.leader >= 0

    def led(mask: np.ndarray) -> np.ndarray:
        return np.bincount(lead, weights=mask & online, minlength=n_b)

    max_lag = np.zeros(n_b)
    np.maximum.at(max_lag, rb[follower], lag_msgs[follower])
    active = twin.controller()
    ctrl = np.arange(n_b) == active
    # every KRaft controller (the first three brokers, as backend.localkafka runs them)
    # publishes the cluster-wide gauges, not only the active one
    # (metadata .../controller/metrics/ControllerMetadataMetricsPublisher.java)
    quorum = (np.arange(n_b) < QUORUM) | ctrl
    gauges = {
        "partition_count": np.bincount(rb, minlength=n_b).astype(float),
        "leader_count": led(np.ones(n_p, bool)),
        "under_replicated": led(isr_size < snap.replication_factors - adding),
        "under_min_isr": led(isr_size < min_isr[snap.part_topic]),
        "reassigning": led(moving),
        "active_controller": ctrl.astype(float),
        "offline_partitions": quorum * float((~online).sum()),
        "global_partitions": quorum * float(n_p),
        "max_lag": max_lag,
        "leader_byte_rate": twin.throttled_rate["leader"],
        "follower_byte_rate": twin.throttled_rate["follower"],
    }
    fig = _Figures(stamp, replicas_of, follower, lag_msgs, gauges, {
        key: _sensor_alive(st.derived, key, gauges[key], twin.time_ms)
        for key in ("leader_byte_rate", "follower_byte_rate")})
    st.derived["figures"] = fig
    return fig


QUORUM = 3  # controllers among the first brokers (combined broker+controller nodes)
SENSOR_EXPIRY_MS = 3600 * 1000  # ClientQuotaManager.InactiveSensorExpirationTimeSeconds


def _sensor_alive(derived: dict, key: str, rate: np.ndarray, now_ms: int) -> np.ndarray:
    """Whether each broker's KIP-73 byte-rate bean exists: Kafka creates a side's sensor on
    its first record (core .../ReplicationQuotaManager.scala record) and removes it after an
    hour without any (its sensor expiry). The leader side records every follower fetch
    (core .../KafkaApis.scala handleFetchRequest, replication.fetch_overhead_rate), so its
    bean exists wherever followers fetch; the follower side records throttled partitions'
    bytes only (core .../ReplicaFetcherThread.scala processPartitionData), so a throttle
    that is configured but idle has no follower series."""
    last = derived.setdefault(("throttle_seen_ms", key), np.full(len(rate), -1, np.int64))
    last[rate > 0] = now_ms
    return (last >= 0) & (now_ms - last < SENSOR_EXPIRY_MS)


_GAUGE_HELP = {
    "partition_count": "Partitions (replicas) on this broker",
    "leader_count": "Partitions this broker leads",
    "under_replicated": "Led partitions with fewer in-sync replicas than replicas",
    "under_min_isr": "Led partitions below min.insync.replicas",
    "reassigning": "Led partitions being reassigned",
    "active_controller": "1 on the active controller",
    "offline_partitions": "Partitions without a leader (every controller)",
    "global_partitions": "Partitions in the cluster (every controller)",
    "max_lag": "Largest follower lag on this broker, in messages",
    "leader_byte_rate": "KIP-73 leader side bytes/s: throttled bytes sent plus every "
                        "follower fetch's response overhead",
    "follower_byte_rate": "KIP-73 throttled bytes/s fetched (follower side)",
}


def broker_families(twin: TwinCluster, b: int, dialect: Dialect) -> list[Family]:
    """Every family broker position ``b`` exports now (call with ``twin.lock`` held)."""
    fig = _figures(twin)
    fams = []
    for key, help_ in _GAUGE_HELP.items():
        if key in fig.sensors and not fig.sensors[key][b]:
            continue
        labels, cols = ((dialect.client_label,), [["Replica"]]) if key == "max_lag" else ((), [])
        fams.append(Family(getattr(dialect, key), "gauge", help_, labels, cols,
                           values=np.array([fig.gauges[key][b]])))
    mine = fig.replicas_of[b]
    follower = mine[fig.follower[mine]]
    fams += _traffic(twin, b, dialect)
    fams += _per_partition(twin, b, dialect, mine, follower, fig.lag_msgs[follower])
    if fig.gauges["active_controller"][b]:
        fams += _mutation_quota(twin, dialect)
    return fams


def _traffic(twin: TwinCluster, b: int, dialect: Dialect) -> list[Family]:
    snap = twin.snap
    topics = np.flatnonzero(twin.state.meter_exists[b])
    names = [str(n) for n in snap.topic_names[topics]]
    heads = twin.state.cached(("topic_heads", dialect.name), lambda: {
        name: [f'{name}{{topic="{t}"}} ' for t in snap.topic_names]
        for name in (dialect.bytes_in, dialect.bytes_out)})
    by_topic = twin.state.bytes_in[b, topics]
    fanout = twin.settings.consumer_fanout
    out = []
    for name, per_topic, help_ in (
            (dialect.bytes_in, by_topic, "Produce bytes written to led partitions"),
            (dialect.bytes_out, by_topic * fanout, "Bytes fetched by consumers")):
        out.append(Family(name, dialect.counter_type, help_, ("topic",), [names],
                          prefixes=[heads[name][t] for t in topics.tolist()],
                          values=per_topic))
        out.append(Family(name, dialect.counter_type, help_, (), [],
                          values=np.array([per_topic.sum()])))
    for name, key in ((dialect.replication_bytes_in, "replication_in"),
                      (dialect.replication_bytes_out, "replication_out"),
                      (dialect.reassignment_bytes_in, "reassignment_in"),
                      (dialect.reassignment_bytes_out, "reassignment_out")):
        out.append(Family(name, dialect.counter_type, key.replace("_", " ") + " bytes", (), [],
                          values=np.array([twin.counters[key][b]])))
    return out


def _per_partition(twin: TwinCluster, b: int, dialect: Dialect, mine: np.ndarray,
                   follower: np.ndarray, lag_msgs: np.ndarray) -> list[Family]:
    st, snap = twin.state, twin.snap
    labels = _label_cache(twin, b, dialect, mine, follower)
    size = np.maximum(st.log_size[snap.replica_partition[mine]] - st.lag[mine], 0.0)
    fams = [Family(dialect.log_size, "gauge", "Log bytes of the replica", *labels["log"],
                   values=np.floor(size), integer=True)]
    for name, (lab, cols, prefixes), idx in labels["lag"]:
        fams.append(Family(name, "gauge", "Follower lag in messages", lab, cols, prefixes,
                           values=lag_msgs[idx], integer=True))
    return fams


def _label_cache(twin: TwinCluster, b: int, dialect: Dialect, mine: np.ndarray,
                 follower: np.ndarray) -> dict:
    """Labels and text prefixes of the per-partition series, rebuilt only when the
    assignment or the leaders change (twin.version). Kafka topic names are
    [a-zA-Z0-9._-] only, so topic and fetcher labels need no escaping."""
    key = ("labels", b, dialect.name, twin.version)
    cache = twin.state.derived
    if key in cache:
        return cache[key]
    snap, st = twin.snap, twin.state
    rp = snap.replica_partition
    topics = [str(t) for t in snap.topic_names]

    def series(name: str, client: str | None, reps: np.ndarray, heads: list[str] | None):
        t_idx = snap.part_topic[rp[reps]].tolist()
        pids = snap.part_id[rp[reps]].tolist()
        heads = heads or [""] * len(reps)
        prefixes = [f'{name}{{{h}topic="{topics[t]}",partition="{p}"}} '
                    for h, t, p in zip(heads, t_idx, pids, strict=True)]
        labels = (("topic", "partition") if client is None
                  else (client, "topic", "partition"))

        def columns() -> list[list[str]]:
            cols = [[topics[t] for t in t_idx], [str(p) for p in pids]]
            if client is not None:
                cols.insert(0, [h.split('"')[1] for h in heads])
            return cols
        return labels, columns, prefixes

    lead_ids = snap.broker_ids[st.replica_leader_broker[follower]]
    heads = [f'{dialect.client_label}="ReplicaFetcherThread-0-{lid}",'
             for lid in lead_ids.tolist()]
    lag = [(dialect.consumer_lag,
            series(dialect.consumer_lag, dialect.client_label, follower, heads),
            np.arange(len(follower)))]
    cache[key] = {"log": series(dialect.log_size, None, mine, None), "lag": lag}
    return cache[key]


def _mutation_quota(twin: TwinCluster, dialect: Dialect) -> list[Family]:
    """KIP-599 buckets as a KRaft cluster exports them: the principal's names encoded as in
    Kafka's MBean tags (backend.metrics.tags), ControllerMutation throttle-time NaN (the
    controller never throttles forwarded requests, so its Avg has no samples) and the
    throttle clients were told in the Request throttle-time (the forwarding broker's; the
    twin has no connections, so the active controller's broker exports it)."""
    rows = twin.quotas.metrics(twin.time_ms)
    cols = [[user_label(r["user"]) for r in rows], [client_label(r["client_id"]) for r in rows]]
    labels = ("user", "client_id")
    nan = {"throttle_time": np.full(len(rows), np.nan)}
    return [Family(name, "gauge", help_, labels, cols,
                   values=nan.get(key) if name == dialect.mutation_throttle_time else
                   np.array([r[key] for r in rows], dtype=float))
            for name, key, help_ in (
                (dialect.mutation_rate, "mutation_rate", "KIP-599 partition mutations/s"),
                (dialect.mutation_tokens, "tokens", "KIP-599 tokens left (< 0: throttled)"),
                (dialect.mutation_throttle_time, "throttle_time",
                 "KIP-599 average throttle ms (NaN on KRaft)"),
                (dialect.request_throttle_time, "throttle_time",
                 "Average throttle ms the broker told the client"))]


# ---- rendering ------------------------------------------------------------------------------
def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _prefixes(name: str, labels: tuple[str, ...], columns: list[list[str]]) -> list[str]:
    if not labels:
        return [name + " "]
    parts = [[f'{lab}="{_escape(v)}"' for v in col] for lab, col in zip(
        labels, columns, strict=True)]
    return [f"{name}{{{','.join(p)}}} " for p in zip(*parts, strict=True)]


def _text_type(kind: str) -> str:
    return "untyped" if kind == "unknown" else kind


def render(families: list[Family]) -> str:
    """The Prometheus text format (0.0.4) of ``families``; same-name families merge."""
    chunks, declared = [], set()
    for fam in families:
        base = fam.name[:-6] if fam.kind == "counter" and fam.name.endswith("_total") \
            else fam.name
        if base not in declared:
            declared.add(base)
            chunks.append(f"# HELP {base} {fam.help}\n# TYPE {base} {_text_type(fam.kind)}\n")
        values = (map(str, fam.values.astype(np.int64).tolist()) if fam.integer
                  else map(repr, fam.values.astype(np.float64).tolist()))
        body = "\n".join(map(str.__add__, fam.prefixes, values))
        if body:
            chunks.append(body + "\n")
    return "".join(chunks)


class TwinCollector(Collector):
    """A prometheus_client Collector for one simulated broker."""

    def __init__(self, twin: TwinCluster, broker_id: int, dialect: Dialect) -> None:
        self.twin, self.broker_id, self.dialect = twin, broker_id, dialect
        self.position = int(twin.snap.broker_positions([broker_id])[0])

    def families(self) -> list[Family]:
        with self.twin.lock:
            return broker_families(self.twin, self.position, self.dialect)

    def collect(self):
        merged: dict[str, Metric] = {}
        for fam in self.families():
            base = fam.name[:-6] if fam.kind == "counter" and fam.name.endswith("_total") \
                else fam.name
            metric = merged.setdefault(base, Metric(base, fam.help, fam.kind))
            cols = fam.label_columns()
            for i, value in enumerate(fam.values.tolist()):
                metric.add_sample(fam.name, {lab: col[i] for lab, col in zip(
                    fam.labels, cols, strict=True)}, value)
        yield from merged.values()

    def exposition(self) -> str:
        return render(self.families())

    @property
    def alive(self) -> bool:
        return bool(self.twin.state.alive[self.position])


class _Handler(ServedHostsOnly):
    """Answers only requests addressed to its target (Prometheus sends the target's
    host:port as Host), so another site cannot read the twin through a browser."""

    collector: TwinCollector
    served_what = "this exporter"

    def do_GET(self) -> None:
        if self.path.split("?")[0] not in ("/metrics", "/"):
            self.send_error(404)
            return
        if not self.collector.alive:
            self.send_error(503, "broker is down")
            return
        body = self.collector.exposition().encode()
        self.send_response(200)
        self.send_header("Content-Type", CONTENT_TYPE_LATEST)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        """A scraper that hung up (timeout) is its problem, not a traceback on stderr."""


class Exporters:
    """One HTTP target per broker on 127.0.0.1, ports ``port_base + i`` (0: any free)."""

    def __init__(self, twin: TwinCluster, dialect: Dialect, port_base: int = 0,
                 host: str = "127.0.0.1") -> None:
        self.servers: list[_QuietServer] = []
        self.threads: list[threading.Thread] = []
        self.collectors = []
        for i, bid in enumerate(twin.snap.broker_ids.tolist()):
            collector = TwinCollector(twin, bid, dialect)
            handler = type("Handler", (_Handler,), {"collector": collector})
            server = _QuietServer((host, port_base + i if port_base else 0), handler)
            self.servers.append(server)
            self.collectors.append(collector)

    @property
    def targets(self) -> dict[int, str]:
        """Broker id -> host:port."""
        return {c.broker_id: f"{s.server_address[0]}:{s.server_address[1]}"
                for c, s in zip(self.collectors, self.servers, strict=True)}

    def start(self) -> Exporters:
        for server in self.servers:
            t = threading.Thread(target=server.serve_forever, daemon=True)
            t.start()
            self.threads.append(t)
        return self

    def stop(self) -> None:
        for server in self.servers:
            server.shutdown()
            server.server_close()
        for t in self.threads:
            t.join(timeout=5)
