"""Server entry: build the app, warm Spark in the background, serve on loopback."""

from __future__ import annotations

import logging
import sys
from dataclasses import replace

from dashboard.app import create_app
from dashboard.config import DashboardConfig


def warm_spark(config: DashboardConfig) -> None:
    """Start the shared Spark session in a background thread (first sweep is warm)."""
    from backend.spark import session

    session.warm_up(session.settings_from(config=config.spark))


def serve(config: DashboardConfig, port: int | None = None, warm_spark_session: bool = True,
          announce=None, gateways: dict | None = None, **kwargs) -> None:
    """Serve until interrupted. ``announce`` is called with the URL once it is bound."""
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    if port:  # the app names its cookies after its port
        config = replace(config, server=replace(config.server, port=port))
    app = create_app(config, gateways)
    if warm_spark_session:
        warm_spark(config)
    host, port = config.server.host, config.server.port
    url = f"http://{host}:{port}"
    (announce or (lambda u: print(f"Railyard dashboard on {u}", file=sys.stderr,
                                  flush=True)))(url)
    app.run(host=host, port=port, debug=False, **kwargs)
