"""Start and stop real Spark servers from the pyspark package, on 127.0.0.1.

The pip package ships sbin/spark-daemon.sh and sbin/start-connect-server.sh (not
start-master.sh), so a standalone master and worker are started as spark-daemon.sh
start org.apache.spark.deploy.master.Master / ...worker.Worker, and a Spark Connect
server with start-connect-server.sh. The integration tests and benchmarks run sweeps on
them (Railyard itself only connects to a master or Connect URL it is given, through
backend.spark.session); each context manager stops what it started, even when the body
fails.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from backend.errors import BadInput
from backend.spark.session import LOOPBACK

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
CONNECT_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"


def spark_home() -> Path:
    """The pyspark package directory: it holds bin/, sbin/ and jars/."""
    import pyspark

    return Path(pyspark.__file__).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def _env(workdir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(SPARK_HOME=str(spark_home()), SPARK_LOCAL_IP=LOOPBACK,
               SPARK_PID_DIR=str(workdir / "pids"), SPARK_LOG_DIR=str(workdir / "logs"),
               SPARK_WORKER_DIR=str(workdir / "work"), SPARK_IDENT_STRING="railyard",
               PYSPARK_PYTHON=env.get("PYSPARK_PYTHON", sys.executable),
               SPARK_CONF_DIR=str(workdir / "conf"))
    for d in ("pids", "logs", "work", "conf"):
        (workdir / d).mkdir(parents=True, exist_ok=True)
    return env


def _daemon(env: dict[str, str], *args: str) -> None:
    script = spark_home() / "sbin" / "spark-daemon.sh"
    done = subprocess.run(["bash", str(script), *args], env=env, capture_output=True,
                          text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"spark-daemon.sh {' '.join(args[:2])} failed: "
                           f"{(done.stdout + done.stderr).strip()}")


def wait_for_port(port: int, timeout: float, logs: Path) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection((LOOPBACK, port), 0.5):
            return
        time.sleep(0.2)
    tail = "".join(p.read_text(errors="replace")[-2000:] for p in sorted(logs.glob("*.out")))
    raise BadInput(f"Spark server did not listen on {LOOPBACK}:{port} within {timeout:.0f} s; "
                   f"logs in {logs}: {tail[-500:]!r}")


def _wait_for_worker(master_ui: int, timeout: float, logs: Path) -> None:
    """The master's JSON status lists ALIVE workers; sweeps need one before they start."""
    import json
    import urllib.request

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, ValueError):
            with urllib.request.urlopen(f"http://{LOOPBACK}:{master_ui}/json/", timeout=1) as r:
                status = json.load(r)
            if any(w.get("state") == "ALIVE" for w in status.get("workers", [])):
                return
        time.sleep(0.3)
    raise BadInput(f"no Spark worker registered with the master within {timeout:.0f} s "
                   f"(logs in {logs})")


@contextlib.contextmanager
def standalone_cluster(workdir: Path, cores: int = 2, memory: str = "1g",
                       timeout: float = 90.0) -> Iterator[str]:
    """A standalone master and one worker on 127.0.0.1; yields spark://127.0.0.1:PORT."""
    workdir = Path(workdir)
    env = _env(workdir)
    port, ui, worker_ui = free_port(), free_port(), free_port()
    url = f"spark://{LOOPBACK}:{port}"
    started = []
    try:
        _daemon(env, "start", MASTER_CLASS, "1", "--host", LOOPBACK, "--port", str(port),
                "--webui-port", str(ui))
        started.append(MASTER_CLASS)
        wait_for_port(port, timeout, workdir / "logs")
        _daemon(env, "start", WORKER_CLASS, "1", url, "--host", LOOPBACK, "--cores",
                str(cores), "--memory", memory, "--webui-port", str(worker_ui))
        started.append(WORKER_CLASS)
        _wait_for_worker(ui, timeout, workdir / "logs")
        yield url
    finally:
        for cls in reversed(started):
            _daemon(env, "stop", cls, "1")


@contextlib.contextmanager
def connect_server(workdir: Path, master: str = "local[2]",
                   timeout: float = 120.0) -> Iterator[str]:
    """A Spark Connect server on 127.0.0.1; yields sc://127.0.0.1:PORT."""
    workdir = Path(workdir)
    env = _env(workdir)
    port = free_port()
    script = spark_home() / "sbin" / "start-connect-server.sh"
    args = ["--master", master,
            "--conf", f"spark.connect.grpc.binding.address={LOOPBACK}",
            "--conf", f"spark.connect.grpc.binding.port={port}",
            "--conf", f"spark.driver.host={LOOPBACK}",
            "--conf", f"spark.driver.bindAddress={LOOPBACK}",
            "--conf", "spark.ui.enabled=false",
            "--conf", f"spark.pyspark.python={env['PYSPARK_PYTHON']}",
            "--conf", "spark.sql.shuffle.partitions=8"]
    done = subprocess.run(["bash", str(script), *args], env=env, capture_output=True,
                          text=True, timeout=120)
    try:
        if done.returncode != 0:
            raise RuntimeError(f"start-connect-server.sh failed: {done.stdout}{done.stderr}")
        wait_for_port(port, timeout, workdir / "logs")
        yield f"sc://{LOOPBACK}:{port}"
    finally:
        _daemon(env, "stop", CONNECT_CLASS, "1")
