"""One step of simulated time: produce traffic, retention, replication under KIP-73 throttles.

Kafka's rules, as arrays over replicas (KIP-73, Kafka's ReplicationQuotaManager, KAFKA-4313):
- producers write to the leaders of writable partitions (ReadWrite mode, online); a
  topic's traffic spreads over its writable partitions, so a ReadOnly partition's share
  moves to its siblings;
- in-sync followers always keep up and are never throttled, but their bytes count
  against the throttle of every side whose throttled-replica list names them;
- an out-of-sync follower wants its lag plus this step's writes (keep-up writes count);
  on a throttled side every broker shares ``rate x dt`` minus the in-sync bytes among
  its throttled catching-up replicas max-min fairly (an equal share each, none above
  what it wants, as Kafka's fetcher gives every partition its turn); unthrottled
  catch-up is bounded by the follower broker's network; what is not fetched stays lag,
  so a throttle below the write rate makes lag grow and the move never completes;
- a follower whose lag reaches zero joins the ISR; replicas on dead brokers fall behind;
- the leader side's byte-rate also records every follower fetch's response overhead,
  throttled partitions or not (``fetch_overhead_rate``), so it never reads 0 while
  followers fetch; the follower side records throttled partitions' bytes only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from backend.twin.state import READ_WRITE, TwinState

CAUGHT_UP_BYTES = 1.0  # below one byte of lag a follower is at the log end

# The leader's LeaderReplication sensor records every follower fetch, throttled or not:
# KafkaApis.handleFetchRequest calls quotas.leader.record(sizeOfThrottledPartitions(...))
# for each fetch from a follower, and sizeOfThrottledPartitions is FetchResponse.sizeOf over
# the throttled partitions only (core/src/main/scala/kafka/server/KafkaApis.scala). With
# none, sizeOf is still 4 (its size prefix) plus the response body without partitions
# (clients/src/main/java/org/apache/kafka/common/requests/FetchResponse.java). A replica
# fetcher sends fetch version 12 or later on every KRaft metadata version
# (MetadataVersion.fetchRequestVersion, RemoteLeaderEndPoint.buildFetch), all flexible
# versions of clients/src/main/resources/common/message/FetchResponse.json: ThrottleTimeMs
# int32, ErrorCode int16, SessionId int32, Responses a compact array (an unsigned varint
# length + 1: one byte for none) and the tagged-field count (one byte: NodeEndpoints is
# tagged and empty in sizeOf).
EMPTY_FETCH_RESPONSE_BYTES = 4 + 4 + 2 + 4 + 1 + 1
# replica.fetch.wait.max.ms and replica.fetch.min.bytes (1) by default
# (server/src/main/java/org/apache/kafka/server/config/ReplicationConfigs.java): with no
# new byte the leader holds a follower's fetch this long (ReplicaManager.fetchMessages ->
# DelayedFetch), and the fetcher sends the next one at once (AbstractFetcherThread
# backs off only when it has no partition to fetch)
REPLICA_FETCH_WAIT_MAX_MS = 500
IDLE_FETCHES_PER_SECOND = 1000 / REPLICA_FETCH_WAIT_MAX_MS


@dataclass
class StepFlows:
    """Bytes moved in one step, per broker position."""

    replication_in: np.ndarray
    replication_out: np.ndarray
    reassignment_in: np.ndarray
    reassignment_out: np.ndarray
    leader_throttled: np.ndarray  # bytes the leader side records: throttled partitions'
    # bytes sent plus every follower fetch's response overhead (fetch_overhead_rate)
    follower_throttled: np.ndarray  # bytes of throttled partitions received (follower side)
    produced: np.ndarray  # per partition


def partition_rates(state: TwinState, topic_factor: np.ndarray) -> np.ndarray:
    """Produce bytes/s per partition after modes, offline leaders and traffic factors."""
    snap = state.snap
    base = state.base_rate * topic_factor[snap.part_topic]
    writable = (state.mode == READ_WRITE) & (state.leader >= 0)
    total = np.bincount(snap.part_topic, weights=base, minlength=snap.n_topics)
    if writable.all():  # the usual case: open_ is total, the scale 1 wherever it is not 0
        scale = np.divide(total, total, out=np.zeros_like(total), where=total > 0)
        return base if (scale == 1.0).all() else base * scale[snap.part_topic]
    open_ = np.bincount(snap.part_topic, weights=base * writable, minlength=snap.n_topics)
    scale = np.divide(total, open_, out=np.zeros_like(total), where=open_ > 0)
    return base * writable * scale[snap.part_topic]


def fetch_overhead_rate(state: TwinState) -> np.ndarray:
    """Bytes/s of follower-fetch response overhead each broker's leader side records:
    one replica fetcher per follower broker and leader broker (num.replica.fetchers = 1,
    ReplicationConfigs.java) for every live broker holding a follower of a partition the
    broker leads, each fetching IDLE_FETCHES_PER_SECOND times, EMPTY_FETCH_RESPONSE_BYTES
    each. It is the idle floor: under writes Kafka answers a fetch as soon as a byte is
    there, so a busy broker's followers fetch more often and it records more. Kafka also
    checks leader.replication.throttled.rate against this sensor, overhead included; the
    twin's throttle arithmetic (step) leaves the overhead out, tens of bytes/s a fetcher."""
    def compute():
        n_b = state.snap.n_brokers
        idx = _fetching(state)
        pairs = state.replica_leader_broker[idx].astype(np.int64) * n_b \
            + state.snap.replica_broker[idx]
        if n_b * n_b <= 8 * len(pairs):  # a flag per (leader, follower) pair: no sort
            seen = np.zeros(n_b * n_b, bool)
            seen[pairs] = True
            fetchers = seen.reshape(n_b, n_b).sum(axis=1)
        else:
            fetchers = np.bincount(np.unique(pairs) // n_b, minlength=n_b)
        return fetchers * IDLE_FETCHES_PER_SECOND * EMPTY_FETCH_RESPONSE_BYTES
    return state.cached("fetch_overhead_rate", compute)


def _fetching(state: TwinState) -> np.ndarray:
    """Indexes of the replicas that fetch: followers of an online partition on a live
    broker (cached until the next change)."""
    def compute():
        lead_b = state.replica_leader_broker
        return np.flatnonzero(~state.is_leader_replica & (lead_b >= 0)
                              & state.alive[state.snap.replica_broker])
    return state.cached("fetching", compute)


def _share(budget: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Fraction of what is wanted that each broker's budget grants (1 when unconstrained)."""
    return np.minimum(1.0, np.divide(budget, want, out=np.ones(len(want)), where=want > 0))


def _fair(budget: np.ndarray, group: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Bytes each item gets of its group's budget, max-min fair: an equal share each, none
    above what it wants, what one leaves shared by the rest. Kafka's replica fetcher hands
    every partition up to replica.fetch.max.bytes a fetch while the quota allows
    (ReplicaFetcherThread, KIP-73), so a small move is never starved by a large one; a
    share in proportion to what each wants would starve it behind a move with gigabytes
    left."""
    n = len(want)
    if n == 0:
        return np.zeros(0)
    order = np.lexsort((want, group))
    g, w = group[order], want[order]
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    sizes = np.diff(np.r_[starts, n])
    before = np.cumsum(w) - w  # wanted by the items ahead (smaller wants first)
    ahead = before - np.repeat(before[starts], sizes)
    left = np.repeat(sizes, sizes) - (np.arange(n) - np.repeat(starts, sizes))
    level = np.maximum(budget[g] - ahead, 0.0) / left  # if this item and the rest share
    full = w <= level  # a sorted group's satisfied items come first
    rest = np.maximum.reduceat(np.where(full, -np.inf, level), starts)
    got = np.empty(n)
    got[order] = np.where(full, w, np.repeat(rest, sizes))
    return got


def _followers(state: TwinState, leader_rate: np.ndarray,
               follower_rate: np.ndarray) -> tuple[np.ndarray, ...]:
    """The replicas that fetch (``_fetching``), in replica order, with their partition,
    broker and leader broker, and which of them are throttled on the leader or follower
    side (indexes into these arrays). Only they can move bytes, so the step's
    per-replica arithmetic runs over them alone.

    Cached until the next change (leaders, liveness, assignment and throttle lists all
    touch) and for the rates' finiteness it was computed with: a side is throttled only
    where its broker has a rate, and a rate set or removed touches nothing, so a change
    of which brokers have one recomputes the flags at the next step. KIP-73: the
    brokers apply a changed leader/follower.replication.throttled.rate at once (Kafka's
    ReplicationQuotaManager.updateQuota on the dynamic config change; a removed rate is
    an unbounded quota), not at the next leader or assignment change."""
    key = (np.isfinite(leader_rate).tobytes(), np.isfinite(follower_rate).tobytes())
    hit = state.derived.get("followers")
    if hit is not None and hit[0] == key:
        return hit[1]
    idx = _fetching(state)
    rp = state.snap.replica_partition[idx]
    rb = state.snap.replica_broker[idx].astype(np.int64)
    lead_b = state.replica_leader_broker[idx].astype(np.int64)
    # throttled on the leader side: the leader's own replica is in the leader list
    # (none when the leader holds no replica of the partition) and its rate is set
    slot = state.leader_slot
    listed = np.zeros(len(slot), bool)
    listed[slot >= 0] = state.in_leader_list[slot[slot >= 0]]
    lthr = listed[rp] & np.isfinite(leader_rate)[lead_b]
    fthr = state.in_follower_list[idx] & np.isfinite(follower_rate)[rb]
    out = (idx, rp, rb, lead_b, lthr, fthr, np.flatnonzero(lthr), np.flatnonzero(fthr))
    state.derived["followers"] = (key, out)
    return out


def step(state: TwinState, dt: float, topic_factor: np.ndarray, leader_rate: np.ndarray,
         follower_rate: np.ndarray, network: np.ndarray) -> StepFlows:
    """Advance ``state`` by ``dt`` seconds in place and return the bytes that moved.

    Per-replica sums run over the fetching followers only (``_followers``): every other
    replica moves no byte, and leaving zeros out of a sum leaves it bit-for-bit equal."""
    snap = state.snap
    n_b = snap.n_brokers
    rp, rb = snap.replica_partition, snap.replica_broker
    lead_b = state.replica_leader_broker
    produced = partition_rates(state, topic_factor) * dt
    state.log_size = np.minimum(state.log_size + produced, np.maximum(state.log_cap,
                                                                     state.log_size))
    leaders = state.leader
    online = leaders >= 0
    cell = leaders[online].astype(np.int64) * snap.n_topics + snap.part_topic[online]
    state.bytes_in += np.bincount(cell, weights=produced[online],
                                  minlength=n_b * snap.n_topics).reshape(n_b, snap.n_topics)
    state.meter_exists.reshape(-1)[cell[produced[online] > 0]] = True

    fol, f_rp, f_rb, f_lead, f_lthr, f_fthr, l_idx, f_idx = _followers(
        state, leader_rate, follower_rate)

    # dead replicas fall behind; in-sync followers take this step's writes
    dead = state.cached("dead_idx", lambda: np.flatnonzero(~state.alive[rb] & (lead_b >= 0)))
    state.lag[dead] += produced[rp[dead]]
    wrote = produced[f_rp]
    sync = state.isr[fol]
    got_sync = np.where(sync, wrote, 0.0)

    c = np.flatnonzero(~sync)  # catching up, as positions among the followers
    catch = fol[c]
    want = state.lag[catch] + wrote[c]
    c_lead, c_fol = f_lead[c], f_rb[c]
    c_lthr, c_fthr = f_lthr[c], f_fthr[c]
    # an offline partition's replicas have no leader (-1) and took nothing (got_sync 0)
    keep_l = np.bincount(f_lead[l_idx], weights=got_sync[l_idx], minlength=n_b)
    keep_f = np.bincount(f_rb[f_idx], weights=got_sync[f_idx], minlength=n_b)
    # what the throttles let through, each broker's left-over rate shared fairly among
    # the replicas catching up through it: first on the follower side, then on the
    # leader side among what the followers can take (a replica its follower's throttle
    # holds back leaves the leader's rate to the others); the network bounds the rest
    allowed = want.copy()
    allowed[c_fthr] = _fair(np.maximum(follower_rate * dt - keep_f, 0.0), c_fol[c_fthr],
                            want[c_fthr])
    allowed[c_lthr] = _fair(np.maximum(leader_rate * dt - keep_l, 0.0), c_lead[c_lthr],
                            allowed[c_lthr])
    share_n = _share(network * dt, np.bincount(c_fol, weights=allowed, minlength=n_b))
    got_catch = allowed * share_n[c_fol]
    state.lag[catch] = want - got_catch
    joined = catch[state.lag[catch] < CAUGHT_UP_BYTES]
    state.lag[joined] = 0.0
    state.isr[joined] = True

    got = got_sync
    got[c] = got_catch
    # reassignment traffic: the adding replicas among the fetching followers. One whose
    # partition is offline (every replica's broker failed: leader -1) or whose broker is
    # dead fetches nothing and is left out; a leaderless partition has no leader to
    # fetch from, so its move copies nothing and stays in flight (listed by
    # ListPartitionReassignments, KIP-455) until a leader is elected again, as Kafka's
    # ReplicaFetcherThread fetches only from a partition's current leader.
    adding_idx = state.cached("adding_idx", lambda: np.flatnonzero(state.adding))
    at = np.minimum(np.searchsorted(fol, adding_idx), max(len(fol) - 1, 0))
    a_pos = at[fol[at] == adding_idx] if len(fol) else np.zeros(0, np.int64)
    return StepFlows(
        replication_in=np.bincount(f_rb, weights=got, minlength=n_b),
        replication_out=np.bincount(f_lead, weights=got, minlength=n_b),
        reassignment_in=np.bincount(f_rb[a_pos], weights=got[a_pos], minlength=n_b),
        reassignment_out=np.bincount(f_lead[a_pos], weights=got[a_pos], minlength=n_b),
        leader_throttled=np.bincount(f_lead[l_idx], weights=got[l_idx], minlength=n_b)
        + fetch_overhead_rate(state) * dt,
        follower_throttled=np.bincount(f_rb[f_idx], weights=got[f_idx], minlength=n_b),
        produced=produced,
    )
