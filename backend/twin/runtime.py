"""A running twin: scenario runner, exporters, its HTTP API and a clock that maps
wall time to simulated time (x speed). Used by `railyard twin serve`, the dashboard demo
and integration tests."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

from backend.metrics.dialects import STRIMZI, Dialect
from backend.model.io import atomic_output
from backend.model.snapshot import Snapshot
from backend.twin.api import TwinApi
from backend.twin.cluster import TwinCluster
from backend.twin.exporter import Exporters
from backend.twin.gateway import TwinGateway
from backend.twin.scenario import Scenario, ScenarioRunner

TARGETS_FILE = Path("var/twin/targets.json")


class TwinService:
    """Twin + exporters (+ the HTTP API when ``api_port`` is given) on 127.0.0.1, advanced
    by a background thread."""

    def __init__(self, snap: Snapshot, scenario: Scenario | None = None, speed: float = 1.0,
                 port_base: int = 0, dialect: Dialect = STRIMZI, tick: float = 0.5,
                 api_port: int | None = None, api_token: str | None = None) -> None:
        self.scenario = scenario or Scenario()
        self.twin = TwinCluster(snap, self.scenario.settings)
        self.runner = ScenarioRunner(self.twin, self.scenario)
        self.speed, self.tick, self.dialect = speed, tick, dialect
        self.exporters = Exporters(self.twin, dialect, port_base)
        self.api = None if api_port is None else TwinApi(TwinGateway(self.twin), api_port,
                                                          api_token)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def targets(self) -> dict[int, str]:
        return self.exporters.targets

    def start(self) -> TwinService:
        self.runner.advance_to(0)  # events at t=0 happen before the first scrape
        self.exporters.start()
        if self.api is not None:
            self.api.start()
        self._thread = threading.Thread(target=self._run, daemon=True, name="twin-clock")
        self._thread.start()
        return self

    def _run(self) -> None:
        wall0, sim0 = time.monotonic(), self.twin.now_seconds
        while not self._stop.wait(self.tick):
            # whole milliseconds, as the twin's clock counts: a sub-millisecond step would
            # round to no time at all and the runner would never reach its target
            target = round(sim0 + (time.monotonic() - wall0) * self.speed, 3)
            self.runner.advance_to(target)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.exporters.stop()
        if self.api is not None:
            self.api.stop()

    def write_targets(self, path: str | os.PathLike = TARGETS_FILE) -> dict:
        doc = {"cluster": self.twin.snap.cluster, "dialect": self.dialect.name,
               "targets": {str(b): t for b, t in self.targets.items()},
               "api": None if self.api is None else self.api.url,
               "api_writes": self.api is not None and self.api.writable}
        with atomic_output(path, "--targets-file") as tmp:  # Prometheus reads it whole
            tmp.write_text(json.dumps(doc, indent=1))
        return doc
