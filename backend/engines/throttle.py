"""KIP-73 replication throttles: what kafka-reassign-partitions --execute sets, and what it costs.

Moves are computed as ReassignPartitionsCommand computes them (calculateProposedMoveMap):
sources = the partition's current replicas, destinations = proposed replicas minus
sources. One deliberate difference: a plan entry whose replica *set* does not change
(identical, or only reordered to change the preferred leader) copies no data and is no
move here, so it gets no throttle entries (Kafka's tool would still list its current
replicas in the leader list). The throttled-replica strings follow
calculateLeaderThrottles/calculateFollowerThrottles exactly: "partition:broker" joined
by "," in Java TreeSet<String> order, i.e. *string* order ("10:1" before "2:1"); every
topic with a move gets both configs, the follower one possibly "". Both rates go on
every source and destination broker (calculateReassigningBrokers).

Cost model (see docs/throttle.md). During a reassignment the current leader serves every
new replica; all partitions move at once. A destination receives at most T bytes/s of
throttled traffic and that traffic must carry both the catch-up (the log as it was) and
the keep-up (new writes into its moving partitions): it finishes after
bytes_in / (T - keep_up_in) seconds, and never when T <= keep_up_in. A leader sends at
most T: bytes_out / (T - keep_up_out). A broker's ETA is the larger of the two; the
plan's ETA is the slowest broker's (a lower bound: partners slowing each other down
are not modelled). Both fall as T rises, so raising the throttle never looks slower.
No broker copies faster than its network carries: every rate above is min(T, N), the
throttle or the network capacity where that is less (KIP-73 Q&A 4 and 5 bound the
throttle by N; a throttle above N is never reached).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from backend.errors import BadInput
from backend.model.csr import gather_index, offsets_from_lengths
from backend.model.reassignment import Reassignment
from backend.model.snapshot import Snapshot

MIB = 1024 * 1024
DEFAULT_NETWORK_CAPACITY = 125_000_000.0  # 1 GbE in bytes/s: KIP-73 Q&A 5's example network
DEFAULT_FETCH_RESPONSE_MAX_BYTES = 10 * MIB  # Kafka's replica.fetch.response.max.bytes
DEFAULT_WINDOW_NUM = 11  # replication.quota.window.num
DEFAULT_WINDOW_SECONDS = 1  # replication.quota.window.size.seconds
# kafka-kit autothrottle defaults: --max-tx-rate/--max-rx-rate 90 (% of free capacity),
# --min-rate 10 MB/s, which it writes to Kafka as rate x 1,000,000 bytes.
AUTOTHROTTLE_MAX_PCT = 90.0
AUTOTHROTTLE_MIN_RATE = 10_000_000.0

LEADER_RATE = "leader.replication.throttled.rate"
FOLLOWER_RATE = "follower.replication.throttled.rate"
LEADER_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"
# ReassignPartitionsCommand.BROKER_LEVEL_THROTTLES / TOPIC_LEVEL_THROTTLES: what --verify
# (and --cancel) delete once nothing moves, on every broker and every topic of the plan.
VERIFY_BROKER_CONFIGS = (LEADER_RATE, FOLLOWER_RATE,
                         "replica.alter.log.dirs.io.max.bytes.per.second")
VERIFY_TOPIC_CONFIGS = (LEADER_REPLICAS, FOLLOWER_REPLICAS)


@dataclass(frozen=True)
class ThrottleParams:
    """The operator's inputs: throttle T, network capacity N and the quota window."""

    throttle: float
    network_capacity: float | None = None  # None: DEFAULT_NETWORK_CAPACITY
    fetch_response_max_bytes: int = DEFAULT_FETCH_RESPONSE_MAX_BYTES
    window_num: int = DEFAULT_WINDOW_NUM
    window_seconds: float = DEFAULT_WINDOW_SECONDS

    def validated(self) -> ThrottleParams:
        """These parameters, or BadInput naming the first impossible one."""
        checks = (("throttle", self.throttle), ("network capacity", self.capacity),
                  ("fetch response max bytes", self.fetch_response_max_bytes),
                  ("window num", self.window_num), ("window seconds", self.window_seconds))
        for name, value in checks:
            if not (value > 0 and np.isfinite(value)):
                raise BadInput(f"{name} must be a positive number, got {value}")
        return self

    @property
    def capacity(self) -> float:
        return DEFAULT_NETWORK_CAPACITY if self.network_capacity is None else self.network_capacity

    @property
    def rate(self) -> float:
        """The bytes/s a broker's throttled replication can reach each way: the throttle,
        or the network capacity where that is less (a link carries no more than N, so a
        throttle above it is never reached; KIP-73 Q&A 4 and 5 bound T by N)."""
        return min(self.throttle, self.capacity)

    @property
    def capped(self) -> bool:
        """The throttle is above what the network carries (``rate`` is N, not T)."""
        return self.throttle > self.capacity

    def rate_words(self) -> str:
        """'the whole throttle 50000000 B/s', or, capped, what the network carries."""
        if self.capped:
            return (f"the whole network capacity {self.capacity:.0f} B/s (the throttle "
                    f"{self.throttle:.0f} B/s is more than the network carries)")
        return f"the whole throttle {self.throttle:.0f} B/s"

    @property
    def window_total_seconds(self) -> float:
        return self.window_num * self.window_seconds


@dataclass(eq=False)
class Moves:
    """The partitions that move, with Kafka's sources and destinations (CSR, ids ascending)."""

    rows: np.ndarray  # partition rows, ascending
    leader: np.ndarray  # current leader (broker position) of each moving partition
    src_offsets: np.ndarray
    src_brokers: np.ndarray  # broker positions
    dst_offsets: np.ndarray
    dst_brokers: np.ndarray
    unchanged: int  # plan entries whose replica set stays the same

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def n_destinations(self) -> np.ndarray:
        return np.diff(self.dst_offsets)


def proposed_moves(snap: Snapshot, plan: Reassignment) -> Moves:
    """Sources and destinations of every plan entry whose replica set changes."""
    k, nb = len(plan), snap.n_brokers
    cur_len = snap.replication_factors[plan.rows]
    cur = snap.replica_broker[gather_index(snap.replica_offsets, plan.rows)].astype(np.int64)
    cur_key = np.repeat(np.arange(k, dtype=np.int64), cur_len) * nb + cur
    tgt_key = np.repeat(np.arange(k, dtype=np.int64), np.diff(plan.offsets)) * nb + plan.brokers
    cur_kept, tgt_kept = _in_both(cur_key, tgt_key)
    dst_key = tgt_key[~tgt_kept]
    moved = np.zeros(k, dtype=bool)
    moved[dst_key // nb] = True
    moved[cur_key[~cur_kept] // nb] = True
    move_of_entry = np.cumsum(moved) - 1
    src_key = np.sort(cur_key[np.repeat(moved, cur_len)])  # entry-major, broker id ascending
    dst_key = np.sort(dst_key)
    rows = plan.rows[moved]
    return Moves(
        rows=rows,
        leader=snap.leaders[rows],
        src_offsets=offsets_from_lengths(cur_len[moved]),
        src_brokers=(src_key % nb).astype(np.int32),
        dst_offsets=offsets_from_lengths(
            np.bincount(move_of_entry[dst_key // nb], minlength=len(rows))),
        dst_brokers=(dst_key % nb).astype(np.int32),
        unchanged=int(k - moved.sum()),
    )


def _in_both(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which keys of ``a`` are in ``b`` and vice versa, for arrays without repeats.

    One sort of both (np.isin hashes, several times slower here): a key present in
    both sits next to its twin.
    """
    keys = np.concatenate((a, b))
    order = np.argsort(keys, kind="stable")
    twin = keys[order][1:] == keys[order][:-1]
    both = np.zeros(len(keys), dtype=bool)
    both[order[1:][twin]] = True
    both[order[:-1][twin]] = True
    return both[: len(a)], both[len(a):]


def throttled_replicas(snap: Snapshot, moves: Moves) -> tuple[dict[str, str], dict[str, str]]:
    """Leader and follower throttled-replica configs per topic, exactly as Kafka writes them."""
    topic_of_move = snap.part_topic[moves.rows]
    moved_topics = np.unique(topic_of_move)
    leader = _replica_lists(snap, moves.rows, moves.src_offsets, moves.src_brokers, moved_topics)
    follower = _replica_lists(snap, moves.rows, moves.dst_offsets, moves.dst_brokers,
                              moved_topics)
    return leader, follower


def throttle_configs(snap: Snapshot, plan: Reassignment,
                     rate: float) -> dict[tuple[str, str], dict[str, str]]:
    """What kafka-reassign-partitions --execute --throttle sets for ``plan`` on ``snap`` (the
    assignment before the moves): both replica lists on every topic with a move, both
    rates on every source and destination broker. {(entity type, name): configs}."""
    moves = proposed_moves(snap, plan)
    leader, follower = throttled_replicas(snap, moves)
    out = {("topic", t): {LEADER_REPLICAS: leader.get(t, ""),
                          FOLLOWER_REPLICAS: follower.get(t, "")}
           for t in sorted(set(leader) | set(follower))}
    brokers = np.unique(np.concatenate((moves.src_brokers, moves.dst_brokers)))
    value = str(int(rate))
    for b in snap.broker_ids[brokers].tolist():
        out[("broker", str(b))] = {LEADER_RATE: value, FOLLOWER_RATE: value}
    return out


def _replica_lists(snap: Snapshot, rows: np.ndarray, offsets: np.ndarray, brokers: np.ndarray,
                   topics: np.ndarray) -> dict[str, str]:
    """"p:b,..." per topic in TreeSet<String> order; "" for a listed topic without entries.

    Built without per-entry Python: the characters and a string-order rank of every
    distinct partition number and broker id are tabled once, entries are sorted on one
    int64 key (topic, partition rank, broker rank), and their ASCII bytes are laid out in
    one buffer that is sliced per topic.
    """
    entry_row = np.repeat(rows, np.diff(offsets))
    entry_topic = snap.part_topic[entry_row].astype(np.int64)
    part = snap.part_id[entry_row]
    p_chars, p_len = _decimal_chars(np.arange(int(part.max(initial=0)) + 1))
    b_chars, b_len = _decimal_chars(snap.broker_ids)
    p_rank = _string_rank(p_chars, p_len, end_sorts_last=True)  # ':' follows the number
    b_rank = _string_rank(b_chars, b_len, end_sorts_last=False)  # the string ends
    n_p, n_b = len(p_rank), len(b_rank)
    if snap.n_topics * n_p * n_b < SINGLE_KEY_LIMIT:
        order = np.argsort((entry_topic * n_p + p_rank[part]) * n_b + b_rank[brokers],
                           kind="stable")
    else:  # a key that would overflow int64: sort on the three columns instead
        order = np.lexsort((b_rank[brokers], p_rank[part], entry_topic))
    part, brokers, entry_topic = part[order], brokers[order], entry_topic[order]
    chars = np.concatenate((p_chars[part], np.full((len(part), 1), ord(":"), np.uint8),
                            b_chars[brokers], np.full((len(part), 1), ord(","), np.uint8)),
                           axis=1)
    text = chars[chars != 0].tobytes().decode("ascii")
    bounds = offsets_from_lengths(p_len[part] + b_len[brokers] + 2)  # entry i: bounds[i:i+2]
    first = np.searchsorted(entry_topic, topics, side="left")
    last = np.searchsorted(entry_topic, topics, side="right")
    starts, stops = bounds[first], bounds[last] - (last > first)  # without the final comma
    names = snap.topic_names[topics].tolist()
    out = {n: text[a:b] for n, a, b in zip(names, starts.tolist(), stops.tolist(), strict=True)}
    return dict(sorted(out.items()))


SINGLE_KEY_LIMIT = 2**62  # topic x partition-rank x broker-rank must fit an int64
DIGITS = 10  # partition numbers and broker ids are non-negative int32: at most 10 digits


def _decimal_chars(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ASCII digits of each ``x``, left-aligned in DIGITS columns (0 = none), and counts."""
    x = np.asarray(x, dtype=np.int64)
    powers = 10 ** np.arange(DIGITS, dtype=np.int64)
    length = 1 + (x[:, None] >= powers[1:]).sum(axis=1)
    exponent = length[:, None] - 1 - np.arange(DIGITS)
    digits = (x[:, None] // powers[np.maximum(exponent, 0)]) % 10
    return np.where(exponent >= 0, digits + ord("0"), 0).astype(np.uint8), length


def _string_rank(chars: np.ndarray, length: np.ndarray, end_sorts_last: bool) -> np.ndarray:
    """Rank of each row's string in Java String.compareTo order (rows distinct).

    Scored in base 11, one position per character. After a partition number comes ':',
    which sorts after every digit ("10:1" < "1:2"): its end scores 10, digits 0..9. A
    broker id ends the string, which sorts before any digit ("5:1" < "5:10"): its end
    scores 0, digits 1..10.
    """
    inside = np.arange(DIGITS) < length[:, None]
    digit = chars.astype(np.int64) - ord("0")
    score = np.where(inside, digit + (0 if end_sorts_last else 1), 10 if end_sorts_last else 0)
    key = np.zeros(len(chars), dtype=np.int64)
    for column in score.T:  # Horner: DIGITS vector steps
        key = key * 11 + column
    rank = np.empty(len(key), dtype=np.int64)
    rank[np.argsort(key)] = np.arange(len(key))
    return rank


@dataclass(eq=False)
class BrokerLoad:
    """Per-broker figures over the whole cluster (arrays indexed by broker position)."""

    bytes_in: np.ndarray  # log bytes it must receive as a destination
    bytes_out: np.ndarray  # log bytes it must send as the current leader
    keep_up_in: np.ndarray  # produce bytes/s into the partitions moving to it
    keep_up_out: np.ndarray  # produce bytes/s it must forward to its partitions' new replicas
    client_in: np.ndarray  # BytesInPerSec: produce bytes/s into partitions it leads
    replication_factor: np.ndarray  # R for the safe band: smallest RF among its replicas
    tx_util: np.ndarray  # un-throttled bytes/s out today: keep-up sent to in-sync followers
    rx_util: np.ndarray  # un-throttled bytes/s in today: client writes + keep-up as follower


def broker_load(snap: Snapshot, moves: Moves, left: np.ndarray | None = None) -> BrokerLoad:
    """What each broker carries during the move and what it carries anyway. ``left``: the
    bytes each destination still has to copy, in ``moves``' destination order (moves in
    flight: their new replicas' bytes behind); None for moves not begun (the whole log).
    A leader sends what each of its partitions' destinations lacks."""
    nb = snap.n_brokers
    size = snap.part_size.astype(np.float64)
    rate = snap.part_rate
    dst_row = np.repeat(moves.rows, moves.n_destinations)
    n_dst = moves.n_destinations.astype(np.float64)
    rf = snap.replication_factors
    leader_entry = np.zeros(snap.n_replicas, dtype=bool)
    leader_entry[snap.replica_offsets[:-1]] = True
    follower_part = snap.replica_partition[~leader_entry]
    r_min = np.full(nb, rf.min() if len(rf) else 1, dtype=np.int64)
    np.minimum.at(r_min, snap.replica_broker, rf[snap.replica_partition])

    def per_broker(brokers: np.ndarray, weights: np.ndarray) -> np.ndarray:
        return np.bincount(brokers, weights=weights, minlength=nb)

    client_in = per_broker(snap.leaders, rate)
    copy = size[dst_row] if left is None else np.asarray(left, np.float64)
    return BrokerLoad(
        bytes_in=per_broker(moves.dst_brokers, copy),
        bytes_out=per_broker(np.repeat(moves.leader, moves.n_destinations), copy),
        keep_up_in=per_broker(moves.dst_brokers, rate[dst_row]),
        keep_up_out=per_broker(moves.leader, rate[moves.rows] * n_dst),
        client_in=client_in,
        replication_factor=r_min,
        tx_util=per_broker(snap.leaders, rate * (rf - 1)),
        rx_util=client_in + per_broker(snap.replica_broker[~leader_entry], rate[follower_part]),
    )


def catch_up_seconds(nbytes: np.ndarray, keep_up: np.ndarray, throttle: float) -> np.ndarray:
    """Seconds to copy ``nbytes`` at ``throttle`` while also carrying ``keep_up`` bytes/s.

    inf when the throttle is at or below the keep-up rate (the copy never catches up);
    0 where there is nothing to copy and nothing to keep up with.
    """
    spare = throttle - keep_up
    with np.errstate(divide="ignore", invalid="ignore"):
        eta = np.where(spare > 0, nbytes / spare, np.inf)
    return np.where((nbytes == 0) & (keep_up == 0), 0.0, eta)


def broker_etas(load: BrokerLoad, leader: np.ndarray,
                follower: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Seconds each broker needs for moves already set, at its own KIP-73 rates (per
    broker position; nan where that side has no rate, which this does not bound): as a
    destination receiving at its follower rate, and as a leader sending at its leader
    rate. inf where it never catches up with its keep-up writes."""
    with np.errstate(invalid="ignore"):
        into = np.where(np.isnan(follower), 0.0,
                        catch_up_seconds(load.bytes_in, load.keep_up_in, follower))
        out = np.where(np.isnan(leader), 0.0,
                       catch_up_seconds(load.bytes_out, load.keep_up_out, leader))
    return into, out


def eta_at_rates(load: BrokerLoad, leader: np.ndarray, follower: np.ndarray) -> float:
    """Seconds for moves already set (broker_etas): the slowest broker paces the move
    (one rate for all would let an unrelated broker's low rate set the figure). inf when
    a broker never catches up with its keep-up writes."""
    into, out = broker_etas(load, leader, follower)
    return float(np.max(np.maximum(into, out), initial=0.0))


def batched_eta_seconds(snap: Snapshot, plan: Reassignment, batches: list[np.ndarray],
                        throttle: float, tick: float = 0.0) -> float:
    """Seconds to run ``plan`` as the executor runs it: ``batches`` (plan entry indexes,
    engines.batches.execution_batches) one after another, each as long as its slowest
    broker at ``throttle`` (KIP-73 rates bound each broker, and a batch ends when its last
    move does). Where the per-broker cap puts uneven work in each batch this is longer
    than the whole plan's ETA, which lets every broker's copies overlap. ``tick``: the
    executor looks once per tick (backend/executor/thread.py's interval), so a batch lasts
    whole ticks, at least one. inf when a batch never catches up (the throttle at or below
    its keep-up writes)."""
    moves = proposed_moves(snap, plan)
    nb, nbat = snap.n_brokers, len(batches)
    if not len(moves) or not nbat:
        return 0.0
    batch_of_entry = np.full(len(plan), -1, np.int64)
    batch_of_entry[np.concatenate(batches)] = np.repeat(np.arange(nbat),
                                                        [len(b) for b in batches])
    batch = batch_of_entry[np.searchsorted(plan.rows, moves.rows)]  # plan rows ascend
    size = snap.part_size[moves.rows].astype(np.float64)
    rate = snap.part_rate[moves.rows]
    n_dst = moves.n_destinations.astype(np.float64)
    dst_move = np.repeat(np.arange(len(moves)), moves.n_destinations)
    cells = nbat * nb

    def per_cell(keys: np.ndarray, weights: np.ndarray) -> np.ndarray:
        return np.bincount(keys, weights=weights, minlength=cells)

    into = batch[dst_move] * nb + moves.dst_brokers
    out_of = batch * nb + moves.leader
    eta = np.maximum(
        catch_up_seconds(per_cell(into, size[dst_move]), per_cell(into, rate[dst_move]),
                         throttle),
        catch_up_seconds(per_cell(out_of, size * n_dst), per_cell(out_of, rate * n_dst),
                         throttle))
    per_batch = eta.reshape(nbat, nb).max(axis=1)
    if tick > 0:
        per_batch = np.maximum(np.ceil(per_batch / tick), 1.0) * tick
    return float(per_batch.sum())


def safe_band(client_in: np.ndarray, replication_factor: np.ndarray,
              capacity: float) -> tuple[np.ndarray, np.ndarray]:
    """KIP-73 Q&A 4: IN < T < N - IN/R, as (low, high) per broker."""
    return client_in, capacity - client_in / replication_factor


def kip73_move_time(move_ratio: float, total_replica_bytes: float, max_bytes_in: float,
                    throttle: float) -> float | None:
    """MoveTime = MoveRatio x TotalLogSizePerBroker x #Brokers / (T - max(BytesInPerSec)).

    TotalLogSizePerBroker x #Brokers is the cluster's replica bytes. None when the
    denominator is not positive: by the KIP's own estimate the move never finishes.
    """
    spare = throttle - max_bytes_in
    return move_ratio * total_replica_bytes / spare if spare > 0 else None


def max_fetch_response_bytes(throttle: float, capacity: float, n_brokers: int,
                             window_total_seconds: float) -> float:
    """KIP-73 Q&A 5: the first throttled fetches must return within the quota window.

    window_total x min(T, N / #brokers): the leader's throttle bounds it on small
    clusters (1 MB/s x 10 s = 10 MB), the follower's network share on large ones
    (10 s x 100 MB/s / 500 = 2 MB).
    """
    return window_total_seconds * min(throttle, capacity / n_brokers)


def autothrottle_rate(utilization: np.ndarray, capacity: float, prev_throttle: float = 0.0,
                      max_pct: float = AUTOTHROTTLE_MAX_PCT,
                      min_rate: float = AUTOTHROTTLE_MIN_RATE) -> np.ndarray:
    """kafka-kit autothrottle's replicationHeadroom, vectorised.

    max((capacity - nonThrottledUtil - overCapacity) x maxPct/100, minRate) with
    nonThrottledUtil = max(util - prevThrottle, 0), overCapacity = max(util - capacity, 0).
    """
    non_throttled = np.maximum(utilization - prev_throttle, 0.0)
    over = np.maximum(utilization - capacity, 0.0)
    return np.maximum((capacity - non_throttled - over) * (max_pct / 100.0), min_rate)


# kafka-kit autothrottle's --change-threshold default (DataDog/kafka-kit
# cmd/autothrottle/main.go): a rate is rewritten only when it moves by more than this
# percentage, so brokers do not get a config update every interval.
AUTOTHROTTLE_CHANGE_PCT = 10.0


def adaptive_rates(tx_util: np.ndarray, rx_util: np.ndarray, prev_leader: np.ndarray,
                   prev_follower: np.ndarray, capacity: float, ceiling: float, floor: float,
                   change_pct: float = AUTOTHROTTLE_CHANGE_PCT) -> tuple[np.ndarray, np.ndarray]:
    """The leader and follower rates of the throttled brokers for the next interval, as
    kafka-kit autothrottle decides them (DataDog/kafka-kit cmd/autothrottle/limits.go,
    replicationHeadroom): the leader rate from the broker's outbound headroom, the
    follower rate from its inbound headroom (autothrottle_rate, with the rates set last
    as prevThrottle), each clamped to
    [floor, ceiling] (the approved throttle is the ceiling), and a rate kept as it is
    unless the new one differs from it by more than ``change_pct`` percent.

    Per broker position of the arrays; ``prev_*`` nan where nothing was set yet (the new
    rate is then taken whatever it is)."""
    assert 0 < floor <= ceiling, "adaptive throttle: 0 < floor <= ceiling"
    out = []
    for util, prev in ((tx_util, prev_leader), (rx_util, prev_follower)):
        base = np.where(np.isnan(prev), 0.0, prev)
        new = np.clip(autothrottle_rate(util, capacity, base, min_rate=floor), floor, ceiling)
        with np.errstate(invalid="ignore"):
            small = np.abs(new - prev) * 100.0 <= change_pct * prev
        keep = ~np.isnan(prev) & small & (prev >= floor) & (prev <= ceiling)
        rate = np.floor(np.where(keep, prev, new))
        assert np.all((rate >= np.floor(floor)) & (rate <= ceiling))
        out.append(rate)
    return out[0], out[1]


@dataclass(eq=False)
class ThrottlePlan:
    """Everything `railyard throttle plan` reports; ``to_dict`` is the CLI's JSON."""

    snap: Snapshot
    params: ThrottleParams
    moves: Moves
    leader_lists: dict[str, str]
    follower_lists: dict[str, str]
    load: BrokerLoad
    throttled: np.ndarray  # broker positions that get both rates, ascending
    is_source: np.ndarray  # per broker position
    is_destination: np.ndarray
    eta: np.ndarray  # per broker position, inf = never
    suggested: np.ndarray  # autothrottle rate per broker position (throttled brokers only)

    @property
    def move_ratio(self) -> float:
        return len(self.moves) / self.snap.n_partitions

    @property
    def bytes_to_move(self) -> int:
        return round(float(self.load.bytes_in.sum()))

    def broker_rows(self) -> list[dict]:
        t, load = self.params.throttle, self.load
        low, high = safe_band(load.client_in, load.replication_factor, self.params.capacity)
        eta_in = catch_up_seconds(load.bytes_in, load.keep_up_in, self.params.rate)
        eta_out = catch_up_seconds(load.bytes_out, load.keep_up_out, self.params.rate)
        whole = self.params.rate_words()
        rows = []
        for b in self.throttled.tolist():
            why = []
            if np.isinf(eta_in[b]):
                why.append(f"never finishes: keep-up writes into its incoming replicas "
                           f"({load.keep_up_in[b]:.0f} B/s) use {whole}")
            if np.isinf(eta_out[b]):
                why.append(f"never finishes: keep-up writes it forwards to new replicas "
                           f"({load.keep_up_out[b]:.0f} B/s) use {whole}")
            if not low[b] < high[b]:
                why.append(f"no safe band: BytesInPerSec {low[b]:.0f} is not below "
                           f"N - IN/R = {high[b]:.0f} (KIP-73 Q&A 4: IN < T < N - IN/R): "
                           f"a network of {self.params.capacity:.0f} B/s cannot carry this "
                           f"broker's client traffic and any throttle")
            elif not t > low[b]:
                why.append(f"below the safe band: throttle {t:.0f} <= BytesInPerSec "
                           f"{low[b]:.0f} (KIP-73 Q&A 4: IN < T)")
            elif not t < high[b]:
                why.append(f"above the safe band: throttle {t:.0f} >= N - IN/R = {high[b]:.0f} "
                           f"(KIP-73 Q&A 4: T < N - IN/R), un-throttled client traffic "
                           f"may be starved")
            rows.append({
                "id": int(self.snap.broker_ids[b]),
                "source": bool(self.is_source[b]),
                "destination": bool(self.is_destination[b]),
                "bytes_in": round(float(load.bytes_in[b])),
                "bytes_out": round(float(load.bytes_out[b])),
                "client_bytes_in_per_sec": float(load.client_in[b]),
                "keep_up_in_per_sec": float(load.keep_up_in[b]),
                "keep_up_out_per_sec": float(load.keep_up_out[b]),
                "replication_factor": int(load.replication_factor[b]),
                "eta_seconds": _finite(self.eta[b]),
                "safe_band": {"low": float(low[b]), "high": float(high[b])},
                "in_safe_band": bool(low[b] < t < high[b]),
                "suggested_throttle": round(float(self.suggested[b])),
                "diagnosis": "; ".join(why) or None,
            })
        return rows

    def to_dict(self) -> dict:
        p, snap, load = self.params, self.snap, self.load
        t = p.throttle
        stuck = self.throttled[np.isinf(self.eta[self.throttled])]
        eta = float(self.eta[self.throttled].max()) if len(self.throttled) else 0.0
        max_in = float(load.client_in.max())
        total_bytes = float((snap.part_size.astype(np.float64) * snap.replication_factors).sum())
        # a plan that only removes replicas (a lower replication factor) adds none: no
        # follower fetches anything, so the KIP's estimate of copying time does not apply
        nothing_to_copy = len(self.moves.dst_brokers) == 0
        move_time = 0.0 if nothing_to_copy else kip73_move_time(self.move_ratio, total_bytes,
                                                                max_in, p.rate)
        reached = (f"network capacity {p.rate:.0f} B/s (the throttle {t:.0f} B/s is more "
                   "than the network carries)" if p.capped else f"throttle {t:.0f} B/s")
        fetch_bound = max_fetch_response_bytes(t, p.capacity, snap.n_brokers,
                                               p.window_total_seconds)
        suggested = (round(float(self.suggested[self.throttled].min()))
                     if len(self.throttled) else None)
        rate = int(t) if float(t).is_integer() else t
        stuck_ids = snap.broker_ids[stuck].tolist()
        rows = self.broker_rows()
        return {
            "cluster": snap.cluster,
            "throttle": rate,
            "network_capacity": p.capacity,
            "network_capacity_source": "given" if p.network_capacity is not None
            else "default: 1 GbE (125000000 B/s), the network of KIP-73 Q&A 5",
            "moved_partitions": len(self.moves),
            "unchanged_partitions": self.moves.unchanged,
            "move_ratio": self.move_ratio,
            "bytes_to_move": self.bytes_to_move,
            "leader_throttled_replicas": self.leader_lists,
            "follower_throttled_replicas": self.follower_lists,
            "throttled_brokers": snap.broker_ids[self.throttled].tolist(),
            "broker_configs": {LEADER_RATE: rate, FOLLOWER_RATE: rate},
            "verify_removes": {
                "broker_configs": list(VERIFY_BROKER_CONFIGS),
                "brokers": snap.broker_ids.tolist(),
                "topic_configs": list(VERIFY_TOPIC_CONFIGS),
                "topics": sorted(self.leader_lists),
            },
            "brokers": rows,
            "outside_safe_band": [r["id"] for r in rows if not r["in_safe_band"]],
            "eta_seconds": None if len(stuck) else eta,
            "replication_rate": p.rate,
            "network_diagnosis": None if not p.capped else (
                f"the throttle {t:.0f} B/s is more than the network carries "
                f"({p.capacity:.0f} B/s): each broker copies at most {p.capacity:.0f} B/s"),
            "diagnosis": None if not len(stuck) else (
                f"never finishes: on brokers {', '.join(map(str, stuck_ids))} the "
                + (f"network capacity {p.rate:.0f} B/s" if p.capped else f"throttle {t:.0f} B/s")
                + " is at or below the keep-up writes of their moving partitions; "
                + ("a faster network, not a higher throttle, would end it" if p.capped
                   else "raise the throttle")),
            "kip73_move_time_seconds": move_time,
            "kip73_diagnosis": (
                "nothing to copy: the plan adds no replica (it only removes some), so no "
                "throttled fetch runs" if nothing_to_copy
                else None if move_time is not None else
                f"{reached} <= max(BytesInPerSec) {max_in:.0f} B/s: by the KIP's "
                f"estimate the move never finishes"),
            "quota_window_seconds": p.window_total_seconds,
            "max_fetch_response_bytes": int(np.floor(fetch_bound)),
            "fetch_response_max_bytes": p.fetch_response_max_bytes,
            "fetch_response_ok": bool(p.fetch_response_max_bytes <= fetch_bound),
            "suggested_throttle": suggested,
            "suggested_throttle_inputs": {
                "method": "kafka-kit autothrottle replicationHeadroom: max((capacity - "
                          "nonThrottledUtil - overCapacity) x maxPct/100, minRate), leaders "
                          "on transmit, followers on receive; the lowest over the "
                          "throttled brokers, since Kafka's tool sets one rate on all; "
                          "never above the network capacity",
                "capacity": p.capacity,
                "max_pct": AUTOTHROTTLE_MAX_PCT,
                "min_rate": AUTOTHROTTLE_MIN_RATE,
                "prev_throttle": 0.0,
                "transmit_utilization": "keep-up replication the broker sends as leader "
                                        "(consumer fetch traffic is not in the snapshot)",
                "receive_utilization": "client writes into partitions it leads plus "
                                       "keep-up replication it receives as follower",
            },
        }


def _finite(x: float) -> float | None:
    return None if np.isinf(x) else float(x)


def plan_throttle(snap: Snapshot, plan: Reassignment, params: ThrottleParams,
                  replica_lists: bool = True) -> ThrottlePlan:
    """The throttle configs, per-broker load, ETAs and checks for one reassignment.
    ``replica_lists=False`` leaves the throttled-replica configs empty: a plan preview
    shows ETAs and the safe band, and on 100k moves the lists cost more than the rest."""
    params = params.validated()
    moves = proposed_moves(snap, plan)
    leader, follower = throttled_replicas(snap, moves) if replica_lists else ({}, {})
    load = broker_load(snap, moves)
    nb = snap.n_brokers
    is_source = np.bincount(moves.src_brokers, minlength=nb) > 0
    is_dest = np.bincount(moves.dst_brokers, minlength=nb) > 0
    t = params.rate  # min(T, N): no broker copies faster than its network carries
    eta = np.maximum(catch_up_seconds(load.bytes_in, load.keep_up_in, t),
                     catch_up_seconds(load.bytes_out, load.keep_up_out, t))
    # kafka-kit's headroom, never above N: its 10 MB/s floor (minRate) is more than a
    # slower network carries, and a throttle above N is never reached
    suggested = np.minimum(np.minimum(
        np.where(is_source, autothrottle_rate(load.tx_util, params.capacity), np.inf),
        np.where(is_dest, autothrottle_rate(load.rx_util, params.capacity), np.inf)),
        np.floor(params.capacity))  # whole bytes/s, as the rate configs are
    return ThrottlePlan(snap, params, moves, leader, follower, load,
                        np.flatnonzero(is_source | is_dest), is_source, is_dest, eta, suggested)
