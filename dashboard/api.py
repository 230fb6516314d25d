"""The HTTP API, /api/v1 (docs/api.md): plans and the audit log as JSON.

Thin over backend/services/plans.py, which holds every rule; this module only turns
requests into service calls and refusals into status codes. Each request authenticates
itself (HTTP Basic with the config's users, the proxy's headers, or the local admin under
auth: none), never with the browser's session cookie, and POST bodies must be JSON, so
another site cannot make a signed-in browser act here. Errors are {"error": "one line"}.
"""

from __future__ import annotations

import logging
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

import flask
from flask import Blueprint, jsonify, request
from sqlalchemy.exc import OperationalError
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from backend.errors import BadInput, Conflict, Forbidden, NotFound, Unavailable
from backend.model import json_input
from backend.services import (
    approval_status,
    drained,
    execution,
    plan_kinds,
    plan_queue,
    shrink_execution,
    throttle_leftovers,
)
from backend.services import plans as plan_service
from backend.store.store import Store
from backend.store.workflow import STATES
from components import timerange
from dashboard import auth, runtime
from dashboard.config import normal_name
from dashboard.plan_views import grids

log = logging.getLogger("railyard.api")

PREFIX = "/api/v1"
STATUS = ((BadInput, 400), (Forbidden, 403), (NotFound, 404), (Conflict, 409),
          (Unavailable, 503))

api = Blueprint("api", __name__, url_prefix=PREFIX)


def install(server: flask.Flask) -> None:
    """Serve the API on ``server`` (auth.install must have run: it names the users)."""
    server.register_blueprint(api)


class _Refused(Exception):
    """A refusal decided here rather than in a service (credentials, body format)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@api.before_request
def _authenticate() -> flask.Response | tuple | None:
    if auth.current_identity() is None:
        wait = auth.retry_after()
        if wait:
            return jsonify(error=f"too many failed sign-ins from your address: try again in "
                                 f"{wait} s"), 429, {"Retry-After": str(wait)}
        answer = jsonify(error="credentials required: HTTP Basic with a configured user"
                         if auth.settings().mode == "users" else
                         "not signed in: send requests through the single-sign-on proxy")
        if auth.settings().mode == "users":
            answer.headers["WWW-Authenticate"] = 'Basic realm="Railyard", charset="UTF-8"'
        return answer, 401
    if request.method == "POST" and request.mimetype != "application/json":
        return jsonify(error=f"expected Content-Type: application/json, got "
                             f"{request.mimetype or 'none'}"), 415
    return None


@api.errorhandler(_Refused)
def _refused(e: _Refused):
    return jsonify(error=str(e)), e.status


@api.errorhandler(Exception)
def _error(e: Exception):
    for kind, status in STATUS:
        if isinstance(e, kind):
            return jsonify(error=str(e)), status
    if isinstance(e, PermissionError):  # the identity vanished mid-request
        return jsonify(error=str(e)), 401
    if isinstance(e, HTTPException):  # Werkzeug's own refusals keep their status
        return jsonify(error=_http_reason(e)), e.code or 500
    refusal = store_refusal(e)
    if refusal is not None:
        return jsonify(error=refusal), 503
    log.exception("API request %s %s failed", request.method, request.path, exc_info=e)
    return jsonify(error=f"the server failed ({type(e).__name__}); details are in its "
                         f"log"), 500


def _http_reason(e: HTTPException) -> str:
    if isinstance(e, RequestEntityTooLarge):
        return f"the body is larger than the {flask.current_app.config['MAX_CONTENT_LENGTH']:,} " \
               f"bytes this server accepts (from server.max_upload_bytes)"
    return f"{e.name}: {e.description}"


def store_refusal(e: BaseException) -> str | None:
    """One line naming why the plan store refused (a full disk, a database that is down or
    locked: SQLAlchemy's OperationalError), or None for any other error."""
    if not isinstance(e, OperationalError):
        return None
    cause = (str(e.orig or e).strip().splitlines() or [type(e).__name__])[0]
    return f"Plan store: {cause}: nothing was stored; try again when it has room and answers"


def _store() -> Store:
    return runtime.current().plan_store()


def _body(known: tuple[str, ...] | None = None) -> dict[str, Any]:
    """The request's JSON object; ``known``: the keys it may hold (a misspelt one is
    refused rather than ignored; None: the caller checks them)."""
    data = request.get_data()
    if not data:
        return {}
    body = json_input.loads(data, "body")
    if not isinstance(body, dict):
        raise BadInput(f"body: expected a JSON object, got {type(body).__name__}")
    if known is not None:
        json_input.only_keys(body, known, "body")
    return body


def _text(body: dict, key: str, required: bool = False) -> str | None:
    value = body.get(key)
    if value is None:
        if required:
            raise BadInput(f"{key}: required")
        return None
    if not isinstance(value, str):
        raise BadInput(f"{key}: expected a string, got {type(value).__name__}")
    return value


def _cluster(name: Any) -> str:
    names = [c.name for c in runtime.current().config.clusters]
    if name not in names:
        raise BadInput(f"cluster: expected one of {', '.join(names)}, got {name!r}")
    return name


@api.get("/plans")
def list_plans():
    cluster = request.args.get("cluster") or None
    state = request.args.get("state") or None
    needs = request.args.get("needs_approval_by") or None
    if cluster == plan_queue.ALL or needs is not None:
        return _queue(cluster, state, needs)
    if cluster is not None:
        _cluster(cluster)
    if state is not None and state not in STATES:
        raise BadInput(f"state: expected one of {', '.join(STATES)}, got {state!r}")
    plans = plan_service.list_plans(_store(), cluster, state)
    return jsonify(plans=[_with_status(p.to_dict(), p) for p in plans])


def _with_status(out: dict, plan) -> dict:
    """A plan as the API answers it, with how far its approvals have come."""
    return {**out, "approval_status": asdict(approval_status.status(plan))}


def _queue(cluster: str | None, state: str | None, needs: str | None):
    """The fleet's queue (services.plan_queue): ``cluster=*`` is every configured
    cluster, ``needs_approval_by=me`` the plans waiting for the caller's approval."""
    if needs is not None and needs != "me":
        raise BadInput(f"needs_approval_by: expected me, got {needs[:40]!r}")
    who = auth.current_actor()
    rt = runtime.current()
    rows = plan_queue.queue(_store(), [c.name for c in rt.config.clusters],
                            cluster=cluster, state=state, sort=request.args.get("sort"),
                            needs_approval_by=who if needs else None, viewer=who,
                            snapshot_of=plan_queue.cached_snapshots(rt.known_source))
    return jsonify(plans=rows)


@api.post("/plans")
def propose():
    body = _body()
    who = auth.current_actor()
    plan_service.may_propose(_store(), who, body.get("kind"))  # before the preview's work
    plan_kinds.check_request_keys(body)
    rt = runtime.current()
    cluster = _cluster(body.get("cluster"))
    title = _text(body, "title")
    if body.get("kind") == plan_service.CLEAR:
        plan = throttle_leftovers.propose_clear(_store(), who, rt.source(cluster),
                                                configs=body.get("configs"), title=title)
        return _proposed(plan)
    snap = rt.snapshot_of(cluster)
    # the safe band and the suggested throttle (frozen when none is given) for the
    # brokers' network as configured, which the adaptive throttle uses too
    draft = plan_kinds.draft_from_request(
        snap, body, drained.remembered(_store(), snap),
        rt.cluster(cluster).adaptive_throttle.network_capacity, rt.gateways.get(cluster))
    plan = plan_service.propose(
        _store(), who, cluster=cluster, kind=draft.kind, content=draft.content,
        preview=draft.preview, snapshot=snap, title=title or draft.title,
        throttle=body["throttle"] if body.get("throttle") is not None
        else plan_kinds.previewed_throttle(draft), throttle_mode=body.get("throttle_mode"),
        not_before=body.get("not_before"),
        outside_windows=body.get("outside_windows", False))
    if draft.table is not None:  # the plan's page shows this grid: no need to rebuild it
        grids.keep_plan_grid(plan.id, draft.table)
    return _proposed(plan)


def _proposed(plan):
    answer = jsonify(id=plan.id, state=plan.state, sha256=plan.sha256,
                     expires_at=plan.expires_at.isoformat(), preview=plan.preview)
    answer.headers["Location"] = f"{PREFIX}/plans/{plan.id}"
    return answer, 201


@api.get("/plans/<int:plan_id>")
def get_plan(plan_id: int):
    store = _store()
    plan = plan_service.get(store, plan_id)
    source = runtime.current().known_source(plan.cluster)  # the live copy rate's Prometheus
    progress = execution.progress(store, plan_id, source=source)
    return jsonify({**_with_status(plan.to_dict(), plan), "execution": progress,
                    "waiting": execution.waiting(store, plan.cluster)
                    if plan.state == "executing" and progress is None else None})


@api.post("/plans/<int:plan_id>/approve")
def approve(plan_id: int):
    body = _body(("sha256", "comment"))
    rt = runtime.current()
    plan = plan_service.approve(_store(), auth.current_actor(), plan_id,
                                sha256=_text(body, "sha256", required=True),
                                comment=_text(body, "comment") or "",
                                topics_of=rt.topics_of,
                                configs_of=rt.throttle_configs_of)
    return jsonify(id=plan.id, state=plan.state)


@api.post("/plans/<int:plan_id>/reject")
def reject(plan_id: int):
    body = _body(("sha256", "comment"))
    plan = plan_service.reject(_store(), auth.current_actor(), plan_id,
                               comment=_text(body, "comment") or "",
                               sha256=_text(body, "sha256"))
    return jsonify(id=plan.id, state=plan.state)


@api.post("/plans/<int:plan_id>/withdraw")
def withdraw(plan_id: int):
    body = _body(("comment",))
    plan = plan_service.withdraw(_store(), auth.current_actor(), plan_id,
                                 comment=_text(body, "comment") or "")
    return jsonify(id=plan.id, state=plan.state)


@api.post("/plans/<int:plan_id>/execute")
def execute(plan_id: int):
    body = _body(("migration",))
    migration = body.get("migration", False)
    if not isinstance(migration, bool):
        raise BadInput("migration: expected true or false")
    rt = runtime.current()
    cluster = plan_service.get(_store(), plan_id).cluster
    plan = plan_service.execute(_store(), auth.current_actor(), plan_id,
                                        gateway=rt.gateways.get(cluster),
                                        topics_of=rt.topics_of,
                                        configs_of=rt.throttle_configs_of,
                                        migration=migration)
    return jsonify(id=plan.id, state=plan.state), 202


@api.post("/plans/<int:plan_id>/migration/steps/<int:step>")
def check_step(plan_id: int, step: int):
    """An operator checks off step ``step`` (2..) of a shrink's migration."""
    _body(())
    rt = runtime.current()
    return jsonify(shrink_execution.check_step(_store(), auth.current_actor(), plan_id,
                                               step - 1, topics_of=rt.topics_of,
                                               source_of=rt.known_source)), 200


@api.post("/plans/<int:plan_id>/cancel")
def cancel(plan_id: int):
    _body(())
    plan = plan_service.request_cancel(_store(), auth.current_actor(), plan_id)
    return jsonify(id=plan.id, state=plan.state,
                   cancel_requested_at=plan.cancel_requested_at.isoformat()), 202


@api.post("/plans/<int:plan_id>/pause")
def pause(plan_id: int):
    _body(())
    return jsonify(execution.pause(_store(), auth.current_actor(), plan_id)), 202


@api.get("/plans/<int:plan_id>/throttle")
def throttle_history(plan_id: int):
    """The throttle over time: mode, ceiling, floor and the adaptive controller's looks."""
    return jsonify(execution.throttle_history(_store(), plan_id))


@api.post("/plans/<int:plan_id>/throttle")
def switch_throttle(plan_id: int):
    """Switch a running plan between fixed and adaptive (the execute right)."""
    body = _body(("mode", "floor"))
    floor = body.get("floor")
    if floor is not None and (isinstance(floor, bool) or not isinstance(floor, int)):
        raise BadInput(f"floor: expected an integer (bytes/s), got {str(floor)[:30]}")
    return jsonify(execution.switch_throttle(_store(), auth.current_actor(), plan_id,
                                             _text(body, "mode", required=True), floor)), 202


@api.post("/plans/<int:plan_id>/resume")
def resume(plan_id: int):
    _body(())
    return jsonify(execution.resume(_store(), auth.current_actor(), plan_id)), 202


@api.get("/audit")
def audit():
    plan = request.args.get("plan") or None
    if plan is not None and not plan_service.is_plan_id(plan):
        raise BadInput(f"plan: expected a plan id (1 to {plan_service.MAX_PLAN_ID}), "
                       f"got {plan[:40]!r}")
    since = request.args.get("since") or None
    order = request.args.get("order") or "oldest"
    if order not in ("oldest", "newest"):
        raise BadInput(f"order: expected oldest or newest, got {order[:40]!r}")
    page = plan_service.audit_page(
        _store(), plan=int(plan) if plan else None,
        user=normal_name(request.args.get("user") or "") or None,  # as sign-in records it
        since=_since(since) if since else None, newest_first=order == "newest",
        after=_count("after", MAX_AUDIT_ID), limit=_count(
            "limit", plan_service.AUDIT_PAGE_ROWS) or plan_service.AUDIT_PAGE_ROWS)
    return jsonify(entries=[e.to_dict() for e in page.entries], total=page.total,
                   next=None if page.next is None else str(page.next))


MAX_AUDIT_ID = 2**31 - 1  # audit.id is an INTEGER column: PostgreSQL's is 32 bits


def _count(key: str, most: int) -> int | None:
    """A query argument of ASCII digits from 1 to ``most``, or None when absent."""
    text = request.args.get(key) or None
    if text is None:
        return None
    if not (text.isascii() and text.isdigit() and len(text) < 20 and 0 < int(text) <= most):
        raise BadInput(f"{key}: expected a whole number from 1 to {most}, got {text[:40]!r}")
    return int(text)


def _since(text: str) -> datetime:
    """A time as the /audit page reads it (components.timerange.parse_time: ISO 8601, UTC
    without a zone, 1970 to 9999; past those the store's query failed with a 500)."""
    return datetime.fromtimestamp(timerange.parse_time(text, "since"), UTC)


@api.route("/<path:_rest>", methods=["GET", "POST", "PUT", "PATCH", "DELETE"])
def unknown(_rest: str):
    raise NotFound(f"no such endpoint: {request.method} {request.path} (docs/api.md lists "
                   f"them)")
