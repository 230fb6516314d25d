"""Scripted scenarios: "at time t, do X" for the twin, in YAML or JSON.

A scenario is ``{name, seed, duration, settings, events: [{at, action, ...}]}``; ``at``
is seconds or a string like "90s", "5m", "1h30m". An event with ``every`` (a duration) and
``times`` (a count) happens that many times, ``every`` apart; "{n}" in its string
arguments becomes the repetition's number (0, 1, ...). Actions (docs/twin.md):
set_quota, reassign (a Kafka plan or a ``move`` of N partitions from one broker to
another, optional ``throttle`` as kafka-reassign-partitions --throttle), cancel_reassignments,
remove_throttles, alter_config, create_topics, create_partitions, delete_topics,
fail_broker, recover_broker, set_traffic, set_partition_mode, gateway_fault (the gateway
answers ``op`` with Kafka error ``error`` for ``calls`` calls or ``for`` a duration;
backend.twin.faults).
Everything is validated when the file is loaded, before any time passes.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import yaml

from backend.engines.throttle import (
    FOLLOWER_RATE,
    FOLLOWER_REPLICAS,
    LEADER_RATE,
    LEADER_REPLICAS,
    throttle_configs,
)
from backend.errors import BadInput
from backend.gateways.base import ClusterGateway
from backend.model.reassignment import before_moves, reassignment_from_dict
from backend.model.snapshot import Snapshot
from backend.model.yamlfile import load_yaml
from backend.twin.cluster import DEFAULT_BROKER, TwinCluster, TwinSettings
from backend.twin.faults import validate as validate_fault
from backend.twin.gateway import TwinGateway

_DURATION = re.compile(r"^(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s)?$")

ACTIONS = {
    "set_quota": {"user", "client_id", "rate"},
    "reassign": {"plan", "move", "throttle"},
    "cancel_reassignments": set(),
    "remove_throttles": set(),
    "alter_config": {"entity_type", "name", "set", "delete"},
    "create_topics": {"topics", "user", "client_id", "strict"},
    "create_partitions": {"topic", "total", "user", "client_id", "strict"},
    "delete_topics": {"topics", "user", "client_id", "strict"},
    "fail_broker": {"broker"},
    "recover_broker": {"broker"},
    "set_traffic": {"topic", "factor"},
    "set_partition_mode": {"topic", "partitions", "mode"},
    "gateway_fault": {"op", "error", "calls", "for"},
}


def parse_seconds(value: Any, where: str) -> float:
    """Seconds from a number or "1h30m", "5m", "90s"."""
    if isinstance(value, bool):
        raise BadInput(f"{where}: expected a time, got {value!r}")
    if isinstance(value, int | float):
        if value < 0:
            raise BadInput(f"{where}: time must be >= 0, got {value}")
        return float(value)
    m = _DURATION.match(str(value).strip()) if isinstance(value, str) else None
    if not m or not any(m.groups()):
        raise BadInput(f"{where}: expected seconds or a duration like '5m', got {value!r}")
    h, mi, s = (float(g) if g else 0.0 for g in m.groups())
    return h * 3600 + mi * 60 + s


@dataclass(frozen=True)
class Event:
    at: float
    action: str
    args: dict


@dataclass
class Scenario:
    name: str = "scenario"
    seed: int = 0
    duration: float | None = None
    settings: TwinSettings = field(default_factory=TwinSettings)
    events: list[Event] = field(default_factory=list)


def load_scenario(path: str | os.PathLike) -> Scenario:
    """Read a scenario from .yaml/.yml or .json."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise BadInput(f"{path}: no such scenario file") from None
    try:
        obj = json.loads(text) if str(path).endswith(".json") else load_yaml(text)
    except (json.JSONDecodeError, yaml.YAMLError) as e:
        raise BadInput(f"{path}: not valid {'JSON' if str(path).endswith('.json') else 'YAML'}:"
                       f" {str(e).splitlines()[0]}") from None
    return scenario_from_dict(obj, str(path))


def scenario_from_dict(obj: Any, source: str = "scenario") -> Scenario:
    if not isinstance(obj, dict):
        raise BadInput(f"{source}: a scenario is a mapping with 'events'")
    unknown = set(obj) - {"name", "seed", "duration", "settings", "events"}
    if unknown:
        raise BadInput(f"{source}: unknown key '{sorted(unknown)[0]}'")
    known = {f.name for f in fields(TwinSettings)}
    settings = obj.get("settings") or {}
    if not isinstance(settings, dict) or set(settings) - known:
        bad = sorted(set(settings) - known) if isinstance(settings, dict) else ["settings"]
        raise BadInput(f"{source}: unknown setting '{bad[0]}' (known: {', '.join(sorted(known))})")
    seed = obj.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise BadInput(f"{source}: 'seed' must be an integer")
    events = []
    raw = obj.get("events") or []
    if not isinstance(raw, list):
        raise BadInput(f"{source}: 'events' must be a list")
    for i, e in enumerate(raw):
        where = f"{source}: events[{i}]"
        if not isinstance(e, dict) or e.get("action") not in ACTIONS:
            raise BadInput(f"{where}: 'action' must be one of {', '.join(sorted(ACTIONS))}")
        args = {k: v for k, v in e.items() if k not in ("at", "action", "every", "times")}
        extra = set(args) - ACTIONS[e["action"]]
        if extra:
            raise BadInput(f"{where}: {e['action']} takes no '{sorted(extra)[0]}'")
        at = parse_seconds(e.get("at", 0), f"{where}.at")
        if e["action"] == "gateway_fault":
            _check_fault(args, where)
        every, times = _repeat(e, where)
        events += [Event(at + n * every, e["action"], _numbered(args, n) if times > 1 else args)
                   for n in range(times)]
    events.sort(key=lambda ev: ev.at)
    duration = obj.get("duration")
    return Scenario(
        name=str(obj.get("name", "scenario")),
        seed=seed,
        duration=None if duration is None else parse_seconds(duration, f"{source}: duration"),
        settings=TwinSettings(**{**settings, "seed": settings.get("seed", seed)}),
        events=events,
    )


def _check_fault(args: dict, where: str) -> None:
    """A gateway fault is checked on load like every event, not when it fires."""
    if "for" in args:
        parse_seconds(args["for"], f"{where}.for")
    try:
        validate_fault(args.get("op", "*"), args.get("error"), args.get("calls"),
                       "for" in args)
    except BadInput as e:
        raise BadInput(f"{where}: {e}") from None


def _repeat(e: dict, where: str) -> tuple[float, int]:
    """(every, times) of an event: (0, 1) unless it repeats."""
    if "every" not in e and "times" not in e:
        return 0.0, 1
    times = e.get("times")
    if "every" not in e or isinstance(times, bool) or not isinstance(times, int) or times < 1:
        raise BadInput(f"{where}: a repeating event needs 'every' (a duration) and 'times' "
                       f"(a whole number >= 1)")
    every = parse_seconds(e["every"], f"{where}.every")
    if every <= 0:
        raise BadInput(f"{where}.every: must be longer than 0 s")
    return every, times


def _numbered(value: Any, n: int) -> Any:
    """``value`` with "{n}" in its strings replaced by the repetition number."""
    if isinstance(value, str):
        return value.replace("{n}", str(n))
    if isinstance(value, dict):
        return {k: _numbered(v, n) for k, v in value.items()}
    if isinstance(value, list):
        return [_numbered(v, n) for v in value]
    return value


# ---- running ----------------------------------------------------------------------------------
def move_plan(snap: Snapshot, source: int, dest: int, count: int,
              topic: str | None = None) -> dict:
    """Kafka plan moving ``count`` partitions' replicas from broker ``source`` to ``dest``:
    the first partitions (in topic order, internal topics skipped) that have a replica on
    ``source`` and none on ``dest``; the replaced replica keeps its place in the list."""
    s, d = snap.broker_positions([source, dest], "move")
    has_s = np.zeros(snap.n_partitions, bool)
    has_d = np.zeros(snap.n_partitions, bool)
    has_s[snap.replica_partition[snap.replica_broker == s]] = True
    has_d[snap.replica_partition[snap.replica_broker == d]] = True
    ok = has_s & ~has_d & ~snap.part_internal
    if topic is not None:
        ok &= snap.part_topic == snap.topic_index(topic)
    rows = np.flatnonzero(ok)[:count]
    if len(rows) < count:
        raise BadInput(f"move: only {len(rows)} partitions can move from broker {source} "
                       f"to broker {dest}, {count} asked")
    parts = []
    for row in rows.tolist():
        reps = [dest if b == source else b for b in snap.replicas_of(row)]
        parts.append({"topic": str(snap.topic_names[snap.part_topic[row]]),
                      "partition": int(snap.part_id[row]), "replicas": reps})
    return {"version": 1, "partitions": parts}


def throttled_reassign(gw: ClusterGateway, plan: dict, throttle: float | None) -> dict:
    """What kafka-reassign-partitions --execute --throttle does, through the gateway like
    any tool: write the throttled replica lists and broker rates, then start the moves."""
    if throttle is not None:
        view = before_moves(gw.assignment(), gw.list_reassignments())
        parsed = reassignment_from_dict(plan, view, "reassignment")
        for (entity_type, name), configs in throttle_configs(view, parsed, throttle).items():
            gw.alter_configs(entity_type, name, configs)
    return gw.alter_reassignments(plan)


THROTTLE_KEYS = {"broker": (LEADER_RATE, FOLLOWER_RATE),
                 "topic": (LEADER_REPLICAS, FOLLOWER_REPLICAS)}


def remove_throttles(gw: ClusterGateway) -> dict:
    """What --verify does once nothing moves: drop the rates and the replica lists."""
    moving = gw.list_reassignments()
    if moving:
        return {"removed": False, "in_progress": len(moving)}
    brokers = [str(b["id"]) for b in gw.describe_cluster()["brokers"]] + [DEFAULT_BROKER]
    topics = [t["name"] for t in gw.describe_topics()]
    for entity_type, names in (("broker", brokers), ("topic", topics)):
        for name in names:
            configs = gw.describe_configs(entity_type, name)["configs"]
            gone = [k for k in THROTTLE_KEYS[entity_type] if k in configs]
            if gone:
                gw.alter_configs(entity_type, name, delete=gone)
    return {"removed": True, "in_progress": 0}


def _topic_specs(spec: Any, where: str) -> list[dict]:
    """A list of {name, partitions, rf} or {prefix, count, partitions, rf}."""
    if isinstance(spec, dict) and "prefix" in spec:
        n = int(spec.get("count", 1))
        width = len(str(n - 1))
        return [{"name": f"{spec['prefix']}{i:0{width}d}", "partitions": spec.get("partitions", 1),
                 "rf": spec.get("rf", 3)} for i in range(n)]
    if isinstance(spec, list):
        return spec
    raise BadInput(f"{where}: 'topics' must be a list or {{prefix, count, partitions, rf}}")


def apply_event(twin: TwinCluster, ev: Event) -> Any:
    """Perform one event on the twin; returns the twin's answer."""
    a = ev.args
    who = {"user": str(a.get("user", "")), "client_id": str(a.get("client_id", "")),
           "strict": bool(a.get("strict", True))}
    match ev.action:
        case "set_quota":
            return twin.set_mutation_quota(a.get("user"), a.get("client_id"), a.get("rate"))
        case "reassign":
            plan = a.get("plan")
            if plan is None:
                m = a.get("move") or {}
                plan = move_plan(twin.snap, int(m["from"]), int(m["to"]),
                                 int(m.get("partitions", 1)), m.get("topic"))
            throttle = a.get("throttle")
            return throttled_reassign(TwinGateway(twin), plan,
                                      None if throttle is None else float(throttle))
        case "cancel_reassignments":
            return twin.cancel_reassignments()
        case "remove_throttles":
            return remove_throttles(TwinGateway(twin))
        case "alter_config":
            return twin.alter_configs(a["entity_type"], str(a["name"]), a.get("set"),
                                      a.get("delete"))
        case "create_topics":
            return twin.create_topics(_topic_specs(a.get("topics"), ev.action), **who)
        case "create_partitions":
            return twin.create_partitions(a["topic"], int(a["total"]), **who)
        case "delete_topics":
            names = [t if isinstance(t, str) else t["name"]
                     for t in _topic_specs(a.get("topics"), ev.action)]
            return twin.delete_topics(names, **who)
        case "fail_broker":
            return twin.fail_broker(int(a["broker"]))
        case "recover_broker":
            return twin.recover_broker(int(a["broker"]))
        case "set_traffic":
            return twin.set_traffic(float(a["factor"]), a.get("topic", "*"))
        case "set_partition_mode":
            return twin.set_partition_mode(a["topic"], list(a["partitions"]), a["mode"])
        case "gateway_fault":
            until = None if "for" not in a else ev.at + parse_seconds(a["for"], "gateway_fault")
            return twin.faults.add(a.get("op", "*"), a.get("error"), a.get("calls"), until)
    raise BadInput(f"unknown action '{ev.action}'")


class ScenarioRunner:
    """Advances a twin through a scenario, firing each event when its time comes."""

    def __init__(self, twin: TwinCluster, scenario: Scenario) -> None:
        self.twin, self.scenario = twin, scenario
        self.next = 0
        self.log: list[dict] = []

    def advance_to(self, t: float, dt: float = 1.0, on_step=None) -> None:
        """Run until simulated time ``t`` (seconds); ``on_step(twin)`` after every step."""
        events = self.scenario.events
        while True:
            self._fire_due()
            now = self.twin.now_seconds
            if now >= t - 1e-9:
                return
            until = min(t, events[self.next].at) if self.next < len(events) else t
            h = min(dt, until - now) if until > now else min(dt, t - now)
            self.twin.advance(h, dt)
            if on_step is not None:
                on_step(self.twin)

    def _fire_due(self) -> None:
        events = self.scenario.events
        while self.next < len(events) and events[self.next].at <= self.twin.now_seconds + 1e-9:
            ev = events[self.next]
            try:
                result = apply_event(self.twin, ev)
                self.log.append({"at": ev.at, "action": ev.action, "result": result})
            except (BadInput, KeyError, ValueError) as e:
                self.log.append({"at": ev.at, "action": ev.action, "error": str(e)})
            self.next += 1
