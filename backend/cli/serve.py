"""`railyard serve --config FILE`: the dashboard for the clusters a YAML config lists;
`railyard worker --config FILE`: the Celery worker that runs its sweeps when Redis is set."""

from __future__ import annotations

import argparse

from backend.cli import port_number, positive_int, verb_parser
from backend.errors import BadInput


def register(sub: argparse._SubParsersAction) -> None:
    p = verb_parser(sub, "serve")
    p.add_argument("--config", required=True, metavar="FILE", help="the YAML config")
    p.add_argument("--port", type=port_number, help="overrides server.port")
    p.add_argument("--no-warm-spark", action="store_true",
                   help="do not start the Spark session at start-up")
    p.set_defaults(func=_serve)

    w = verb_parser(sub, "worker")
    w.add_argument("--config", required=True, metavar="FILE", help="the YAML config")
    w.add_argument("--concurrency", type=positive_int, default=4,
                   help="jobs at once (threads sharing one Spark session; default 4)")
    w.add_argument("--no-warm-spark", action="store_true",
                   help="do not start the Spark session at start-up")
    w.set_defaults(func=_worker)


def _serve(a: argparse.Namespace) -> None:
    from dashboard.config import load_config
    from dashboard.server import serve  # Dash is imported only when serving

    serve(load_config(a.config), port=a.port, warm_spark_session=not a.no_warm_spark)


def _worker(a: argparse.Namespace) -> None:
    from dashboard.config import load_config
    from dashboard.worker import run_worker

    config = load_config(a.config)
    if config.cache.type != "redis":
        raise BadInput(f"{a.config}: cache.type: a worker serves the Redis queue, so set "
                       f"cache.type: redis and cache.redis_url (without them `railyard serve` "
                       f"runs background jobs itself)")
    run_worker(config, a.concurrency, warm_spark_session=not a.no_warm_spark)
