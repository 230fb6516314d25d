"""Callback requests the browser could not have sent are refused with 400 and one line.

Dash answers a malformed POST to /_dash-update-component (a JSON array, an output no
callback has, inputs that are not the callback's) with a 500 and a traceback in the log.
The guard checks the request's shape against the app's callback map before Dash sees it;
a callback that then fails on the *values* it was sent (state of the wrong type) is
refused the same way by ``refuse_bad_values``, so the log holds one line per forged request.
"""

from __future__ import annotations

import logging
import os
import traceback
from typing import Any

import flask
from dash import Dash
from werkzeug.exceptions import BadRequest

log = logging.getLogger("railyard.dashboard")
UPDATE_ROUTE = "_dash-update-component"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# What a callback raises when a value has the wrong type or shape (a dict where a list
# was, a missing key): a forged request, answered 400 rather than treated as a server bug.
VALUE_ERRORS = (TypeError, KeyError, AttributeError, IndexError, ValueError)


def install(app: Dash) -> None:
    """Check every callback request's shape before Dash dispatches it."""
    server = app.server
    endpoint = next(r.endpoint for r in server.url_map.iter_rules()
                    if r.rule.endswith(UPDATE_ROUTE))
    dispatch = server.view_functions[endpoint]

    def guarded() -> Any:
        limit = server.config.get("MAX_CONTENT_LENGTH")
        if limit and (flask.request.content_length or 0) > limit:
            return refuse(f"the request is larger than {limit:,} bytes (server.max_upload_bytes)",
                          413)
        try:
            body = flask.request.get_json(silent=True)
        except RecursionError:  # Python's parser gives up hundreds of levels deep
            return refuse("the body is nested too deeply to be a callback request")
        problem = request_problem(body, app.callback_map)
        if problem is not None:
            return refuse(problem)
        return dispatch()

    server.view_functions[endpoint] = guarded
    server.register_error_handler(BadRequest, lambda e: ({"error": e.description}, 400))


def refuse(problem: str, status: int = 400) -> tuple[dict, int]:
    """The reason as one line of JSON, and one line in the log."""
    log.warning("refused callback request from %s: %s", flask.request.remote_addr, problem)
    return {"error": problem}, status


def refuse_bad_values(err: Exception) -> None:
    """Called for a failed callback: a wrong-typed value becomes 400 (one log line). The
    line names where our code raised, so a real bug that looks like one is found at once."""
    if isinstance(err, VALUE_ERRORS):
        output = (flask.request.get_json(silent=True) or {}).get("output", "?")
        log.warning("refused callback request from %s: %.120s: %s %.120s (raised at %s)",
                    flask.request.remote_addr, output, type(err).__name__, err, raised_at(err))
        raise BadRequest(f"callback {str(output)[:120]}: a value has the wrong type or shape")


def raised_at(err: BaseException) -> str:
    """file:line of the innermost frame in Railyard's own code (else the innermost)."""
    frames = traceback.extract_tb(err.__traceback__)
    if not frames:
        return "?"
    ours = [f for f in frames if f.filename.startswith(ROOT) and "site-packages" not in f.filename]
    frame = (ours or frames)[-1]
    name = os.path.relpath(frame.filename, ROOT) if ours else frame.filename
    return f"{name}:{frame.lineno}"


def request_problem(body: Any, callbacks: dict) -> str | None:
    """Why ``body`` is not a callback request this app's browser side could send, or None."""
    if not isinstance(body, dict):
        return "the body must be a JSON object"
    output = body.get("output")
    if not isinstance(output, str) or output not in callbacks:
        return f"no callback has the output {str(output)[:80]!r}"
    if not isinstance(body.get("outputs"), dict | list):
        return "'outputs' must be an object or a list"
    changed = body.get("changedPropIds", [])
    if not isinstance(changed, list) or not all(isinstance(c, str) for c in changed):
        return "'changedPropIds' must be a list of strings"
    spec = callbacks[output]
    for key in ("inputs", "state"):
        sent, registered = body.get(key, []), spec.get(key, [])
        if not isinstance(sent, list) or len(sent) != len(registered):
            return f"'{key}' must list the callback's {len(registered)} {key}"
        for got, want in zip(sent, registered, strict=True):
            if isinstance(want.get("id"), dict):  # pattern-matching: a list or one match
                if not isinstance(got, dict | list):
                    return f"'{key}' entries must be objects"
                continue
            if not isinstance(got, dict) or got.get("id") != want["id"] \
                    or got.get("property") != want["property"]:
                return f"'{key}' must be {want['id']}.{want['property']} in the callback's order"
    return None
