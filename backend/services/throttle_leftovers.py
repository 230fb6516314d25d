"""Leftover replication throttles, and the plan that clears them.

Cruise Control has left KIP-73 throttles on brokers long after their moves ended
(cruise-control#1511), and kafka-reassign-partitions leaves them until someone runs
--verify. A leftover is any leader/follower.replication.throttled.rate on a broker (or
the broker default) or leader/follower.replication.throttled.replicas on a topic that
no executing plan holds (the executor's book says which it holds: they are put back when
their plan ends). Kafka keeps no time for a config change, so "since" is when Railyard
first saw the config with its current value (backend/store/sightings.py).

An admin proposes a clear-throttles plan: exactly these configs with their values,
frozen and approved by someone else like any plan; its basis is the values, so a config
changed since is a 409 naming it. The executor deletes exactly those configs.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from backend.engines.throttle import (
    FOLLOWER_RATE,
    FOLLOWER_REPLICAS,
    LEADER_RATE,
    LEADER_REPLICAS,
)
from backend.errors import BadInput, Conflict, Unavailable
from backend.model.json_input import only_keys
from backend.services import execution, plans
from backend.services.cluster import ClusterSource, cluster_read
from backend.store.executions import ExecutionRecords
from backend.store.sightings import Config, sightings
from backend.store.store import Plan, Store
from backend.store.workflow import Actor, authorize

KEYS = {"broker": (LEADER_RATE, FOLLOWER_RATE), "topic": (LEADER_REPLICAS, FOLLOWER_REPLICAS)}
OPEN = ("proposed", "approved", "executing")  # a clear plan in these may still clear


def throttle_configs(source: ClusterSource, fresh: bool = False) -> dict[Config, str]:
    """Every throttle config set on the cluster's brokers and topics: (entity_type, name,
    key) -> value. Kept like every cluster read (a few seconds) unless ``fresh`` (what
    proposing, approving and executing a clear plan check against)."""
    gw = source.gateway
    if gw is None:
        raise Unavailable(f"Cluster '{source.name}'", "no gateway: throttle configs are "
                          "read from the cluster itself, not from a snapshot file")

    def read() -> dict[Config, str]:
        return {(etype, name, key): value for etype, keys in KEYS.items()
                for name, cfg in gw.find_configs(etype, list(keys)).items()
                for key, value in cfg.items()}
    return read() if fresh else cluster_read(source, "throttle_configs", read)


def _held(store: Store, cluster: str) -> dict[Config, int]:
    """Configs an executing plan holds -> that plan's id."""
    return {(r["entity_type"], r["name"], r["key"]): r["plan_id"]
            for r in ExecutionRecords(store).held_configs(cluster)}


def _clearing(store: Store, cluster: str) -> dict[Config, int]:
    """Configs an open clear-throttles plan names -> the newest such plan's id."""
    out: dict[Config, int] = {}
    for state in OPEN:
        for p in plans.list_plans(store, cluster=cluster, state=state):
            if p.kind == plans.CLEAR:
                for c in plans.get(store, p.id).content["configs"]:
                    key = (c["entity_type"], c["name"], c["key"])
                    out[key] = max(out.get(key, 0), p.id)
    return out


def leftovers(store: Store, source: ClusterSource, now: float | None = None,
              fresh: bool = False) -> dict:
    """{"cluster", "leftovers": [{entity_type, name, key, value, first_seen, clear_plan,
    moving (a reassignment in flight involves its broker or topic now)}],
    "held": configs executing plans hold, "holding": [{plan_id, status (a plan a guard or
    a window pauses says so: its throttles are still its own), configs}], "read_at"};
    Unavailable when the cluster's configs or the store cannot be read. The configs are a
    kept cluster read unless ``fresh``."""
    now = time.time() if now is None else now
    current = throttle_configs(source, fresh)
    held = _held(store, source.name)
    loose = {k: v for k, v in current.items() if k not in held}
    seen = sightings(store, source.name, loose, set(held), now)
    clearing = _clearing(store, source.name) if loose else {}
    moving = _moving(source, fresh, loose)
    rows = [{"entity_type": e, "name": n, "key": k, "value": v, "first_seen": seen[(e, n, k)],
             "clear_plan": clearing.get((e, n, k)), "moving": (e, n, k) in moving}
            for (e, n, k), v in sorted(loose.items())]
    counts: dict[int, int] = {}
    for k in current:
        if k in held:
            counts[held[k]] = counts.get(held[k], 0) + 1
    records = ExecutionRecords(store)
    holding = [{"plan_id": p, "configs": n,
                "status": execution.held(records.get(p))["status"]}
               for p, n in sorted(counts.items())]
    return {"cluster": source.name, "leftovers": rows,
            "held": sum(counts.values()), "holding": holding, "read_at": now}


def _moving(source: ClusterSource, fresh: bool, configs: Iterable[Config]) -> set[Config]:
    """The ``configs`` on a broker (or the broker default) or topic that a reassignment in
    flight involves now, Railyard's or not: such a throttle is slowing a move, not left
    behind by one (yet)."""
    configs = list(configs)
    if not configs:
        return set()
    read = source.gateway.list_reassignments
    flight = read() if fresh else cluster_read(source, "reassignments", read)
    brokers = {str(b) for r in flight for b in r["replicas"]}
    busy = {"topic": {r["topic"] for r in flight},
            "broker": brokers | ({"<default>"} if brokers else set())}
    return {c for c in configs if c[1] in busy[c[0]]}


@plans.audits_refusal(plans.CLEAR)
def propose_clear(store: Store, actor: Actor, source: ClusterSource,
                  configs: Any = None, title: str | None = None,
                  now: datetime | None = None) -> Plan:
    """Propose deleting ``configs`` ([{entity_type, name, key, value?}]; None: every
    leftover now, which leaves out the throttles of a reassignment in flight), each at its
    value now. Admins only; a config that is not set, or that an executing plan holds, is
    refused (400), a value given that is no longer the cluster's is a 409. A config named
    that slows a reassignment in flight now is proposed, and the plan says so (its
    preview's ``in_flight`` and its title): deleting it lets that move copy unthrottled."""
    authorize(actor, plans.CLEAR)
    current = throttle_configs(source, fresh=True)
    held = _held(store, source.name)
    loose = [k for k in current if k not in held]
    moving = _moving(source, True, loose)
    if configs is None:
        chosen = sorted(k for k in loose if k not in moving)
        if not chosen:
            busy = (f"; {len(moving)} more slow a reassignment in flight (name them in "
                    f"configs to clear them anyway)") if moving else ""
            raise BadInput(f"cluster {source.name} has no leftover throttle config: nothing "
                           f"to clear{busy}")
    else:
        chosen = _chosen(configs, current, held)
    in_flight = [k for k in chosen if k in moving]
    content = {"configs": [{"entity_type": e, "name": n, "key": k, "value": current[(e, n, k)]}
                           for e, n, k in chosen]}
    preview = {"configs": len(chosen),
               "brokers": sorted({n for e, n, _ in chosen if e == "broker"}),
               "topics": sorted({n for e, n, _ in chosen if e == "topic"}),
               "in_flight": [{"entity_type": e, "name": n, "key": k} for e, n, k in in_flight]}
    if in_flight and not title:
        title = (f"clear {len(chosen)} throttle configs, {len(in_flight)} of them slowing "
                 f"a reassignment in flight")
    return plans.propose(store, actor, cluster=source.name, kind=plans.CLEAR,
                         content=content, preview=preview, snapshot=None, title=title,
                         now=now)


def _chosen(configs: Any, current: dict[Config, str], held: dict[Config, int]) -> list[Config]:
    if not isinstance(configs, list) or not configs:
        raise BadInput("configs: expected a non-empty list of {entity_type, name, key}")
    out = []
    for i, c in enumerate(configs):
        where = f"configs[{i}]"
        if not isinstance(c, dict) or not all(isinstance(c.get(f), str)
                                              for f in ("entity_type", "name", "key")):
            raise BadInput(f"{where}: expected {{entity_type, name, key}} as strings")
        only_keys(c, ("entity_type", "name", "key", "value"), where)
        key = (c["entity_type"], c["name"], c["key"])
        if key[2] not in KEYS.get(key[0], ()):
            raise BadInput(f"{where}: {key[0]} {key[2]} is not a replication throttle "
                           f"config (brokers: {', '.join(KEYS['broker'])}; topics: "
                           f"{', '.join(KEYS['topic'])})")
        if key not in current:
            raise BadInput(f"{where}: {key[0]} {key[1]} has no {key[2]} set")
        if key in held:
            raise BadInput(f"{where}: {key[0]} {key[1]} {key[2]} is held by executing plan "
                           f"{held[key]}, which puts it back itself when it ends")
        if "value" in c and c["value"] != current[key]:
            raise Conflict(f"{where}: {key[0]} {key[1]} {key[2]} is {current[key]} now, not "
                           f"{c['value']}: look again before clearing it")
        out.append(key)
    if len(set(out)) != len(out):
        raise BadInput("configs: a config is named twice")
    return sorted(out)
