"""Server entry: build the app, warm Spark in the background, serve on loopback."""

from __future__ import annotations

import logging
import sys
from dataclasses import replace

from dashboard import runtime
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
    executor = start_executor(runtime.current())
    if warm_spark_session:
        warm_spark(config)
    host, port = config.server.host, config.server.port
    url = f"http://{host}:{port}"
    (announce or (lambda u: print(f"Railyard dashboard on {u}", file=sys.stderr,
                                  flush=True)))(url)
    try:
        app.run(host=host, port=port, debug=False, **kwargs)
    finally:
        if executor is not None:
            executor.stop()


def start_executor(rt: runtime.Runtime):
    """Run approved plans on the clusters whose gateway can change them (a twin over HTTP
    only with its token file); None when there is none."""
    from backend.gateways.base import ClusterGateway
    from backend.services.execution import ExecutorThread

    writable = sorted(name for name, gw in rt.gateways.items()
                      if isinstance(gw, ClusterGateway))
    if not writable:
        return None
    thread = ExecutorThread(rt.plan_store(), writable, rt.gateways.__getitem__,
                            rt.snapshot_of)
    thread.start()
    return thread
