"""The running dashboard's config and caches, reachable from page callbacks.

Dash pages are modules with module-level callbacks, so the app factory installs one
Runtime per process here and callbacks ask ``current()`` for it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from flask_caching import Cache

from backend.gateways.base import ClusterReader
from backend.gateways.factory import open_gateway
from backend.model.snapshot import Snapshot
from backend.services import plans, throttle_leftovers
from backend.services.cluster import ClusterSource, cluster_snapshot, touched_snapshot
from backend.store.store import Store, open_store
from dashboard.config import ClusterConfig, DashboardConfig


def open_plan_store(config: DashboardConfig) -> Store:
    """The plan store as ``config`` names it: its URL, its audit key file and checkpoints
    file, its plans' expiry and approval policies. `railyard serve` and the CLI verbs on
    a config (`auth sessions`, `auth revoke`) open it here, so both sign audit rows with
    the same key and checkpoint them to the same file."""
    s = config.store
    return open_store(s.url, config.plans.expiry_hours, key_file=s.audit_key_file,
                      checkpoints=s.audit_checkpoints, approval=config.approval_policies)


@dataclass
class Runtime:
    config: DashboardConfig
    cache: Cache
    gateways: dict[str, ClusterReader] = field(default_factory=dict)  # by cluster name
    _store: Store | None = field(default=None, repr=False)
    _store_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def plan_store(self) -> Store:
        """The plan store (opened, and migrated, on first use; Unavailable if it does not
        answer, which the pages show as a banner)."""
        with self._store_lock:
            if self._store is None:
                self._store = open_plan_store(self.config)
                self._store.seal_legacy(datetime.now(UTC))
                self._store.start_checkpoints(datetime.now(UTC))
                plans.ExpirySweeper(self._store).start()
            return self._store

    def snapshot_of(self, name: str) -> Snapshot:
        """The cluster's whole assignment now (what a plan is proposed and started on)."""
        return cluster_snapshot(self.source(name), fresh=True)

    def topics_of(self, name: str, topics: list[str]) -> Snapshot:
        """Only these topics of the cluster as they are now (what approval and execution
        re-check a plan's basis on: a few topics, not a 200k-partition cluster's read)."""
        return touched_snapshot(self.source(name), topics)

    def throttle_configs_of(self, name: str) -> dict[tuple[str, str, str], str]:
        """The cluster's throttle configs now (what a clear-throttles plan is checked on)."""
        return throttle_leftovers.throttle_configs(self.source(name), fresh=True)

    def cluster(self, name: str | None) -> ClusterConfig:
        return self.config.cluster(name)

    def unknown_cluster(self, asked: str | None) -> str | None:
        """What the pages' banner and the reports' 400 say of a cluster name the config
        does not have (None: no name asked, or a known one; ``cluster`` shows the first)."""
        names = [c.name for c in self.config.clusters]
        if not asked or asked in names:
            return None
        return (f"No cluster is called {asked[:60]!r} in this dashboard's config "
                f"(clusters: {', '.join(names)})")

    def known_source(self, name: str) -> ClusterSource | None:
        """The named cluster's source, or None when the config no longer has it (a stored
        plan of a removed cluster: ``source`` would answer the first cluster's)."""
        return None if self.unknown_cluster(name) else self.source(name)

    def source(self, name: str | None) -> ClusterSource:
        """Where the services read this cluster's assignment, configs and metrics from."""
        c = self.cluster(name)
        prom = c.prometheus
        return ClusterSource(
            c.name, c.snapshot, c.limits,
            prometheus_url=prom.url if prom else None,
            dialect=prom.dialect if prom else "strimzi",
            prometheus_timeout=prom.timeout_seconds if prom else 5.0,
            prometheus_authorization=prom.authorization if prom else None,
            prometheus_ca_file=prom.ca_file if prom else None,
            metrics_ttl=self.config.cache.default_timeout,
            metrics_cache=self.cache,
            near_limit_ratio=self.config.near_limit_ratio,
            gateway=self.gateways.get(c.name),
            default_mutation_rate=c.quota.controller_mutation_rate,
            quota_window_num=c.quota.window_num, quota_window_seconds=c.quota.window_seconds)

    @property
    def work_dir(self) -> str:
        """Files the dashboard writes for the services (uploads, sweep inputs)."""
        return str(Path(self.config.cache.background_dir) / "work")


_runtime: Runtime | None = None


def install(runtime: Runtime) -> None:
    global _runtime
    _runtime = runtime


def current() -> Runtime:
    if _runtime is None:
        raise RuntimeError("the dashboard runtime is not installed: build the app with "
                           "dashboard.app.create_app")
    return _runtime


def open_gateways(config: DashboardConfig, in_process: dict | None = None) -> dict:
    """Cluster name -> gateway: ``in_process`` ones (the demo's twin), else what each
    cluster's config names; a snapshot-file cluster has none."""
    opened = {c.name: open_gateway(c) for c in config.clusters if c.name not in
              (in_process or {})}
    return {**{n: gw for n, gw in opened.items() if gw is not None}, **(in_process or {})}
