"""The dashboard's YAML config (config/railyard.example.yaml documents every key).

Loaded once at start-up and validated strictly: a typo is one line naming the key path
(``clusters[1].prometheus.dialect: ...``), raised as BadInput before any server starts.
"""

from __future__ import annotations

import base64
import ipaddress
import math
import os
import re
import unicodedata
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import yaml

from backend.errors import BadInput, shown_url
from backend.gateways.config import GatewayConfig as Gateway
from backend.gateways.config import parse_gateway, parse_secret
from backend.metrics.dialects import DIALECTS
from backend.model.bounds import MAX_INT, MAX_LONG
from backend.model.guards import DAYS, GuardSettings, WeeklyRange, Windows
from backend.model.snapshot import NEAR_LIMIT_RATIO, Limits
from backend.model.yamlfile import DuplicateKey, load_yaml
from backend.services.approval_status import Policies, Policy, check_users, parse_policy
from backend.services.uploads import DEFAULT_MAX_BYTES as DEFAULT_MAX_UPLOAD_BYTES
from backend.store.workflow import SYSTEM

CACHE_TYPES = ("simple", "redis")
ROLES = ("viewer", "operator", "approver", "admin")  # what each may do: backend.store.workflow
HASH_METHODS = ("scrypt:", "pbkdf2:")  # werkzeug.security; `railyard auth hash-password`
LOOPBACK = ("127.0.0.1", "::1")
MAX_NAME = 200  # characters in a user name (the store's user columns)
LOCAL_USER = "local"  # who everyone is under auth: none
UNKNOWN_USER = "(unknown user)"  # what the audit log says of a name no user has
# the audit log's names for who is no person (and cli:USER, an OS account running `railyard
# auth revoke`): no user may have one, or their actions would pass for Railyard's own
RESERVED_NAMES = {SYSTEM.name: "the executor and plan expiry",
                  LOCAL_USER: "everyone under auth: none",
                  UNKNOWN_USER: "failed sign-ins under a name no user has"}
COOKIE_SECURE = ("auto", True, False)


@dataclass(frozen=True)
class PrometheusSettings:
    url: str
    dialect: str = "strimzi"
    timeout_seconds: float = 5.0
    # the Authorization header (basic_auth or bearer_token), read once from the file or
    # variable the config names: never in the URL, which pages, logs and reports show
    authorization: str | None = field(default=None, repr=False)
    ca_file: str | None = None  # the CA bundle its TLS certificate is checked against


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
    approval: Policy | None = None  # approval.rules; None: the fleet's
    guards: GuardSettings = field(default_factory=GuardSettings)  # executor's stops
    windows: Windows = field(default_factory=Windows)  # when plans may start batches
    adaptive_throttle: AdaptiveThrottleSettings = field(
        default_factory=lambda: AdaptiveThrottleSettings())


@dataclass(frozen=True)
class AdaptiveThrottleSettings:
    """A cluster's adaptive throttle (backend/executor/adaptive.py): how often it looks at
    the traffic, how long it holds the rates while Prometheus is silent before dropping to
    the floor, and each broker's network capacity (bytes/s each way, kafka-kit's cap map)."""

    interval_seconds: float = 30.0
    hold_seconds: float = 120.0
    network_capacity: float = 125_000_000.0  # 1 GbE


# every Redis client of the dashboard's (cache, Celery, cancel flags): a Redis that stops
# answering fails the request in seconds instead of holding its thread for good (redis-py
# before 8 waits forever by default, and `redis>=5` is what pyproject.toml asks)
REDIS_TIMEOUTS = {"socket_timeout": 3.0, "socket_connect_timeout": 3.0}


@dataclass(frozen=True)
class CacheSettings:
    type: str = "simple"
    redis_url: str | None = None  # as configured: no password in it
    default_timeout: int = 10  # seconds; Prometheus answers are short-lived
    background_dir: str = "var/dashboard-cache"  # diskcache for background callbacks
    redis_password: str | None = field(default=None, repr=False)  # read from its secret

    def client_url(self) -> str | None:
        """``redis_url`` with the password in it (quoted, after the ACL user if any), for
        the Redis clients only: never shown or logged."""
        if self.redis_url is None or self.redis_password is None:
            return self.redis_url
        parts = urlsplit(self.redis_url)
        user = quote(parts.username or "", safe="")
        host = parts.netloc.rpartition("@")[2]
        return urlunsplit(parts._replace(
            netloc=f"{user}:{quote(self.redis_password, safe='')}@{host}"))


@dataclass(frozen=True)
class ServerSettings:
    host: str = "127.0.0.1"
    port: int = 8050
    refresh_seconds: int = 15  # how often live and relative views re-query
    max_upload_bytes: int = DEFAULT_MAX_UPLOAD_BYTES  # a bigger upload is refused with a line
    workers: int = 1  # server processes (`railyard serve`); more than 1 needs cache.type redis
    threads: int = 16  # requests each process serves at once (most wait on Prometheus)


@dataclass(frozen=True)
class StoreSettings:
    """Where plans, decisions and the audit log live (backend/store)."""

    url: str = "sqlite:///var/railyard.db"
    # signs the audit chain (backend/store/audit_keys.py); RAILYARD_AUDIT_KEYS overrides
    audit_key_file: str = "var/audit_keys"
    audit_checkpoints: str | None = None  # a file the chain's signed end is appended to


@dataclass(frozen=True)
class PlanSettings:
    expiry_hours: float = 24.0  # a plan not started by then expires


@dataclass(frozen=True)
class User:
    name: str
    role: str
    password_hash: str


@dataclass(frozen=True)
class TrustedHeader:
    """A single-sign-on proxy in front of Railyard names the user and role in headers;
    believed only from the listed addresses (the proxy's)."""

    user: str = "X-Forwarded-User"
    role: str = "X-Forwarded-Role"
    trusted_from: tuple[str, ...] = ("127.0.0.1",)  # addresses or networks


@dataclass(frozen=True)
class AuthSettings:
    """none (loopback only), users (sign-in page and HTTP Basic), or trusted_header."""

    mode: str = "none"
    users: tuple[User, ...] = ()
    trusted_header: TrustedHeader | None = None
    secret_key_file: str = "var/secret_key"  # signs CSRF tokens; RAILYARD_SECRET_KEY overrides
    session_hours: float = 12.0  # a session ends this long after sign-in, used or not
    idle_minutes: float = 60.0  # ... and once unused for this long
    cookie_secure: str | bool = "auto"  # auto: Secure when the request came over https
    # reverse proxies whose X-Forwarded-For / -Proto are believed, and how many of them
    # stand between the browser and Railyard (each appends the address it was reached from)
    trusted_proxies: tuple[str, ...] = LOOPBACK
    trusted_hops: int = 1

    def user(self, name: str | None) -> User | None:
        """The configured user of that name, compared as normal_name compares names."""
        wanted = normal_name(name or "")
        return next((u for u in self.users if u.name == wanted), None)


def normal_name(name: str) -> str:
    """A user name as Railyard compares and records it: NFKC (compatibility forms such as
    full-width letters become plain ones), case-folded, surrounding spaces stripped. So
    'Olivia', 'OLIVIA ' and 'ｏｌｉｖｉａ' are one user, who cannot approve their own plan
    under another spelling (docs/deploy.md, docs/plans.md)."""
    return unicodedata.normalize("NFKC", name).casefold().strip()


def name_refusal(name: str) -> str | None:
    """Why a user name (as normal_name makes it) cannot be a person's, None when it can:
    one of the audit log's names for Railyard itself (RESERVED_NAMES), a colon (cli:USER
    is the command line's), or a control or invisible character (a name that forges a log
    line or looks like another one)."""
    if name in RESERVED_NAMES:
        return f"'{name}' is reserved (the audit log's name for {RESERVED_NAMES[name]})"
    if ":" in name:
        return "a user name has no colons (the audit log's cli:USER is the command line)"
    if not name.isprintable():
        return "a user name has no control or invisible characters"
    return None


@dataclass(frozen=True)
class DashboardConfig:
    clusters: tuple[ClusterConfig, ...]
    spark: dict[str, Any] = field(default_factory=dict)  # backend.spark.session settings
    cache: CacheSettings = field(default_factory=CacheSettings)
    server: ServerSettings = field(default_factory=ServerSettings)
    store: StoreSettings = field(default_factory=StoreSettings)
    plans: PlanSettings = field(default_factory=PlanSettings)
    source: str = "config"
    auth: AuthSettings = field(default_factory=AuthSettings)
    near_limit_ratio: float = NEAR_LIMIT_RATIO  # from this share of a limit it is "near"
    approval: Policy = field(default_factory=Policy)  # the fleet's approval.rules

    @property
    def approval_policies(self) -> Policies:
        """The fleet's approval policy and each cluster's own, for the plan store."""
        return Policies(self.approval, {c.name: c.approval for c in self.clusters
                                        if c.approval is not None})

    def cluster(self, name: str | None) -> ClusterConfig:
        """The named cluster, or the first one when the name is missing or unknown."""
        return next((c for c in self.clusters if c.name == name), self.clusters[0])


def load_config(path: str | os.PathLike) -> DashboardConfig:
    """Read and validate a YAML config file; BadInput with one line on any problem."""
    config = parse_config(_read_yaml(path), str(path))
    base = Path(path).resolve().parent  # snapshot files are named relative to the config
    return replace(config, clusters=tuple(
        replace(c, snapshot=str((base / c.snapshot).resolve())) if c.snapshot else c
        for c in config.clusters))


def load_store_settings(path: str | os.PathLike) -> StoreSettings:
    """Only the store section of a config file, which may hold nothing else (what
    `railyard audit verify` needs)."""
    doc = _read_yaml(path)
    root = _Node(doc if doc is not None else {}, str(path), "")
    return _store(root.mapping("store"))


def _read_yaml(path: str | os.PathLike) -> Any:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadInput(f"{path}: no such config file") from None
    except OSError as e:
        raise BadInput(f"{path}: cannot read ({e.strerror})") from None
    try:
        doc = load_yaml(text)
    except DuplicateKey as e:
        raise BadInput(f"{path}: line {e.line}: {e.key} given twice") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        raise BadInput(f"{path}: {where}not valid YAML ({getattr(e, 'problem', e)})") from None
    return doc


def parse_config(doc: Any, source: str = "config") -> DashboardConfig:
    """A validated config from the parsed YAML document."""
    root = _Node(doc, source, "")
    root.only("clusters", "spark", "cache", "server", "auth", "store", "plans",
              "near_limit_ratio", "approval")
    clusters = root.list("clusters", required=True)
    if not clusters:
        raise BadInput(f"{source}: clusters: list at least one cluster")
    parsed = tuple(_cluster(c) for c in clusters)
    names = [c.name for c in parsed]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise BadInput(f"{source}: clusters: the name '{dup}' is used twice")
    spark = root.mapping("spark")
    near = root.number("near_limit_ratio", default=NEAR_LIMIT_RATIO)
    if near > 1:
        raise BadInput(f"{root.where('near_limit_ratio')}: expected a share of the limit "
                       f"between 0 and 1, e.g. 0.9, got {near:g}")
    server = _server(root.mapping("server"))
    cache = _cache(root.mapping("cache"))
    if server.workers > 1 and cache.type != "redis":
        raise BadInput(f"{source}: server.workers: {server.workers} processes need "
                       f"cache.type: redis (a page's drafts and drawn figures are kept in the "
                       f"cache, which each process must see)")
    auth = _auth(root, server)
    fleet = _approval(root) or Policy()
    if auth.mode == "users":  # whether some users can meet each rule
        users = [(u.name, u.role) for u in auth.users]
        check_users(fleet, users, root.where("approval.rules"))
        for i, c in enumerate(parsed):
            if c.approval is not None:
                check_users(c.approval, users, root.where(f"clusters[{i}].approval.rules"))
    return DashboardConfig(clusters=parsed, spark=spark.value if spark else {},
                           cache=cache, server=server, source=source,
                           auth=auth, store=_store(root.mapping("store")),
                           plans=_plans(root.mapping("plans")), near_limit_ratio=near,
                           approval=fleet)


def _approval(node: _Node) -> Policy | None:
    """``approval: {rules: [...]}`` (backend/store/approvals.py has the language), None
    when the node has none."""
    approval = node.mapping("approval")
    if approval is None:
        return None
    approval.only("rules")
    return parse_policy(approval.value.get("rules"), approval.where("rules"))


def _cluster(node: _Node) -> ClusterConfig:
    node.only("name", "gateway", "prometheus", "limits", "quota", "snapshot", "approval",
              "guards", "windows", "adaptive_throttle")
    name = node.str("name", required=True)
    prom = node.mapping("prometheus")
    limits = node.mapping("limits")
    quota = node.mapping("quota")
    guards, windows = node.mapping("guards"), node.mapping("windows")
    return ClusterConfig(
        name=name,
        gateway=_gateway(node.mapping("gateway", required=True)),
        prometheus=_prometheus(prom) if prom else None,
        limits=_limits(limits) if limits else Limits(),
        quota=_quota(quota) if quota else QuotaSettings(),
        snapshot=node.str("snapshot"),
        approval=_approval(node),
        guards=_guards(guards) if guards else GuardSettings(),
        windows=_windows(windows) if windows else Windows(),
        adaptive_throttle=_adaptive(node.mapping("adaptive_throttle")),
    )


def _guards(node: _Node) -> GuardSettings:
    """The executor's guard-rail stops (docs/executor.md); every key has a default."""
    d = GuardSettings()
    node.only("enabled", "offline_partitions", "under_min_isr", "under_replicated",
              "broker_down", "partition_limits", "stall_minutes", "resume_after_seconds",
              "auto_resume", "floor")
    return GuardSettings(
        enabled=node.flag("enabled", d.enabled),
        offline_partitions=node.int("offline_partitions", default=d.offline_partitions),
        under_min_isr=node.int("under_min_isr", default=d.under_min_isr),
        under_replicated=node.int("under_replicated", default=d.under_replicated),
        broker_down=node.flag("broker_down", d.broker_down),
        partition_limits=node.flag("partition_limits", d.partition_limits),
        stall_minutes=node.number("stall_minutes", default=d.stall_minutes),
        resume_after_seconds=node.number("resume_after_seconds",
                                         default=d.resume_after_seconds),
        auto_resume=node.flag("auto_resume", d.auto_resume),
        floor=node.int("floor", default=d.floor, minimum=1, maximum=MAX_LONG))


_WHEN = re.compile(r"^(mon|tue|wed|thu|fri|sat|sun)\w* +(\d{1,2}):(\d{2})$", re.IGNORECASE)


def _windows(node: _Node) -> Windows:
    """Weekly ranges ("Mon 22:00" to "Tue 06:00") in one IANA time zone."""
    node.only("timezone", "ranges")
    tz = node.str("timezone") or "UTC"
    try:
        ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        raise BadInput(f"{node.where('timezone')}: unknown time zone {tz!r} (an IANA name "
                       f"such as Europe/Paris)") from None
    ranges = []
    for r in node.list("ranges", required=True):
        r.only("from", "to")
        (d0, m0), (d1, m1) = (_when(r, key) for key in ("from", "to"))
        ranges.append(WeeklyRange(d0, m0, d1, m1))
    return Windows(tz, tuple(ranges))


def _when(node: _Node, key: str) -> tuple[int, int]:
    text = node.str(key, required=True)
    m = _WHEN.match(text.strip()) if isinstance(text, str) else None
    if m is None or int(m[2]) > 24 or int(m[3]) > 59 or (int(m[2]) == 24 and int(m[3])):
        raise BadInput(f"{node.where(key)}: expected a weekday and a time such as "
                       f"'Mon 22:00', got {text!r}")
    return DAYS.index(m[1][:3].lower()), int(m[2]) * 60 + int(m[3])


def _adaptive(node: _Node | None) -> AdaptiveThrottleSettings:
    if node is None:
        return AdaptiveThrottleSettings()
    node.only("interval_seconds", "hold_seconds", "network_capacity")
    d = AdaptiveThrottleSettings()
    return AdaptiveThrottleSettings(
        interval_seconds=node.number("interval_seconds", default=d.interval_seconds),
        hold_seconds=node.number("hold_seconds", default=d.hold_seconds),
        network_capacity=node.number("network_capacity", default=d.network_capacity))


def _gateway(node: _Node) -> Gateway:
    return parse_gateway(node.value, node.where, lambda key: node.url(key, required=True))


def _prometheus(node: _Node) -> PrometheusSettings:
    node.only("url", "dialect", "timeout_seconds", "basic_auth", "bearer_token", "ca_file")
    ca_file = node.str("ca_file")
    if ca_file is not None and not Path(ca_file).is_file():
        raise BadInput(f"{node.where('ca_file')}: no such file {ca_file!r}")
    return PrometheusSettings(
        url=node.url("url", required=True,
                     instead="give them as basic_auth: {username, password: {file|env}}"),
        dialect=node.choice("dialect", tuple(DIALECTS), default="strimzi"),
        timeout_seconds=node.number("timeout_seconds", default=5.0),
        authorization=_authorization(node), ca_file=ca_file,
    )


def _authorization(node: _Node) -> str | None:
    """The Authorization header Prometheus asks for: basic auth or a bearer token, each
    secret from a file or a variable (read now: a missing one stops the start)."""
    basic, bearer = node.mapping("basic_auth"), node.value.get("bearer_token")
    if basic is not None and bearer is not None:
        raise BadInput(f"{node.where('bearer_token')}: give basic_auth or bearer_token, "
                       "not both")
    if bearer is not None:
        return "Bearer " + parse_secret(bearer, node.where("bearer_token")).read()
    if basic is None:
        return None
    basic.only("username", "password")
    user = basic.str("username", required=True)
    if ":" in user:
        raise BadInput(f"{basic.where('username')}: a basic-auth user name has no ':'")
    password = parse_secret(basic.value.get("password"), basic.where("password")).read()
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


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
    node.only("type", "redis_url", "redis_password", "default_timeout", "background_dir")
    kind = node.choice("type", CACHE_TYPES, default="simple")
    redis_url = node.str("redis_url")
    if kind == "redis" and not redis_url:
        raise BadInput(f"{node.where('redis_url')}: required when type is redis "
                       f"(e.g. redis://127.0.0.1:6379/0)")
    if redis_url is not None and urlsplit(redis_url).password is not None:
        raise BadInput(f"{node.where('redis_url')}: no password in the URL (a secret never "
                       f"goes in the config); give redis_password: {{file|env}}")
    secret = node.value.get("redis_password")
    return CacheSettings(kind, redis_url,
                         node.int("default_timeout", default=10, minimum=0),
                         node.str("background_dir") or CacheSettings.background_dir,
                         None if secret is None
                         else parse_secret(secret, node.where("redis_password")).read())


def _server(node: _Node | None) -> ServerSettings:
    if node is None:
        return ServerSettings()
    node.only("host", "port", "refresh_seconds", "max_upload_bytes", "workers", "threads")
    return ServerSettings(node.str("host") or "127.0.0.1",
                          node.int("port", default=8050, minimum=1, maximum=65535),
                          node.int("refresh_seconds", default=15, minimum=1),
                          node.int("max_upload_bytes", default=DEFAULT_MAX_UPLOAD_BYTES,
                                   minimum=1),
                          node.int("workers", default=1, minimum=1),
                          node.int("threads", default=16, minimum=1))


def _store(node: _Node | None) -> StoreSettings:
    if node is None:
        return StoreSettings()
    node.only("url", "audit_key_file", "audit_checkpoints")
    url = node.str("url") or StoreSettings.url
    if not url.startswith(("sqlite:///", "postgresql://", "postgresql+psycopg://")):
        raise BadInput(f"{node.where('url')}: expected sqlite:///path or "
                       f"postgresql+psycopg://user@host/db, got {shown_url(url)!r}")
    return StoreSettings(url, node.str("audit_key_file") or StoreSettings.audit_key_file,
                         node.str("audit_checkpoints"))


def _plans(node: _Node | None) -> PlanSettings:
    if node is None:
        return PlanSettings()
    node.only("expiry_hours")
    return PlanSettings(node.number("expiry_hours", default=PlanSettings.expiry_hours))


def is_loopback(host: str) -> bool:
    """Whether a server bound to ``host`` is reachable from this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _auth(root: _Node, server: ServerSettings) -> AuthSettings:
    """auth: none (or no auth key) is refused unless the server binds to loopback."""
    if root.value.get("auth") in (None, "none"):
        if not is_loopback(server.host):
            raise BadInput(f"{root.where('auth')}: none is allowed only when server.host is "
                           f"127.0.0.1 (got {server.host}); list users or a trusted_header")
        return AuthSettings()
    if not isinstance(root.value["auth"], dict):  # a misspelt none reads as text
        raise BadInput(f"{root.where('auth')}: expected none, or a mapping with users or "
                       f"trusted_header, got {str(root.value['auth'])[:40]!r}")
    node = root.mapping("auth")
    node.only("users", "trusted_header", "secret_key_file", "session_hours", "idle_minutes",
              "cookie_secure", "trusted_proxies", "trusted_hops")
    if ("users" in node.value) == ("trusted_header" in node.value):
        raise BadInput(f"{node.where('users')}: give either users or trusted_header "
                       f"(or auth: none on 127.0.0.1)")
    secure = node.value.get("cookie_secure", "auto")
    if secure not in COOKIE_SECURE:
        raise BadInput(f"{node.where('cookie_secure')}: expected auto, true or false, "
                       f"got {secure!r}")
    header = node.mapping("trusted_header")
    trusted_header = _trusted_header(header) if header is not None else None
    common = {"secret_key_file": node.str("secret_key_file") or AuthSettings.secret_key_file,
              "session_hours": node.number("session_hours", default=12.0),
              "idle_minutes": node.number("idle_minutes", default=AuthSettings.idle_minutes),
              "cookie_secure": secure,
              "trusted_proxies": _networks(node, "trusted_proxies", trusted_header.trusted_from
                                           if trusted_header else LOOPBACK),
              "trusted_hops": node.int("trusted_hops", default=1, minimum=1)}
    if trusted_header is not None:
        return AuthSettings("trusted_header", trusted_header=trusted_header, **common)
    users = tuple(_user(u) for u in node.list("users", required=True))
    if not users:
        raise BadInput(f"{node.where('users')}: list at least one user")
    names = [u.name for u in users]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise BadInput(f"{node.where('users')}: the name '{dup}' is used twice (names are "
                       f"compared case-folded, NFKC)")
    return AuthSettings("users", users=users, **common)


def _user(node: _Node) -> User:
    node.only("name", "role", "password_hash")
    name = node.str("name", required=True)
    if ":" in name or name != name.strip():
        raise BadInput(f"{node.where('name')}: no colons or surrounding spaces, got {name!r}")
    refused = name_refusal(normal_name(name))
    if refused is not None:
        raise BadInput(f"{node.where('name')}: {refused}, got {name!r}")
    digest = node.str("password_hash", required=True)
    if not digest.startswith(HASH_METHODS):
        raise BadInput(f"{node.where('password_hash')}: expected a hash from "
                       f"`railyard auth hash-password` (scrypt:... or pbkdf2:...), "
                       f"never the password itself")
    if len(name) > MAX_NAME:
        raise BadInput(f"{node.where('name')}: at most {MAX_NAME} characters")
    return User(normal_name(name), node.choice("role", ROLES, required=True), digest)


def _trusted_header(node: _Node) -> TrustedHeader:
    node.only("user", "role", "from")
    return TrustedHeader(node.str("user") or TrustedHeader.user,
                         node.str("role") or TrustedHeader.role,
                         _networks(node, "from", TrustedHeader.trusted_from, empty=False))


def _networks(node: _Node, key: str, default: tuple[str, ...],
              empty: bool = True) -> tuple[str, ...]:
    """A list of proxy addresses or networks (one string is a list of one; ``empty``: an
    empty list may say there is no proxy, so no forwarded header is believed)."""
    trusted = node.value.get(key, list(default))
    if isinstance(trusted, str):
        trusted = [trusted]
    if not isinstance(trusted, list) or not (trusted or empty):
        raise BadInput(f"{node.where(key)}: list the proxy's addresses, e.g. [127.0.0.1]"
                       + (" ([] for none)" if empty else ""))
    for address in trusted:
        try:
            ipaddress.ip_network(str(address), strict=False)
        except ValueError:
            raise BadInput(f"{node.where(key)}: {address!r} is not an IP address or "
                           f"network") from None
    return tuple(str(a) for a in trusted)


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

    def url(self, key: str, required: bool = False, instead: str = "") -> str | None:
        """An http(s) URL without a user or password (``instead``: where they go)."""
        value = self.str(key, required)
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise BadInput(f"{self.where(key)}: expected an http(s)://host:port URL, "
                           f"got {shown_url(value)!r}")
        if parts.username is not None:
            raise BadInput(f"{self.where(key)}: no user or password in a URL (pages, logs "
                           f"and reports show it){'; ' + instead if instead else ''}")
        return value.rstrip("/")

    def int(self, key: str, default: int | None = None, minimum: int = 0,
            maximum: int = MAX_INT) -> int | None:
        """An integer from ``minimum`` to ``maximum`` (by default Java's int, the type of
        every Kafka setting these stand for: a larger one passed here and overflowed
        later, as a 500 on every proposal)."""
        value = self.value.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise BadInput(f"{self.where(key)}: expected an integer >= {minimum}, got {value!r}")
        if value > maximum:
            raise BadInput(f"{self.where(key)}: expected an integer from {minimum} to "
                           f"{maximum}, got {value}")
        return value

    def flag(self, key: str, default: bool) -> bool:
        value = self.value.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise BadInput(f"{self.where(key)}: expected true or false, got {value!r}")
        return value

    def number(self, key: str, default: float | None = None) -> float | None:
        value = self.value.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float) \
                or not (value > 0 and math.isfinite(value)):
            raise BadInput(f"{self.where(key)}: expected a positive number, got {value!r}")
        return float(value)
