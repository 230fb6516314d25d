"""Executions as users and pages see them: pause, resume, progress and batch markers.

The plan workflow (backend/services/plans.py) moves a plan to executing and records a
cancel request; the executor (backend/executor: its thread, journal, the way each kind
starts and runs) picks executing plans up and runs them. Pause and resume act on the
execution itself.

What runs is what was approved: the throttle is in the plan's sha256, the batches are
computed from the approved content on the cluster as the approval checked it (its basis),
with the default concurrency limits, and the spec that runs is stored with the execution.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from backend.engines.throttle import AUTOTHROTTLE_MIN_RATE
from backend.errors import BadInput, Conflict, Unavailable
from backend.executor.guards import WINDOW
from backend.executor.journal import at
from backend.executor.thread import ExecutorThread, GatewayOf
from backend.gateways.base import ReplicaSizeReader
from backend.metrics.client import MetricsError
from backend.model.snapshot import Snapshot
from backend.services import monitoring, plan_preview, plans
from backend.services.cluster import CLUSTER_TTL_SECONDS, ClusterSource, cluster_read
from backend.services.plan_kinds import KINDS, REASSIGNMENT, kind_of
from backend.store.executions import (
    ACTIVE,
    LIVE,
    MIGRATION,
    Execution,
    ExecutionRecords,
    requesting,
    switching_throttle,
)
from backend.store.store import Plan, Store
from backend.store.workflow import SYSTEM, Actor, authorize


# ---- user requests -----------------------------------------------------------------------
@plans.audits_refusal("pause")
def pause(store: Store, actor: Actor, plan_id: int, now: float | None = None) -> dict:
    """Finish the batch in flight and start nothing new."""
    return _request(store, actor, plan_id, "pause", LIVE[:1], "pausing", now)


@plans.audits_refusal("resume")
def resume(store: Store, actor: Actor, plan_id: int, now: float | None = None) -> dict:
    return _request(store, actor, plan_id, "resume", LIVE[1:], "running", now)


def _request(store: Store, actor: Actor, plan_id: int, action: str, allowed: tuple[str, ...],
             state: str, now: float | None) -> dict:
    now = time.time() if now is None else now
    plan = plans.get(store, plan_id)
    authorize(actor, "execute", plan.author)
    why = kind_of(plan.kind).unpausable
    if why is not None:
        raise Conflict(f"plan {plan_id} is a {plan.kind}: it cannot {action}, {why}")
    records = ExecutionRecords(store)
    if records.get(plan_id) is None:
        raise Conflict(f"plan {plan_id} is {plan.state}: it is not running, so it cannot "
                       f"{action}")
    if not plans.record(store, actor, plan_id, f"execution_{action}", detail=None,
                        now=at(now), also=requesting(plan_id, allowed, state, now)):
        current = records.get(plan_id).state
        raise Conflict(f"plan {plan_id}'s execution is {current}: it can {action} only when "
                       f"{' or '.join(allowed)}")
    return progress(store, plan_id, now)


@plans.audits_refusal("switch_throttle")
def switch_throttle(store: Store, actor: Actor, plan_id: int, mode: str,
                    floor: int | None = None, now: float | None = None) -> dict:
    """Switch a running reassignment's throttle between fixed (the approved throttle on
    every broker) and adaptive (between ``floor`` and the approved throttle, by the traffic
    measured: backend/executor/adaptive.py); the executor applies it at its next tick.
    ``floor`` defaults to the approved one, when the plan was approved adaptive, else to
    kafka-kit autothrottle's --min-rate (10 MB/s), or the ceiling when that is lower."""
    now = time.time() if now is None else now
    plan = plans.get(store, plan_id)
    authorize(actor, "execute", plan.author)
    if mode not in ("fixed", "adaptive"):
        raise BadInput(f"mode: expected fixed or adaptive, got {str(mode)[:30]!r}")
    records = ExecutionRecords(store)
    ex = records.get(plan_id)
    if ex is None or ex.state not in LIVE or not kind_of(plan.kind).throttled:
        raise Conflict(f"plan {plan_id} is not a running reassignment: its throttle cannot "
                       f"be switched")
    if mode == "adaptive":
        if floor is None:
            floor = (plan.throttle_mode or {}).get("floor") \
                or min(int(AUTOTHROTTLE_MIN_RATE), ex.throttle or 0)
        plans.checked_throttle_mode({"mode": mode, "floor": floor}, ex.throttle)
    plans.record(store, actor, plan_id, "throttle_mode_switched",
                 detail={"mode": mode, **({"floor": floor} if mode == "adaptive" else {})},
                 now=at(now), also=switching_throttle(
                     plan_id, mode, floor if mode == "adaptive" else None, actor.name, now))
    return throttle_history(store, plan_id)


MOST_LOOKS = 720  # the newest looks of the controller shown: six hours at 30 s


def throttle_history(store: Store, plan_id: int, newest: int = MOST_LOOKS) -> dict:
    """The plan page's throttle over time: its mode now, the ceiling and floor, the
    ``newest`` looks of the adaptive controller (per broker the rates set and the
    replication measured, the ETA at those rates, a note such as Prometheus not
    answering), the ETA predicted at approval (the whole plan's) and when the execution
    started (so the page compares time left with time left)."""
    plan = plans.summary(store, plan_id)
    records = ExecutionRecords(store)
    ex = records.get(plan_id)
    switched = records.throttle_mode(plan_id)
    approved = plan.throttle_mode or {"mode": "fixed"}
    mode = {"mode": switched["mode"], "floor": switched["floor"]} if switched else approved
    ticks = records.throttle_ticks(plan_id, newest) if ex is not None else []
    return {"plan_id": plan_id, "ceiling": plan.throttle, "approved": approved,
            "mode": mode["mode"], "floor": mode.get("floor"),
            "switched_by": switched["changed_by"] if switched else None,
            "running": ex is not None and ex.state in LIVE,
            "predicted_eta_seconds": plan_preview.predicted_eta(plan.preview),
            "started_at": ex.started_at if ex is not None else None,
            "looks": [{"at": t["at"], "mode": t["mode"], "brokers": t["brokers"],
                       "eta_seconds": t["eta_seconds"], "note": t["note"]} for t in ticks],
            "note": ticks[-1]["note"] if ticks else None}


# ---- progress ------------------------------------------------------------------------------
def progress(store: Store, plan_id: int, now: float | None = None,
             source: ClusterSource | None = None) -> dict | None:
    """Where an execution is: per batch and overall, partitions and bytes done, the rate
    observed against the throttle, and predicted and observed ETAs. None before it starts.
    ``bytes_copied`` is what the moves copied, past ``bytes_total`` (the plan's figure)
    when producers wrote to the partitions after the plan was sized (at proposal); ``bytes_done``
    stops there.

    Both count a partition when it finishes. With the cluster's ``source`` (its Prometheus
    and gateway), a batch in flight also has ``copy_rate``: the bytes/s its receiving
    brokers copy now, as Kafka counts them (copy_rate_now), and ``copy_rate["copied"]``
    what their new replicas hold already; the observed ETA falls back on them while no
    partition has finished (``observed_eta_basis`` says which rate it used,
    ``observed_eta_why`` why there is none). Without a source (or with no batch in
    flight) ``copy_rate`` is None and Prometheus is not asked."""
    now = time.time() if now is None else now
    records = ExecutionRecords(store)
    ex = records.get(plan_id)
    if ex is None:
        return None
    batches = records.batches(plan_id)
    throttle = ex.throttle
    end = ex.ended_at or now
    # the time its batches were in flight: a pause, or a wait for a window, copies nothing
    # (counted, a 25 s pause halved the observed rate, 21.5 to 10.7 MB/s, and doubled its ETA)
    elapsed = max(sum((b["ended_at"] or end) - b["started_at"] for b in batches
                      if b["started_at"] is not None), 1e-9)
    total = ex.bytes_total
    # the finished batches are in the execution's totals; the batch in flight, or the one
    # a cancel or a failure stopped, adds what it finished (progress never goes back)
    unfinished = [b for b in batches if b["state"] in ("running", "cancelled")]
    partitions_done, copied, left = done_so_far(ex, sum(b["done"] for b in unfinished),
                                                sum(b["bytes_done"] for b in unfinished))
    done = min(copied, total)  # of the plan's bytes: "bytes_copied" passes the total
    # the share left as the predicted ETA counts it, the larger of the bytes' and the
    # partitions': bytes alone read 2 s with 55 of 300 partitions left, since finished
    # partitions had grown past the sizes the plan was proposed with
    remaining = total * left
    rate = copied / elapsed if copied else None
    per_batch = [{
        "batch": b["idx"], "state": _batch_state(b), "partitions": b["partitions"],
        "done": b["done"], "bytes_total": b["bytes_total"], "bytes_done": b["bytes_done"],
        "started_at": b["started_at"], "ended_at": b["ended_at"],
        "observed_rate": (b["bytes_done"] / (b["ended_at"] - b["started_at"])
                          if b["ended_at"] and b["ended_at"] > b["started_at"] else None),
    } for b in batches]
    eta = 0.0 if ex.state == "completed" else None  # no ETA once failed or cancelled
    plan = plans.summary(store, plan_id)
    running = [b for b in batches if b["state"] == "running"]
    copying = source is not None and ex.state in COPYING and kind_of(plan.kind).throttled \
        and bool(running)
    live = copy_rate_now(source, records, ex, running[0]["bytes_total"]
                         - running[0]["bytes_done"]) if copying else None
    observed, basis, why = observed_eta(elapsed, remaining, rate, partitions_done,
                                        ex.partitions_total, live) \
        if ex.state in ACTIVE else (eta, None, None)
    return {
        "plan_id": plan_id, "state": ex.state, "cause": ex.cause, "error": ex.error,
        **held(ex),
        "retry_at": ex.retry_at, "attempts": ex.attempts,
        "started_at": ex.started_at, "ended_at": ex.ended_at,
        "batch": ex.batch, "batches": len(batches),
        "partitions_done": partitions_done, "partitions_total": ex.partitions_total,
        "bytes_done": done, "bytes_copied": copied, "bytes_total": total,
        "fraction": partitions_done / ex.partitions_total if ex.partitions_total else 1.0,
        "throttle": throttle, "observed_rate": rate,
        "predicted_eta_seconds": predicted_left(plan.preview, ex.state, left),
        "observed_eta_seconds": observed, "observed_eta_basis": basis,
        "observed_eta_why": why, "copy_rate": live,
        "per_batch": per_batch,
        "shrink": kind_of(plan.kind).progress(records, ex, now),
    }


def done_so_far(ex: Execution, unfinished_partitions: int,
                unfinished_bytes: int) -> tuple[int, int, float]:
    """(partitions done, bytes copied, share still to do) of an execution whose unfinished
    batches (the one in flight, or the one a cancel or failure stopped) finished
    ``unfinished_partitions`` and ``unfinished_bytes`` so far: what its page and the
    queue both show. A partition's bytes are its size when it finished, and producers
    grow logs while they move: the bytes copied can pass the plan's total with partitions
    still moving, so the share left is the larger of the bytes' and the partitions'."""
    copied = ex.bytes_done + unfinished_bytes
    partitions = ex.partitions_done + unfinished_partitions
    left = 1.0 - min(copied / ex.bytes_total if ex.bytes_total else 1.0,
                     partitions / ex.partitions_total if ex.partitions_total else 1.0)
    return partitions, copied, left


def observed_left(elapsed: float, bytes_left: int, rate: float | None,
                  partitions_done: int, partitions_total: int) -> float | None:
    """The observed ETA: the bytes left at the rate so far; once the copy reached the
    plan's total (logs grew while they moved) with partitions still moving, the partitions
    left at the pace of those done; 0 once every partition is done (the throttles are
    being put back). None before anything is done."""
    if partitions_done >= partitions_total:
        return 0.0
    if rate and bytes_left > 0:
        return bytes_left / rate
    if partitions_done > 0:
        return elapsed * (partitions_total - partitions_done) / partitions_done
    return None


COPYING = ("running", "pausing")  # states with a batch that may be in flight
COPY_RATE = "copy rate"  # observed_eta_basis: the live copy rate (copy_rate_now)
FINISHED = "partitions finished"  # observed_eta_basis: the bytes of partitions finished


def observed_eta(elapsed: float, bytes_left: int, rate: float | None, partitions_done: int,
                 partitions_total: int, live: dict | None
                 ) -> tuple[float | None, str | None, str | None]:
    """(observed ETA, the rate it is based on, why there is none) of an active execution.
    observed_left's once bytes are counted (a partition's when it finishes) or every
    partition is done. Before that (the first partitions still copy, or only empty ones
    finished: their pace says nothing of the bytes left, and an ETA from it grew with the
    clock, 1m 25s to 4m 2s, on the Apache Kafka demo) the bytes left at the live copy rate
    (``live``, copy_rate_now), less what the new replicas of the partitions in flight
    already hold (``live["copied"]``: without it the ETA reads high by up to the batch's
    time so far), or None with the reason in words: never a time with no rate behind it."""
    if rate or bytes_left <= 0 or partitions_done >= partitions_total:
        eta = observed_left(elapsed, bytes_left, rate, partitions_done, partitions_total)
        return eta, None if eta is None else FINISHED, None
    nothing = "no bytes counted yet (a partition's count when it finishes)"
    if live is None:
        return None, None, nothing
    if not live["bytes_per_second"]:
        return None, None, \
            f"{nothing} and {live['why'] or 'nothing copied in the last minute'}"
    left = bytes_left - (live.get("copied") or 0)
    if left <= 0:
        return None, None, (f"{nothing} and the partitions in flight hold all the bytes the "
                            "plan counted (producers wrote to them since)")
    return left / live["bytes_per_second"], COPY_RATE, None


def copy_rate_now(source: ClusterSource, records: ExecutionRecords, ex: Execution,
                  batch_bytes: int) -> dict:
    """How fast the batch in flight copies now, from what the cluster reports: Kafka's
    ReassignmentBytesInPerSec (KIP-542; kafka.server:type=BrokerTopicMetrics, counted by
    the receiving broker's fetcher as it appends reassignment bytes: core
    .../server/ReplicaFetcherThread.scala) through Prometheus (monitoring
    .reassignment_rates, the /throttles page's series), summed over the brokers receiving
    the batch's partitions (the ``adding`` replicas Kafka lists in flight; every broker's
    when the gateway does not answer). {bytes_per_second (None when not known), brokers
    (None: all), why (None, or why not known, in words), copied, copied_why}: never a rate
    Prometheus did not report. With a rate, ``copied`` is what those adding replicas'
    logs hold (copied_in_flight), at most ``batch_bytes`` (the batch's bytes, as sized
    when it started, not yet counted: producers grow logs as they move, and the plan's
    other bytes are other batches'); None with ``copied_why`` when the cluster cannot
    say.

    Kafka's list is a cluster read, kept CLUSTER_TTL_SECONDS: a batch shorter than that
    (the twin's take 2 s) may start after the list was read, so that it lists none of the
    batch's moves; the line then said "rate not known" on every other refresh, a rate on
    the rest. The brokers are then the batch's own receivers, as its plan says
    (_batch_receivers), and the rate the same Prometheus reading; only what the moves
    copied so far is not known until Kafka lists them."""
    moves = _batch_moves(source, records, ex)
    into = None if moves is None else _broker_order(
        {str(b) for m in moves for b in m.get("adding") or ()})
    out = {"bytes_per_second": None, "brokers": into, "why": None, "copied": None,
           "copied_why": None}
    unlisted = None
    if into == []:  # a batch shorter than a kept read may start and end between two
        unlisted = (f"Kafka listed none of the batch's partitions in flight when last read, "
                    f"a list kept {CLUSTER_TTL_SECONDS:g} s")
        into = _batch_receivers(records, ex)
        if not into:  # the plan cannot say either: no broker named, no rate
            return out | {"why": unlisted}
        out["brokers"] = into
    try:
        rates = monitoring.reassignment_rates(source)
    except Unavailable as e:  # no Prometheus configured for the cluster
        return out | {"why": e.detail}
    if isinstance(rates, MetricsError):
        why = monitoring.short_reason(rates)
        return out | {"why": "Prometheus has no reassignment bytes yet" if why == "no data"
                      else f"{why}: no live copy rate"}
    seen = [rates[b] for b in (rates if into is None else into) if b in rates]
    if not seen:  # every broker's (into None): series without a broker label
        which = "any broker" if into is None else \
            f"broker{'s' if len(into) > 1 else ''} {', '.join(into)}"
        return out | {"why": f"Prometheus has no reassignment bytes yet for {which}"}
    copied, copied_why = copied_in_flight(source, moves) if unlisted is None \
        else (None, unlisted)
    return out | {"bytes_per_second": float(sum(seen)), "copied_why": copied_why,
                  "copied": None if copied is None else min(copied, batch_bytes)}


def copied_in_flight(source: ClusterSource, moves: list[dict] | None
                     ) -> tuple[int | None, str | None]:
    """(bytes, None): what the new replicas of the partitions in flight (``moves``, with
    their ``adding`` brokers) hold now, by the cluster's own count (Kafka's DescribeLogDirs,
    KIP-113: an adding replica's log grows as its fetcher copies it, core
    .../server/ReplicaFetcherThread.scala), asked of the adding brokers about those
    partitions only; or (None, why in words) when the cluster cannot say."""
    gw = source.gateway
    if moves is None:
        return None, "the moves in flight not known"
    if not isinstance(gw, ReplicaSizeReader):
        return None, "the gateway reads no replica log sizes"
    wanted: dict[int, list[tuple[str, int]]] = {}
    for m in moves:
        for b in m.get("adding") or ():
            wanted.setdefault(int(b), []).append((m["topic"], int(m["partition"])))
    question = f"replica sizes {sorted((b, sorted(ps)) for b, ps in wanted.items())}"
    try:
        sizes = cluster_read(source, question, lambda: gw.replica_sizes(wanted))
    except Unavailable as e:
        return None, f"log sizes not read: {e.detail}"
    return sum(sizes.get((t, p, b), 0) for b, ps in wanted.items() for t, p in ps), None


# (sha256, plan id, start, batch) -> the batch's partitions and their target replicas
_BATCHES: dict[tuple[str, int, float, int], dict[tuple[str, int], list[int]]] = {}
# ... -> the brokers the batch adds replicas to (_batch_receivers; None: not known)
_RECEIVERS: dict[tuple[str, int, float, int], list[str] | None] = {}
_MOST_BATCHES = 256


def _broker_order(brokers: set[str]) -> list[str]:
    return sorted(brokers, key=lambda b: (len(b), b))


def _batch_moves(source: ClusterSource, records: ExecutionRecords,
                 ex: Execution) -> list[dict] | None:
    """The batch in flight's partitions as Kafka lists its moves in flight ({topic,
    partition, adding, ...}); None when the gateway cannot say."""
    if source.gateway is None:
        return None
    moves = monitoring.in_flight(source)
    if not isinstance(moves, list):
        return None
    mine = _batch_partitions(records, ex)
    if mine is None:
        return None
    return [m for m in moves if (m["topic"], int(m["partition"])) in mine]


def _batch_partitions(records: ExecutionRecords, ex: Execution
                      ) -> dict[tuple[str, int], list[int]] | None:
    """The (topic, partition)s of the batch in flight and their target replicas, from the
    frozen content (kept by its sha256 and start: an execution's content and batches
    never change)."""
    key = (ex.sha256, ex.plan_id, ex.started_at, ex.batch)
    if key not in _BATCHES:
        content = records.content(ex.plan_id)
        try:
            entries = content["reassignment"]["partitions"]
            batch = content["execution"]["batches"][ex.batch]
            mine = {(entries[i]["topic"], int(entries[i]["partition"])):
                    [int(b) for b in entries[i]["replicas"]] for i in batch}
        except (KeyError, IndexError, TypeError, ValueError):
            return None
        if len(_BATCHES) >= _MOST_BATCHES:
            _BATCHES.clear()
            _RECEIVERS.clear()
        _BATCHES[key] = mine
    return _BATCHES[key]


def _batch_receivers(records: ExecutionRecords, ex: Execution) -> list[str] | None:
    """The brokers the batch in flight adds replicas to, as its plan says: its partitions'
    target replicas that the plan's basis does not hold (the replicas the approval and the
    execute request checked the cluster still had; the executor moves from them). None
    when the plan cannot say (a basis without the batch's partitions)."""
    key = (ex.sha256, ex.plan_id, ex.started_at, ex.batch)
    if key not in _RECEIVERS:
        targets = _batch_partitions(records, ex)
        if targets is None:
            return None
        then = (plans.basis_of(records.store, ex.plan_id) or {}).get("partitions") or {}
        try:
            adding = {str(b) for (t, p), replicas in targets.items() for b in replicas
                      if b not in then[f"{t}:{p}"]}
        except (KeyError, TypeError):
            adding = None
        _RECEIVERS[key] = None if adding is None else _broker_order(adding)
    return _RECEIVERS[key]


def predicted_left(preview: dict, state: str, left: float) -> float | None:
    """The predicted ETA of an execution in ``state`` with the share ``left`` still to
    do: 0 once completed, None once failed or cancelled."""
    if state in ACTIVE:
        return _predicted_left(preview, left)
    return 0.0 if state == "completed" else None


def running_first(store: Store, cluster: str) -> int | None:
    """The plan whose execution runs on ``cluster``, which an executing plan without one
    waits for: one plan executes at a time on a cluster (the executor thread starts the
    oldest when the one running ends; one waiting for its not-before time or a window
    runs too). None: it starts at the executor's next look."""
    active = ExecutionRecords(store).active(cluster)
    return active[0].plan_id if active else None


def waiting(store: Store, cluster: str) -> str:
    """Why an executing plan on ``cluster`` has no execution yet, in words."""
    return waiting_text(cluster, running_first(store, cluster))


def waiting_text(cluster: str, first: int | None) -> str:
    """``waiting``'s words for running_first's answer ``first``."""
    if first is None:
        return "the executor starts it within a few seconds"
    return (f"plan {first} executes on cluster {cluster} first (one plan executes at a "
            f"time on a cluster): this one starts when it ends")


def held(ex: Execution) -> dict:
    """Why a guard or a window holds the execution (backend/executor/guards.py), for the
    API and the plan page: ``status`` the state in words ("waiting for window", "paused
    by a guard"), ``hold`` the record (which conditions, their values, since when, when
    they cleared), ``next_window`` when a window holds it (epoch s)."""
    hold = ex.hold if ex.state == "paused" else None  # a resumed or ending one is not
    if not hold:
        return {"status": ex.state, "hold": None, "next_window": None}
    status = ("waiting for window" if hold["kind"] == WINDOW
              else "paused by a guard" + (" (cleared)" if hold.get("clear_since") else ""))
    return {"status": status, "hold": hold, "next_window": hold.get("next_window")}


def held_plans(store: Store, cluster: str) -> list[dict]:
    """The cluster's executing plans a guard or a window holds now: {plan_id, title,
    status, text, next_window}, for the Overview's banner."""
    records, out = ExecutionRecords(store), []
    for ex in records.active(cluster):
        said = held(ex)
        if said["hold"] is not None:
            out.append({"plan_id": ex.plan_id, "title": plans.summary(store, ex.plan_id).title,
                        "status": said["status"], "text": said["hold"]["text"],
                        "next_window": said["next_window"]})
    return out


def executing_etas(store: Store, cluster: str) -> list[dict]:
    """The predicted ETA of each plan executing on ``cluster``, as its page gives it (for
    /throttles, which shows the moves in flight: the same figure in both places)."""
    out = []
    for plan in plans.list_plans(store, cluster=cluster, state="executing"):
        p = progress(store, plan.id)
        if p is not None and p["state"] in ACTIVE:
            out.append({"plan_id": plan.id, "title": plan.title, "state": p["state"],
                        "predicted_eta_seconds": p["predicted_eta_seconds"]})
    return out


def _predicted_left(preview: dict, left: float) -> float | None:
    """The plan's predicted ETA (the preview's, batch after batch as the executor runs
    it: plan_preview.predicted_eta) for the share of it still to do; None when it has no
    figure or only the last partitions' completion is awaited (never "0 s" while it
    runs)."""
    whole = plan_preview.predicted_eta(preview)
    return whole * left if whole is not None and left > 0 else None


def _batch_state(b: dict) -> str:
    """A batch the executor closed with partitions off their target failed (the plan
    fails with it), though its record says done."""
    return "failed" if b["state"] == "done" and b["done"] < b["partitions"] else b["state"]


def batch_markers(store: Store, cluster: str, start: float, end: float) -> list[dict]:
    """Batch starts and ends on ``cluster`` between ``start`` and ``end`` (epoch s), as
    markers for the time series in plan_events.events' shape ("batch 2 started"), oldest
    first: a chart shows which batch of which plan was moving data when. A shrink's
    migration runs steps, not batches: "step 2 started", ``"unit": "step"``."""
    records = ExecutionRecords(store)
    runs = [ex for ex in records.on_cluster(cluster, start) if ex.started_at <= end]
    titles = {p.id: p.title for p in plans.list_plans(store, cluster=cluster)} if runs else {}
    out = []
    for ex in runs:
        unit = "step" if records.mode(ex.plan_id) == MIGRATION else "batch"
        for b in records.batches(ex.plan_id):
            for key, what in (("started_at", "started"), ("ended_at", "ended")):
                if b[key] is not None and start <= b[key] <= end:
                    out.append({"at": b[key], "plan_id": ex.plan_id, "kind": "batch",
                                "unit": unit, "state": f"{unit} {b['idx'] + 1} {what}",
                                "user": SYSTEM.name, "title": titles.get(ex.plan_id, "")})
    return sorted(out, key=lambda m: m["at"])


def executor_thread(store: Store, clusters: list[str], gateways: GatewayOf,
                    snapshot_of: Callable[[str], Snapshot], **options: Any) -> ExecutorThread:
    """The executor thread of `railyard serve` for ``clusters`` (not yet started); options:
    interval, clock, holder, retry, traffic (each cluster's adaptive throttle:
    services.throttle_traffic.control_for) (backend/executor/thread.py)."""
    return ExecutorThread(store, clusters, gateways, snapshot_of,
                          starts={name: kind.start for name, kind in KINDS.items()},
                          doubt_of=lambda plan, trail: plans.execution_doubt(
                              store, plan, "executing", trail=trail), **options)


# ---- the demo ---------------------------------------------------------------------------------
DEMO_THROTTLE = 20_000_000  # bytes/s


def propose_demo_plan(store: Store, snap: Snapshot, author: Actor) -> Plan | None:
    """`railyard demo` starts with one plan waiting for the demo approver: 300 replicas
    from broker 1 to broker 4 (same rack), throttled, on partitions the demo scenario
    leaves alone (it moves partitions off broker 3 to broker 9), so the approval's basis
    check passes. None when a plan is already proposed."""
    if plans.list_plans(store, cluster=snap.cluster, state="proposed", limit=1):
        return None
    on = {}
    for b in (1, 4, 3, 9):
        on[b] = np.zeros(snap.n_partitions, bool)
        on[b][snap.replica_partition[snap.replica_broker == snap.broker_positions([b])[0]]] = True
    rows = np.flatnonzero(on[1] & ~on[4] & ~on[3] & ~on[9] & ~snap.part_internal)[:300]
    content = {"version": 1, "partitions": [
        {"topic": str(snap.topic_names[snap.part_topic[r]]), "partition": int(snap.part_id[r]),
         "replicas": [4 if b == 1 else b for b in snap.replicas_of(r)]} for r in rows.tolist()]}
    draft = plan_preview.from_kafka_json(snap, content, throttle=DEMO_THROTTLE)
    return plans.propose(store, author, cluster=snap.cluster, kind=REASSIGNMENT,
                         content=draft.content, preview=draft.preview, snapshot=snap,
                         title="Move 300 replicas from broker 1 to broker 4 (demo)",
                         throttle=DEMO_THROTTLE)
