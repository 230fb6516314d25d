"""The app factory: one Dash multi-page app per config (pages/ routes, assets/ styling)."""

from __future__ import annotations

import logging
from functools import partial
from pathlib import Path

import dash
from dash import Dash
from flask_caching import Cache

from dashboard import (
    api,
    auth,
    caches,
    guard,
    ids,
    jobs,
    reports,
    runtime,
    shell,
    sign_in_failures,
)
from dashboard.config import DashboardConfig

ROOT = Path(__file__).resolve().parent.parent
log = logging.getLogger("railyard.dashboard")


def create_app(config: DashboardConfig, gateways: dict | None = None) -> Dash:
    """The dashboard for ``config``. One app per process (Dash pages register globally).
    ``gateways``: cluster name -> ClusterReader for clusters read in-process (railyard
    demo); the others through the gateway their config names (backend.gateways.factory)."""
    app = Dash(
        __name__,
        use_pages=True,
        pages_folder=str(ROOT / "pages"),
        assets_folder=str(ROOT / "assets"),
        title="Railyard",
        update_title=None,
        suppress_callback_exceptions=True,
        background_callback_manager=jobs.manager(config.cache),
        on_error=_on_error,
        csrf_token_name=auth.csrf_cookie_name(config.server.port),
    )
    auth.install(app.server, config.auth, config.server.port,
                 sign_in_failures.counter(config.cache))
    api.install(app.server)
    reports.install(app.server)
    cache = Cache(app.server, config=caches.cache_config(config.cache))
    runtime.install(runtime.Runtime(config, cache, runtime.open_gateways(config, gateways)))
    app.layout = partial(shell.layout, config)  # per request: it names the user
    shell.register(app)
    guard.install(app)
    # two uploads at most travel in one callback (a sweep's plan and workload), base64
    app.server.config["MAX_CONTENT_LENGTH"] = 2 * (config.server.max_upload_bytes * 4 // 3) \
        + (1 << 20)
    return app


def _on_error(err: Exception) -> None:
    """A callback failed in a way no page handled: a value of the wrong type is a forged
    request (400, one log line); a plan store that refused (full, down) is shown naming
    the cause; anything else is logged and shown as one line."""
    guard.refuse_bad_values(err)
    refusal = api.store_refusal(err)
    if refusal is not None:
        log.warning("callback failed: %s", refusal)
    else:
        log.exception("callback failed", exc_info=err)
    dash.set_props(ids.APP_ERROR, {"children": refusal or f"Something failed on the "
                                   f"server: {type(err).__name__}. Details are in the server "
                                   f"log.", "hidden": False})
