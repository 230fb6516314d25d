"""The simulated cluster: a snapshot evolving in simulated time, changed the way Kafka's
admin APIs change a real one.

- time only moves through ``advance`` (deterministic for a seed: producer noise is the
  only randomness, drawn per step per topic from the seeded generator);
- reassignments follow KIP-455: the full replica set is target + (original - target),
  adding replicas start empty and out of sync, a partition's move completes when every
  adding replica is in the ISR (then the removing replicas go, and the leader moves only
  if it is not in the target), a new target replaces an in-flight one, cancel reverts;
- broker configs leader/follower.replication.throttled.rate and topic configs
  leader/follower.replication.throttled.replicas drive the replication step (KIP-73);
- topic create, add partitions and delete go through the limit engine (KIP-578, limits
  from the snapshot or the max.broker.partitions / max.partitions broker configs) and
  the mutation quota (KIP-599, strict mode unless asked otherwise);
- a failed broker's replicas leave the ISR (the last ISR member stays, Kafka never
  empties an ISR) and its partitions elect the first live in-sync replica or go offline;
- partitions are deleted as the delete-partitions KIP would (backend/twin/deletions.py):
  ReadOnly, None at the controller's check after the delay, Removed once every broker
  holding a replica has deleted it.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, replace

import numpy as np

from backend.engines.limits import (
    POLICY_VIOLATION,
    TopicOutcome,
    TopicRequest,
    add_partitions,
    create_topics,
    name_refusal,
)
from backend.engines.shrink import CHECK_INTERVAL_MS
from backend.errors import BadInput
from backend.model.bounds import parse_broker_id
from backend.model.csr import offsets_from_lengths
from backend.model.reassignment import Reassignment, reassignment_from_dict
from backend.model.snapshot import Limits, Snapshot
from backend.twin.deletions import PartitionDeletions
from backend.twin.faults import GatewayFaults
from backend.twin.quotas import MutationQuotas
from backend.twin.replication import StepFlows, fetch_overhead_rate, step
from backend.twin.state import (
    DEFAULT_RETENTION_MS,
    MODE_NAMES,
    NO_ACCESS,
    READ_ONLY,
    TwinState,
    replica_mask,
    row_map,
    without_partitions,
    without_topics,
)

LEADER_RATE = "leader.replication.throttled.rate"
FOLLOWER_RATE = "follower.replication.throttled.rate"
LEADER_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"
BROKER_KEYS = {LEADER_RATE, FOLLOWER_RATE, "max.broker.partitions", "max.partitions"}
TOPIC_KEYS = {LEADER_REPLICAS, FOLLOWER_REPLICAS, "min.insync.replicas", "retention.ms"}
DEFAULT_BROKER = "<default>"
_REPLICA_LIST = re.compile(r"^(\*|([0-9]+:[0-9]+)(,[0-9]+:[0-9]+)*)?$")
THROTTLING_QUOTA_EXCEEDED = "THROTTLING_QUOTA_EXCEEDED"
# Kafka's words for these answers (Errors.java: what its controller sends, or what
# Kafka's clients show when it sends none)
QUOTA_EXCEEDED = "The throttling quota has been exceeded."
NO_SUCH_TOPIC = "This server does not host this topic-partition."


@dataclass(frozen=True)
class TwinSettings:
    """Knobs of the simulation that a snapshot does not carry."""

    seed: int = 0
    message_bytes: float = 1024.0  # average record size: fetcher lag is in messages
    consumer_fanout: float = 1.0  # bytes out per byte in (one consumer group)
    network_bytes_per_sec: float = 125e6  # a follower broker's unthrottled fetch capacity
    traffic_noise: float = 0.05  # sigma of the per-topic lognormal noise on produce rates
    min_insync_replicas: int = 1  # Kafka's default for topics without an override
    delete_partition_enable: bool = True  # delete.topic.partition.enable (the KIP)
    delete_partition_interval_ms: int = CHECK_INTERVAL_MS  # ...interval.delay.ms


@dataclass(frozen=True)
class Move:
    original: tuple[int, ...]  # broker ids
    target: tuple[int, ...]


class TwinCluster:
    """One simulated cluster. All public methods are thread-safe (one lock)."""

    def __init__(self, snap: Snapshot, settings: TwinSettings | None = None) -> None:
        self.settings = settings or TwinSettings()
        self.state = TwinState.fresh(snap)
        self.time_ms = 0
        self.rng = np.random.default_rng(self.settings.seed)
        self.lock = threading.RLock()
        self.broker_configs: dict[str, dict[str, str]] = {}
        self.topic_configs: dict[str, dict[str, str]] = {}
        self.moves: dict[tuple[str, int], Move] = {}
        self.quotas = MutationQuotas()
        self.faults = GatewayFaults()  # what the gateway answers instead, when injected
        self.deletions = PartitionDeletions(self.settings.delete_partition_interval_ms)
        self.traffic_factor: dict[str, float] = {}  # topic name or "*" -> multiplier
        n_b = snap.n_brokers
        self.counters = {k: np.zeros(n_b) for k in (
            "replication_in", "replication_out", "reassignment_in", "reassignment_out")}
        # a snapshot is of a running cluster, whose followers already fetch: the leader side
        # reads their response overhead before the first step (replication.py)
        self.throttled_rate = {"leader": fetch_overhead_rate(self.state).copy(),
                               "follower": np.zeros(n_b)}
        self.version = 0  # bumped whenever series (not just values) may change
        self._rates_cache: tuple[np.ndarray, np.ndarray] | None = None

    # ---- reading -----------------------------------------------------------------------
    @property
    def snap(self) -> Snapshot:
        return self.state.snap

    @property
    def now_seconds(self) -> float:
        return self.time_ms / 1000.0

    def limits(self) -> Limits:
        cfg = self.broker_configs.get(DEFAULT_BROKER, {})
        return self.snap.limits.merged(
            _opt_int(cfg.get("max.broker.partitions")), _opt_int(cfg.get("max.partitions")))

    def broker_rates(self) -> tuple[np.ndarray, np.ndarray]:
        """Leader and follower throttled rates per broker position (inf = unthrottled)."""
        if self._rates_cache is None:
            out = []
            for key in (LEADER_RATE, FOLLOWER_RATE):
                default = self.broker_configs.get(DEFAULT_BROKER, {}).get(key)
                out.append(np.array([
                    float(self.broker_configs.get(str(b), {}).get(key, default or "inf"))
                    for b in self.snap.broker_ids.tolist()]))
            self._rates_cache = (out[0], out[1])
        return self._rates_cache

    def topic_config(self, topic: str, key: str, default: str | None = None) -> str | None:
        return self.topic_configs.get(topic, {}).get(key, default)

    def min_isr(self) -> np.ndarray:
        """min.insync.replicas per topic."""
        base = str(self.settings.min_insync_replicas)
        return np.array([int(self.topic_config(t, "min.insync.replicas", base))
                         for t in self.snap.topic_names], dtype=np.int64)

    def controller(self) -> int:
        """Position of the active controller: the lowest live broker id (-1 if none)."""
        alive = np.flatnonzero(self.state.alive)
        return int(alive[0]) if len(alive) else -1

    # ---- time ----------------------------------------------------------------------------
    def advance(self, seconds: float, dt: float = 1.0) -> None:
        """Simulate ``seconds`` of cluster time in steps of at most ``dt`` seconds."""
        with self.lock:
            remaining = seconds
            while remaining > 1e-9:
                h = min(dt, remaining)
                self._step(h)
                remaining -= h

    def _step(self, dt: float) -> StepFlows:
        snap = self.snap
        noise = self.rng.lognormal(0.0, self.settings.traffic_noise, snap.n_topics) \
            if self.settings.traffic_noise > 0 else np.ones(snap.n_topics)
        factor = noise * self._topic_factors()
        leader_rate, follower_rate = self.broker_rates()
        network = np.full(snap.n_brokers, self.settings.network_bytes_per_sec)
        flows = step(self.state, dt, factor, leader_rate, follower_rate, network)
        for key in self.counters:
            self.counters[key] += getattr(flows, key)
        self.throttled_rate["leader"] = flows.leader_throttled / dt
        self.throttled_rate["follower"] = flows.follower_throttled / dt
        self.time_ms += round(dt * 1000)
        if self.moves:
            self._complete_moves()
        if self.deletions.pending:
            self._advance_deletions()
        return flows

    def _topic_factors(self) -> np.ndarray:
        f = np.full(self.snap.n_topics, self.traffic_factor.get("*", 1.0))
        for name, value in self.traffic_factor.items():
            if name != "*" and self.snap.has_topic(name):
                f[self.snap.topic_index(name)] *= value
        return f

    def set_traffic(self, factor: float, topic: str = "*") -> None:
        """Multiply producer traffic (of one topic, or all with "*") by ``factor``."""
        if factor < 0:
            raise BadInput(f"traffic factor must be >= 0, got {factor}")
        with self.lock:
            if topic != "*":
                self.snap.topic_index(topic)
            self.traffic_factor[topic] = float(factor)
            self._apply_retention()

    # ---- assignment changes ---------------------------------------------------------------
    def _adopt(self, new: Snapshot, rows_of_old: np.ndarray | None = None,
               relisted: np.ndarray | None = None) -> None:
        """Switch assignments: ``relisted`` rows got new replica lists, or the partitions
        themselves changed (``rows_of_old`` maps them)."""
        if relisted is not None:
            self.state.relist(new, relisted)
        else:
            self.state.adopt(new, rows_of_old)
        self._refresh_replica_lists()
        self._refresh_move_flags()
        self._apply_retention()
        self.version += 1

    def _apply_retention(self) -> None:
        """Log caps from retention.ms (only configured topics are looked up: this runs on
        every assignment change)."""
        ms = np.full(self.snap.n_topics, float(DEFAULT_RETENTION_MS))
        for topic, cfg in self.topic_configs.items():
            if "retention.ms" in cfg and self.snap.has_topic(topic):
                ms[self.snap.topic_index(topic)] = float(cfg["retention.ms"])
        self.state.set_retention(ms * self._topic_factors())

    def _refresh_replica_lists(self) -> None:
        """Throttled-replica list membership of every replica, from the topic configs."""
        st, snap = self.state, self.snap
        starts = snap.topic_starts
        for attr, key in (("in_leader_list", LEADER_REPLICAS),
                          ("in_follower_list", FOLLOWER_REPLICAS)):
            wildcard = np.zeros(snap.n_topics, bool)
            rows, brokers = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
            for topic, cfg in self.topic_configs.items():
                value = cfg.get(key, "")
                if not value or not snap.has_topic(topic):
                    continue
                t = snap.topic_index(topic)
                if value == "*":
                    wildcard[t] = True
                    continue
                pairs = np.array([p.split(":") for p in value.split(",")], dtype=np.int64)
                pos = np.searchsorted(snap.broker_ids, pairs[:, 1])
                ok = ((pairs[:, 0] < starts[t + 1] - starts[t]) & (pos < snap.n_brokers)
                      & (snap.broker_ids[np.minimum(pos, snap.n_brokers - 1)] == pairs[:, 1]))
                rows.append(starts[t] + pairs[ok, 0])
                brokers.append(pos[ok])
            member = wildcard[snap.part_topic[snap.replica_partition]] if wildcard.any() \
                else np.zeros(snap.n_replicas, bool)
            member |= replica_mask(snap, np.concatenate(rows), np.concatenate(brokers))
            setattr(st, attr, member)
        st.touch()

    def _refresh_move_flags(self) -> None:
        """adding/removing per replica from the in-flight moves."""
        st, snap = self.state, self.snap
        pos = {b: i for i, b in enumerate(snap.broker_ids.tolist())}
        starts = snap.topic_starts.tolist()
        pairs: dict[str, tuple[list, list]] = {"adding": ([], []), "removing": ([], [])}
        for (topic, pid), mv in self.moves.items():
            row = starts[snap.topic_index(topic)] + pid
            for name, brokers in (("adding", [x for x in mv.target if x not in mv.original]),
                                  ("removing", [x for x in mv.original if x not in mv.target])):
                pairs[name][0].extend([row] * len(brokers))
                pairs[name][1].extend(pos[x] for x in brokers)
        for name, (rows, brokers) in pairs.items():
            setattr(st, name, replica_mask(snap, np.asarray(rows, np.int64),
                                           np.asarray(brokers, np.int64)))
        st.touch()

    def _set_replica_lists(self, rows: list[int], lists: list[list[int]]) -> Snapshot:
        order = np.argsort(rows, kind="stable")
        pos = [self.snap.broker_positions(lists[i]) for i in order]
        return self.snap.with_replicas(
            np.asarray(rows, np.int64)[order], offsets_from_lengths([len(p) for p in pos]),
            np.concatenate(pos).astype(np.int32))

    def _relist(self, rows: list[int], lists: list[list[int]]) -> None:
        self._adopt(self._set_replica_lists(rows, lists), relisted=np.sort(np.asarray(rows)))

    # ---- reassignments (KIP-455) ------------------------------------------------------------
    def alter_reassignments(self, plan: dict) -> dict:
        """Start (or retarget) reassignments from Kafka's plan JSON; returns what started."""
        with self.lock:
            parsed = reassignment_from_dict(plan, self._original_view(), "reassignment")
            return self._start_moves(parsed)

    def _original_view(self) -> Snapshot:
        """The assignment with in-flight moves shown at their original replicas."""
        if not self.moves:
            return self.snap
        rows, lists = [], []
        for (topic, pid), mv in self.moves.items():
            rows.append(self.snap.partition_row(topic, pid))
            lists.append(list(mv.original))
        return self._set_replica_lists(rows, lists)

    def _start_moves(self, plan: Reassignment) -> dict:
        snap = self.snap
        ids = snap.broker_ids[plan.brokers].tolist()
        off = plan.offsets.tolist()
        rows, lists, started, cancelled = [], [], [], []
        for i, row in enumerate(plan.rows.tolist()):
            key = (str(snap.topic_names[snap.part_topic[row]]), int(snap.part_id[row]))
            target = tuple(ids[off[i]:off[i + 1]])
            original = self.moves[key].original if key in self.moves else \
                tuple(snap.replicas_of(row))
            if set(target) == set(original):
                if key in self.moves:
                    cancelled.append(key)
                    del self.moves[key]
                rows.append(row)
                lists.append(list(target))
                continue
            self.moves[key] = Move(original, target)
            rows.append(row)
            lists.append(list(target) + [b for b in original if b not in target])
            started.append(key)
        if rows:
            self._relist(rows, lists)
        return {"started": [f"{t}-{p}" for t, p in started],
                "cancelled": [f"{t}-{p}" for t, p in cancelled]}

    def cancel_reassignments(self, partitions: list[tuple[str, int]] | None = None) -> dict:
        """Revert in-flight moves (all of them when ``partitions`` is None)."""
        with self.lock:
            keys = list(self.moves) if partitions is None else partitions
            missing = [k for k in keys if k not in self.moves]
            if missing:
                raise BadInput(f"no reassignment in progress for {missing[0][0]}-{missing[0][1]}")
            rows = [self.snap.partition_row(t, p) for t, p in keys]
            lists = [list(self.moves.pop(k).original) for k in keys]
            if rows:
                self._relist(rows, lists)
            return {"cancelled": [f"{t}-{p}" for t, p in keys]}

    def list_reassignments(self) -> list[dict]:
        with self.lock:
            out = []
            for (topic, pid), mv in sorted(self.moves.items()):
                row = self.snap.partition_row(topic, pid)
                out.append({"topic": topic, "partition": pid,
                            "replicas": self.snap.replicas_of(row),
                            "adding": [b for b in mv.target if b not in mv.original],
                            "removing": [b for b in mv.original if b not in mv.target]})
            return out

    def _complete_moves(self) -> None:
        st, snap = self.state, self.snap
        adding = st.cached("adding_idx", lambda: np.flatnonzero(st.adding))
        keys = st.cached("move_keys", lambda: list(self.moves))
        rows = st.cached("move_rows", lambda: np.array(
            [snap.partition_row(*k) for k in keys], dtype=np.int64))
        waiting = np.zeros(snap.n_partitions, bool)
        waiting[snap.replica_partition[adding[~st.isr[adding]]]] = True
        done = np.flatnonzero(~waiting[rows])
        if not len(done):
            return
        done_keys = [keys[i] for i in done.tolist()]
        done_rows = rows[done].tolist()
        done_lists = [list(self.moves[k].target) for k in done_keys]
        for key in done_keys:
            del self.moves[key]
        self._relist(done_rows, done_lists)
        self._elect(np.asarray(done_rows, np.int64))

    def _elect(self, rows: np.ndarray) -> None:
        """Leader of ``rows``: kept while it is a live in-sync replica, else the first live
        in-sync replica in assignment order, else none (offline)."""
        st, snap = self.state, self.snap
        for row in rows.tolist():
            a, b = snap.replica_offsets[row], snap.replica_offsets[row + 1]
            brokers = snap.replica_broker[a:b]
            ok = st.isr[a:b] & st.alive[brokers]
            current = int(st.leader[row])
            if current >= 0 and current in brokers[ok].tolist():
                st.leader[row] = current
            else:
                st.leader[row] = int(brokers[ok][0]) if ok.any() else -1
        st.touch()
        self.version += 1

    # ---- brokers ----------------------------------------------------------------------------
    def fail_broker(self, broker_id: int) -> None:
        """The broker stops: its replicas leave the ISR (never emptying one), its
        partitions elect new leaders or go offline."""
        with self.lock:
            b = int(self.snap.broker_positions([broker_id])[0])
            st, snap = self.state, self.snap
            st.alive[b] = False
            rp = snap.replica_partition
            on_b = snap.replica_broker == b
            others = np.bincount(rp, weights=st.isr & ~on_b, minlength=snap.n_partitions)
            st.isr[on_b & (others[rp] > 0)] = False
            self._elect(np.flatnonzero(st.leader == b))

    def recover_broker(self, broker_id: int) -> None:
        """The broker returns: its replicas catch up as followers; offline partitions
        whose last in-sync replica lives there come back with it as leader."""
        with self.lock:
            b = int(self.snap.broker_positions([broker_id])[0])
            st = self.state
            st.alive[b] = True
            self._elect(np.flatnonzero(st.leader < 0))

    # ---- configs ------------------------------------------------------------------------------
    def alter_configs(self, entity_type: str, name: str, set_: dict | None = None,
                      delete: list[str] | None = None) -> dict:
        """Incremental alter of broker (id or "<default>") or topic configs."""
        with self.lock:
            cfg = self._store_config(entity_type, name, set_ or {}, delete or [])
            self._configs_changed({*(set_ or {}), *(delete or [])})
            return {"entity_type": entity_type, "name": name, "configs": cfg}

    def _store_config(self, entity_type: str, name: str, set_: dict,
                      delete: list[str]) -> dict:
        if entity_type == "broker":
            if name != DEFAULT_BROKER:
                self.snap.broker_positions([parse_broker_id(name, DEFAULT_BROKER)])
            allowed, store = BROKER_KEYS, self.broker_configs
        elif entity_type == "topic":
            self.snap.topic_index(name)
            allowed, store = TOPIC_KEYS, self.topic_configs
        else:
            raise BadInput(f"entity type must be 'broker' or 'topic', got '{entity_type}'")
        cfg = dict(store.get(name, {}))
        for key, value in set_.items():
            if key not in allowed:
                raise BadInput(f"{entity_type} config '{key}' is not supported by the twin "
                               f"(supported: {', '.join(sorted(allowed))})")
            cfg[key] = _validate_config(key, value)
        for key in delete:
            cfg.pop(key, None)
        store[name] = cfg
        return cfg

    def _configs_changed(self, keys: set[str] | None = None) -> None:
        """Recompute what depends on the changed config ``keys`` (None: on any).

        Every write of a broker or topic config comes here (alter_configs: the gateway,
        the HTTP API and scenarios alike; set and delete, <default> and per-broker), and
        KIP-73 applies it at once: the rates are read again at the next step, whose
        throttle flags follow which brokers have one (replication._followers); the
        throttled-replica lists are rebuilt now, and the rebuild touches the state."""
        self._rates_cache = None
        if keys is None or keys & {LEADER_REPLICAS, FOLLOWER_REPLICAS}:
            self._refresh_replica_lists()
        if keys is None or "retention.ms" in keys:
            self._apply_retention()
        self.version += 1

    def set_mutation_quota(self, user: str | None, client_id: str | None,
                           rate: float | None) -> None:
        with self.lock:
            self.quotas.set_rate(user, client_id, rate)
            self.version += 1

    def set_partition_mode(self, topic: str, partitions: list[int], mode: str) -> None:
        """ReadWrite, ReadOnly (no writes) or None (neither) for partitions of a topic."""
        codes = {v: k for k, v in MODE_NAMES.items()}
        if mode not in codes:
            raise BadInput(f"partition mode must be one of {sorted(codes)}, got '{mode}'")
        with self.lock:
            rows = [self.snap.partition_row(topic, p) for p in partitions]
            self.state.mode[rows] = codes[mode]

    # ---- topics -------------------------------------------------------------------------------
    def create_topics(self, topics: list[dict], user: str = "", client_id: str = "",
                      strict: bool = True) -> list[dict]:
        """CreateTopics: per topic in order, placement within the limits, then the quota."""
        with self.lock:
            reqs, given, results = [], [], []
            for t in topics:
                name, manual = t.get("name"), t.get("assignment")
                if not isinstance(name, str) or not name:
                    raise BadInput("each topic needs a non-empty 'name'")
                if manual is not None:
                    given.append(self._manual_assignment(name, manual))
                    reqs.append(TopicRequest(name, *given[-1].shape))
                    continue
                given.append(None)
                reqs.append(TopicRequest(name, int(t.get("partitions")), int(t.get("rf", 3))))
            # As Kafka's controller does: per topic in order, place it, then charge the
            # quota; a rejected topic leaves no trace for the topics after it.
            snap, seed = self.snap, self._seed()
            for req, manual in zip(reqs, given, strict=True):
                out = self._check_manual(snap, req.name, manual) if manual is not None else \
                    name_refusal(snap, req.name) or _count_refusal(req, snap.n_brokers) or \
                    create_topics(snap, [req], self.limits(), seed=seed).topics[0]
                if not out.ok:
                    results.append(_result(req.name, out.code, out.error))
                    continue
                ans = self.quotas.admit(user, client_id, req.partitions, self.time_ms, strict)
                if not ans.admitted:
                    results.append(_result(req.name, THROTTLING_QUOTA_EXCEEDED,
                                           QUOTA_EXCEEDED, ans.throttle_ms))
                    continue
                results.append(_result(req.name, None, None, ans.throttle_ms))
                snap = snap.with_partitions_added(
                    [req.name], np.array([len(out.assignment)]),
                    offsets_from_lengths(np.full(len(out.assignment), out.assignment.shape[1])),
                    out.assignment.ravel().astype(np.int32))
            if snap is not self.snap:
                self._adopt(snap, row_map(self.snap, snap))
            return results

    def _manual_assignment(self, name: str, manual) -> np.ndarray:
        """CreateTopics' replica assignments (a list of replica lists, partition 0 first)
        as broker positions, or BadInput naming what is wrong."""
        if not isinstance(manual, list) or not manual or not all(
                isinstance(r, list) and r and len(r) == len(manual[0]) and len(set(r)) == len(r)
                for r in manual):
            raise BadInput(f"topic '{name}': assignment must list each partition's distinct "
                           "replicas, the same number for every partition")
        ids = [b for r in manual for b in r]
        return self.snap.broker_positions(ids).reshape(len(manual), len(manual[0]))

    def _check_manual(self, snap: Snapshot, name: str, placed: np.ndarray) -> TopicOutcome:
        """A given assignment, checked against KIP-578's limits as the controller would."""
        refused = name_refusal(snap, name)
        if refused is not None:
            return refused
        limits = self.limits()
        after = snap.broker_replica_counts() + np.bincount(placed.ravel(),
                                                           minlength=snap.n_brokers)
        if limits.max_broker_partitions is not None and after.max() > limits.max_broker_partitions:
            b = int(snap.broker_ids[int(np.argmax(after))])
            return TopicOutcome(name, False, code=POLICY_VIOLATION, error=(
                f"broker {b} would hold {int(after.max())} replicas, over "
                f"max.broker.partitions={limits.max_broker_partitions}"))
        if limits.max_partitions is not None and after.sum() > limits.max_partitions:
            return TopicOutcome(name, False, code=POLICY_VIOLATION, error=(
                f"the cluster would hold {int(after.sum())} replicas, over "
                f"max.partitions={limits.max_partitions}"))
        return TopicOutcome(name, True, assignment=placed)

    def create_partitions(self, topic: str, total: int, user: str = "", client_id: str = "",
                          strict: bool = True) -> dict:
        """CreatePartitions: grow ``topic`` to ``total`` partitions, checked in KRaft's
        order and words (ReplicationControlManager.createPartitions): the topic, the
        count, the quota (charged before placement), then the placement."""
        with self.lock:
            if not self.snap.has_topic(topic):
                return _result(topic, "UNKNOWN_TOPIC_OR_PARTITION", NO_SUCH_TOPIC)
            now = self.snap.topic_partition_count(self.snap.topic_index(topic))
            if total <= now:
                return _result(topic, "INVALID_PARTITIONS", (
                    f"Topic already has {now} partition(s)." if total == now else
                    f"The topic {topic} currently has {now} partition(s); {total} would not "
                    "be an increase."))
            ans = self.quotas.admit(user, client_id, total - now, self.time_ms, strict)
            if not ans.admitted:
                return _result(topic, THROTTLING_QUOTA_EXCEEDED, QUOTA_EXCEEDED, ans.throttle_ms)
            placed = add_partitions(self.snap, topic, total, self.limits(), seed=self._seed())
            out = placed.topics[0]
            if not out.ok:
                return _result(topic, out.code, out.error)
            self._adopt(placed.after, row_map(self.snap, placed.after))
            return _result(topic, None, None, ans.throttle_ms)

    def delete_topics(self, names: list[str], user: str = "", client_id: str = "",
                      strict: bool = True) -> list[dict]:
        """DeleteTopics: each topic costs its partition count against the quota."""
        with self.lock:
            results, drop = [], []
            for name in names:
                if not self.snap.has_topic(name):
                    results.append(_result(name, "UNKNOWN_TOPIC_OR_PARTITION", NO_SUCH_TOPIC))
                    continue
                t = self.snap.topic_index(name)
                ans = self.quotas.admit(user, client_id, self.snap.topic_partition_count(t),
                                        self.time_ms, strict)
                if not ans.admitted:
                    results.append(_result(name, THROTTLING_QUOTA_EXCEEDED, QUOTA_EXCEEDED,
                                           ans.throttle_ms))
                    continue
                results.append(_result(name, None, None, ans.throttle_ms))
                drop.append(t)
            if drop:
                gone = {str(self.snap.topic_names[t]) for t in drop}
                self.moves = {k: v for k, v in self.moves.items() if k[0] not in gone}
                for name in gone:
                    self.topic_configs.pop(name, None)
                self.deletions.forget(gone)
                new = without_topics(self.snap, np.asarray(drop))
                self._adopt(new, row_map(self.snap, new))
            return results

    # ---- partition deletion (the delete-partitions KIP) ----------------------------------------
    def delete_partitions(self, topic: str, total: int, delay_ms: int, user: str = "",
                          client_id: str = "", strict: bool = True) -> dict:
        """DeletePartitions: keep ``total`` partitions of ``topic``; the rest go ReadOnly
        (None at once when ``delay_ms`` is 0). Charged to the mutation quota like
        DeleteTopics (one token per partition deleted). Per partition its mode."""
        with self.lock:
            if not self.settings.delete_partition_enable:
                return _result(topic, "INVALID_REQUEST", "delete.topic.partition.enable is "
                               "false on this cluster")
            if not self.snap.has_topic(topic):
                return _result(topic, "UNKNOWN_TOPIC_OR_PARTITION",
                               f"topic '{topic}' does not exist")
            t = self.snap.topic_index(topic)
            n = self.snap.topic_partition_count(t)
            if isinstance(total, bool) or not isinstance(total, int) or not 1 <= total < n:
                return _result(topic, "INVALID_PARTITIONS", f"topic '{topic}' has {n} "
                               f"partitions: keep 1 to {n - 1}, not {total}")
            if isinstance(delay_ms, bool) or not isinstance(delay_ms, int) or delay_ms < 0:
                return _result(topic, "INVALID_REQUEST",
                               f"the delay must be a whole number of ms >= 0, got {delay_ms}")
            if topic in self.deletions.pending:
                return _result(topic, "INVALID_REQUEST",
                               f"topic '{topic}' is already deleting partitions")
            moving = sorted(p for tp, p in self.moves if tp == topic and p >= total)
            if moving:
                return _result(topic, "REASSIGNMENT_IN_PROGRESS",
                               f"{topic}-{moving[0]} is being reassigned")
            ans = self.quotas.admit(user, client_id, n - total, self.time_ms, strict)
            if not ans.admitted:
                return _result(topic, THROTTLING_QUOTA_EXCEEDED, QUOTA_EXCEEDED, ans.throttle_ms)
            self.deletions.request(topic, total, delay_ms, self.time_ms)
            mode = READ_ONLY if delay_ms else NO_ACCESS
            start = int(self.snap.topic_starts[t])
            self.state.mode[start + total:start + n] = mode
            self.version += 1
            return {**_result(topic, None, None, ans.throttle_ms), "partitions": [
                {"partition": p, "mode": MODE_NAMES[mode], "error": None}
                for p in range(total, n)]}

    def _advance_deletions(self) -> None:
        """After a step: partitions turned None before it whose replicas' brokers are all
        alive have been deleted (StopReplica answered) and leave the metadata; then the
        controller's check turns due ReadOnly partitions None."""
        snap = self.snap
        gone = self.deletions.confirmed(snap, self.state.alive)
        if gone:
            ts = [snap.topic_index(d.topic) for d in gone]
            rows = np.concatenate([np.arange(snap.topic_starts[t] + d.keep,
                                             snap.topic_starts[t + 1])
                                   for t, d in zip(ts, gone, strict=True)])
            cut = {d.topic: d.keep for d in gone}
            self.moves = {k: v for k, v in self.moves.items() if k[1] < cut.get(k[0], k[1] + 1)}
            self._adopt(*without_partitions(snap, rows))
        snap = self.snap
        for d in self.deletions.due(self.time_ms):
            t = snap.topic_index(d.topic)
            self.state.mode[snap.topic_starts[t] + d.keep:snap.topic_starts[t + 1]] = NO_ACCESS
            self.version += 1

    def partition_modes(self, topic: str) -> list[str]:
        """The Metadata API's ``mode`` of each partition of ``topic``."""
        with self.lock:
            t = self.snap.topic_index(topic)
            modes = self.state.mode[self.snap.topic_starts[t]:self.snap.topic_starts[t + 1]]
            return [MODE_NAMES[int(m)] for m in modes]

    def _seed(self) -> int:
        return int(self.rng.integers(1 << 31))

    # ---- a plain view for gateways and exporters ----------------------------------------------
    def assignment(self) -> Snapshot:
        """The current assignment with log sizes and write rates as they are now, the
        reassignments in flight (as the Kafka gateway's carries them) and the KIP-578
        limits the cluster enforces now (its broker configs over the snapshot's)."""
        with self.lock:
            return replace(self.snap, part_size=self.state.log_size.astype(np.int64),
                           part_rate=self.state.base_rate.copy(),
                           in_flight=tuple(self.list_reassignments()), limits=self.limits())


def _count_refusal(req: TopicRequest, n_brokers: int) -> TopicOutcome | None:
    """KRaft's answer for a count or replication factor it cannot place, in its words
    (ReplicationControlManager.createTopic, StripedReplicaPlacer); -1, Kafka's "use the
    broker default", is not simulated and is refused like 0."""
    if req.rf <= 0:
        return TopicOutcome(req.name, False, code="INVALID_REPLICATION_FACTOR", error=(
            "Replication factor must be larger than 0, or -1 to use the default value."))
    if req.partitions <= 0:
        return TopicOutcome(req.name, False, code="INVALID_PARTITIONS", error=(
            "Number of partitions was set to an invalid non-positive value."))
    if req.rf > n_brokers:
        return TopicOutcome(req.name, False, code="INVALID_REPLICATION_FACTOR", error=(
            f"Unable to replicate the partition {req.rf} time(s): The target replication "
            f"factor of {req.rf} cannot be reached because only {n_brokers} broker(s) are "
            "registered."))
    return None


def _result(name: str, error: str | None, message: str | None, throttle_ms: int = 0) -> dict:
    return {"name": name, "error": error, "message": message, "throttle_time_ms": throttle_ms}


def _opt_int(value: str | None) -> int | None:
    return None if value is None else int(value)


def _validate_config(key: str, value) -> str:
    text = str(value).strip()
    if key in (LEADER_REPLICAS, FOLLOWER_REPLICAS):
        text = text.replace(" ", "")
        if not _REPLICA_LIST.match(text):
            raise BadInput(f"{key}: expected 'partition:broker,...' or '*', got '{value}'")
        return text
    try:
        number = float(text)
    except ValueError:
        raise BadInput(f"{key}: expected a number, got '{value}'") from None
    if number < 0 or (key != LEADER_RATE and key != FOLLOWER_RATE and number != int(number)):
        raise BadInput(f"{key}: expected a non-negative {'number' if 'rate' in key else 'integer'}"
                       f", got '{value}'")
    return text
