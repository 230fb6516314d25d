"""Drafts of plans: what a reassignment or a shrink would do, before anyone proposes it.

A draft is the frozen content a plan would store (Kafka's reassignment JSON, or the
shrink with its stages) and its preview (moves, bytes, ETA at a throttle, per-broker
before/after against max.broker.partitions, what it breaks, what it leaves undone), and
for a reassignment the per-partition diff the page's grid pages through. The store takes
the basis (the touched partitions as they are) itself when the draft is proposed
(backend/services/plan_basis.py); Draft.changes says whether the cluster moved since.

Everything here is computed by the engines over one snapshot, vectorised: a 100k-move
plan previews in well under a second. No Dash, no store, no I/O.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import chain
from typing import Any

import numpy as np

from backend.engines import plan_summary, planner
from backend.engines import throttle as throttle_engine
from backend.engines.batches import execution_batches
from backend.engines.shrink import CLI_FIELDS
from backend.errors import BadInput
from backend.executor.thread import INTERVAL as EXECUTOR_INTERVAL
from backend.model.bounds import MAX_LONG, check_long
from backend.model.csr import padded_rows
from backend.model.json_input import only_keys
from backend.model.rates import rate_text
from backend.model.reassignment import (
    Reassignment,
    after_moves,
    in_flight_rows,
    reassignment_from_dict,
)
from backend.model.snapshot import Limits, Snapshot
from backend.services import fields
from backend.services import shrink as shrink_service
from backend.services.plan_basis import basis_changes, replica_changes

# the planner's goals and its default balance threshold, as the reassignments page offers
# them (pages ask the services, not the engines)
GOALS, BALANCE_THRESHOLD = planner.GOALS, planner.BALANCE_THRESHOLD
MAX_BALANCE_THRESHOLD = planner.MAX_BALANCE_THRESHOLD
# a goal's numbers, the page's fields and the API's alike (services.fields.number ranges)
# a shrink's delay at most this long: its execution runs until the partitions are removed,
# and one plan executes at a time on a cluster (as plans.MAX_NOT_BEFORE_DAYS)
MAX_SHRINK_DELAY_DAYS = 30
GOAL_KEYS = ("goal", "brokers", "target_utilization", "threshold")
GOAL_RANGES = {"target_utilization": {"above": 0, "high": 1},
               "threshold": {"low": 1, "high": MAX_BALANCE_THRESHOLD}}
MAX_THROTTLE = MAX_LONG  # bytes/s: the throttled.rate configs are LONGs (KIP-73)
# bytes/s past what a broker's network carries: 100 Gbit/s (12.5 GB/s), a NIC few Kafka
# brokers exceed (the throttle caps one broker's replication traffic each way, and its
# disks take far less). A rate past it is no throttle but a unit slip: Kafka's configs and
# --throttle count bytes/s, so 2000000 (2 MB/s) typed into a MB/s field read 2 TB/s, "ETA
# 3 s". A cluster whose brokers have more says so in adaptive_throttle.network_capacity,
# which raises this bound for it.
NETWORK_CEILING = 12_500_000_000
NETWORK_CEILING_TEXT = "100 Gbit/s"
MAX_DELAY_MS = MAX_LONG  # the delete-partitions KIP's --delete-partitions-delay is a Long
IN_FLIGHT_SHOWN = 100  # moving partitions a preview lists (it counts them all)


@dataclass(eq=False)
class Draft:
    """An unsaved plan: what would be stored (content) and shown (preview, table); a
    reassignment's (a shrink's is a ShrinkDraft; a stored plan of any kind is shown as a
    Draft of its content and preview).

    A reassignment's content (Kafka's JSON, megabytes for 100k moves) is built from the
    table on first use: a page paints the preview without it."""

    kind: str
    cluster: str
    title: str
    preview: dict
    table: DiffTable | None = None  # reassignments: one row per plan entry
    log_dirs: list[list[str]] | None = None
    frozen: dict | None = None  # the content, once built (or given: shrinks)

    @property
    def content(self) -> dict:
        """Kafka's reassignment JSON (partitions ascending, log_dirs filled with "any"),
        or the shrink with its stages: exactly what is stored and hashed."""
        if self.frozen is None:
            self.frozen = self.table.kafka_json(self.log_dirs)
        return self.frozen

    def basis(self) -> dict:
        """What the draft was computed on, in plan_basis' form: the replicas each touched
        partition had."""
        t = self.table
        names = np.array(t.topics, dtype=object)[t.topic].tolist()
        return {"partitions": {f"{n}:{p}": [b for b in r if b >= 0] for n, p, r in
                               zip(names, t.part.tolist(), t.before.tolist(), strict=True)},
                "topics": {}}

    def changes(self, snap: Snapshot) -> list[str]:
        """What differs between the cluster the draft was computed on and ``snap``, one
        phrase per touched partition whose replicas changed (compared as arrays), as
        plan_basis.basis_changes says it. A draft is checked with it before it is
        proposed."""
        t = self.table
        names = np.array(t.topics, dtype=object)[t.topic].tolist()
        return replica_changes(snap, names, t.part, t.before)

    @property
    def empty(self) -> bool:
        """Nothing would change (no replica and no leader moves): nothing to propose."""
        return not (self.preview["replica_moves"] or self.preview["leader_moves"])


@dataclass(eq=False)
class ShrinkDraft(Draft):
    """A shrink's draft: its content is given, its basis the topic's partition count."""

    def basis(self) -> dict:
        return {"partitions": {}, "topics": {self.content["topic"]: self.content["from"]}}

    def changes(self, snap: Snapshot) -> list[str]:
        return basis_changes(self.basis(), snap)

    @property
    def empty(self) -> bool:
        return False


# ---- entry points ---------------------------------------------------------------------------

def request_throttle(body: dict) -> float | None:
    """A request's throttle (bytes/s), checked; None when it gives none."""
    return _throttle(body.get("throttle"), "throttle")


def refuse_past_network(rate_mb: float, network_capacity: float | None,
                        where: str = "throttle") -> None:
    """BadInput, in one line saying what was probably meant, for a rate typed in MB/s (a
    throttle, a network capacity) past what a broker's network carries: NETWORK_CEILING,
    or the cluster's configured network capacity (adaptive_throttle.network_capacity)
    where that is more. The reassignments and what-if pages ask this same check."""
    ceiling = max(NETWORK_CEILING, network_capacity or 0.0)
    rate = rate_mb * 1e6
    if rate <= ceiling:
        return
    typed = f"{rate_mb:,.0f}" if float(rate_mb).is_integer() else f"{rate_mb:,}"
    network = (f"{rate_text(ceiling)}, {NETWORK_CEILING_TEXT}" if ceiling == NETWORK_CEILING
               else f"{rate_text(ceiling)}, this cluster's network_capacity")
    raise BadInput(f"{where}: {typed} MB/s is {rate_text(rate)}, more than a broker's "
                   f"network carries ({network}): the field is in MB/s ({typed} B/s is "
                   f"{rate_text(rate_mb)})")


def from_kafka_json(snap: Snapshot, obj: Any, limits: Limits | None = None,
                    throttle: float | None = None, network_capacity: float | None = None,
                    source: str = "plan", drained: dict[int, dict] | None = None) -> Draft:
    """A plan written elsewhere (Cruise Control, kafka-kit, by hand), validated as
    kafka-reassign-partitions validates it, plus: every topic, partition and broker exists
    here, no partition is being reassigned already (a new target would replace its move
    in flight) and no partition changes its replication factor. Computed on the cluster as
    it will be once the moves in flight finish. Replicas it gives a ``drained`` broker are
    a risk the preview names (the operator may mean to take the broker back)."""
    plan = reassignment_from_dict(obj, snap, source=source)
    _refuse_moving(snap, plan, source)
    snap = after_moves(snap)
    rf_now = snap.replication_factors[plan.rows]
    rf_new = np.diff(plan.offsets)
    changed = np.flatnonzero(rf_now != rf_new)
    if len(changed):
        i = int(changed[0])
        raise BadInput(f"{source}: partition {_name(snap, int(plan.rows[i]))}: replication "
                       f"factor {rf_now[i]} -> {rf_new[i]}; a reassignment plan here keeps "
                       "each partition's replication factor")
    limits = snap.limits if limits is None else limits
    made = _reassignment(snap, plan, limits, None, throttle, network_capacity,
                         f"uploaded plan: {len(plan)} partitions on {snap.cluster}")
    made.preview["risks"] += _refills(made.preview["brokers"], drained or {})
    return made


def _unknown_rates(snap: Snapshot) -> list[str]:
    """A risk line when the cluster's write rates were unknown (read as 0): KIP-73's safe
    band starts at the moving partitions' write rate, so its lower bound and the ETA's
    catch-up term read low."""
    return [f"{note}: the safe band's lower bound (the moving partitions' write rate, "
            f"KIP-73) and the ETA assume nothing is written meanwhile; preview again once "
            f"Prometheus has the topics' bytes-in rates" for note in snap.notes
            if note.startswith("write rates unknown")]


def _refills(brokers: list[dict], drained: dict[int, dict]) -> list[str]:
    """A risk line per drained broker the plan gives replicas to."""
    return [f"gives broker {b['id']} {b['after'] - b['before']} replica"
            f"{'s' if b['after'] - b['before'] != 1 else ''} though plan "
            f"{drained[b['id']]['plan']} drained it: the planner's goals keep it empty; leave "
            "it out of the plan unless you mean to take it back"
            for b in brokers if b["id"] in drained and b["after"] > b["before"]]


def _refuse_moving(snap: Snapshot, plan: Reassignment, source: str) -> None:
    """BadInput naming the first partition of ``plan`` that is moving already."""
    _refuse_moving_rows(snap, plan.rows, source, "leave it out, or ")


def _refuse_moving_rows(snap: Snapshot, rows: np.ndarray, source: str,
                        leave_out: str = "") -> None:
    """BadInput naming the first of the partitions ``rows`` that is moving already (a
    shrink's topic too: its basis would hold the replicas mid-move, and the move's end
    would make Approve refuse it as stale)."""
    clash = np.intersect1d(rows, in_flight_rows(snap))
    if not len(clash):
        return
    name = _name(snap, int(clash[0]))
    m = next(m for m in planner.in_flight_entries(snap) if m["partition"] == name)
    more = f" (and {len(clash) - 1} more)" if len(clash) > 1 else ""
    raise BadInput(f"{source}: partition {name}{more} is being reassigned already (replicas "
                   f"{m['replicas']}, adding {m['adding']}, removing {m['removing']}): "
                   f"{leave_out}wait until its move finishes or cancel it")


def from_goal(snap: Snapshot, goal: Any, limits: Limits | None = None,
              throttle: float | None = None, network_capacity: float | None = None,
              seed: int = 0, where: str = "generate.",
              drained: dict[int, dict] | None = None) -> Draft:
    """The planner's minimal plan toward ``goal`` ({"goal", "brokers",
    "target_utilization", "threshold"}), with what it could not achieve; a refusal names
    a field after ``where`` (the API's "generate.brokers", the page's "brokers").

    Brokers a completed plan emptied (``drained``: services.drained.remembered) stay
    empty unless the goal names them; the preview lists them under "kept_empty"."""
    g = parse_goal(goal, where)
    try:  # the field, not the planner's CLI flag ("(--brokers)")
        snap.broker_positions(list(g.brokers))
    except BadInput as e:
        raise BadInput(f"{where}brokers: {e}") from None
    kept = {b: d for b, d in (drained or {}).items() if b not in g.brokers}
    g = replace(g, keep_empty=tuple(kept))
    limits = snap.limits if limits is None else limits
    result = planner.plan(snap, g, limits, seed=seed, fields=planner.Fields(
        brokers=f"{where}brokers", target_utilization=f"{where}target_utilization",
        limit="set max.broker.partitions on its brokers (KIP-578)"))
    named = f" {', '.join(map(str, g.brokers))}" if g.brokers else ""
    partial = "partial " if result.unresolved else ""
    made = _reassignment(result.before, result.reassignment, limits, result.unresolved,
                         throttle, network_capacity,
                         f"{partial}{g.kind}{named}: {{moves}} moves on {snap.cluster}")
    made.preview["kept_empty"] = [{"broker": b, **d} for b, d in kept.items()]
    return made


def from_shrink(snap: Snapshot, topic: Any, partitions: Any, limits: Limits | None = None,
                delay_ms: Any = None, fields: tuple[str, str] = CLI_FIELDS,
                drained: dict[int, dict] | None = None,
                deletes_partitions: bool | None = None) -> Draft:
    """Shrinking ``topic`` to ``partitions`` as the delete-partitions KIP stages it, with
    the copy-to-a-new-topic migration any cluster can run today (placed off the
    ``drained`` brokers); a refusal names partitions and delay as ``fields`` does. Its
    risks say Apache Kafka cannot delete partitions unless the cluster is known to
    (``deletes_partitions``: plan_kinds.shrink.deletes_partitions)."""
    if not isinstance(topic, str) or not topic:
        raise BadInput("topic: give the name of the topic to shrink")
    partitions = _whole(partitions, "partitions")
    if delay_ms is not None:
        delay_ms = _whole(delay_ms, "delay_ms", minimum=0)
    limits = snap.limits if limits is None else limits
    s = shrink_service.shrink_plan(snap, topic, partitions, limits, delay_ms, fields=fields,
                                   keep_empty=drained, deletes_partitions=deletes_partitions)
    if s["delay_ms"] > MAX_SHRINK_DELAY_DAYS * 86_400_000:
        given = "" if delay_ms is not None else " (the topic's retention.ms, its default)"
        raise BadInput(f"{fields[1]}: {s['delay_ms'] / 3.6e6:,.1f} h{given} is more than "
                       f"{MAX_SHRINK_DELAY_DAYS} days ({MAX_SHRINK_DELAY_DAYS * 24} h): a shrink "
                       f"waiting out its delay holds its cluster's executor, and the plans "
                       f"executed after it wait behind it; give a shorter delay")
    t = snap.topic_index(topic)
    _refuse_moving_rows(snap, np.arange(snap.topic_starts[t], snap.topic_starts[t + 1]),
                        "topic")
    rows = np.arange(snap.topic_starts[t] + partitions, snap.topic_starts[t + 1])
    before = snap.broker_replica_counts()
    after = np.array([s["broker_partitions_after"][str(b)] for b in snap.broker_ids.tolist()],
                     np.int64)
    reclaimed = s["broker_bytes_reclaimed"]
    limit = limits.max_broker_partitions
    brokers = [{"id": b, "before": int(before[i]), "after": int(after[i]), "limit": limit,
                "headroom_after": None if limit is None else limit - int(after[i]),
                "bytes_reclaimed": reclaimed[str(b)],
                "replicas_reclaimed": int(before[i] - after[i])}
               for i, b in enumerate(snap.broker_ids.tolist())]
    removed_at = max(st["latest_at_ms"] for st in s["stages"])
    content = {key: s[key] for key in ("topic", "from", "to", "delay_ms", "removed_partitions",
                                       "stages", "migration")}
    preview = {
        "replica_moves": 0, "bytes_to_move": 0, "eta_seconds": removed_at / 1000,
        "brokers": brokers, "violations": [],
        "unresolved": [] if s["migration"]["ok"] else [
            {"kind": "migration", "message": f"the migration to '{s['migration']['new_topic']}'"
                                             f" cannot be placed: {s['migration']['error']}"}],
        "partitions": len(rows), "bytes_reclaimed": s["bytes_reclaimed"],
        "replicas_reclaimed": s["replicas_reclaimed"], "risks": s["warnings"],
        "headroom_after": _min_headroom(brokers),
    }
    return ShrinkDraft("shrink", snap.cluster,
                       f"shrink {topic} {s['from']} -> {s['to']} partitions", preview,
                       frozen=content)


def parse_goal(goal: Any, where: str = "generate.") -> planner.Goal:
    """The API's / page's goal object as the planner's Goal, or BadInput naming the field
    after ``where``."""
    if not isinstance(goal, dict):
        raise BadInput("generate: expected {\"goal\": \"limits|drain|add|balance\", ...}")
    only_keys(goal, GOAL_KEYS, where.rstrip(".") or "goal")
    kind = goal.get("goal")
    if kind not in planner.GOALS:
        raise BadInput(f"{where}goal: must be one of {', '.join(planner.GOALS)}, got {kind!r}")
    brokers = goal.get("brokers") or []
    if not isinstance(brokers, list) or any(isinstance(b, bool) or not isinstance(b, int)
                                            for b in brokers):
        raise BadInput(f"{where}brokers: expected a list of broker ids, got {brokers!r}")
    if kind in ("drain", "add") and not brokers:  # the planner's words name the CLI's flag
        raise BadInput(f"{where}brokers: the {kind} goal needs the ids of the brokers to "
                       f"{kind}, e.g. 7,8")
    util, threshold = (_goal_number(goal, key, default, where) for key, default in (
        ("target_utilization", 1.0), ("threshold", planner.BALANCE_THRESHOLD)))
    return planner.Goal(kind, tuple(brokers), util, threshold)


def _goal_number(goal: dict, key: str, default: float, where: str) -> float:
    """A JSON number (not text) in the goal's range, refused in the page's words."""
    value = goal.get(key, default)
    _number(value, f"{where}{key}")
    return fields.number(value, f"{where}{key}", **GOAL_RANGES[key])


# ---- reassignment drafts ------------------------------------------------------------------

def _reassignment(snap: Snapshot, plan: Reassignment, limits: Limits,
                  unresolved: list[dict] | None, throttle: float | None,
                  network_capacity: float | None, title: str) -> Draft:
    summary = plan_summary.summarize(snap, plan, limits, unresolved, with_batches=False)
    t = throttle_figures(snap, plan, throttle, network_capacity)
    limit = limits.max_broker_partitions
    brokers = []
    for b in summary["brokers"]:
        tb = t["brokers"].get(b["id"])
        brokers.append({
            "id": b["id"], "before": b["replicas_before"], "after": b["replicas_after"],
            "limit": limit,
            "headroom_after": None if limit is None else limit - b["replicas_after"],
            "leaders_before": b["leaders_before"], "leaders_after": b["leaders_after"],
            "bytes_before": b["bytes_before"], "bytes_after": b["bytes_after"],
            "eta_seconds": tb["eta_seconds"] if tb else None,
            "safe_band": tb["safe_band"] if tb else None,
        })
    moving = planner.in_flight_entries(snap)
    preview = {
        "replica_moves": summary["replica_moves"],
        "bytes_to_move": summary["bytes_to_move"],
        "eta_seconds": t["eta_seconds"],
        "brokers": brokers,
        "violations": summary["violations"],
        "unresolved": summary["unresolved"],
        "partitions": len(plan),
        "leader_moves": summary["leader_moves"],
        "headroom_after": _min_headroom(brokers),
        "in_flight": moving[:IN_FLIGHT_SHOWN], "in_flight_partitions": len(moving),
        "batched_eta_seconds": t["batched_eta_seconds"],
        **{k: t[k] for k in ("throttle", "throttle_source", "safe_band", "outside_safe_band",
                             "kip73_move_time_seconds", "diagnosis", "network_capacity")},
        "risks": _unknown_rates(snap),
    }
    return Draft("reassignment", snap.cluster,
                 title.replace("{moves}", f"{summary['replica_moves']:,}"), preview,
                 table=diff_table(snap, plan), log_dirs=plan.log_dirs)


def predicted_eta(preview: dict) -> float | None:
    """A reassignment's predicted ETA, the one figure the plan page, its progress and
    /throttles give: as the executor runs it, batch after batch (plans proposed before
    that figure was stored give their every-move-at-once ETA). None: it never ends."""
    if "batched_eta_seconds" in preview:
        return preview["batched_eta_seconds"]
    return preview.get("eta_seconds")


def throttle_figures(snap: Snapshot, plan: Reassignment, throttle: float | None,
                     network_capacity: float | None = None) -> dict:
    """ETA at ``throttle`` (default: kafka-kit's autothrottle rate, the lowest over the
    throttled brokers): every move at once (``eta_seconds``, as `railyard throttle plan`)
    and as the executor runs it, batch after batch under its per-broker cap, each batch
    whole executor ticks (``batched_eta_seconds``, the plan's predicted ETA); and the
    KIP-73 safe band that one
    rate must sit in on all of them."""
    params = throttle_engine.ThrottleParams(throttle or 1.0, network_capacity)
    tp = throttle_engine.plan_throttle(snap, plan, params, replica_lists=False)
    source = "given"
    if throttle is None:
        rates = tp.suggested[tp.throttled]
        throttle = float(round(rates.min()) if len(rates)
                         else throttle_engine.AUTOTHROTTLE_MIN_RATE)
        source = "suggested: kafka-kit autothrottle headroom, the lowest over the brokers"
        tp.params = throttle_engine.ThrottleParams(throttle, network_capacity)
        load = tp.load
        tp.eta = np.maximum(
            throttle_engine.catch_up_seconds(load.bytes_in, load.keep_up_in, throttle),
            throttle_engine.catch_up_seconds(load.bytes_out, load.keep_up_out, throttle))
    d = tp.to_dict()
    batched = throttle_engine.batched_eta_seconds(snap, plan, execution_batches(snap, plan),
                                                  tp.params.rate, tick=EXECUTOR_INTERVAL)
    rows = d["brokers"]
    band = ({"low": max(r["safe_band"]["low"] for r in rows),
             "high": min(r["safe_band"]["high"] for r in rows)} if rows else None)
    return {"throttle": d["throttle"], "throttle_source": source,
            "network_capacity": d["network_capacity"], "eta_seconds": d["eta_seconds"],
            "batched_eta_seconds": batched if np.isfinite(batched) else None,
            "diagnosis": d["diagnosis"], "kip73_move_time_seconds": d["kip73_move_time_seconds"],
            "safe_band": band, "outside_safe_band": d["outside_safe_band"],
            "brokers": {r["id"]: r for r in rows}}


# ---- the per-partition diff (the page's grid) ---------------------------------------------

DIFF_COLUMNS = ("partition", "before", "after", "added", "removed", "leader", "bytes")


@dataclass(eq=False)
class DiffTable:
    """One row per plan entry as arrays (replica lists as -1-padded matrices of broker ids),
    so a 100k-row grid filters, sorts and pages without 100k Python rows; text is made
    only for the rows on screen."""

    topics: list[str]  # distinct topic names, in first-seen order
    topic: np.ndarray  # int64 index into topics per row
    part: np.ndarray  # int64 partition number per row
    before: np.ndarray  # (rows, width) broker ids, -1 = none
    after: np.ndarray
    size: np.ndarray  # int64 partition size (one replica's log), 0 when unknown
    # sizes read after the preview's (a stored plan's grid rebuilt on the cluster now),
    # so they may differ from the preview's bytes to move
    sizes_now: bool = False
    added: np.ndarray = field(init=False)  # brokers in after but not before, -1 padded
    removed: np.ndarray = field(init=False)
    bytes: np.ndarray = field(init=False)  # bytes the entry copies: size x new replicas

    def __post_init__(self) -> None:
        self.added = _minus(self.after, self.before)
        self.removed = _minus(self.before, self.after)
        self.bytes = self.size * (self.added >= 0).sum(axis=1)

    def __len__(self) -> int:
        return len(self.part)

    @cached_property
    def names(self) -> list[str]:
        return [f"{self.topics[t]}-{p}" for t, p in zip(self.topic.tolist(), self.part.tolist(),
                                                        strict=True)]

    def page(self, start: int, end: int, sort: list[dict] | None = None,
             contains: str | None = None) -> tuple[list[dict], int]:
        """Rows ``start:end`` after keeping those whose partition name contains
        ``contains`` and sorting by ag-grid's sortModel; and how many rows match."""
        idx = np.arange(len(self))
        if contains and contains.strip():
            needle = contains.strip().lower()
            idx = idx[np.fromiter((needle in n.lower() for n in self.names), bool, len(idx))]
        for s in reversed(sort or []):
            keys = self._sort_keys(s.get("colId"), idx)
            if keys is None:
                continue
            order = np.lexsort(keys[::-1])
            idx = idx[order[::-1] if s.get("sort") == "desc" else order]
        chosen = idx[max(start, 0):max(end, 0)]
        return [self._row(i) for i in chosen.tolist()], len(idx)

    def _sort_keys(self, column: str | None, idx: np.ndarray) -> list[np.ndarray] | None:
        if column == "partition":
            rank = np.argsort(np.argsort(np.array(self.topics, dtype=str)))
            return [rank[self.topic[idx]], self.part[idx]]
        if column in ("before", "after", "added", "removed"):
            m = getattr(self, column)[idx]
            return [m[:, k] for k in range(m.shape[1])] or None
        if column == "leader":
            return [(self.before[idx, 0] != self.after[idx, 0]).astype(np.int64)]
        if column == "bytes":
            return [self.bytes[idx]]
        return None

    def kafka_json(self, log_dirs: list[list[str]] | None = None) -> dict:
        """The rows as Kafka's reassignment JSON (``after`` is the target)."""
        after = self.after.tolist()
        if (self.after < 0).any():
            after = [[b for b in r if b >= 0] for r in after]
        names = np.array(self.topics, dtype=object)[self.topic].tolist()
        out = []
        for i, (topic, part, replicas) in enumerate(zip(names, self.part.tolist(), after,
                                                        strict=True)):
            given = log_dirs[i] if log_dirs else None
            out.append({"topic": topic, "partition": part, "replicas": replicas,
                        "log_dirs": given or ["any"] * len(replicas)})
        return {"version": 1, "partitions": out}

    def _row(self, i: int) -> dict:
        def text(m: np.ndarray) -> str:
            return ", ".join(str(b) for b in m[i].tolist() if b >= 0)

        was, now = int(self.before[i, 0]), int(self.after[i, 0])
        return {"partition": self.names[i], "before": text(self.before),
                "after": text(self.after), "added": text(self.added),
                "removed": text(self.removed),
                "leader": "" if was == now else f"{was if was >= 0 else '-'} -> {now}",
                "bytes": int(self.bytes[i])}


def diff_table(snap: Snapshot, plan: Reassignment) -> DiffTable:
    """The grid of a draft: the snapshot's replicas (before) against the plan's (after)."""
    def ids(offsets: np.ndarray, brokers: np.ndarray, rows: np.ndarray) -> np.ndarray:
        m = padded_rows(offsets, brokers, rows)
        return np.where(m >= 0, snap.broker_ids[np.maximum(m, 0)], -1).astype(np.int64)

    before = ids(snap.replica_offsets, snap.replica_broker, plan.rows)
    after = ids(plan.offsets, plan.brokers, np.arange(len(plan)))
    return DiffTable(snap.topic_names.tolist(), snap.part_topic[plan.rows].astype(np.int64),
                     snap.part_id[plan.rows].astype(np.int64), *_same_width(before, after),
                     snap.part_size[plan.rows].astype(np.int64))


def stored_diff_table(content: dict, basis: dict, snap: Snapshot | None = None) -> DiffTable:
    """The grid of a stored reassignment: its basis (the replicas when it was proposed,
    {"partitions": {"topic:p": [ids]}}) against its content, with bytes from ``snap``
    when given (the partition sizes now)."""
    entries = content["partitions"]
    lookup: dict[str, int] = {}
    topic = np.fromiter((lookup.setdefault(e["topic"], len(lookup)) for e in entries),
                        np.int64, len(entries))
    topics = list(lookup)
    part = np.fromiter((e["partition"] for e in entries), np.int64, len(entries))
    after = _padded([e["replicas"] for e in entries])
    known = basis.get("partitions", {})
    before = _padded([known.get(f"{e['topic']}:{e['partition']}", []) for e in entries])
    size = np.zeros(len(entries), np.int64)
    if snap is not None and entries:
        t_snap = np.array([snap.topic_index(t) if snap.has_topic(t) else -1 for t in topics])
        ts = t_snap[topic]
        ok = ts >= 0
        ok[ok] = part[ok] < np.diff(snap.topic_starts)[ts[ok]]
        size[ok] = snap.part_size[snap.topic_starts[ts[ok]] + part[ok]]
    return DiffTable(topics, topic, part, *_same_width(before, after), size,
                     sizes_now=snap is not None)


def _same_width(before: np.ndarray, after: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    width = max(after.shape[1], before.shape[1])
    return tuple(np.pad(m, ((0, 0), (0, width - m.shape[1])), constant_values=-1)
                 for m in (before, after))


def _minus(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise a minus b for -1-padded broker matrices (order of a kept, -1 padded)."""
    keep = (a >= 0) & ~(a[:, :, None] == b[:, None, :]).any(axis=2)
    return np.where(keep, a, -1)


def _padded(lists: list[list[int]]) -> np.ndarray:
    lengths = np.fromiter(map(len, lists), np.int64, len(lists))
    width = int(lengths.max()) if len(lists) else 0
    out = np.full((len(lists), width), -1, np.int64)
    out[np.arange(width)[None, :] < lengths[:, None]] = list(chain.from_iterable(lists))
    return out


# ---- exports --------------------------------------------------------------------------------

def kafka_json_text(content: dict) -> str:
    """The exact file kafka-reassign-partitions --execute reads."""
    return json.dumps(content, separators=(",", ":"))


def kafka_command(throttle: float | int | None, plan_file: str = "plan.json",
                  bootstrap: str = "<bootstrap-servers>") -> str:
    """The command line that runs the plan with Kafka's own tool under a KIP-73 throttle."""
    cmd = (f"kafka-reassign-partitions.sh --bootstrap-server {bootstrap} "
           f"--reassignment-json-file {plan_file} --execute")
    return cmd + (f" --throttle {int(throttle)}" if throttle else "")


# ---- small helpers --------------------------------------------------------------------------

def _name(snap: Snapshot, row: int) -> str:
    return f"{snap.topic_names[snap.part_topic[row]]}-{snap.part_id[row]}"


def _min_headroom(brokers: list[dict]) -> int | None:
    room = [b["headroom_after"] for b in brokers if b["headroom_after"] is not None]
    return min(room) if room else None


def _throttle(value: Any, where: str) -> float | None:
    if value is None:
        return None
    return check_long(_number(value, where, positive=True), where)  # a LONG config (KIP-73)


def _number(value: Any, where: str, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value):
        raise BadInput(f"{where}: expected a number, got {value!r}")
    if positive and value <= 0:
        raise BadInput(f"{where}: must be larger than 0, got {value}")
    return float(value)


def _whole(value: Any, where: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise BadInput(f"{where}: expected a whole number >= {minimum}, got {value!r}")
    return value


__all__ = [
    "BALANCE_THRESHOLD",
    "DIFF_COLUMNS",
    "GOALS",
    "DiffTable",
    "Draft",
    "ShrinkDraft",
    "diff_table",
    "from_goal",
    "from_kafka_json",
    "from_shrink",
    "kafka_command",
    "kafka_json_text",
    "parse_goal",
    "refuse_past_network",
    "request_throttle",
    "stored_diff_table",
    "throttle_figures",
]
