"""`railyard twin serve`: run the simulated cluster and its per-broker Prometheus targets."""

from __future__ import annotations

import argparse
import socket
import time

from backend.cli import emit, port_or_zero, positive_float, verb_parser
from backend.errors import BadInput
from backend.gateways.config import Secret
from backend.metrics.dialects import DIALECTS
from backend.model.io import check_output_path, load_snapshot
from backend.twin.examples import demo_snapshot
from backend.twin.runtime import TARGETS_FILE, TwinService
from backend.twin.scenario import load_scenario


def register(sub: argparse._SubParsersAction) -> None:
    p = verb_parser(sub, "twin")
    actions = p.add_subparsers(dest="action", required=True)
    s = actions.add_parser("serve", help="run the twin until interrupted")
    s.add_argument("--snapshot", required=True,
                   help=".json/.parquet snapshot, or 'demo' for the demo cluster")
    s.add_argument("--scenario", help="scenario file (.yaml/.json)")
    s.add_argument("--speed", type=positive_float, default=1.0,
                   help="simulated seconds per wall second")
    s.add_argument("--port-base", type=port_or_zero, default=9404,
                   help="broker i listens on port-base + i (0: any free port)")
    s.add_argument("--api-port", type=port_or_zero, default=9400,
                   help="the HTTP API `railyard serve` reads the cluster from "
                        "(gateway: {type: twin, url: http://127.0.0.1:PORT}; 0: any free port)")
    s.add_argument("--api-token-file",
                   help="a file whose first line is the bearer token the API's writes need "
                        "(the gateway's token_file); without it the API is read-only")
    s.add_argument("--dialect", choices=sorted(DIALECTS), default="strimzi")
    s.add_argument("--targets-file", default=str(TARGETS_FILE),
                   help="where `railyard prometheus up` finds the targets")
    s.add_argument("--for", dest="duration", type=positive_float,
                   help="stop after this many wall seconds (default: until Ctrl-C)")
    s.set_defaults(func=_serve)


def _check_listen(port: int, flag: str) -> None:
    """127.0.0.1:``port`` can be listened on (0: any free port can); BadInput naming the
    flag and the port otherwise (the probe binds as the twin's HTTP servers do)."""
    if not port:
        return
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as e:
            raise BadInput(f"{flag} {port}: cannot listen on 127.0.0.1:{port}: "
                           f"{e.strerror or e}") from None


MIN_TOKEN_CHARS = 16  # the write token is all that stands between a caller and a change


def _serve(a: argparse.Namespace) -> None:
    token = None if a.api_token_file is None else \
        Secret(file=a.api_token_file, where="--api-token-file").read()
    if token is not None and len(token) < MIN_TOKEN_CHARS:
        raise BadInput(f"--api-token-file {a.api_token_file}: the token is {len(token)} "
                       f"characters, give at least {MIN_TOKEN_CHARS} (e.g. `openssl rand "
                       f"-hex 16`)")
    snap = demo_snapshot() if a.snapshot == "demo" else load_snapshot(a.snapshot)
    scenario = load_scenario(a.scenario) if a.scenario else None
    if a.port_base and a.port_base + snap.n_brokers - 1 > 65535:
        raise BadInput(f"--port-base {a.port_base}: the {snap.n_brokers} brokers need ports up "
                       f"to {a.port_base + snap.n_brokers - 1}, past 65535")
    _check_listen(a.api_port, "--api-port")
    if a.targets_file == str(TARGETS_FILE):  # the default's folder (var/twin) is made
        TARGETS_FILE.parent.mkdir(parents=True, exist_ok=True)
    check_output_path(a.targets_file, "--targets-file")  # before anything listens
    try:
        service = TwinService(snap, scenario, a.speed, a.port_base, DIALECTS[a.dialect],
                              api_port=a.api_port, api_token=token)
    except OSError as e:
        _check_listen(a.api_port, "--api-port")  # taken meanwhile: name that port
        raise BadInput(f"--port-base {a.port_base}: cannot listen on 127.0.0.1 from port "
                       f"{a.port_base} to {a.port_base + snap.n_brokers - 1}: {e.strerror}") \
            from None
    service.start()
    try:
        emit({"serving": service.write_targets(a.targets_file), "speed": a.speed,
              "scenario": service.scenario.name, "targets_file": a.targets_file})
        deadline = None if a.duration is None else time.monotonic() + a.duration
        while deadline is None or time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        service.stop()
