"""Apache Kafka on 127.0.0.1: N KRaft brokers with racks, each exporting JMX through the
Prometheus JMX exporter agent with Railyard's rules (deploy/jmx-exporter/kafka-broker.yaml).

The first three brokers (all of them when there are fewer) are also the controller quorum
(``process.roles=broker,controller``, static ``controller.quorum.voters``), so a test can
stop one broker and keep a quorum. Every broker gets ``broker.rack`` r0..r(R-1) round-robin.
Everything lives under one folder: ``broker-ID/`` (server.properties, data/, server.log)
and, once every broker answers, ``cluster.json`` and ``targets.json`` (a Prometheus
file_sd file). With ``secure``, every broker also has SSL, SASL_PLAINTEXT and SASL_SSL
client listeners (backend/localkafka/security.py; their files under ``security/``).
"""

from __future__ import annotations

import base64
import json
import os
import random
import re
import signal
import socket
import subprocess
import time
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from backend.errors import BadInput, Unavailable
from backend.localkafka import dist
from backend.localkafka.security import LISTENERS, Security

RULES = dist.ROOT / "deploy" / "jmx-exporter" / "kafka-broker.yaml"
MAX_CONTROLLERS = 3
HEAP = re.compile(r"[0-9]+[kmg]", re.IGNORECASE)  # the JVM's -Xmx sizes, with a unit
LOG4J = """\
status = error
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.state.name = state.change.logger
logger.state.level = WARN
"""


@dataclass
class Broker:
    """One broker's place: its ports and files, and its process while it runs."""

    id: int
    rack: str
    port: int
    controller_port: int | None  # set on the brokers that are also controllers
    exporter_port: int
    dir: Path
    proc: subprocess.Popen | None = field(default=None, repr=False)
    secure_ports: dict[str, int] = field(default_factory=dict)  # listener name -> port

    @property
    def log(self) -> Path:
        return self.dir / "server.log"

    @property
    def exporter_url(self) -> str:
        return f"http://127.0.0.1:{self.exporter_port}/metrics"


def free_ports(count: int) -> list[int]:
    """``count`` distinct free loopback ports below the kernel's ephemeral range, so no
    client connection can be handed one before the broker binds it."""
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    rng, held, ports = random.Random(), [], []
    try:
        while len(ports) < count:
            s = socket.socket()
            try:
                s.bind(("127.0.0.1", rng.randrange(max(low - 12000, 1024), low)))
            except OSError:
                s.close()
                continue
            held.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in held:
            s.close()
    return ports


def cluster_id() -> str:
    """A KRaft cluster id: a random UUID in Kafka's URL-safe base64 (Uuid.toString), drawn
    again when it starts with '-', as Uuid.randomUuid does (clients/.../common/Uuid.java):
    `kafka-storage format -t -x...` would read such an id as an option."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


class LocalKafka:
    """Apache Kafka brokers on loopback under ``root``; ``start`` returns once every broker
    answers, ``stop`` ends them all (SIGTERM, then SIGKILL after ``grace`` seconds)."""

    def __init__(self, root: str | os.PathLike, brokers: int = 3, racks: int = 3,
                 heap: str = "320m", grace: float = 30.0, secure: bool = False) -> None:
        if not 1 <= brokers <= 64:
            raise BadInput(f"--brokers must be 1 to 64, got {brokers}")
        if not 1 <= racks <= brokers:
            raise BadInput(f"--racks must be 1 to the number of brokers ({brokers}), "
                           f"got {racks}")
        if not HEAP.fullmatch(heap) or not int(heap[:-1]):
            raise BadInput(f"--heap: expected a Java heap size like 320m or 1g (digits, then "
                           f"k, m or g), got '{heap}'")
        self.root, self.heap, self.grace = Path(root), heap, grace
        used = sorted(self.root.glob("broker-*/data/meta.properties"))
        if used:
            raise BadInput(f"{self.root} already holds a cluster's data ({used[0]}): give "
                           "an empty or new --dir")
        _check_empty_folder(self.root)
        ports = free_ports((3 + (len(LISTENERS) if secure else 0)) * brokers)
        extra = iter(ports[3 * brokers:])
        controllers = min(brokers, MAX_CONTROLLERS)
        self.brokers = [Broker(i, f"r{(i - 1) % racks}", ports[3 * i - 3],
                               ports[3 * i - 2] if i <= controllers else None,
                               ports[3 * i - 1], self.root / f"broker-{i}",
                               secure_ports={n: next(extra) for n in LISTENERS} if secure
                               else {})
                        for i in range(1, brokers + 1)]
        self.cluster_id = cluster_id()
        self.security = Security(self.root) if secure else None

    @property
    def bootstrap_servers(self) -> list[str]:
        return [f"127.0.0.1:{b.port}" for b in self.brokers]

    def listener_servers(self, name: str) -> list[str]:
        """Bootstrap servers of one secure listener (SSL, SASL_PLAINTEXT, SASL_SSL)."""
        return [f"127.0.0.1:{b.secure_ports[name]}" for b in self.brokers]

    def broker(self, broker_id: int) -> Broker:
        return next(b for b in self.brokers if b.id == broker_id)

    # -- configs --
    def properties(self, b: Broker) -> dict[str, str]:
        """server.properties of one broker: small thread pools for a 2-core machine,
        internal topics replicated up to 3, no auto-created topics."""
        rf = str(min(len(self.brokers), 3))
        voters = ",".join(f"{c.id}@127.0.0.1:{c.controller_port}" for c in self.brokers
                          if c.controller_port)
        listeners = [f"PLAINTEXT://127.0.0.1:{b.port}"]
        clients = [f"{n}://127.0.0.1:{p}" for n, p in b.secure_ports.items()]
        if b.controller_port:
            listeners.append(f"CONTROLLER://127.0.0.1:{b.controller_port}")
        protocols = ["CONTROLLER:PLAINTEXT", "PLAINTEXT:PLAINTEXT",
                     *(f"{n}:{n}" for n in b.secure_ports)]
        secure = self.security.properties(b.secure_ports) if self.security else {}
        return {
            "process.roles": "broker,controller" if b.controller_port else "broker",
            "node.id": str(b.id),
            "controller.quorum.voters": voters,
            "controller.listener.names": "CONTROLLER",
            "listeners": ",".join(listeners + clients),
            "advertised.listeners": ",".join([f"PLAINTEXT://127.0.0.1:{b.port}", *clients]),
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": ",".join(protocols),
            "broker.rack": b.rack,
            "log.dirs": str(b.dir / "data"),
            "num.partitions": "1",
            "default.replication.factor": rf,
            "offsets.topic.replication.factor": rf,
            "offsets.topic.num.partitions": "3",
            "transaction.state.log.replication.factor": rf,
            "transaction.state.log.min.isr": "1",
            "transaction.state.log.num.partitions": "3",
            "share.coordinator.state.topic.replication.factor": rf,
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            "auto.create.topics.enable": "false",
            "num.network.threads": "2",
            "num.io.threads": "2",
            "num.recovery.threads.per.data.dir": "1",
            "background.threads": "2",
            "log.cleaner.threads": "1",
            "log.cleaner.dedupe.buffer.size": "2097152",
            **secure,
        }

    def _write(self, b: Broker) -> Path:
        (b.dir / "data").mkdir(parents=True, exist_ok=True)
        (b.dir / "log4j2.properties").write_text(LOG4J.format(log=b.log))
        path = b.dir / "server.properties"
        path.unlink(missing_ok=True)  # with --secure it holds PLAIN passwords: owner-only
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write("".join(f"{k}={v}\n" for k, v in self.properties(b).items()))
        return path

    # -- lifecycle --
    def start(self, timeout: float = 120.0) -> dict:
        """Format and start every broker; once all answer, write cluster.json and the
        targets file and return what cluster.json holds. Unavailable naming the broker
        and its log when one does not come up (the others are stopped)."""
        dist.libs()  # fails early, naming `make install`, when the jars are missing
        self.root.mkdir(parents=True, exist_ok=True)
        try:
            if self.security:
                self.security.write()
            with ThreadPoolExecutor(len(self.brokers)) as pool:
                list(pool.map(self._format, self.brokers))
            for b in self.brokers:
                self._launch(b)
            self.wait_ready(timeout)
        except BaseException:
            self.stop()
            raise
        return self.write_files()

    def _format(self, b: Broker) -> None:
        """kafka-storage format: the log dir's meta.properties for this cluster id."""
        props = self._write(b)
        out = subprocess.run(dist.java_command(dist.STORAGE, [
            "format", "-t", self.cluster_id, "-c", str(props), "--ignore-formatted",
            *(self.security.format_args if self.security else [])],
            jvm=[f"-Dlog4j2.configurationFile={b.dir / 'log4j2.properties'}"]),
            capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            last = (out.stderr or out.stdout).strip().splitlines()[-1:] or ["no output"]
            raise Unavailable(f"Kafka broker {b.id}", f"kafka-storage format failed: "
                              f"{last[0]}")

    def _launch(self, b: Broker) -> None:
        jvm = [f"-javaagent:{dist.jmx_agent()}=127.0.0.1:{b.exporter_port}:{RULES}",
               f"-Dlog4j2.configurationFile={b.dir / 'log4j2.properties'}",
               f"-Dkafka.logs.dir={b.dir}"]
        cmd = dist.java_command(dist.BROKER, [str(b.dir / "server.properties")],
                                heap=self.heap, jvm=jvm)
        with (b.dir / "stdout.log").open("ab") as out:
            b.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, start_new_session=True,
                                      preexec_fn=_end_with_parent)

    def start_broker(self, broker_id: int, timeout: float = 120.0) -> None:
        """Start one stopped broker again (its data kept) and wait until it answers."""
        b = self.broker(broker_id)
        if b.proc is not None and b.proc.poll() is None:
            return
        self._launch(b)
        self.wait_ready(timeout)

    def stop_broker(self, broker_id: int, kill: bool = False) -> None:
        """Stop one broker (SIGTERM, a controlled shutdown; SIGKILL with ``kill``)."""
        b = self.broker(broker_id)
        self._end([b], signal.SIGKILL if kill else signal.SIGTERM)

    def stop(self) -> None:
        self._end([b for b in self.brokers if b.proc is not None], signal.SIGTERM)

    def _end(self, brokers: list[Broker], sig: int) -> None:
        running = [b for b in brokers if b.proc is not None and b.proc.poll() is None]
        for b in running:
            b.proc.send_signal(sig)
        deadline = time.monotonic() + self.grace
        for b in running:
            try:
                b.proc.wait(max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                b.proc.kill()
                b.proc.wait()
        for b in brokers:
            b.proc = None

    def wait_ready(self, timeout: float) -> None:
        """Until every running broker's exporter answers and the cluster lists every
        running broker unfenced; Unavailable naming a broker that exited, and its log."""
        deadline = time.monotonic() + timeout
        running = [b for b in self.brokers if b.proc is not None]
        answered: set[int] = set()  # exporters that answered once (a loaded JVM is slow)
        waiting = "the brokers to start"
        while time.monotonic() < deadline:
            for b in running:
                if b.proc.poll() is not None:
                    raise Unavailable(f"Kafka broker {b.id}",
                                      f"exited with code {b.proc.returncode} while starting; "
                                      f"its log: {b.log}")
            answered |= {b.id for b in running
                         if b.id not in answered and _answers(b.exporter_url)}
            slow = [b.id for b in running if b.id not in answered]
            closed = [f"{b.id}:{n}" for b in running for n, p in b.secure_ports.items()
                      if not _accepts(p)]
            if slow:
                waiting = f"the JMX exporter of broker(s) {slow}"
            elif closed:
                waiting = f"the secure listeners {closed}"
            else:
                live = self.live_brokers()
                missing = sorted({b.id for b in running} - live)
                if not missing:
                    return
                waiting = f"broker(s) {missing} to register with the controller"
            time.sleep(0.5)
        raise Unavailable(f"Kafka at {','.join(self.bootstrap_servers)}",
                          f"still waiting for {waiting} after {timeout:g} s; logs under "
                          f"{self.root}")

    def live_brokers(self) -> set[int]:
        """The ids the cluster's metadata lists as registered and unfenced now (empty when
        no broker answers yet)."""
        from kafka import KafkaAdminClient
        from kafka.errors import KafkaError
        servers = [f"127.0.0.1:{b.port}" for b in self.brokers
                   if b.proc is not None and b.proc.poll() is None]
        try:
            admin = KafkaAdminClient(bootstrap_servers=servers, request_timeout_ms=5000,
                                     client_id="railyard-kafka-up")
        except (KafkaError, OSError):
            return set()
        try:
            meta = admin.describe_cluster()
            return {b["broker_id"] for b in meta["brokers"] if not b.get("is_fenced")}
        except (KafkaError, OSError):
            return set()
        finally:
            admin.close()

    # -- what others read --
    def describe(self) -> dict:
        """cluster.json: addresses and file paths (never a password)."""
        doc = {"kafka_version": dist.KAFKA_VERSION, "cluster_id": self.cluster_id,
               "bootstrap_servers": self.bootstrap_servers,
               "brokers": [{"id": b.id, "rack": b.rack, "port": b.port,
                            "controller": b.controller_port is not None,
                            "exporter_url": b.exporter_url, "log": str(b.log),
                            **({"listeners": dict(b.secure_ports)} if b.secure_ports else {})}
                           for b in self.brokers],
               "targets_file": str(self.root / "targets.json")}
        if self.security:
            doc["security"] = self.security.describe(
                {n: self.listener_servers(n) for n in LISTENERS})
        return doc

    def targets(self) -> list[dict]:
        """Prometheus file_sd: one group per broker, labelled broker, rack and cluster."""
        return [{"targets": [f"127.0.0.1:{b.exporter_port}"],
                 "labels": {"broker": str(b.id), "rack": b.rack, "cluster": "kafka"}}
                for b in self.brokers]

    def write_files(self) -> dict:
        doc = self.describe()
        _write_json(Path(doc["targets_file"]), self.targets())
        _write_json(self.root / "cluster.json", doc)
        return doc


def _check_empty_folder(root: Path) -> None:
    """--dir is an empty or new folder: brokers' data written beside other files would mix
    with them (and a file there is no folder to write in)."""
    try:
        if root.exists() and not root.is_dir():
            raise BadInput(f"--dir {root}: exists and is not a folder: give an empty or new "
                           "folder")
        folder = root
        while not folder.exists():
            folder = folder.parent
        if not folder.is_dir():
            raise BadInput(f"--dir {root}: {folder} is a file, not a folder")
        first = next(root.iterdir(), None) if root.exists() else None
    except OSError as e:
        raise BadInput(f"--dir {root}: cannot be read ({e.strerror or e})") from None
    if first is not None:
        raise BadInput(f"--dir {root}: the folder is not empty (it holds {first.name}): "
                       "give an empty or new folder")


def _end_with_parent() -> None:
    """In the child before exec: the kernel sends SIGTERM when the starting thread's
    process dies, so a SIGKILLed `railyard kafka up` (or test run) leaves no broker."""
    import ctypes
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _write_json(path: Path, doc: object) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1))
    tmp.replace(path)


def _accepts(port: int) -> bool:
    """Whether a loopback port takes TCP connections (a listener is bound and open)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return True
    except OSError:
        return False


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status == 200
    except OSError:
        return False
