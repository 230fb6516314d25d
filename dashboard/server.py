"""Server entry: serve the dashboard on a production WSGI server, on loopback by default.

`railyard serve` runs Granian (HTTP in Rust, the app in ``server.workers`` spawned Python
processes of ``server.threads`` threads each), so concurrent users are not queued behind
one Python process. The executor and the plan-expiry sweep run once, in the parent.
The demo keeps its twin in its own process, so it serves from that process (waitress).

Granian serves the WSGI app through its ASGI interface (a2wsgi runs the app in the
worker's threads), because there the request's headers arrive as sent and
without_underscore_headers can drop the ones that would pass for others.
"""

from __future__ import annotations

import asyncio
import contextvars
import ctypes
import gc
import io
import logging
import multiprocessing
import os
import secrets
import signal
import socket
import sys
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from backend.errors import Unavailable
from dashboard import auth, caches, runtime
from dashboard.config import DashboardConfig

if TYPE_CHECKING:
    from dash import Dash

PR_SET_PDEATHSIG = 1  # linux/prctl.h
AppLoader = Callable[[], Callable]  # picklable: each worker process calls it for its app
ASGIApp = Callable[[dict, Callable, Callable], Awaitable[None]]


def warm_spark(config: DashboardConfig) -> None:
    """Start the shared Spark session in a background thread (first sweep is warm)."""
    from backend.spark import session

    session.warm_up(session.settings_from(config=config.spark))


def serve(config: DashboardConfig, port: int | None = None, warm_spark_session: bool = True,
          announce=None, gateways: dict | None = None) -> None:
    """Serve until interrupted. ``announce`` is called with the URL once it is bound.
    ``gateways``: clusters living in this process (the demo's twin), so it serves here."""
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    if port:  # the app names its cookies after its port
        config = replace(config, server=replace(config.server, port=port))
    announce = announce or (lambda u: print(f"Railyard dashboard on {u}", file=sys.stderr,
                                            flush=True))
    check_port(config.server.host, config.server.port)
    if gateways:
        serve_here(config, gateways, warm_spark_session, announce)
    else:
        serve_workers(config, partial(worker_app, config, warm_spark_session), announce)


def check_port(host: str, port: int) -> None:
    """The address can be listened on, checked before anything starts or is announced: a
    port in use was "Railyard dashboard on ..." then the server's traceback. Unavailable
    (exit 3) naming the address; the probe is closed at once (SO_REUSEADDR, as the
    servers bind, so a port a stopped dashboard just left is not taken for one in use)."""
    if not port:
        return
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port,
                                                             type=socket.SOCK_STREAM)[0]
    except OSError as e:
        raise Unavailable(f"Address {host}:{port}", f"cannot be resolved ({e.strerror or e})") \
            from None
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as e:
            raise Unavailable(f"Address {host}:{port}", f"cannot listen there ({e.strerror or e}):"
                              " another process holds the port; stop it, or give --port or "
                              "server.port") from None


def worker_app(config: DashboardConfig, warm_spark_session: bool) -> Callable:
    """One worker process's WSGI app. Sweeps run in it, on a Spark session warmed in the
    background, unless they go to `railyard worker` through Redis (cache.type redis).
    The app (Dash, the pages) is imported here, not by the parent, which serves no page:
    the workers start sooner."""
    from dashboard.app import create_app

    app = set_up(create_app(config))
    if warm_spark_session and config.cache.type != "redis":
        warm_spark(config)
    return app.server


def set_up(app: Dash) -> Dash:
    """The app with Dash's set-up done. Dash finishes setting up on its first request,
    without a lock: two first requests at once (a worker's threads, a browser's parallel
    callbacks) broke each other ("dictionary changed size during iteration", callbacks
    not yet registered). So one request runs here, before the server takes any."""
    app.server.test_client().get("/login")
    return app


def serve_workers(config: DashboardConfig, loader: AppLoader, announce) -> None:
    """Granian with ``loader``'s app in each worker process; the executor in this one."""
    from granian.constants import Interfaces
    from granian.log import LogLevels
    from granian.server import Server

    settings = config.server
    # every worker derives the sessions' CSRF tokens with the same key: made here
    # once, not raced for by workers starting together
    if config.auth.mode == "none" and not os.environ.get(auth.SECRET_ENV):
        os.environ[auth.SECRET_ENV] = secrets.token_hex(32)
    auth.secret_key(config.auth)
    parent = runtime.Runtime(config, caches.make_cache(), runtime.open_gateways(config))
    executor = start_executor(parent)
    # spawned, not forked: this process runs threads (the executor) that a fork would copy
    # mid-step, locks held
    multiprocessing.set_start_method("spawn", force=True)
    server = Server(target="railyard", address=settings.host, port=settings.port,
                    interface=Interfaces.ASGINL, workers=settings.workers, websockets=False,
                    log_level=LogLevels.warning, respawn_failed_workers=True)
    announce(f"http://{settings.host}:{settings.port} ({settings.workers} worker"
             f"{'s' if settings.workers != 1 else ''} x {settings.threads} threads)")
    try:
        server.serve(target_loader=partial(_asgi_worker, loader, os.getpid(), settings.threads),
                     wrap_loader=False)
    finally:
        if executor is not None:
            executor.stop()


def without_underscore_headers(app: ASGIApp) -> ASGIApp:
    """``app`` without the request headers whose names hold '_'. WSGI names a header
    HTTP_ and its name upper-cased, '-' made '_' (PEP 3333), so X_Forwarded_User and
    X-Forwarded-User are one key, and Granian's WSGI environ keeps whichever came last: a
    client of a proxy that sets X-Forwarded-User but passes X_Forwarded_User on (Apache's
    mod_proxy, oauth2-proxy; nginx drops them) could name itself, or its address. Dropped,
    as gunicorn, waitress and werkzeug's server drop them."""

    async def dropping(scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "http":
            scope = {**scope, "headers": [(name, value) for name, value in scope["headers"]
                                          if b"_" not in name]}
        await app(scope, receive, send)
    return dropping


def _coroutine_receive(app: ASGIApp) -> ASGIApp:
    """``app`` given a ``receive`` that is a coroutine function: Granian's answers a
    future, and a2wsgi reads the request body with asyncio.run_coroutine_threadsafe,
    which takes coroutines only (a form's POST was a 500)."""

    async def adapted(scope: dict, receive: Callable, send: Callable) -> None:
        async def receiving() -> dict:
            return await receive()
        await app(scope, receiving, send)
    return adapted


# request bodies up to this size are read before the app runs, and answers up to it are
# sent once the app has made them whole (see WholeExchanges)
WHOLE_BYTES = 1 << 20


class WholeExchanges:
    """The WSGI app for an ASGI server, one hand-over between the event loop and a
    worker thread per request where a2wsgi makes one per message: a request whose body
    is at most WHOLE_BYTES (its Content-Length; none without one) is read in the loop,
    the app runs in a thread of ``pool``, and its answer goes back whole to the loop,
    which sends it. Each hand-over costs a thread wake-up and a loop wake-up; a2wsgi's
    four (the body, the status, a chunk, the end) were ~0.7 ms of a worker's CPU per
    request, a fifth of an API approval. Larger bodies and other scopes go to
    ``streaming`` (a2wsgi) as before; an answer that grows past WHOLE_BYTES is streamed
    from there on, as a2wsgi streams it (the app answers no endless streams, which
    holding a small answer until it is whole would stall)."""

    def __init__(self, app: Callable, streaming: ASGIApp, pool: Executor) -> None:
        from a2wsgi.wsgi import build_environ  # the environ a2wsgi builds, to the letter

        self.app, self.streaming, self.pool = app, streaming, pool
        self._environ = build_environ

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        length = _whole_length(scope["headers"]) if scope["type"] == "http" else None
        if length is None:
            await self.streaming(scope, receive, send)
            return
        body = bytearray()
        while len(body) < length:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        environ = self._environ(scope, io.BytesIO(bytes(body[:length])))
        loop = asyncio.get_running_loop()
        answer = await loop.run_in_executor(
            self.pool, contextvars.copy_context().run, self._answer, environ, loop, send)
        for message in answer:
            await send(message)

    def _answer(self, environ: dict, loop, send: Callable) -> list[dict]:
        """Run the app (in a pool thread): its answer as ASGI messages for the loop to
        send, or none when it outgrew WHOLE_BYTES and was streamed from here."""
        start: list[dict] = []
        chunks: list[bytes] = []
        size, streamed = 0, False

        async def sending(message: dict) -> None:  # Granian's send answers a future
            await send(message)

        def emit(message: dict) -> None:
            asyncio.run_coroutine_threadsafe(sending(message), loop).result()

        def start_response(status: str, headers: list, exc_info=None) -> Callable:
            if exc_info is not None and streamed:  # too late to change the status
                raise exc_info[1].with_traceback(exc_info[2])
            start[:] = [{"type": "http.response.start", "status": int(status.split(" ", 1)[0]),
                         "headers": [(n.strip().encode("latin1").lower(),
                                      v.strip().encode("latin1")) for n, v in headers]}]
            return write

        def write(chunk: bytes) -> None:
            nonlocal size, streamed
            if streamed:
                emit({"type": "http.response.body", "body": chunk, "more_body": True})
                return
            chunks.append(chunk)
            size += len(chunk)
            if size > WHOLE_BYTES:
                streamed = True
                emit(start[0])
                emit({"type": "http.response.body", "body": b"".join(chunks),
                      "more_body": True})

        iterable = self.app(environ, start_response)
        try:
            for chunk in iterable:
                write(chunk)
        finally:
            getattr(iterable, "close", lambda: None)()
        if not start:
            raise RuntimeError("the WSGI app answered without calling start_response")
        end = {"type": "http.response.body", "body": b""}
        if streamed:
            emit(end)
            return []
        return [start[0], {**end, "body": b"".join(chunks)}]


def _whole_length(headers: list[tuple[bytes, bytes]]) -> int | None:
    """The bytes of body to read before the app runs: its Content-Length when at most
    WHOLE_BYTES, 0 without one (werkzeug reads no body without a length, as under
    a2wsgi); None (a2wsgi streams it) for a chunked body, a larger one, or a length
    given twice or not a number."""
    length = None
    for name, value in headers:
        if name == b"transfer-encoding":
            return None
        if name == b"content-length":
            if length is not None or not value.isdigit():
                return None
            length = int(value)
    if length is None:
        return 0
    return length if length <= WHOLE_BYTES else None


def _asgi_worker(loader: AppLoader, parent: int, threads: int) -> ASGIApp:
    """A worker's app as Granian's ASGI interface runs it: loaded by _in_worker, run in
    ``threads`` threads, without the headers spelt with '_'."""
    from a2wsgi import WSGIMiddleware

    app = _in_worker(loader, parent)
    streaming = WSGIMiddleware(app, workers=threads)  # its threads run both
    return without_underscore_headers(
        WholeExchanges(app, _coroutine_receive(streaming), streaming.executor))


def _in_worker(loader: AppLoader, parent: int) -> Callable:
    """A worker's start: it ends with its parent, even one killed outright (a worker left
    behind would keep the port and serve without the executor), then loads the app.
    SIGKILL, not SIGTERM: Granian's worker, given SIGTERM while it starts, can hang in
    its signal handler; the parent's own stop still stops them gently."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:  # the parent died before the line above
        sys.exit(0)
    app = loader()
    freeze_start_up()
    return app


def freeze_start_up() -> None:
    """Take what start-up made (the Dash app, the layouts, the libraries) out of the
    garbage collector's sight: a full collection over them stalls every thread of the
    process at once. What requests make is collected as before."""
    gc.collect()
    gc.freeze()


def serve_here(config: DashboardConfig, gateways: dict, warm_spark_session: bool,
               announce) -> None:
    """Waitress in this process, for clusters that live in it."""
    import waitress

    from dashboard.app import create_app

    app = set_up(create_app(config, gateways))
    executor = start_executor(runtime.current())
    if warm_spark_session:
        warm_spark(config)
    freeze_start_up()
    settings = config.server
    server = waitress.create_server(app.server, host=settings.host, port=settings.port,
                                    threads=settings.threads)
    announce(f"http://{settings.host}:{settings.port}")
    try:
        server.run()
    finally:
        server.close()
        if executor is not None:
            executor.stop()


def start_executor(rt: runtime.Runtime):
    """Run approved plans on the clusters whose gateway can change them (a twin over HTTP
    only with its token file); None when there is none."""
    from backend.gateways.base import ClusterGateway
    from backend.services.execution import executor_thread
    from backend.services.guards import watch_for
    from backend.services.throttle_traffic import control_for

    def traffic(name: str):
        a = rt.cluster(name).adaptive_throttle
        return control_for(rt.source(name), a.interval_seconds, a.hold_seconds,
                           a.network_capacity)

    writable = sorted(name for name, gw in rt.gateways.items()
                      if isinstance(gw, ClusterGateway))
    if not writable:
        return None

    def watches(name: str):
        c = rt.cluster(name)
        return watch_for(rt.source(name), c.guards, c.windows)

    thread = executor_thread(rt.plan_store(), writable, rt.gateways.__getitem__,
                             rt.snapshot_of, watches=watches, traffic=traffic)
    thread.start()
    return thread
