"""Where what-if sweeps run: an embedded local Spark, a Spark cluster, or Spark Connect.

One warm session per process: the CLI and the dashboard ask ``get_session`` and the
first caller (or ``warm_up`` in a background thread at start-up) pays the JVM start.
Settings come from arguments, then the environment (RAILYARD_SPARK_MASTER,
RAILYARD_SPARK_REMOTE, RAILYARD_SPARK_UI), then the config file's ``spark`` section,
then defaults (local[*] bound to 127.0.0.1, Arrow on, UI off). Problems a user can fix
(no Java, a master or Connect server not listening) are BadInput with one line; a master or
Connect server that does not listen or does not answer is SparkUnreachable, a BadInput the
CLI reports as unavailable (exit 3).
"""

from __future__ import annotations

import os
import selectors
import shutil
import socket
import struct
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from backend.errors import BadInput, Unavailable, shown_url

LOOPBACK = "127.0.0.1"
DEFAULT_MASTER = "local[*]"
ENV_MASTER = "RAILYARD_SPARK_MASTER"
ENV_REMOTE = "RAILYARD_SPARK_REMOTE"
ENV_UI = "RAILYARD_SPARK_UI"
CONFIG_KEYS = {"master", "remote", "ui", "conf", "app_name", "jvm_log"}
CONNECT_MARK = "SPARK_CONNECT_MODE_ENABLED"  # set by pyspark once it built a Connect session
LOG4J2 = Path(__file__).with_name("log4j2.properties")
# The embedded JVM's own output (its start-up banner, JVM warnings, log4j): kept off the
# CLI's stderr, which holds one line on an error and nothing else.
DEFAULT_JVM_LOG = str(Path(tempfile.gettempdir()) / f"railyard-spark-jvm-{os.getuid()}.log")
# How long a spark:// master or sc:// Connect server that took the TCP connection has to
# answer before Railyard gives up on it. Without a bound, a Connect client whose server
# accepts and never answers waits forever (pyspark sets no gRPC deadline), and a classic
# driver asks a silent master 3 times 20 s (Spark's StandaloneAppClient, not a setting)
# before it says so: 67 s here, JVM start included. A live server answers the probes below
# in milliseconds and they make it do no work, so the bound is for the person at the
# terminal: the error within seconds (with check_reachable's 3 s connect, 11 s at most,
# under the 15 s an operator should wait), with room left for a slow network path. Only
# remote servers are probed: the embedded local[*] default is not.
ANSWER_TIMEOUT = 8.0


@dataclass(frozen=True)
class SparkSettings:
    """How to reach Spark. ``remote`` (sc://host:port) wins over ``master`` when set."""

    master: str = DEFAULT_MASTER
    remote: str | None = None
    ui: bool = False
    app_name: str = "railyard"
    conf: tuple[tuple[str, str], ...] = field(default=())
    jvm_log: str = DEFAULT_JVM_LOG

    @property
    def is_remote(self) -> bool:
        return self.remote is not None

    @property
    def where(self) -> str:
        return self.remote or self.master


def _truthy(value: Any) -> bool:
    return str(value).strip().lower() in {"1", "true", "yes", "on"}


def settings_from(master: str | None = None, remote: str | None = None,
                  config: Mapping[str, Any] | None = None,
                  env: Mapping[str, str] | None = None) -> SparkSettings:
    """Settings from command-line values, then environment, then the config's spark section."""
    env = os.environ if env is None else env
    config = dict(config or {})
    unknown = set(config) - CONFIG_KEYS
    if unknown:
        raise BadInput(f"spark config: unknown key '{sorted(unknown)[0]}' "
                       f"(known: {', '.join(sorted(CONFIG_KEYS))})")
    if master and remote:
        raise BadInput("give either --spark-master or --spark-remote, not both")
    if not (master or remote):
        master, remote = env.get(ENV_MASTER) or None, env.get(ENV_REMOTE) or None
    if not (master or remote):
        master, remote = config.get("master") or None, config.get("remote") or None
    conf = config.get("conf") or {}
    if not isinstance(conf, Mapping):
        raise BadInput("spark config: 'conf' must be a mapping of Spark settings")
    ui = _truthy(env[ENV_UI]) if ENV_UI in env else bool(config.get("ui", False))
    settings = SparkSettings(master=master or DEFAULT_MASTER, remote=remote, ui=ui,
                             app_name=str(config.get("app_name", "railyard")),
                             conf=tuple(sorted((str(k), str(v)) for k, v in conf.items())),
                             jvm_log=str(config.get("jvm_log") or DEFAULT_JVM_LOG))
    _validate_url(settings)
    return settings


def _validate_url(s: SparkSettings) -> None:
    if s.remote is not None:
        if not s.remote.startswith("sc://") or not urlsplit(s.remote).hostname:
            raise BadInput("Spark Connect URL must look like sc://host:port, got "
                           f"'{shown_url(s.remote)}'")
        return
    if not (s.master.startswith(("local", "spark://", "yarn", "k8s://"))):
        raise BadInput(f"Spark master must be local[N], spark://host:port, yarn or k8s://..., "
                       f"got '{shown_url(s.master)}'")


# ---- checks a user can act on ------------------------------------------------------------
def java_executable() -> str | None:
    """The java Spark will start: $JAVA_HOME/bin/java, else java on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and os.access(os.path.join(home, "bin", "java"), os.X_OK):
        return os.path.join(home, "bin", "java")
    return shutil.which("java")


def _endpoints(url: str) -> list[tuple[str, int]]:
    """host:port pairs of a spark:// (possibly comma-separated HA list) or sc:// URL."""
    scheme, rest = url.split("://", 1)
    default = 15002 if scheme == "sc" else 7077
    out = []
    for hostport in rest.split("/", 1)[0].split(";", 1)[0].split(","):
        parts = urlsplit(f"//{hostport}")
        out.append((parts.hostname or LOOPBACK, parts.port or default))
    return out


class SparkUnreachable(BadInput):
    """A master or Connect server that does not listen, or listens and does not answer:
    "Spark at URL is unreachable (why)". A BadInput, as it always was for the pages (whose
    ``start`` shows it as a banner); the CLI reports it as unavailable, exit 3, as it does
    any other source that does not answer."""

    def __init__(self, url: str, why: str) -> None:
        self.where, self.why = shown_url(url), " ".join(why.split())
        super().__init__(f"Spark at {self.where} is unreachable ({self.why})")


def check_reachable(url: str, timeout: float = 3.0) -> None:
    """BadInput unless something listens at the master / Connect URL (fail fast, not hang)."""
    errors = []
    for host, port in _endpoints(url):
        try:
            with socket.create_connection((host, port), timeout=timeout):
                return
        except OSError as e:
            errors.append(f"{host}:{port}: {e.strerror or e}")
    raise SparkUnreachable(url, "; ".join(errors))


def check_answers(url: str, timeout: float = ANSWER_TIMEOUT) -> None:
    """SparkUnreachable unless the spark:// master or sc:// Connect server answers within
    ``timeout`` seconds (a listener that takes the connection and never answers would hang
    the session's start: forever for Connect, 67 s for a master)."""
    if url.startswith("sc://"):
        _check_connect_answers(url, timeout)
    else:
        _check_master_answers(url, timeout)


# A Spark RPC frame (network-common's MessageEncoder): the frame's length (8 bytes, itself
# included), the message type (StreamRequest = 6), then the stream id (4-byte length, UTF-8).
# Any Spark RPC server answers StreamFailure "Stream '...' was not found" at once, and logs
# nothing: it is how executors fetch files from a driver, and a master serves no files.
_PROBE_STREAM = b"files/railyard-probe"
_MASTER_PROBE = struct.pack(">qbi", 8 + 1 + 4 + len(_PROBE_STREAM), 6,
                            len(_PROBE_STREAM)) + _PROBE_STREAM


def _check_master_answers(url: str, timeout: float) -> None:
    """Some endpoint of the spark:// URL (an HA list is probed at once, not in turn) answers
    the probe frame within ``timeout``. Any answer counts (a reply, or closing the
    connection: a master with TLS or authentication may do either); only silence until
    the deadline, or no connection, is refused."""
    deadline = time.monotonic() + timeout
    errors: dict[tuple[str, int], str] = {}
    with selectors.DefaultSelector() as waiting:
        try:
            for host, port in _endpoints(url):
                try:
                    conn = socket.create_connection(
                        (host, port), timeout=max(deadline - time.monotonic(), 0.001))
                    conn.sendall(_MASTER_PROBE)
                except OSError as e:
                    errors[host, port] = f"{host}:{port}: {e.strerror or e}"
                    continue
                conn.setblocking(False)
                waiting.register(conn, selectors.EVENT_READ, (host, port))
            while waiting.get_map() and (left := deadline - time.monotonic()) > 0:
                if waiting.select(left):
                    return  # a reply, or the connection closed or reset: an answer
            for key in waiting.get_map().values():
                host, port = key.data
                errors[host, port] = (f"{host}:{port} took the connection and did not answer "
                                      f"within {timeout:g} s: is it a Spark master's port?")
        finally:
            for key in list(waiting.get_map().values()):
                waiting.unregister(key.fileobj)
                key.fileobj.close()
    raise SparkUnreachable(url, "; ".join(errors[e] for e in _endpoints(url) if e in errors))


# A gRPC method Spark Connect does not implement: a live server answers UNIMPLEMENTED at
# once, without starting a session.
_CONNECT_PROBE_METHOD = "/grpc.health.v1.Health/Check"


def _check_connect_answers(url: str, timeout: float) -> None:
    """The Connect server answers a gRPC call (any status but DEADLINE_EXCEEDED and
    UNAVAILABLE) within ``timeout``, on a channel built as pyspark builds the session's
    (TLS and token from the URL)."""
    import grpc
    from pyspark.sql.connect.client import DefaultChannelBuilder

    try:
        builder = DefaultChannelBuilder(url)
    except Exception:  # a URL pyspark refuses: the session's start says why, as before
        return
    channel = builder.toChannel()
    try:
        channel.unary_unary(_CONNECT_PROBE_METHOD)(b"", timeout=timeout)
    except grpc.RpcError as e:
        code = e.code() if isinstance(e, grpc.Call) else None
        if code == grpc.StatusCode.DEADLINE_EXCEEDED:
            raise SparkUnreachable(url, f"{builder.endpoint} took the connection and did not "
                                        f"answer within {timeout:g} s: is it a Spark Connect "
                                        "server's port?") from None
        if code == grpc.StatusCode.UNAVAILABLE:
            details = (e.details() or "no details").splitlines()[0]
            raise SparkUnreachable(url, f"{builder.endpoint}: {details}") from None
    finally:
        channel.close()


# ---- building sessions ---------------------------------------------------------------------
def _classic_conf(s: SparkSettings) -> dict[str, str]:
    conf = {
        "spark.app.name": s.app_name,
        "spark.ui.enabled": "true" if s.ui else "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.log.level": "ERROR",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.shuffle.partitions": "8",
        "spark.pyspark.python": os.environ["PYSPARK_PYTHON"],
        "spark.pyspark.driver.python": sys.executable,
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile=file:{LOG4J2}",
    }
    if s.master.startswith(("local", "spark://")) and _is_loopback_master(s.master):
        conf |= {"spark.driver.host": LOOPBACK, "spark.driver.bindAddress": LOOPBACK}
    return conf | dict(s.conf)


def _is_loopback_master(master: str) -> bool:
    if master.startswith("local"):
        return True
    return all(h in {LOOPBACK, "localhost"} for h, _ in _endpoints(master))


def build_session(s: SparkSettings):
    """A new SparkSession for these settings (use ``get_session`` for the shared one)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    # pyspark 4 warns on every pandas call that pandas 3 is "not yet fully supported"
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas",
                            category=FutureWarning)
    from pyspark.sql import SparkSession

    if s.is_remote:
        check_reachable(s.remote)
        check_answers(s.remote)
        builder = SparkSession.builder.remote(s.remote)
        for k, v in s.conf:
            builder = builder.config(k, v)
        try:
            return builder.getOrCreate()
        except Exception as e:  # grpc errors: one line, the cause kept
            raise BadInput(f"Spark Connect at {shown_url(s.remote)} refused the session: "
                           f"{str(e).splitlines()[0]}") from e
    if java_executable() is None:
        raise BadInput("Java not found: Spark needs Java 17 or later (install "
                       "openjdk-17-jre-headless or set JAVA_HOME)")
    if _is_loopback_master(s.master):
        os.environ.setdefault("SPARK_LOCAL_IP", LOOPBACK)
    if s.master.startswith("spark://"):
        check_reachable(s.master)
        check_answers(s.master)  # before the JVM starts: nothing to stop when it is silent
    conf = {"spark.master": s.master, **_classic_conf(s)}
    builder = SparkSession.builder
    for k, v in conf.items():
        builder = builder.config(k, v)
    try:
        _launch_jvm(conf, s.jvm_log)
        return builder.getOrCreate()
    except Exception as e:  # JVM failed to start: JAVA_GATEWAY_EXITED and friends
        raise BadInput(f"Spark ({shown_url(s.master)}) did not start: {str(e).splitlines()[0]} "
                       f"(JVM log: {s.jvm_log})") from e


def _launch_jvm(conf: dict[str, str], log_path: str) -> None:
    """Start the JVM PySpark would start, with its stdout and stderr in ``log_path``.

    PySpark starts it on first use with the process's own stdout and stderr (so its
    banner lands on the CLI's stderr); launch_gateway takes Popen arguments, and
    SparkContext uses a gateway that is already there. Once per process.
    """
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    with SparkContext._lock:
        if SparkContext._gateway is not None:
            return
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        spark_conf = SparkConf(loadDefaults=False).setAll(list(conf.items()))
        with open(log_path, "ab") as log:
            gateway = launch_gateway(spark_conf, popen_kwargs={"stdout": log, "stderr": log})
        SparkContext._gateway = gateway
        SparkContext._jvm = gateway.jvm


class _Shared:
    """The process's one session, built on first use or by a background warm-up."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.settings: SparkSettings | None = None
        self.session = None
        self.warming: threading.Thread | None = None
        self.error: BaseException | None = None


_shared = _Shared()


def get_session(settings: SparkSettings | None = None):
    """The shared session for ``settings`` (default: from env and defaults).

    Asking for different settings stops the old session first: one JVM per process can
    hold only one classic SparkContext.
    """
    settings = settings or settings_from()
    warming = _shared.warming
    if warming is not None and warming is not threading.current_thread():
        warming.join()
    with _shared.lock:
        if _shared.session is not None and _shared.settings == settings:
            return _shared.session
        if _shared.error is not None and _shared.settings == settings:
            error, _shared.error = _shared.error, None
            raise error
        _stop_locked()
        _shared.session = build_session(settings)
        _shared.settings = settings
        return _shared.session


def start(settings: SparkSettings | None = None):
    """The shared session, or ``Unavailable`` naming why Spark cannot start (no Java, a
    master not listening): for a page, Spark missing is a banner, not a form error."""
    try:
        return get_session(settings)
    except BadInput as e:
        raise Unavailable("Spark", str(e)) from None


def warm_up(settings: SparkSettings | None = None) -> threading.Thread:
    """Start the shared session in a background thread so the first what-if is warm."""
    settings = settings or settings_from()

    def run() -> None:
        try:
            get_session(settings)
        except BaseException as e:  # kept for the first real caller to see
            with _shared.lock:
                _shared.settings, _shared.error = settings, e
        finally:
            _shared.warming = None

    thread = threading.Thread(target=run, name="spark-warm-up", daemon=True)
    _shared.warming = thread
    thread.start()
    return thread


def stop_session() -> bool:
    """Stop the shared session (tests, and switching between clusters); whether one was
    running."""
    warming = _shared.warming
    if warming is not None:
        warming.join()
    with _shared.lock:
        return _stop_locked()


def _stop_locked() -> bool:
    running = _shared.session is not None
    if running:
        _shared.session.stop()
    # pyspark marks the process as Spark Connect's when it builds (or fails to build) a
    # Connect session (pyspark/sql/session.py, Builder.getOrCreate) and never takes the
    # mark back: a classic session built later, or a child process, would go on looking
    # for a Connect URL (CONNECT_URL_NOT_SET). Every build comes through here first.
    os.environ.pop(CONNECT_MARK, None)
    _shared.session, _shared.settings, _shared.error = None, None, None
    return running


def is_connect(spark) -> bool:
    """True for a Spark Connect client session (no SparkContext, no broadcast)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")
