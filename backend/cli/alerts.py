"""`railyard alerts generate|grafana`: Prometheus alerting rules and a Grafana dashboard
for the guard rails of every cluster in a dashboard config."""

from __future__ import annotations

import argparse
import sys

from backend.cli import verb_parser
from backend.errors import Unavailable
from backend.metrics.dialects import DIALECTS
from backend.metrics.rules import AlertTarget
from backend.services import alerts

UNAVAILABLE_EXIT = 3


def register(sub: argparse._SubParsersAction) -> None:
    p = verb_parser(sub, "alerts")
    actions = p.add_subparsers(dest="action", required=True)
    g = actions.add_parser("generate", help="OUT/<dialect>/<cluster>.rules.yml, checked "
                                            "with promtool")
    _common(g)
    g.add_argument("--dialect", action="append", choices=sorted(DIALECTS),
                   help="repeatable (default: every dialect)")
    g.set_defaults(func=_generate)
    d = actions.add_parser("grafana", help="OUT/<cluster>.grafana.json (Grafana import format)")
    _common(d)
    d.set_defaults(func=_grafana)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", required=True, metavar="FILE", help="the dashboard's YAML config")
    p.add_argument("--out", required=True, metavar="DIR")
    p.add_argument("--dashboard-url", help="where alerts link to (default: the config's "
                                           "server host and port)")


def targets(config_path: str, dashboard_url: str | None) -> list[AlertTarget]:
    from dashboard.config import load_config
    config = load_config(config_path)
    url = dashboard_url or f"http://{config.server.host}:{config.server.port}"
    return [AlertTarget(c.name, c.limits, c.prometheus.dialect if c.prometheus else "strimzi",
                        dashboard_url=url, near_limit_ratio=config.near_limit_ratio)
            for c in config.clusters]


def _generate(a: argparse.Namespace) -> dict:
    try:
        return alerts.write_rules(targets(a.config, a.dashboard_url), a.out,
                                  tuple(a.dialect or DIALECTS))
    except Unavailable as e:
        sys.stderr.write(f"railyard alerts generate: unavailable: {e}\n")
        raise SystemExit(UNAVAILABLE_EXIT) from None


def _grafana(a: argparse.Namespace) -> dict:
    return alerts.write_grafana(targets(a.config, a.dashboard_url), a.out)
