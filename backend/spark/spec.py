"""What-if sweep specs (docs/whatif.md): one JSON object naming a kind, inputs and a grid.

Parsing is pure and strict: unknown keys, empty grids, wrong types and duplicate values
are BadInput naming the key, before any file is read or Spark starts. File names are
taken relative to the spec file's folder. A scenario is one point of the grid's
cartesian product, numbered in the order the grid lists its values (last key fastest).
"""

from __future__ import annotations

import itertools
import math
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from backend.errors import BadInput
from backend.model.bounds import MAX_GENERATED_BROKERS, check_count, check_long, check_replicas
from backend.model.io import read_json
from backend.model.names import check_topic_name

KINDS = ("limits", "throttle", "quota", "fleet")
MAX_SCENARIOS = 1_000_000

MIB = 1024 * 1024


@dataclass(frozen=True)
class Topic:
    name: str
    partitions: int
    rf: int


@dataclass(frozen=True)
class LimitsSpec:
    snapshot: str
    workload: tuple[Topic, ...]
    grid: dict[str, list]  # max.broker.partitions, max.partitions (None = snapshot's), add_brokers
    seed: int = 0
    start_index: int | None = None
    detail: bool = False
    kind: str = "limits"


@dataclass(frozen=True)
class ThrottleSpec:
    snapshot: str
    reassignment: str
    grid: dict[str, list]  # throttle, window_num
    network_capacity: float | None = None
    fetch_response_max_bytes: int = 10 * MIB
    window_seconds: int = 1
    detail: bool = False
    kind: str = "throttle"


@dataclass(frozen=True)
class QuotaSpec:
    requests: str
    grid: dict[str, list]  # rate, samples
    mode: str = "strict"
    window_seconds: int = 1
    kind: str = "quota"


@dataclass(frozen=True)
class FleetSnapshot:
    file: str
    taken_at: float | None  # seconds since the epoch


@dataclass(frozen=True)
class FleetHistory:
    """A cluster's daily peaks of partition replicas (what /capacity fits), and its limits."""

    times: np.ndarray  # seconds since the epoch, one per day
    brokers: tuple[str, ...]
    broker_values: np.ndarray  # (brokers, days); NaN for a missing day
    cluster_values: np.ndarray  # (days,)
    max_broker_partitions: int | None
    max_partitions: int | None


@dataclass(frozen=True)
class FleetCluster:
    name: str
    snapshots: tuple[FleetSnapshot, ...]  # oldest first; empty when ``history`` is given
    growth_per_day: float | None  # replicas per broker per day; overrides the observed growth
    history: FleetHistory | None = None


@dataclass(frozen=True)
class FleetSpec:
    """Every cluster from snapshots (headroom rows) or every cluster from its partition
    history (forecast rows: the capacity engine's time-to-limit table per scenario)."""

    clusters: tuple[FleetCluster, ...]
    grid: dict[str, list]  # max.broker.partitions, max.partitions (absent = each cluster's),
    # and for histories the forecast knobs (FORECAST_KNOBS)
    by_days: float = 90.0  # histories: brokers to add by this many days from the last day
    kind: str = "fleet"

    @property
    def forecasts(self) -> bool:
        return self.clusters[0].history is not None


Spec = LimitsSpec | ThrottleSpec | QuotaSpec | FleetSpec

SNAPSHOT_LIMIT = "snapshot"
"""Grid value meaning "the snapshot's own limit" (what the CLI does without the flag)."""


def load_spec(path: str | os.PathLike) -> Spec:
    """Read and validate a spec file; relative file names resolve against its folder."""
    return parse_spec(read_json(path, "sweep spec"), Path(path).parent, str(path))


def parse_spec(obj: Any, base: str | os.PathLike = ".", source: str = "spec") -> Spec:
    if not isinstance(obj, dict):
        raise BadInput(f"{source}: a sweep spec is a JSON object with 'kind' and 'grid'")
    kind = obj.get("kind")
    if kind not in KINDS:
        raise BadInput(f"{source}: 'kind' must be one of {', '.join(KINDS)}, got {kind!r}")
    r = _Reader(obj, Path(base), source)
    spec = {"limits": _limits, "throttle": _throttle, "quota": _quota, "fleet": _fleet}[kind](r)
    r.no_unknown_keys()
    n = count_scenarios(spec)
    if n > MAX_SCENARIOS:
        raise BadInput(f"{source}: the grid has {n:,} scenarios, more than {MAX_SCENARIOS:,}")
    return spec


def count_scenarios(spec: Spec) -> int:
    return math.prod(len(v) for v in spec.grid.values())


def scenarios(spec: Spec) -> list[dict]:
    """Every grid point as {grid key: value}, numbered by position in this list."""
    keys = list(spec.grid)
    return [dict(zip(keys, combo, strict=True))
            for combo in itertools.product(*(spec.grid[k] for k in keys))]


# ---- the kinds -------------------------------------------------------------------------------
def _limits(r: _Reader) -> LimitsSpec:
    workload = r.get("workload", list, required=True)
    if not workload:
        raise BadInput(f"{r.source}: 'workload' must list at least one topic")
    topics, seen = [], set()
    for i, t in enumerate(workload):
        where = f"{r.source}: workload[{i}]"
        if not isinstance(t, dict) or set(t) - {"topic", "partitions", "rf"}:
            raise BadInput(f"{where}: expected {{\"topic\", \"partitions\", \"rf\"}}")
        name = check_topic_name(t.get("topic"), f"{where}.topic")
        if name in seen:
            raise BadInput(f"{where}: topic '{name}' is listed twice")
        seen.add(name)
        topic = Topic(name, _int(t.get("partitions"), f"{where}.partitions", 1),
                      _int(t.get("rf"), f"{where}.rf", 1))
        check_replicas(topic.partitions, topic.rf, where)
        topics.append(topic)
    grid = r.grid({
        "max.broker.partitions": (_limit_value, [SNAPSHOT_LIMIT]),
        "max.partitions": (_limit_value, [SNAPSHOT_LIMIT]),
        "add_brokers": (lambda v, w: check_count(_int(v, w, 0), MAX_GENERATED_BROKERS, w), [0]),
    })
    start = r.get("start_index", int)
    return LimitsSpec(r.path("snapshot"), tuple(topics), grid,
                      seed=_int(r.get("seed", int, default=0), f"{r.source}: seed", 0),
                      start_index=None if start is None
                      else _int(start, f"{r.source}: start_index", 0),
                      detail=r.detail())


def _throttle(r: _Reader) -> ThrottleSpec:
    grid = r.grid({
        "throttle": (_positive, None),
        "window_num": (lambda v, w: _int(v, w, 1), [11]),
    })
    capacity = r.get("network_capacity", (int, float))
    return ThrottleSpec(
        r.path("snapshot"), r.path("reassignment"), grid,
        network_capacity=None if capacity is None
        else _positive(capacity, f"{r.source}: network_capacity"),
        fetch_response_max_bytes=_int(r.get("fetch_response_max_bytes", int, default=10 * MIB),
                                      f"{r.source}: fetch_response_max_bytes", 1),
        window_seconds=_int(r.get("window_seconds", int, default=1),
                            f"{r.source}: window_seconds", 1),
        detail=r.detail())


def _quota(r: _Reader) -> QuotaSpec:
    grid = r.grid({
        "rate": (_positive, None),
        "samples": (lambda v, w: _int(v, w, 1), [11]),
    })
    mode = r.get("mode", str, default="strict")
    if mode not in ("strict", "permissive"):
        raise BadInput(f"{r.source}: 'mode' must be 'strict' or 'permissive', got {mode!r}")
    return QuotaSpec(r.path("requests"), grid, mode=mode,
                     window_seconds=_int(r.get("window_seconds", int, default=1),
                                         f"{r.source}: window_seconds", 1))


FORECAST_KNOBS = {  # the capacity review's scenario knobs: grid key -> default, also the least
    "growth_pct_month": 0.0, "add_brokers": 0, "topic_partitions": 0, "topic_rf": 1,
}


def _fleet(r: _Reader) -> FleetSpec:
    entries = r.get("clusters", list, required=True)
    if not entries:
        raise BadInput(f"{r.source}: 'clusters' must list at least one cluster")
    clusters, names = [], set()
    for i, c in enumerate(entries):
        where = f"{r.source}: clusters[{i}]"
        if not isinstance(c, dict) or set(c) - {"name", "snapshots", "growth_per_day",
                                                 "history"}:
            raise BadInput(f"{where}: expected {{\"name\", \"snapshots\", \"growth_per_day\"}}"
                           " or {\"name\", \"history\"}")
        name = c.get("name")
        if not isinstance(name, str) or not name:
            raise BadInput(f"{where}: 'name' must be a non-empty string")
        if name in names:
            raise BadInput(f"{where}: cluster '{name}' is listed twice")
        names.add(name)
        if "history" in c:
            if set(c) & {"snapshots", "growth_per_day"}:
                raise BadInput(f"{where}: give 'history' or 'snapshots', not both")
            clusters.append(FleetCluster(name, (), None, _history(c["history"], r,
                                                                  f"{where}.history")))
            continue
        snaps = c.get("snapshots")
        if not isinstance(snaps, list) or not snaps:
            raise BadInput(f"{where}: 'snapshots' must list at least one snapshot")
        parsed = [_fleet_snapshot(s, r, f"{where}.snapshots[{j}]") for j, s in enumerate(snaps)]
        if len(parsed) > 1:
            if any(s.taken_at is None for s in parsed):
                raise BadInput(f"{where}: with several snapshots each needs 'taken_at'")
            times = [s.taken_at for s in parsed]
            if len(set(times)) != len(times):
                raise BadInput(f"{where}: two snapshots have the same 'taken_at'")
            parsed.sort(key=lambda s: s.taken_at)
        growth = c.get("growth_per_day")
        if growth is not None:
            growth = _number(growth, f"{where}.growth_per_day")
        clusters.append(FleetCluster(name, tuple(parsed), growth))
    forecasts = {c.history is not None for c in clusters}
    if len(forecasts) > 1:
        raise BadInput(f"{r.source}: every cluster needs 'history', or none: one sweep "
                       "answers forecasts or headroom, not both")
    if forecasts == {True}:
        by_days = _positive(r.get("by_days", (int, float), default=90.0), f"{r.source}: by_days")
        return FleetSpec(tuple(clusters), r.grid(_forecast_keys(), required=False), by_days)
    return FleetSpec(tuple(clusters), r.grid({
        "max.broker.partitions": (_limit_value, [SNAPSHOT_LIMIT]),
        "max.partitions": (_limit_value, [SNAPSHOT_LIMIT]),
    }, required=False))


def forecast_grid(grid: dict[str, list], source: str = "grid") -> dict[str, list]:
    """A fleet forecast sweep's grid, checked and completed with the knobs' defaults."""
    return _Reader({"grid": grid}, Path("."), source).grid(_forecast_keys(), required=False)


def _forecast_keys() -> dict:
    keys = {k: (_forecast_limit, [SNAPSHOT_LIMIT])
            for k in ("max.broker.partitions", "max.partitions")}
    keys.update({k: (_number if isinstance(least, float)
                     else (lambda v, w, least=least: _int(v, w, least)), [least])
                 for k, least in FORECAST_KNOBS.items()})
    return keys


def _forecast_limit(value: Any, where: str) -> int | str:
    if value is None:
        raise BadInput(f"{where}: an unlimited limit is never reached; give a number or "
                       f"'{SNAPSHOT_LIMIT}' (the cluster's own)")
    return _limit_value(value, where)


def _history(h: Any, r: _Reader, where: str) -> FleetHistory:
    """A history object inline, or a JSON file holding one (relative to the spec)."""
    if isinstance(h, str) and h:
        h = read_json(r.base / h, where)
    keys = {"times", "brokers", "broker_values", "cluster_values", "limits"}
    if not isinstance(h, dict) or set(h) - keys or "times" not in h:
        raise BadInput(f"{where}: expected a file name or {{{', '.join(sorted(keys))}}}")
    times = _series(h.get("times"), f"{where}.times", nulls=False)
    brokers = h.get("brokers")
    if not isinstance(brokers, list) or not all(isinstance(b, str) and b for b in brokers) \
            or len(set(brokers)) != len(brokers):
        raise BadInput(f"{where}.brokers: expected a list of distinct broker ids as strings")
    values = h.get("broker_values")
    if not isinstance(values, list) or len(values) != len(brokers):
        raise BadInput(f"{where}.broker_values: expected one list per broker "
                       f"({len(brokers)}), got {type(values).__name__}")
    rows = np.array([_series(v, f"{where}.broker_values[{i}]", len(times))
                     for i, v in enumerate(values)], np.float64).reshape(len(brokers), len(times))
    limits = h.get("limits", {})
    if not isinstance(limits, dict) or set(limits) - {"max.broker.partitions", "max.partitions"}:
        raise BadInput(f"{where}.limits: expected {{\"max.broker.partitions\", "
                       "\"max.partitions\"}")
    mbp, mp = (_limit_value(limits.get(k), f"{where}.limits.{k}")
               for k in ("max.broker.partitions", "max.partitions"))
    if SNAPSHOT_LIMIT in (mbp, mp):
        raise BadInput(f"{where}.limits: give numbers or null (unlimited)")
    return FleetHistory(np.array(times, np.float64), tuple(brokers), rows,
                        np.array(_series(h.get("cluster_values"), f"{where}.cluster_values",
                                         len(times)), np.float64), mbp, mp)


def _series(values: Any, where: str, length: int | None = None, nulls: bool = True
            ) -> tuple[float, ...]:
    """Numbers >= 0 (null: a day with no data, as NaN), ``length`` of them when given."""
    if not isinstance(values, list) or (length is not None and len(values) != length):
        what = "numbers" if length is None else f"{length} numbers"
        raise BadInput(f"{where}: expected a list of {what}")
    return tuple(math.nan if v is None and nulls else float(_number(v, f"{where}[{i}]"))
                 for i, v in enumerate(values))


def _fleet_snapshot(s: Any, r: _Reader, where: str) -> FleetSnapshot:
    if isinstance(s, str):
        s = {"file": s}
    if not isinstance(s, dict) or set(s) - {"file", "taken_at"}:
        raise BadInput(f"{where}: expected a file name or {{\"file\", \"taken_at\"}}")
    file = s.get("file")
    if not isinstance(file, str) or not file:
        raise BadInput(f"{where}: 'file' must be a non-empty string")
    return FleetSnapshot(str(r.base / file), _timestamp(s.get("taken_at"), f"{where}.taken_at"))


# ---- values ------------------------------------------------------------------------------------
def _int(value: Any, where: str, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadInput(f"{where}: expected an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise BadInput(f"{where}: must be at least {minimum}, got {value}")
    return check_long(value, where)


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) \
            or not math.isfinite(value) or value < 0:
        raise BadInput(f"{where}: expected a number >= 0, got {value!r}")
    return check_long(value, where)


def _positive(value: Any, where: str) -> float:
    if _number(value, where) <= 0:
        raise BadInput(f"{where}: must be larger than 0, got {value!r}")
    return value


def _limit_value(value: Any, where: str) -> int | str | None:
    """A limit: an integer >= 0, null for unlimited, or "snapshot" for the snapshot's own."""
    if value is None or value == SNAPSHOT_LIMIT:
        return value
    return _int(value, where, 0)


def _timestamp(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise BadInput(f"{where}: not an ISO-8601 time: {value!r}") from None
        if parsed.tzinfo is None:
            raise BadInput(f"{where}: give a time zone (e.g. 2025-01-31T00:00:00Z): {value!r}")
        return parsed.timestamp()
    return float(_number(value, where))


class _Reader:
    """Reads a spec's top-level keys, remembering which were used to refuse the rest."""

    def __init__(self, obj: dict, base: Path, source: str) -> None:
        self.obj, self.base, self.source = obj, base, source
        self.used = {"kind"}

    def get(self, key: str, kind: type | tuple, required: bool = False, default: Any = None):
        self.used.add(key)
        if key not in self.obj or self.obj[key] is None:
            if required:
                raise BadInput(f"{self.source}: '{key}' is required")
            return default
        value = self.obj[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            raise BadInput(f"{self.source}: '{key}' has the wrong type: {value!r}")
        return value

    def path(self, key: str) -> str:
        value = self.get(key, str, required=True)
        if not value:
            raise BadInput(f"{self.source}: '{key}' must be a file name")
        return str(self.base / value)

    def detail(self) -> bool:
        return self.get("detail", bool, default=False)

    def grid(self, keys: dict, required: bool = True) -> dict[str, list]:
        """The grid: each key a non-empty list of distinct valid values, or its default."""
        grid = self.get("grid", dict, required=required, default={})
        unknown = set(grid) - set(keys)
        if unknown:
            raise BadInput(f"{self.source}: unknown grid key '{sorted(unknown)[0]}' "
                           f"(known: {', '.join(keys)})")
        out = {}
        for key, (check, default) in keys.items():
            if key not in grid:
                if default is None:
                    raise BadInput(f"{self.source}: grid.{key} is required")
                out[key] = list(default)
                continue
            values = grid[key]
            if not isinstance(values, list) or not values:
                raise BadInput(f"{self.source}: grid.{key} must be a non-empty list")
            values = [check(v, f"{self.source}: grid.{key}[{i}]") for i, v in enumerate(values)]
            if len({repr(v) for v in values}) != len(values):
                raise BadInput(f"{self.source}: grid.{key} lists a value twice")
            out[key] = values
        return out

    def no_unknown_keys(self) -> None:
        unknown = set(self.obj) - self.used
        if unknown:
            raise BadInput(f"{self.source}: unknown key '{sorted(unknown)[0]}'")
