"""`railyard serve --config FILE`: the dashboard for the clusters a YAML config lists."""

from __future__ import annotations

import argparse

from backend.cli import positive_int


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="run the dashboard (config/railyard.example.yaml "
                                     "documents the config file)")
    p.add_argument("--config", required=True, metavar="FILE", help="the YAML config")
    p.add_argument("--port", type=positive_int, help="overrides server.port")
    p.add_argument("--no-warm-spark", action="store_true",
                   help="do not start the Spark session at start-up")
    p.set_defaults(func=_serve)


def _serve(a: argparse.Namespace) -> None:
    from dashboard.config import load_config
    from dashboard.server import serve  # Dash is imported only when serving

    serve(load_config(a.config), port=a.port, warm_spark_session=not a.no_warm_spark)
