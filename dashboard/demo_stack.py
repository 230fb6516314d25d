"""`railyard demo`: the whole stack on 127.0.0.1, started in order and stopped in reverse.

- the twin with the demo scenario (backend/twin/scenarios/demo.yaml) and one exporter per
  broker, in this process; or, with ``--kafka``, Apache Kafka (dashboard/demo_kafka.py:
  three racked KRaft brokers with the JMX exporter, topics holding real data and a
  producer writing at a steady rate);
- Prometheus scraping them (a fresh TSDB each run: the cluster starts from t=0), with
  the twin's 90 days of daily partition counts before that backfilled with promtool
  (backend/twin/history.py: the cluster growing into the demo snapshot), so a capacity
  review runs on the demo (not with ``--kafka``: its new cluster has no past, and the
  log says so);
- a second Prometheus serving the recorded incident hour (incident.yaml rendered by the
  twin and backfilled with promtool once, kept under the demo's home), so incident review
  over an absolute range works out of the box;
- a warm Spark session, and the dashboard, with the live twin read through its gateway;
- sign-in on, with three demo users (an operator who proposes, an approver who approves,
  an admin who may also propose clearing leftover throttles)
  whose passwords are generated once into the demo's home and printed at every start.
- a plan store that starts anew with the cluster (the last run's is set aside in
  HOME/previous), and a lock on HOME, so a second demo there is refused before it
  touches anything.

Everything started here is stopped on Ctrl-C or SIGTERM (Prometheus runs in its own
session, so it is stopped explicitly, never left behind).
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import shutil
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from backend.errors import BadInput
from backend.metrics.dialects import STRIMZI
from backend.metrics.server import (
    PrometheusProcess,
    backfill_openmetrics,
    port_taken,
    scrape_config,
)
from backend.model.io import save_snapshot
from backend.twin.cluster import TwinCluster
from backend.twin.examples import DEMO_SCENARIO, INCIDENT_SCENARIO, demo_snapshot, incident_snapshot
from backend.twin.gateway import TwinGateway
from backend.twin.history import GROWTH_DAYS, record_growth_openmetrics, record_openmetrics
from backend.twin.runtime import TwinService
from backend.twin.scenario import ScenarioRunner, load_scenario
from dashboard.config import (
    AuthSettings,
    CacheSettings,
    ClusterConfig,
    DashboardConfig,
    Gateway,
    PrometheusSettings,
    ServerSettings,
    StoreSettings,
    User,
)
from dashboard.demo_kafka import KafkaDemo

INCIDENT_EPOCH = 1_704_067_200  # the recorded hour starts 2024-01-01T00:00Z
INCIDENT_STEP = 30  # seconds between recorded samples
LIVE_RETENTION = "100d"  # the live Prometheus keeps the 90 days of backfilled history
# the backfilled history ends this long before the twin starts, so Prometheus's 5-minute
# lookback never adds a backfilled count to a scraped one
HISTORY_GAP_SECONDS = 600
# --kafka: its brokers are created at start, so they have no partition history to backfill
NO_HISTORY_LINE = ("prometheus: no partition history backfilled (Apache Kafka's cluster is "
                   "new): /capacity forecasts once Prometheus holds its partition counts on "
                   "two days, about a day from now, against the limits typed in its knobs "
                   "(Apache Kafka has none); `railyard demo` without --kafka backfills the "
                   "twin's 90 days")
# name, role; the admin may also propose clearing leftover throttles (the Overview's list)
DEMO_USERS = (("olivia", "operator"), ("adam", "approver"), ("ines", "admin"))


@dataclass
class DemoSettings:
    home: Path = Path("var/demo")
    port: int = 8050
    prometheus_port: int = 9090  # 0: any free port
    speed: float = 1.0
    scrape_interval: float = 5.0
    warm_spark: bool = True
    kafka: bool = False  # Apache Kafka (dashboard/demo_kafka.py) instead of the twin


@dataclass
class DemoStack:
    settings: DemoSettings
    twin: TwinService | None = None
    kafka: KafkaDemo | None = None
    prometheus: list[PrometheusProcess] = field(default_factory=list)
    home_lock: int | None = None  # the fd of HOME/demo.lock, locked while this demo runs

    def start(self, say) -> DashboardConfig:
        s, home = self.settings, self.settings.home
        # before the home is made or locked: a refused start leaves nothing behind (it
        # left an empty HOME/demo.lock, in a HOME it had just made, and a Prometheus port
        # in use was found only after the twin had started and written its files)
        for flag, port, what in (("--port", s.port, "dashboard"),
                                 ("--prometheus-port", s.prometheus_port, "Prometheus")):
            if port and port_taken(port):  # --prometheus-port 0: any free port
                raise BadInput(f"{flag} {port}: 127.0.0.1:{port} is in use (another "
                               f"{what}?); nothing was started")
        home.mkdir(parents=True, exist_ok=True)
        self.home_lock = lock_home(home)
        if s.kafka:
            self.kafka = KafkaDemo(home / "kafka")
            name, targets = "kafka", self.kafka.start(say)
        else:
            name, targets = "demo", self._start_twin(say)
        live = PrometheusProcess(home / "prometheus", s.prometheus_port or None)
        shutil.rmtree(live.data_dir, ignore_errors=True)  # the cluster starts from t=0
        self._history(live.data_dir, say)
        live.write_config(scrape_config(targets, name, s.scrape_interval))
        self.prometheus.append(live.start(retention=LIVE_RETENTION))
        say(f"prometheus: {live.url} scraping {len(targets)} exporters every "
            f"{s.scrape_interval:g} s (pid {live.proc.pid})")
        incident = self._incident_history(home / "incident", say)
        say(f"prometheus: {incident.url} serving the recorded incident hour "
            f"(2024-01-01 00:00-01:00 UTC, pid {incident.proc.pid})")
        users = demo_users(home)
        for name, (role, password) in users.items():
            say(f"user: {name} ({role}) password {password}  (demo only)")
        live_cluster = self.kafka.cluster_config(live.url) if self.kafka else \
            ClusterConfig("demo", Gateway("twin"), PrometheusSettings(live.url),
                          limits=self.twin.twin.snap.limits)
        aside = set_aside_store(home)
        if aside is not None:
            say(f"plan store: new, as the cluster starts anew; the last demo's plans and "
                f"audit are in {aside}")
        config = self._config(live_cluster, incident.url, home, users)
        self._propose_demo_plan(config, users, say)
        if self.kafka is not None:
            self._follow_migrations(config)
        return config

    def _follow_migrations(self, config: DashboardConfig) -> None:
        """The Kafka demo's producer and consumer group follow the shrink migrations of the
        plan store, as the application an operator switches (dashboard/demo_kafka.py)."""
        from dashboard.runtime import open_plan_store

        self.kafka.follow_migrations(open_plan_store(config))

    def _start_twin(self, say) -> dict[str, str]:
        """The twin and its exporters in this process: {broker: exporter host:port}."""
        s = self.settings
        self.twin = TwinService(demo_snapshot(), load_scenario(DEMO_SCENARIO), s.speed,
                                port_base=0, dialect=STRIMZI).start()
        targets = self.twin.write_targets(s.home / "targets.json")["targets"]
        say(f"twin: cluster 'demo' ({self.twin.twin.snap.n_brokers} brokers, demo scenario "
            f"at x{s.speed:g}), exporters on {', '.join(targets.values())}")
        return targets

    def _history(self, tsdb_dir: Path, say) -> None:
        """The live Prometheus's partition history before now: the twin's 90 days, or, on
        Apache Kafka, none, and the log says so (a cluster the demo created minutes ago has
        no past to backfill: /capacity says how long Prometheus has scraped it, and from
        when it forecasts)."""
        if self.twin is not None:
            self._grown_history(tsdb_dir, say)
        else:
            say(NO_HISTORY_LINE)

    def _grown_history(self, tsdb_dir: Path, say) -> None:
        """The demo cluster's daily partition counts over the 90 days before now, as it
        grew into the twin's snapshot, backfilled into the live Prometheus (a capacity
        review needs weeks of daily peaks; a fresh TSDB has minutes)."""
        om = self.settings.home / "growth.om"
        end = time.time() - HISTORY_GAP_SECONDS
        record_growth_openmetrics(demo_snapshot(), STRIMZI, end, om)
        backfill_openmetrics(om, tsdb_dir)
        om.unlink()
        say(f"prometheus: backfilled {GROWTH_DAYS} days of daily partition counts "
            f"(the twin growing into the demo cluster) for the capacity review")

    def _propose_demo_plan(self, config: DashboardConfig, users: dict, say) -> None:
        """One plan proposed by the demo operator, waiting for the demo approver."""
        from backend.services import execution
        from backend.store.workflow import Actor
        from dashboard.runtime import open_plan_store

        operator = next(n for n, (role, _) in users.items() if role == "operator")
        approver = next(n for n, (role, _) in users.items() if role == "approver")
        actor = Actor(operator, "operator", "127.0.0.1")
        store = open_plan_store(config)  # as serve opens it: its expiry too
        try:
            plan = self.kafka.propose_plan(store, actor) if self.kafka else \
                execution.propose_demo_plan(store, self.twin.twin.assignment(), actor)
        finally:
            store.close()
        if plan is not None:
            say(f"plan {plan.id} proposed by {operator}: {plan.title}; sign in as "
                f"{approver} to approve it, then as {operator} to execute it")

    def _incident_history(self, home: Path, say) -> PrometheusProcess:
        home.mkdir(parents=True, exist_ok=True)
        prom = PrometheusProcess(home / "prometheus")
        done = home / "backfilled"
        if not done.exists():
            say("rendering the recorded incident (once) and backfilling it with promtool")
            shutil.rmtree(prom.data_dir, ignore_errors=True)
            scenario = load_scenario(INCIDENT_SCENARIO)
            runner = ScenarioRunner(TwinCluster(incident_snapshot(), scenario.settings),
                                    scenario)
            record_openmetrics(runner, STRIMZI, scenario.duration, INCIDENT_STEP,
                               INCIDENT_EPOCH, home / "incident.om")
            backfill_openmetrics(home / "incident.om", prom.data_dir)
            (home / "incident.om").unlink()
            done.touch()
        save_snapshot(incident_snapshot(), home / "incident.parquet")
        prom.write_config({"global": {"scrape_interval": "1m"}, "scrape_configs": []})
        self.prometheus.append(prom.start(retention="100y"))  # the blocks are from 2024
        return prom

    def _config(self, live: ClusterConfig, incident_url: str, home: Path,
                users: dict[str, tuple[str, str]]) -> DashboardConfig:
        from werkzeug.security import generate_password_hash

        auth = AuthSettings("users", users=tuple(
            User(name, role, generate_password_hash(password))
            for name, (role, password) in users.items()),
            secret_key_file=str(home / "secret_key"))
        return DashboardConfig(
            clusters=(
                live,
                ClusterConfig("incident", Gateway("twin"), PrometheusSettings(incident_url),
                              limits=incident_snapshot().limits,
                              snapshot=str(home / "incident" / "incident.parquet")),
            ),
            spark={"master": "local[2]", "ui": False},
            cache=CacheSettings(background_dir=str(home / "dashboard-cache")),
            server=ServerSettings(port=self.settings.port), source="railyard demo",
            auth=auth, store=demo_store(home))

    def gateways(self) -> dict:
        """The in-process twin's gateway; Kafka's is opened from the config."""
        return {} if self.twin is None else {"demo": TwinGateway(self.twin.twin)}

    def running(self) -> bool:
        """Whether anything was started (a refused start has nothing to stop)."""
        return bool(self.prometheus) or self.twin is not None or self.kafka is not None

    def stop(self, say) -> None:
        for prom in reversed(self.prometheus):
            pid = prom.proc.pid if prom.proc else None
            prom.stop()
            say(f"stopped prometheus {prom.url} (pid {pid})")
        self.prometheus.clear()
        if self.twin is not None:
            self.twin.stop()
            self.twin = None
            say("stopped the twin and its exporters")
        if self.kafka is not None:
            self.kafka.stop(say)
            self.kafka = None
        if self.home_lock is not None:
            os.close(self.home_lock)  # closing the file releases its lock
            self.home_lock = None


def demo_store(home: Path) -> StoreSettings:
    """The demo's plan store, audit keys and audit checkpoints, all under its home
    (`railyard audit verify --demo` reads the same)."""
    return StoreSettings(f"sqlite:///{(home / 'railyard.db').resolve()}",
                         audit_key_file=str(home / "audit_keys"),
                         audit_checkpoints=str(home / "audit-checkpoints.jsonl"))


def lock_home(home: Path) -> int:
    """Lock ``home`` for this demo (an flock the kernel drops when the process ends): a
    second demo on the same home would wipe the first one's Prometheus data and move its
    plan store aside while it runs."""
    fd = os.open(home / "demo.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise BadInput(f"another railyard demo runs in {home}: stop it (Ctrl-C), or start "
                       "this one with its own --home and ports; nothing was started") from None
    return fd


def set_aside_store(home: Path) -> Path | None:
    """Move the last demo's plan store and audit checkpoints to ``home/previous`` (the
    one before is dropped); None when there was none. Its cluster, the twin or the demo's
    own Kafka, starts anew on every start, so a plan left executing would otherwise be
    resumed, and its throttles put back, on a cluster that never saw it. The audit keys
    stay: `railyard audit verify --demo home/previous` still checks the chain."""
    db = home / "railyard.db"
    if not db.exists():
        return None
    aside = home / "previous"
    shutil.rmtree(aside, ignore_errors=True)
    aside.mkdir()
    for f in [db, *home.glob("railyard.db-*"), home / "railyard.db.writer-lock",
              home / "audit-checkpoints.jsonl"]:
        if f.exists():
            f.rename(aside / f.name)
    if (home / "audit_keys").exists():
        shutil.copy2(home / "audit_keys", aside / "audit_keys")
    return aside


def demo_users(home: Path) -> dict[str, tuple[str, str]]:
    """name -> (role, password) of the demo users: generated on the first start into
    ``home/demo-users.json`` (mode 0600), the same on every later start (a demo user
    added since is generated then)."""
    path = home / "demo-users.json"
    users = {name: tuple(v) for name, v in json.loads(path.read_text()).items()} \
        if path.exists() else {}
    missing = [(name, role) for name, role in DEMO_USERS if name not in users]
    if not missing:
        return users
    users.update({name: (role, secrets.token_urlsafe(9)) for name, role in missing})
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(users, f)
    return users


def run(settings: DemoSettings) -> None:
    """Start everything, serve the dashboard until Ctrl-C or SIGTERM, stop everything."""
    from backend.spark import session
    from dashboard.server import serve

    def say(line: str) -> None:
        print(f"railyard demo: {line}", file=sys.stderr, flush=True)

    def terminate(signum, _frame):
        raise KeyboardInterrupt(signal.Signals(signum).name)

    # SIGINT too: a shell starting the demo in the background leaves SIGINT ignored, and
    # Python keeps an ignored SIGINT ignored, so Ctrl-C would never reach the demo
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, terminate)
    stack = DemoStack(settings)
    try:
        config = stack.start(say)
        if settings.warm_spark:
            say("spark: warming a local[2] session in the background")
        serve(config, warm_spark_session=settings.warm_spark, gateways=stack.gateways(),
              announce=lambda url: say(f"dashboard on {url} (Ctrl-C stops everything)"))
    except KeyboardInterrupt:
        pass
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):  # a second signal must not cut this short
            signal.signal(sig, signal.SIG_IGN)
        if stack.running():
            say("stopping everything it started")
        stack.stop(say)  # first: Prometheus and the clusters need nothing of Spark
        try:
            if session.stop_session():
                say("stopped spark")
        except Exception as e:  # a kill of the process group took its JVM first
            say(f"spark was gone already ({type(e).__name__})")
