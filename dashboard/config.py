"""The dashboard's YAML config (config/railyard.example.yaml documents every key).

Loaded once at start-up and validated strictly: a typo is one line naming the key path
(``clusters[1].prometheus.dialect: ...``), raised as BadInput before any server starts.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from backend.errors import BadInput
from backend.metrics.dialects import DIALECTS
from backend.model.snapshot import Limits
from backend.services.uploads import DEFAULT_MAX_BYTES as DEFAULT_MAX_UPLOAD_BYTES

GATEWAY_TYPES = ("twin", "kafka")
CACHE_TYPES = ("simple", "redis")


@dataclass(frozen=True)
class Gateway:
    """How Railyard reads the cluster: the twin's admin URL or Kafka bootstrap servers."""

    type: str
    url: str | None = None  # twin; None: a twin in the dashboard's process (railyard demo)
    bootstrap_servers: tuple[str, ...] = ()  # kafka


@dataclass(frozen=True)
class PrometheusSettings:
    url: str
    dialect: str = "strimzi"
    timeout_seconds: float = 5.0


@dataclass(frozen=True)
class QuotaSettings:
    """The cluster's KIP-599 settings, used when a what-if starts from the live cluster."""

    controller_mutation_rate: float | None = None  # default principal's partitions/s
    window_num: int = 11  # controller.quota.window.num
    window_seconds: int = 1  # controller.quota.window.size.seconds


@dataclass(frozen=True)
class ClusterConfig:
    name: str
    gateway: Gateway
    prometheus: PrometheusSettings | None
    limits: Limits = field(default_factory=Limits)
    quota: QuotaSettings = field(default_factory=QuotaSettings)
    snapshot: str | None = None  # a snapshot file for what-ifs when no gateway answers


@dataclass(frozen=True)
class CacheSettings:
    type: str = "simple"
    redis_url: str | None = None
    default_timeout: int = 10  # seconds; Prometheus answers are short-lived
    background_dir: str = "var/dashboard-cache"  # diskcache for background callbacks


@dataclass(frozen=True)
class ServerSettings:
    host: str = "127.0.0.1"
    port: int = 8050
    refresh_seconds: int = 15  # how often live and relative views re-query
    max_upload_bytes: int = DEFAULT_MAX_UPLOAD_BYTES  # a bigger upload is refused with a line


@dataclass(frozen=True)
class DashboardConfig:
    clusters: tuple[ClusterConfig, ...]
    spark: dict[str, Any] = field(default_factory=dict)  # backend.spark.session settings
    cache: CacheSettings = field(default_factory=CacheSettings)
    server: ServerSettings = field(default_factory=ServerSettings)
    source: str = "config"

    def cluster(self, name: str | None) -> ClusterConfig:
        """The named cluster, or the first one when the name is missing or unknown."""
        return next((c for c in self.clusters if c.name == name), self.clusters[0])


def load_config(path: str | os.PathLike) -> DashboardConfig:
    """Read and validate a YAML config file; BadInput with one line on any problem."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadInput(f"{path}: no such config file") from None
    except OSError as e:
        raise BadInput(f"{path}: cannot read ({e.strerror})") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        raise BadInput(f"{path}: {where}not valid YAML ({getattr(e, 'problem', e)})") from None
    config = parse_config(doc, str(path))
    base = Path(path).resolve().parent  # snapshot files are named relative to the config
    return replace(config, clusters=tuple(
        replace(c, snapshot=str((base / c.snapshot).resolve())) if c.snapshot else c
        for c in config.clusters))


def parse_config(doc: Any, source: str = "config") -> DashboardConfig:
    """A validated config from the parsed YAML document."""
    root = _Node(doc, source, "")
    root.only("clusters", "spark", "cache", "server")
    clusters = root.list("clusters", required=True)
    if not clusters:
        raise BadInput(f"{source}: clusters: list at least one cluster")
    parsed = tuple(_cluster(c) for c in clusters)
    names = [c.name for c in parsed]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise BadInput(f"{source}: clusters: the name '{dup}' is used twice")
    spark = root.mapping("spark")
    return DashboardConfig(clusters=parsed, spark=spark.value if spark else {},
                           cache=_cache(root.mapping("cache")),
                           server=_server(root.mapping("server")), source=source)


def _cluster(node: _Node) -> ClusterConfig:
    node.only("name", "gateway", "prometheus", "limits", "quota", "snapshot")
    name = node.str("name", required=True)
    prom = node.mapping("prometheus")
    limits = node.mapping("limits")
    quota = node.mapping("quota")
    return ClusterConfig(
        name=name,
        gateway=_gateway(node.mapping("gateway", required=True)),
        prometheus=_prometheus(prom) if prom else None,
        limits=_limits(limits) if limits else Limits(),
        quota=_quota(quota) if quota else QuotaSettings(),
        snapshot=node.str("snapshot"),
    )


def _gateway(node: _Node) -> Gateway:
    node.only("type", "url", "bootstrap_servers")
    kind = node.choice("type", GATEWAY_TYPES, required=True)
    if kind == "twin":
        return Gateway("twin", url=node.url("url", required=True))
    servers = node.value.get("bootstrap_servers")
    if isinstance(servers, str):
        servers = [s.strip() for s in servers.split(",") if s.strip()]
    if not servers or not all(isinstance(s, str) and ":" in s for s in servers):
        raise BadInput(f"{node.where('bootstrap_servers')}: expected host:port entries, "
                       f"e.g. [\"kafka-1:9092\", \"kafka-2:9092\"]")
    return Gateway("kafka", bootstrap_servers=tuple(servers))


def _prometheus(node: _Node) -> PrometheusSettings:
    node.only("url", "dialect", "timeout_seconds")
    return PrometheusSettings(
        url=node.url("url", required=True),
        dialect=node.choice("dialect", tuple(DIALECTS), default="strimzi"),
        timeout_seconds=node.number("timeout_seconds", default=5.0),
    )


def _limits(node: _Node) -> Limits:
    node.only("max.broker.partitions", "max.partitions")
    return Limits(node.int("max.broker.partitions"), node.int("max.partitions"))


def _quota(node: _Node) -> QuotaSettings:
    node.only("controller_mutation_rate", "window_num", "window_seconds")
    rate = node.value.get("controller_mutation_rate")
    return QuotaSettings(
        controller_mutation_rate=None if rate is None
        else node.number("controller_mutation_rate"),
        window_num=node.int("window_num", default=11, minimum=1),
        window_seconds=node.int("window_seconds", default=1, minimum=1),
    )


def _cache(node: _Node | None) -> CacheSettings:
    if node is None:
        return CacheSettings()
    node.only("type", "redis_url", "default_timeout", "background_dir")
    kind = node.choice("type", CACHE_TYPES, default="simple")
    redis_url = node.str("redis_url")
    if kind == "redis" and not redis_url:
        raise BadInput(f"{node.where('redis_url')}: required when type is redis "
                       f"(e.g. redis://127.0.0.1:6379/0)")
    return CacheSettings(kind, redis_url,
                         node.int("default_timeout", default=10, minimum=0),
                         node.str("background_dir") or CacheSettings.background_dir)


def _server(node: _Node | None) -> ServerSettings:
    if node is None:
        return ServerSettings()
    node.only("host", "port", "refresh_seconds", "max_upload_bytes")
    return ServerSettings(node.str("host") or "127.0.0.1",
                          node.int("port", default=8050, minimum=1),
                          node.int("refresh_seconds", default=15, minimum=1),
                          node.int("max_upload_bytes", default=DEFAULT_MAX_UPLOAD_BYTES,
                                   minimum=1))


class _Node:
    """A mapping in the YAML document and where it sits, for one-line errors."""

    def __init__(self, value: Any, source: str, path: str) -> None:
        if not isinstance(value, dict):
            raise BadInput(f"{source}: {path or 'top level'}: expected a mapping of keys")
        self.value, self.source, self.path = value, source, path

    def where(self, key: str) -> str:
        return f"{self.source}: {self.path}{'.' if self.path else ''}{key}"

    def only(self, *keys: str) -> None:
        unknown = sorted(str(k) for k in set(self.value) - set(keys))
        if unknown:
            raise BadInput(f"{self.where(unknown[0])}: unknown key (known: {', '.join(keys)})")

    def _get(self, key: str, required: bool) -> Any:
        value = self.value.get(key)
        if value is None and required:
            raise BadInput(f"{self.where(key)}: required")
        return value

    def mapping(self, key: str, required: bool = False) -> _Node | None:
        value = self._get(key, required)
        if value is None:
            return None
        return _Node(value, self.source, f"{self.path}{'.' if self.path else ''}{key}")

    def list(self, key: str, required: bool = False) -> list[_Node]:
        value = self._get(key, required)
        if value is None:
            return []
        if not isinstance(value, list):
            raise BadInput(f"{self.where(key)}: expected a list")
        return [_Node(v, self.source, f"{self.path}{'.' if self.path else ''}{key}[{i}]")
                for i, v in enumerate(value)]

    def str(self, key: str, required: bool = False) -> str | None:
        value = self._get(key, required)
        if value is not None and not (isinstance(value, str) and value.strip()):
            raise BadInput(f"{self.where(key)}: expected a non-empty string, got {value!r}")
        return value

    def choice(self, key: str, options: tuple[str, ...], required: bool = False,
               default: str | None = None) -> str:
        value = self._get(key, required)
        if value is None:
            return default
        if value not in options:
            raise BadInput(f"{self.where(key)}: expected one of {', '.join(options)}, "
                           f"got {value!r}")
        return value

    def url(self, key: str, required: bool = False) -> str | None:
        value = self.str(key, required)
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise BadInput(f"{self.where(key)}: expected an http(s)://host:port URL, "
                           f"got {value!r}")
        return value.rstrip("/")

    def int(self, key: str, default: int | None = None, minimum: int = 0) -> int | None:
        value = self.value.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise BadInput(f"{self.where(key)}: expected an integer >= {minimum}, got {value!r}")
        return value

    def number(self, key: str, default: float | None = None) -> float | None:
        value = self.value.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float) \
                or not (value > 0 and math.isfinite(value)):
            raise BadInput(f"{self.where(key)}: expected a positive number, got {value!r}")
        return float(value)
