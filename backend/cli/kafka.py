"""`railyard kafka up`: Apache Kafka (from Maven Central, `make install`) on 127.0.0.1."""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from backend.cli import emit, positive_float, positive_int, verb_parser
from backend.localkafka.cluster import LocalKafka


def register(sub: argparse._SubParsersAction) -> None:
    p = verb_parser(sub, "kafka")
    actions = p.add_subparsers(dest="action", required=True)
    up = actions.add_parser(
        "up", help="start KRaft brokers with racks and the JMX exporter; stop them on "
                   "Ctrl-C, SIGTERM or after --for seconds")
    up.add_argument("--dir", required=True,
                    help="an empty or new folder: brokers' configs, data and logs, then "
                         "cluster.json and targets.json (Prometheus file_sd)")
    up.add_argument("--brokers", type=positive_int, default=3,
                    help="KRaft brokers; the first 3 are also the controller quorum")
    up.add_argument("--racks", type=positive_int, default=3,
                    help="broker.rack r0..r(R-1), round-robin")
    up.add_argument("--heap", default="320m",
                    help="each broker's Java heap (-Xmx): digits then k, m or g, e.g. 320m")
    up.add_argument("--secure", action="store_true",
                    help="also give every broker SSL, SASL_PLAINTEXT and SASL_SSL client "
                         "listeners (SASL: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512; one user "
                         "each): a test CA, the brokers' certificate and one password file "
                         "per user under DIR/security/; cluster.json's `security` lists "
                         "each listener's bootstrap servers and these files (no password)")
    up.add_argument("--for", dest="duration", type=positive_float,
                    help="stop after this many seconds (default: until Ctrl-C or SIGTERM)")
    up.set_defaults(func=_up)


def _up(a: argparse.Namespace) -> None:
    cluster = LocalKafka(a.dir, a.brokers, a.racks, heap=a.heap, secure=a.secure)
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    try:
        emit(cluster.start())
        sys.stdout.flush()  # cluster.json's content, for whoever waits on it
        done.wait(a.duration)
    finally:
        cluster.stop()
