"""Debian's Prometheus on 127.0.0.1: scrape config for the twin's targets, start, stop.

Used by `railyard prometheus up|down` and by the integration tests (each with its own
data directory and port)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import yaml

from backend.errors import BadInput
from backend.metrics.recording import RULES_FILE, RULES_INTERVAL_SECONDS, recording_rules

PROMETHEUS = "/usr/bin/prometheus"
PROMTOOL = "/usr/bin/promtool"
PIDFILE = "prometheus.pid"  # "<pid> <port> <start time>" of the server `up` started


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_taken(port: int) -> bool:
    """Whether something listens on 127.0.0.1:``port`` already (a server started there
    would exit, and whatever answers there would pass for it)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # TIME_WAIT is not taken
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
        return False


def scrape_config(targets: dict[int | str, str], cluster: str, interval: float = 5.0) -> dict:
    """One job, one static target per broker labelled broker="<id>" and cluster; Railyard's
    recording rules (write_config writes the file beside the config)."""
    every = f"{round(interval * 1000)}ms"  # Prometheus durations take whole units
    return {
        "global": {"scrape_interval": every, "scrape_timeout": every,
                   "evaluation_interval": every},
        "rule_files": [RULES_FILE],
        "scrape_configs": [{
            "job_name": "kafka",
            "static_configs": [{"targets": [t], "labels": {"broker": str(b), "cluster": cluster}}
                               for b, t in targets.items()],
        }],
    }


class PrometheusProcess:
    """One Prometheus server process with its config and TSDB under ``home``."""

    def __init__(self, home: str | os.PathLike, port: int | None = None,
                 binary: str = PROMETHEUS) -> None:
        if not Path(binary).exists():
            raise BadInput(f"{binary} not found: install Debian's prometheus package "
                           "(make install does)")
        self.home = Path(home)
        self.port = port or free_port()
        self.binary = binary
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def config_path(self) -> Path:
        return self.home / "prometheus.yml"

    @property
    def data_dir(self) -> Path:
        return self.home / "data"

    def write_config(self, config: dict, dialect: str = "strimzi",
                     rules_interval: float = RULES_INTERVAL_SECONDS) -> Path:
        """The config, and Railyard's recording rules for ``dialect`` (evaluated every
        ``rules_interval`` seconds) when it loads them."""
        self.home.mkdir(parents=True, exist_ok=True)
        if RULES_FILE in config.get("rule_files", []):
            (self.home / RULES_FILE).write_text(
                yaml.safe_dump(recording_rules(dialect, rules_interval), sort_keys=False))
        self.config_path.write_text(yaml.safe_dump(config, sort_keys=False))
        return self.config_path

    def start(self, retention: str = "15d", timeout: float = 30.0) -> PrometheusProcess:
        if port_taken(self.port):
            raise BadInput(f"127.0.0.1:{self.port} is in use: another Prometheus (or "
                           "another railyard demo) listens there")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        log = open(self.home / "prometheus.log", "ab")  # noqa: SIM115 (lives with the process)
        self.proc = subprocess.Popen(
            [self.binary, f"--config.file={self.config_path}",
             f"--storage.tsdb.path={self.data_dir}", f"--storage.tsdb.retention.time={retention}",
             f"--web.listen-address=127.0.0.1:{self.port}"],
            stdout=log, stderr=log, start_new_session=True)
        log.close()
        (self.home / PIDFILE).write_text(
            f"{self.proc.pid} {self.port} {process_start_time(self.proc.pid)}\n")
        self.wait_ready(timeout)
        return self

    def wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise BadInput(f"prometheus exited with code {self.proc.returncode}; "
                               f"see {self.home / 'prometheus.log'}")
            try:
                with urllib.request.urlopen(f"{self.url}/-/ready", timeout=1) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.1)
        self.stop()
        raise BadInput(f"prometheus did not become ready on {self.url} within {timeout:g} s")

    def stop(self) -> None:
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None
        (self.home / PIDFILE).unlink(missing_ok=True)


def process_start_time(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot, /proc/PID/stat field 22),
    or None when there is no such live process (a zombie has exited). A pid the kernel
    gives to another program later has another start time."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = stat.rsplit(")", 1)[1].split()  # after "pid (comm)": field 3 onwards
    return None if fields[0] in ("Z", "X") else int(fields[19])


def running_pid(home: str | os.PathLike) -> int | None:
    """The pid of the Prometheus `up` started under ``home``, if it still runs. A pid file
    left by a server that was killed (or whose pid now belongs to another program) is
    removed, so `up` starts again and `down` never signals a stranger."""
    pidfile = Path(home) / PIDFILE
    try:
        fields = pidfile.read_text().split()
    except FileNotFoundError:
        return None
    try:
        pid, started = int(fields[0]), int(fields[2])
    except (IndexError, ValueError):  # not a file `up` wrote (or an older one): stale
        pid, started = None, None
    if pid is None or process_start_time(pid) != started:
        pidfile.unlink(missing_ok=True)
        return None
    return pid


def stop_from_pidfile(home: str | os.PathLike) -> dict:
    """Stop the server `railyard prometheus up` started (its pid file under ``home``)."""
    pidfile = Path(home) / PIDFILE
    if not pidfile.exists():
        return {"stopped": False, "reason": f"no {pidfile}: not running"}
    pid = running_pid(home)
    if pid is None:
        return {"stopped": False, "reason": f"the server {pidfile} names is no longer "
                                            f"running (pid file removed)"}
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pidfile.unlink(missing_ok=True)
        return {"stopped": False, "reason": f"process {pid} was not running"}
    for _ in range(150):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    pidfile.unlink(missing_ok=True)
    return {"stopped": True, "pid": pid}


def backfill_openmetrics(openmetrics: str | os.PathLike, tsdb_dir: str | os.PathLike,
                         promtool: str = PROMTOOL) -> None:
    """promtool tsdb create-blocks-from openmetrics FILE DIR."""
    if shutil.which(promtool) is None:
        raise BadInput(f"{promtool} not found: install Debian's prometheus package")
    Path(tsdb_dir).mkdir(parents=True, exist_ok=True)
    done = subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics",
                           str(openmetrics), str(tsdb_dir)], capture_output=True, text=True)
    if done.returncode != 0:
        raise BadInput(f"promtool backfill failed: {done.stderr.strip().splitlines()[-1:]}")
