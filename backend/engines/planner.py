"""Reassignment planner: minimal, limit- and rack-aware plans for four goals.

Goals (one per run): ``limits`` (every broker at most max.broker.partitions x target
utilisation), ``drain`` (empty named brokers), ``add`` (fill named new brokers to the
average, replicas then leaders), ``balance`` (replica then leader counts within a
threshold of the average, Cruise Control's replica.count.balance.threshold of 1.10).

Every goal reduces to the same transfer problem: how many replicas each broker must give
(``give``), how many each should take to keep the result even (``quota``, by level
filling) and how many it may take at most (``room``: the limit, or the balance bound).
The engine then moves replicas in vectorised rounds: every giving broker offers its
cheapest movable replicas (smallest partitions, followers before leaders), each offer
samples a destination in proportion to remaining quota among the brokers it may legally
go to (no second replica of the partition, no loss of rack spread, room left), and each
destination accepts offers up to its quota. A replica move reduces one broker's excess by
exactly one, so the number of moves is the sum of the excess whenever every excess
replica finds a legal home; what cannot is reported as unresolved, never dropped.

Counts are KIP-578's: internal topics are neither counted nor moved, except that a drain
moves them off the drained brokers.

Brokers a finished drain emptied (``Goal.keep_empty``) stay empty under every goal: they
take nothing, whatever they hold again (Kafka places new topics' replicas on any live
broker) is drained first, and averages are taken over the other brokers. Naming one in
``add`` (or ``drain``) is how an operator takes it back.

Randomness (tie-breaks, destination sampling) comes from ``seed`` only, so a plan is
reproducible.

Partitions already being reassigned (``Snapshot.in_flight``) count at their target, the
replicas Kafka lists minus the removing ones (KIP-455), and are never moved: a new target
for a moving partition would replace the move in flight, and the union Kafka lists while
it moves is not a replica set to plan from (it would raise the replication factor).
``PlanResult.in_flight`` names them; a goal they stand in the way of says so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from backend.engines.batches import new_replicas, rank_within
from backend.engines.fit import level_fill
from backend.errors import BadInput
from backend.model.reassignment import (
    Reassignment,
    after_moves,
    in_flight_rows,
    reassignment_between,
)
from backend.model.snapshot import Limits, Snapshot

GOALS = ("limits", "drain", "add", "balance")
BALANCE_THRESHOLD = 1.10  # Cruise Control's replica.count.balance.threshold
# at 2 the band's floor, average x (2 - threshold), reaches 0: a wider band only lets the
# busiest broker grow, which balances nothing
MAX_BALANCE_THRESHOLD = 2.0
_UNLIMITED = np.int64(2**40)  # room of a broker with no limit (more than any cluster holds)
_CELLS_PER_CHUNK = 4_000_000  # candidate x destination cells evaluated at once


@dataclass(frozen=True)
class Goal:
    """What the operator asks for; ``brokers`` are ids (drain and add only);
    ``keep_empty`` the ids of drained brokers no goal refills (unless it names them)."""

    kind: str
    brokers: tuple[int, ...] = ()
    target_utilization: float = 1.0
    threshold: float = BALANCE_THRESHOLD
    keep_empty: tuple[int, ...] = ()


@dataclass(frozen=True)
class Fields:
    """What a refusal names: the CLI's flags by default, a page's or the API's fields
    when a service asks (as engines.shrink's CLI_FIELDS)."""

    brokers: str = "--brokers"
    keep_empty: str = "--keep-empty"
    target_utilization: str = "--target-utilization"
    limit: str = "set it in the snapshot or with --max-broker-partitions"


CLI_FIELDS = Fields()


@dataclass(eq=False)
class PlanResult:
    """The plan (only partitions that change) and what it could not achieve."""

    goal: Goal
    limits: Limits
    before: Snapshot
    after: Snapshot
    reassignment: Reassignment
    unresolved: list[dict] = field(default_factory=list)
    in_flight: list[dict] = field(default_factory=list)  # moving partitions left alone

    @property
    def ok(self) -> bool:
        return not self.unresolved


def broker_ceiling(limits: Limits, target_utilization: float = 1.0) -> int | None:
    """Most counted replicas a destination may hold: floor(limit x utilisation)."""
    if limits.max_broker_partitions is None:
        return None
    return int(np.floor(limits.max_broker_partitions * target_utilization + 1e-9))


def plan(snap: Snapshot, goal: Goal, limits: Limits | None = None, seed: int = 0,
         fields: Fields = CLI_FIELDS) -> PlanResult:
    """The minimal plan that reaches ``goal`` on ``snap`` (or as close as legally possible),
    computed on the cluster as it will be once the moves in flight finish (``before``),
    leaving those partitions out; a refusal names ``fields``."""
    limits = snap.limits if limits is None else limits
    moving = in_flight_rows(snap)
    left_out = in_flight_entries(snap)
    snap = after_moves(snap)
    named = _validate(snap, goal, limits, fields)
    is_open = np.ones(snap.n_brokers, bool)  # brokers that may take replicas
    kept = snap.broker_positions(list(goal.keep_empty), where=fields.keep_empty)
    is_open[np.setdiff1d(kept, named)] = False
    if not is_open.any():
        raise BadInput(f"every broker is kept empty ({fields.keep_empty}: drained); name "
                       "the ones to use again in an add goal")
    closed = np.flatnonzero(~is_open)
    ceiling = broker_ceiling(limits, goal.target_utilization)
    eligible = is_open.copy()
    if goal.kind == "drain":
        eligible[named] = False
    shortage = _under_provisioned(snap, ceiling, eligible)
    if shortage:
        empty = reassignment_between(snap, snap)
        return PlanResult(goal, limits, snap, snap, empty, [shortage], left_out)
    cap = np.full(snap.n_brokers, _UNLIMITED if ceiling is None else ceiling, np.int64)
    cap[closed] = 0

    def attempt(run: Callable[[_Work], None]) -> PlanResult:
        work = _Work(snap, seed, moving, is_open)
        if goal.kind != "drain" and len(closed):  # what a kept-empty broker holds again
            _drain_goal(work, cap, closed)
        run(work)
        after = work.snapshot()
        return PlanResult(goal, limits, snap, after, reassignment_between(snap, after),
                          goal_unresolved(after, goal, limits, named, before=snap,
                                          moving=moving, closed=closed), left_out)

    if goal.kind == "balance":  # two orders of passes; neither is always the smaller plan
        return min((attempt(lambda w, first=first: _balance_goal(w, cap, goal.threshold,
                                                                 first))
                    for first in (True, False)),
                   key=lambda r: (len(r.unresolved),
                                  int(new_replicas(snap, r.reassignment).sum())))
    return attempt({"limits": lambda w: _limits_goal(w, cap),
                    "drain": lambda w: _drain_goal(w, cap, np.union1d(named, closed)),
                    "add": lambda w: _add_goal(w, cap, named)}[goal.kind])


def in_flight_entries(snap: Snapshot) -> list[dict]:
    """The moving partitions of ``snap`` a plan leaves alone, for the preview: Kafka's
    replicas, adding and removing, and the target they move to (KIP-455)."""
    return [{"partition": f"{m['topic']}-{m['partition']}", "replicas": list(m["replicas"]),
             "adding": list(m["adding"]), "removing": list(m["removing"]),
             "target": [b for b in m["replicas"] if b not in m["removing"]]}
            for m in sorted(snap.in_flight, key=lambda m: (m["topic"], m["partition"]))
            if snap.has_topic(m["topic"])]


# ---- checks before any search -------------------------------------------------------------
def _validate(snap: Snapshot, goal: Goal, limits: Limits, fields: Fields) -> np.ndarray:
    """Broker positions the goal names; BadInput for a goal that cannot be asked."""
    if goal.kind not in GOALS:
        raise BadInput(f"goal must be one of {', '.join(GOALS)}, got '{goal.kind}'")
    if not 0 < goal.target_utilization <= 1:
        raise BadInput(f"{fields.target_utilization}: must be in (0, 1], got "
                       f"{goal.target_utilization}")
    if not 1 <= goal.threshold <= MAX_BALANCE_THRESHOLD:
        raise BadInput(f"balance threshold must be from 1 to {MAX_BALANCE_THRESHOLD:g}, got "
                       f"{goal.threshold:g}")
    if goal.kind == "limits" and limits.max_broker_partitions is None:
        raise BadInput(f"the limits goal needs max.broker.partitions and cluster "
                       f"'{snap.cluster}' has none: {fields.limit}, or choose another goal")
    if goal.kind in ("drain", "add"):
        if not goal.brokers:
            raise BadInput(f"the {goal.kind} goal needs {fields.brokers} (the broker ids to "
                           f"{goal.kind})")
        named = np.unique(snap.broker_positions(list(goal.brokers), where=fields.brokers))
        if len(named) == snap.n_brokers:
            raise BadInput(f"{fields.brokers}: names every broker; {goal.kind} needs others "
                           f"to {'take' if goal.kind == 'drain' else 'give'} replicas")
        return named
    if goal.brokers:
        raise BadInput(f"{fields.brokers}: applies to the drain and add goals, not "
                       f"'{goal.kind}'")
    return np.zeros(0, np.int32)


def _under_provisioned(snap: Snapshot, ceiling: int | None, eligible: np.ndarray) -> dict | None:
    """Cruise Control's ReplicaCapacityGoal pre-check on the snapshot's counted replicas."""
    shortage = under_provisioned(snap.counted_replicas(), ceiling, int(eligible.sum()))
    if shortage:
        shortage["message"] += " (no plan produced)"
    return shortage


def under_provisioned(total: int, ceiling: int | None, brokers: int) -> dict | None:
    """Replicas beyond ceiling x brokers, and the brokers to add (None when they fit).

    Shared with the capacity forecast: brokers to add by a date is this check on the
    replicas projected for that date."""
    if ceiling is None:
        return None
    capacity = ceiling * brokers
    if total <= capacity:
        return None
    add = -(-(total - capacity) // ceiling) if ceiling > 0 else None
    return {
        "kind": "under_provisioned",
        "replicas": total,
        "capacity": capacity,
        "eligible_brokers": brokers,
        "broker_ceiling": ceiling,
        "brokers_to_add": add,
        "message": f"under-provisioned: {total} replicas but {brokers} eligible "
                   f"brokers x {ceiling} = {capacity}; "
                   + (f"add at least {add} brokers or raise max.broker.partitions"
                      if add is not None else "raise max.broker.partitions"),
    }


# ---- goals -> give / quota / room -----------------------------------------------------------
# A transfer maps current counts and a set of member brokers to what each member gives,
# should take (quota) and may take at most (room); non-members do nothing.
Transfer = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]


def _run(work: _Work, movable: np.ndarray, transfer: Transfer,
         cluster_first: bool = False) -> None:
    """Rack by rack first, then across the cluster for whatever is left.

    Staying in its rack never lowers a partition's rack spread, while crossing racks is
    barred whenever a partition already uses the destination rack (always, when RF equals
    the rack count). Balancing each rack first therefore pairs givers with takers that
    can actually trade; the cluster-wide pass then uses cross-rack moves where allowed.
    ``cluster_first`` adds a cluster-wide pass before the racks: for balancing, evening
    racks on their own moves replicas the cluster-wide pass then has to move again.
    """
    n = work.snap.n_brokers
    everyone = np.ones(n, bool)
    groups = [] if work.rack is None else [work.rack == r for r in np.unique(work.rack)]
    for members in [*([everyone] if cluster_first and groups else []), *groups, everyone]:
        counts = np.bincount(work.rb[movable], minlength=n).astype(np.int64)
        give, quota, room = (np.where(members, a, 0) for a in transfer(counts, members))
        work.move_replicas(movable, give, quota, room)


def _limits_goal(work: _Work, cap: np.ndarray) -> None:
    def transfer(counts, members):
        give = np.where(members, np.maximum(counts - cap, 0), 0)
        room = np.where(members & (give == 0), np.maximum(cap - counts, 0), 0)
        return give, _spread(counts, room, int(give.sum())), room

    _run(work, work.counted, transfer)


def _drain_goal(work: _Work, cap: np.ndarray, drained: np.ndarray) -> None:
    """Counted replicas within the limits first, then internal ones (never limited)."""
    keep = work.open.copy()
    keep[drained] = False
    for movable, limit in ((work.counted, cap), (~work.counted, np.where(keep, _UNLIMITED, 0))):
        def transfer(counts, members, limit=limit):
            give = np.where(members & ~keep, counts, 0)
            room = np.where(members & keep, np.maximum(limit - counts, 0), 0)
            return give, _spread(counts, room, int(give.sum())), room

        _run(work, movable, transfer)


def _add_goal(work: _Work, cap: np.ndarray, new: np.ndarray) -> None:
    """New brokers take up to the floor of the average; the fullest old brokers give."""
    is_new = np.zeros(work.snap.n_brokers, bool)
    is_new[new] = True
    low = int(work.counts().sum()) // int(work.open.sum())

    def transfer(counts, members):  # a rack's own even, over the brokers that may take
        floor = min(low, int(counts[members].sum()) // max(int((members & work.open).sum()), 1))
        want = np.where(members & is_new, np.maximum(np.minimum(floor, cap) - counts, 0), 0)
        room = np.where(members & is_new, np.maximum(np.minimum(low, cap) - counts, 0), 0)
        most = np.where(members & ~is_new, np.maximum(counts - floor, 0), 0)
        return _shed(counts, most, int(want.sum())), want, room

    _run(work, work.counted, transfer)
    _top_up(work, np.minimum(low, cap), is_new)
    # then leadership, which needs no data: a new broker that only follows takes no
    # produce or fetch traffic until someone balances leaders, so it leads its share
    # (the floor of the average), first of the partitions the plan gives it
    leaders = work.leader_counts()
    _top_up(work, int(leaders.sum()) // int(work.open.sum()), is_new, leaders=True)


def _balance_goal(work: _Work, cap: np.ndarray, threshold: float,
                  cluster_first: bool) -> None:
    """Replica counts into the band, then leader counts (leadership never needs data)."""
    is_open, n_open = work.open, int(work.open.sum())
    avg = work.counts().sum() / n_open
    _run(work, work.counted, _band_transfer(avg, cap, threshold, is_open), cluster_first)
    _top_up(work, balance_bounds(avg, threshold)[0], is_open)
    leaders = work.leader_counts()
    avg = leaders.sum() / n_open
    transfer = _band_transfer(avg, np.where(is_open, _UNLIMITED, 0), threshold, is_open)
    work.move_leaders(*transfer(leaders, np.ones(len(leaders), bool)))
    _top_up(work, balance_bounds(avg, threshold)[0], is_open, leaders=True)


def _top_up(work: _Work, floor, takers: np.ndarray, leaders: bool = False) -> None:
    """Takers still below ``floor`` pull from every broker above it, cheapest first.

    Givers chosen fullest-first may share no legal move with a taker (no common
    partition, or racks in the way); here any broker above the floor may give instead.
    """
    counts = work.leader_counts() if leaders else work.counts()
    need = np.where(takers, np.maximum(floor - counts, 0), 0)
    if not need.any():
        return
    most = np.where(need > 0, 0, np.maximum(counts - floor, 0))
    window = max(1, -(-2 * int(need.sum()) // max(int((most > 0).sum()), 1)))
    if leaders:
        work.move_leaders(most, need, need, window)
    else:
        work.move_replicas(work.counted, most, need, need, window)


def balance_bounds(avg: float, threshold: float) -> tuple[int, int]:
    """Integer band [low, high] around ``avg``: Cruise Control's avg x (2 - t) .. avg x t,
    widened to the nearest integers when the band holds none."""
    high = max(int(np.floor(avg * threshold + 1e-9)), int(np.ceil(avg)))
    low = min(int(np.ceil(avg * (2 - threshold) - 1e-9)), int(np.floor(avg)))
    return low, high


def _band_transfer(avg: float, cap, threshold: float, is_open: np.ndarray) -> Transfer:
    """Fewest moves into the band: max(excess above it, deficit below it), the band and
    the deficit over the brokers that may take (``is_open``).

    Within one rack the band widens to the rack's own band, so a rack that racks alone
    keep above or below the cluster's average is still evened out inside.
    """

    def transfer(counts, members):
        low, high = balance_bounds(avg, threshold)
        takers = members & is_open
        if not members.all() and takers.any():
            rack_low, rack_high = balance_bounds(counts[members].sum() / takers.sum(),
                                                 threshold)
            low, high = min(low, rack_low), max(high, rack_high)
        ceiling = np.minimum(cap, high)
        over = np.where(members, np.maximum(counts - ceiling, 0), 0)
        under = np.where(takers, np.maximum(low - counts, 0), 0)
        moves = max(int(over.sum()), int(under.sum()))
        give = _shed(counts, np.where(members, np.maximum(counts - low, 0), 0), moves)
        room = np.where(members & (give == 0), np.maximum(ceiling - counts, 0), 0)
        return give, _spread(counts, room, int(give.sum())), room

    return transfer


def _spread(counts: np.ndarray, room: np.ndarray, total: int) -> np.ndarray:
    """Intake per broker that keeps the fullest receiver lowest (level filling)."""
    return level_fill(counts, room, min(total, int(room.sum())))


def _shed(counts: np.ndarray, most: np.ndarray, total: int) -> np.ndarray:
    """Replicas to take from each broker, fullest first, at most ``most`` each."""
    return level_fill(-counts, most, min(total, int(most.sum())))


# ---- the engine -----------------------------------------------------------------------------
class _Work:
    """The assignment being edited: a private copy of the replica array."""

    def __init__(self, snap: Snapshot, seed: int, frozen_rows: np.ndarray,
                 is_open: np.ndarray):
        self.snap = snap
        self.open = is_open  # brokers that may take replicas (not kept empty)
        self.rb = snap.replica_broker.copy()
        self.part = snap.replica_partition
        self.counted = ~snap.part_internal[self.part]
        self.frozen = np.zeros(snap.n_partitions, bool)  # partitions moving already
        self.frozen[frozen_rows] = True
        self.rng = np.random.default_rng(seed)
        if snap.rack_mode == "none":
            self.rack = None
        else:  # brokers without a rack form one more group of their own
            idx = snap.broker_rack_index.astype(np.int64)
            self.rack = np.where(idx < 0, len(snap.rack_names), idx)
            self.n_racks = len(snap.rack_names) + 1

    def counts(self) -> np.ndarray:
        return np.bincount(self.rb[self.counted], minlength=self.snap.n_brokers).astype(np.int64)

    def leader_counts(self) -> np.ndarray:
        heads = self.rb[self.snap.replica_offsets[:-1]][~self.snap.part_internal]
        return np.bincount(heads, minlength=self.snap.n_brokers).astype(np.int64)

    def snapshot(self) -> Snapshot:
        rows = np.arange(self.snap.n_partitions)
        return self.snap.with_replicas(rows, self.snap.replica_offsets, self.rb)

    # -- replicas --
    def move_replicas(self, movable: np.ndarray, give: np.ndarray, quota: np.ndarray,
                      room: np.ndarray, window: int | None = None) -> None:
        """Move ``give[b]`` movable replicas off each broker b, cheapest first (never a
        replica of a partition moving already)."""
        entries = np.flatnonzero(movable & ~self.frozen[self.part] & (give[self.rb] > 0))
        if not len(entries):
            return
        rows = self.part[entries]
        is_leader = entries == self.snap.replica_offsets[rows]
        order = np.lexsort((self.rng.random(len(entries)), is_leader,
                            self.snap.part_size[rows], self.rb[entries]))
        entries = entries[order]
        ledger = _Ledger(give.astype(np.int64), quota.astype(np.int64), room.astype(np.int64))

        def attempt(chosen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            moved = np.zeros(len(chosen), bool)
            stuck = np.zeros(len(chosen), bool)
            _, first = np.unique(self.part[entries[chosen]], return_index=True)
            once = np.sort(first)  # one move per partition per round keeps checks exact
            for lo in range(0, len(once), _chunk(ledger)):
                dests = np.flatnonzero(ledger.room > 0)
                idx = once[lo:lo + _chunk(ledger)]
                if not len(dests):
                    stuck[idx] = True
                    continue
                e = entries[chosen[idx]]
                col, use_room, ok = ledger.choose(self._allowed(e, dests), dests, self.rng)
                dest = dests[col]
                acc = ledger.accept(self.rb[e], dest, use_room, ok)
                self.rb[e[acc]] = dest[acc]
                moved[idx[acc]] = True
                stuck[idx[~ok]] = True
            return moved, stuck

        _rounds(self.rb[entries], ledger, attempt, window)

    def _allowed(self, e: np.ndarray, dests: np.ndarray) -> np.ndarray:
        """(len(e), len(dests)): may replica entry e move to the destination broker?

        Not onto a broker already holding the partition; not where rack spread drops:
        spread is kept iff the destination's rack is new to the other replicas or the
        source's rack is already among them.
        """
        off = self.snap.replica_offsets
        rows = self.part[e]
        start, length = off[rows], off[rows + 1] - off[rows]
        k = np.arange(int(length.max()))
        cells = start[:, None] + k[None, :]
        valid = k[None, :] < length[:, None]
        reps = self.rb[np.where(valid, cells, 0)]
        n, m = self.snap.n_brokers, len(e)
        line = np.arange(m)[:, None]
        holds = np.zeros((m, n + 1), bool)
        holds[line, np.where(valid, reps, n)] = True
        allowed = ~holds[:, dests]
        if self.rack is not None:
            others = valid & (cells != e[:, None])
            racks = np.zeros((m, self.n_racks + 1), bool)
            racks[line, np.where(others, self.rack[reps], self.n_racks)] = True
            source_shared = racks[np.arange(m), self.rack[self.rb[e]]]
            allowed &= ~racks[:, self.rack[dests]] | source_shared[:, None]
        return allowed

    # -- leaders --
    def move_leaders(self, give: np.ndarray, quota: np.ndarray, room: np.ndarray,
                     window: int | None = None) -> None:
        """Hand leadership of ``give[b]`` partitions led by b to one of their followers.

        Partitions already in the plan go first (no new plan entries), then a seeded order.
        """
        snap, off = self.snap, self.snap.replica_offsets
        rows = np.flatnonzero(~snap.part_internal & ~self.frozen
                              & (snap.replication_factors >= 2))
        rows = rows[give[self.rb[off[rows]]] > 0]
        if not len(rows):
            return
        changed = np.zeros(snap.n_partitions, bool)
        changed[self.part[self.rb != snap.replica_broker]] = True
        heads = self.rb[off[rows]]
        order = np.lexsort((self.rng.random(len(rows)), ~changed[rows], heads))
        rows, heads = rows[order], heads[order]
        ledger = _Ledger(give.astype(np.int64), quota.astype(np.int64), room.astype(np.int64))
        n = snap.n_brokers
        everyone = np.arange(n)

        def attempt(chosen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            r = rows[chosen]
            followers = snap.replication_factors[r] - 1
            k = np.arange(int(followers.max()))
            valid = k[None, :] < followers[:, None]
            cells = np.where(valid, off[r][:, None] + 1 + k[None, :], 0)
            cand = np.where(valid, self.rb[cells], n)
            held = np.zeros((len(r), n + 1), bool)
            held[np.arange(len(r))[:, None], cand] = True  # column n: padding
            col, use_room, ok = ledger.choose(held[:, :n], everyone, self.rng)
            acc = ledger.accept(self.rb[off[r]], col, use_room, ok)
            line = np.flatnonzero(acc)
            head = off[r[line]]
            other = cells[line, np.argmax(cand[line] == col[line][:, None], axis=1)]
            self.rb[head], self.rb[other] = self.rb[other], self.rb[head].copy()
            return acc, ~ok

        _rounds(heads, ledger, attempt, window)


def _chunk(ledger: _Ledger) -> int:
    """Offers evaluated at once, so offers x destinations cells stay bounded."""
    return max(256, _CELLS_PER_CHUNK // max(int((ledger.room > 0).sum()), 1))


@dataclass(eq=False)
class _Ledger:
    """What sources still give and destinations still take during one pass."""

    left: np.ndarray  # replicas (or leaderships) each source still gives
    quota: np.ndarray  # intake each destination should still take (the even spread)
    room: np.ndarray  # intake each destination may still take (its limit or band)
    fallback: bool = False  # may an offer with no quota anywhere use room instead?

    def choose(self, allowed: np.ndarray, dests: np.ndarray, rng: np.random.Generator):
        """A destination column per offer, in proportion to remaining quota among the
        allowed ones (or to room, for fallback). Returns column, used-room, found-any."""
        weights = np.where(allowed, self.quota[dests], 0).astype(np.float64)
        use_room = weights.sum(axis=1) == 0
        if self.fallback:
            weights[use_room] = np.where(allowed[use_room], self.room[dests], 0)
        total = weights.sum(axis=1)
        cum = np.cumsum(weights, axis=1)
        pick = (cum <= (rng.random(len(weights)) * total)[:, None]).sum(axis=1)
        return np.minimum(pick, weights.shape[1] - 1), use_room, total > 0

    def accept(self, src: np.ndarray, dest: np.ndarray, use_room: np.ndarray,
               ok: np.ndarray) -> np.ndarray:
        """Offers taken, in priority order: at most ``left`` per source, at most quota
        (room for fallback offers) per destination. Updates the ledger."""
        accepted = np.zeros(len(dest), bool)
        idx = np.flatnonzero(ok)
        ok = ok.copy()
        ok[idx[rank_within(src[idx]) >= self.left[src[idx]]]] = False
        for second in (False, True):
            idx = np.flatnonzero(ok & (use_room == second))
            d = dest[idx]
            take = rank_within(d) < (self.room[d] if second else self.quota[d])
            accepted[idx[take]] = True
            taken = np.bincount(d[take], minlength=len(self.room))
            self.room -= taken
            np.minimum(self.quota - (0 if second else taken), self.room, out=self.quota)
        self.left -= np.bincount(src[accepted], minlength=len(self.left))
        return accepted


def _rounds(source: np.ndarray, ledger: _Ledger,
            attempt: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
            window: int | None = None) -> None:
    """Offer candidates (sorted by source, cheapest first) until every source has given.

    Each round every source offers its next pending candidates, round-robin across
    sources: as many as it still gives (or ``window``) plus as many as proved stuck so
    far, so a source whose cheap replicas can go nowhere walks its list in doubling steps.
    ``attempt`` says which offers moved and which found no destination. A first stage
    only fills quotas (keeping the result even); a second lets the rest use any legal
    room, except for a top-up (``window`` given), which only fills quotas.
    """
    status = np.zeros(len(source), np.int8)  # 0 pending, 1 moved, 2 stuck
    for ledger.fallback in (False,) if window else (False, True):
        status[status == 2] = 0
        extra = np.zeros(len(ledger.left), np.int64)
        while ledger.left.any() and (ledger.fallback or ledger.quota.any()):
            pending = np.flatnonzero(status == 0)
            src = source[pending]
            run_start = np.flatnonzero(np.r_[True, src[1:] != src[:-1]])
            run_len = np.diff(np.r_[run_start, len(pending)])
            rank = np.arange(len(pending)) - np.repeat(run_start, run_len)
            offer = ledger.left[src] if window is None else np.minimum(ledger.left[src], window)
            take = (rank < offer + extra[src]) & (ledger.left[src] > 0)
            if not take.any():
                break
            chosen = pending[take][np.argsort(rank[take], kind="stable")]
            moved, stuck = attempt(chosen)
            status[chosen[moved]] = 1
            status[chosen[stuck]] = 2
            extra += np.bincount(source[chosen[stuck]], minlength=len(extra))
            if not (moved.any() or stuck.any()):
                break


# ---- what a plan leaves undone ----------------------------------------------------------------
def goal_unresolved(after: Snapshot, goal: Goal, limits: Limits, named: np.ndarray,
                    before: Snapshot, moving: np.ndarray,
                    closed: np.ndarray | None = None) -> list[dict]:
    """The parts of ``goal`` that ``after`` still misses, one entry per broker (or cluster);
    a drained broker's replicas in partitions moving already (rows ``moving``) are named,
    and so are a kept-empty broker's (``closed``, positions)."""
    ids = after.broker_ids
    counts = after.broker_replica_counts()
    closed = np.zeros(0, np.int64) if closed is None else closed
    n_open = after.n_brokers - len(closed)
    out: list[dict] = []
    ceiling = broker_ceiling(limits, goal.target_utilization)
    left = np.bincount(after.replica_broker, minlength=after.n_brokers)
    emptied = np.union1d(named, closed) if goal.kind == "drain" else closed
    for b in emptied[left[emptied] > 0]:
        out.append(_not_drained(after, b, int(left[b]), moving))
    if goal.kind == "limits":
        out += limit_unresolved(after, ceiling, limits.max_partitions)
    elif goal.kind == "add":
        floor_avg = int(before.broker_replica_counts().sum() // n_open)
        target = floor_avg if ceiling is None else min(floor_avg, ceiling)
        for b in named[counts[named] < target]:
            out.append({"kind": "under_filled", "broker": int(ids[b]),
                        "replicas": int(counts[b]), "target": target,
                        "message": f"broker {ids[b]} holds {counts[b]} replicas, "
                                   f"{target - counts[b]} short of the average {target}: no broker "
                                   "above it shares a legal move (racks, limits or shared "
                                   "partitions)"})
    elif goal.kind == "balance":
        leaders = np.bincount(after.leaders[~after.part_internal], minlength=after.n_brokers)
        is_open = np.ones(after.n_brokers, bool)
        is_open[closed] = False
        for what, values in (("replicas", counts), ("leaders", leaders)):
            low, high = balance_bounds(values.sum() / n_open, goal.threshold)
            if ceiling is not None and what == "replicas":
                high = min(high, ceiling)
            for b in np.flatnonzero(is_open & ((values < low) | (values > high))):
                out.append({"kind": f"{what}_unbalanced", "broker": int(ids[b]),
                            what: int(values[b]), "band": [low, high],
                            "message": f"broker {ids[b]} has {values[b]} {what}, outside "
                                       f"[{low}, {high}]"})
    return out


def _not_drained(after: Snapshot, broker: int, left: int, moving: np.ndarray) -> dict:
    """Why a drained broker keeps ``left`` replicas: partitions moving onto it already
    (named, up to 5), the rest for want of a legal destination."""
    held = after.replica_partition[after.replica_broker == broker]
    stuck = np.intersect1d(held, moving)
    nowhere = ("no other broker can take them without breaking a limit, doubling a replica "
               "or reducing rack spread")
    out = {"kind": "not_drained", "broker": int(after.broker_ids[broker]), "replicas": left,
           "message": f"broker {after.broker_ids[broker]} keeps {left} replicas: {nowhere}"}
    if not len(stuck):
        return out
    names = [f"{after.topic_names[after.part_topic[r]]}-{after.part_id[r]}" for r in stuck[:5]]
    more = f" and {len(stuck) - 5} more" if len(stuck) > 5 else ""
    why = [f"{len(stuck)} in partitions already moving with it in their target "
           f"({', '.join(names)}{more}): plan again once those moves finish, or cancel them"]
    if left > len(stuck):
        why.append(f"{left - len(stuck)} because {nowhere}")
    return {**out, "in_flight": len(stuck),
            "message": f"broker {after.broker_ids[broker]} keeps {left} replicas: "
                       + "; ".join(why)}


def limit_unresolved(after: Snapshot, ceiling: int | None,
                     max_partitions: int | None) -> list[dict]:
    """Brokers above ``ceiling`` and a cluster above max.partitions, once the plan is done."""
    ids, counts = after.broker_ids, after.broker_replica_counts()
    out = []
    if ceiling is not None:
        for b in np.flatnonzero(counts > ceiling):
            out.append({"kind": "over_limit", "broker": int(ids[b]), "replicas": int(counts[b]),
                        "target": ceiling, "excess": int(counts[b] - ceiling),
                        "message": f"broker {ids[b]} keeps {counts[b] - ceiling} replicas over "
                                   f"{ceiling}: no destination can take them without breaking "
                                   "a limit, doubling a replica or reducing rack spread"})
    total = int(counts.sum())
    if max_partitions is not None and total > max_partitions:
        out.append({"kind": "cluster_over_limit", "replicas": total, "target": max_partitions,
                    "excess": total - max_partitions,
                    "message": f"the cluster holds {total} replicas, max.partitions is "
                               f"{max_partitions}: moving replicas cannot lower it; "
                               "delete topics or raise the limit"})
    return out
