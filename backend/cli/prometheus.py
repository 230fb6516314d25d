"""`railyard prometheus up|down`: Debian's Prometheus scraping the twin's targets."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from backend.cli import port_or_zero, positive_float, verb_parser
from backend.errors import BadInput
from backend.metrics.dialects import DIALECTS
from backend.metrics.recording import recording_rules
from backend.metrics.server import (
    PIDFILE,
    PrometheusProcess,
    running_pid,
    scrape_config,
    stop_from_pidfile,
)
from backend.twin.runtime import TARGETS_FILE

HOME = Path("var/prometheus")


def register(sub: argparse._SubParsersAction) -> None:
    p = verb_parser(sub, "prometheus")
    actions = p.add_subparsers(dest="action", required=True)
    up = actions.add_parser("up", help="write the scrape config and start prometheus")
    up.add_argument("--targets-file", default=str(TARGETS_FILE),
                    help="written by `railyard twin serve`, or a Prometheus file_sd file "
                         "such as `railyard kafka up` writes")
    up.add_argument("--port", type=port_or_zero, default=9090, help="0: any free port")
    up.add_argument("--scrape-interval", type=positive_float, default=5.0, help="seconds")
    up.add_argument("--home", default=str(HOME), help="config, pid file and data/ live here")
    up.set_defaults(func=_up)
    down = actions.add_parser("down", help="stop the prometheus `up` started")
    down.add_argument("--home", default=str(HOME))
    down.set_defaults(func=lambda a: stop_from_pidfile(a.home))
    rules = actions.add_parser("rules", help="Railyard's recording rules for your own "
                                             "Prometheus (JSON is YAML: save as a rule file)")
    rules.add_argument("--dialect", choices=sorted(DIALECTS), default="strimzi")
    rules.set_defaults(func=lambda a: recording_rules(a.dialect))


def _up(a: argparse.Namespace) -> dict:
    try:
        doc = json.loads(Path(a.targets_file).read_text())
    except FileNotFoundError:
        raise BadInput(f"{a.targets_file}: no targets file; start `railyard twin serve` "
                       "first") from None
    except json.JSONDecodeError as e:
        raise BadInput(f"{a.targets_file}: invalid JSON: {e.msg}") from None
    running = running_pid(a.home)  # a pid file a killed server left is removed here
    if running is not None:
        raise BadInput(f"prometheus already running (pid {running}, "
                       f"{Path(a.home) / PIDFILE}); `railyard prometheus down` first")
    targets, cluster, dialect = scrape_targets(doc, a.targets_file)
    server = PrometheusProcess(a.home, a.port or None)
    server.write_config(scrape_config(targets, cluster, a.scrape_interval), dialect)
    server.start()
    return {"url": server.url, "pid": server.proc.pid, "config": str(server.config_path),
            "data": str(server.data_dir), "targets": len(targets)}


def scrape_targets(doc: object, path: str) -> tuple[dict[str, str], str, str]:
    """({broker: host:port}, cluster, dialect) of the twin's targets file, or of a file_sd
    list whose groups each label one broker (`railyard kafka up`'s targets.json: the JMX
    exporter with Railyard's rules, the strimzi dialect)."""
    if isinstance(doc, dict) and isinstance(doc.get("targets"), dict):
        return doc["targets"], doc.get("cluster", "twin"), doc.get("dialect", "strimzi")
    groups = doc if isinstance(doc, list) else []
    try:
        targets = {str(g["labels"]["broker"]): g["targets"][0] for g in groups}
        cluster = {g["labels"].get("cluster", "kafka") for g in groups}
    except (KeyError, IndexError, TypeError):
        targets, cluster = {}, set()
    if not targets or len(cluster) != 1:
        raise BadInput(f"{path}: expected the twin's targets file or a file_sd list of "
                       "groups labelled broker (and one cluster)")
    return targets, cluster.pop(), "strimzi"
