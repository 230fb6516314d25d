"""The running dashboard's config and caches, reachable from page callbacks.

Dash pages are modules with module-level callbacks, so the app factory installs one
Runtime per process here and callbacks ask ``current()`` for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from flask_caching import Cache

from backend.services.views import ClusterSource
from dashboard.config import ClusterConfig, DashboardConfig


@dataclass
class Runtime:
    config: DashboardConfig
    cache: Cache

    def cluster(self, name: str | None) -> ClusterConfig:
        return self.config.cluster(name)

    def source(self, name: str | None) -> ClusterSource:
        """Where the services read this cluster's assignment from."""
        c = self.cluster(name)
        return ClusterSource(c.name, c.snapshot, c.limits,
                             c.prometheus.url if c.prometheus else None)

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
