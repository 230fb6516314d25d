"""/plans/<id>: one stored plan at a URL to share: its state, the preview it was proposed
with, the exact JSON and its sha256, the decisions and the audit trail; Approve and
Reject for approvers who did not write it (approve sends the sha256 this page showed),
Withdraw for its author. Every rule is the plan service's: the buttons only save a trip.
"""

from __future__ import annotations

import json

import dash
import pandas as pd
from dash import Input, Output, State, dcc, html, no_update

from backend.errors import NotFound, Unavailable
from backend.services import execution, plan_preview, shrink_execution
from backend.services import plans as plan_service
from backend.store.workflow import may
from components import banners, tables
from components.progress import progress_view
from dashboard import auth, drafts, ids, plan_views, runtime

dash.register_page(__name__, path_template="/plans/<plan_id>", title="Railyard · Plan",
                   name="Plan")

JSON_ENTRIES = 1000  # partitions of a reassignment shown inline; the file has them all


def layout(plan_id: str | None = None, **_query) -> html.Div:
    """A reassignment paints from its stored preview numbers: its content and basis (a
    100k-move plan's megabytes of JSON) are decoded when the grid first asks for rows
    and when the exact JSON is opened, not before the page shows."""
    store = runtime.current().plan_store()
    try:
        plan = plan_service.summary(store, int(plan_id))
        if plan.kind != "reassignment" or "partitions" not in plan.preview:
            plan = plan_service.get(store, plan.id)  # small, or proposed without a preview
    except (ValueError, TypeError):
        return _missing(f"'{plan_id}' is not a plan number")
    except NotFound as e:
        return _missing(str(e))
    except Unavailable as e:
        return _missing(str(e))
    who = auth.current_actor()
    draft = plan_preview.Draft(plan.kind, plan.cluster, plan.title, plan.preview,
                               frozen=plan.content)
    if plan.kind == "reassignment" and plan.content is not None:
        draft.table = plan_views.stored_table(plan)
        drafts.keep_plan_grid(plan.id, draft.table)
    head = [_facts(plan), _actions(plan, who), _execution(plan)]
    if plan.kind == "reassignment":
        block = plan_views.reassignment_block(draft, head)
    elif plan.kind == plan_service.CLEAR:
        block = plan_views.clear_block(plan.content, head)
    else:
        block = plan_views.shrink_block(draft, head)
    return html.Div([
        dcc.Store(id=ids.PLAN_TOKEN, data=drafts.save_stored(plan.id)),
        dcc.Store(id=ids.PV_PLAN, data={"id": plan.id, "sha256": plan.sha256}),
        html.H1([f"Plan {plan.id}: {plan.title} ",
                 html.Span(plan.state, id=ids.PV_STATE, className=f"state state-{plan.state}")]),
        html.Div(id=ids.PV_BANNERS),
        *block,
        html.Div([html.H3("Decisions"), html.Div(_decisions(plan), id=ids.PV_DECISIONS)],
                 className="panel"),
        html.Div([html.H3("Audit trail"), html.Div(_audit(plan.id), id=ids.PV_AUDIT)],
                 className="panel"),
        _exact_json(plan),
    ])


def _missing(message: str) -> html.Div:
    return html.Div([html.H1("Plan"), banners.banner(message, "error")])


def _facts(plan) -> html.Div:
    rows = [("Kind", plan.kind), ("Cluster", plan.cluster), ("Author", plan.author),
            ("Proposed", _time(plan.created_at)), ("Expires", _time(plan.expires_at)),
            ("Throttle", "-" if plan.throttle is None else f"{plan.throttle:,} B/s"),
            ("sha256", html.Code(plan.sha256, id=ids.PV_SHA))]
    return html.Dl([part for k, v in rows for part in (html.Dt(k), html.Dd(v))],
                   className="facts", id=ids.PV_FACTS)


def _actions(plan, who) -> html.Div:
    """Approve/Reject (approvers, not the author) and Withdraw (the author) while the
    plan is proposed. All three are always in the page (a callback needs its inputs),
    hidden from whoever may not use them; the service refuses them anyway."""
    proposed = plan.state == "proposed"
    can_decide = proposed and may(who, "approve", plan.author) is None
    can_withdraw = proposed and may(who, "withdraw", plan.author) is None
    if not proposed:
        note = f"This plan is {plan.state}: there is nothing left to decide."
    elif who.name == plan.author:
        note = "You wrote this plan: someone else with the approver role approves it."
    elif not can_decide:
        note = f"Signed in as {who.name} ({who.role}): approvers and admins decide plans."
    else:
        note = (f"Approving approves exactly the plan below, sha256 {plan.sha256[:12]}..., "
                "for the cluster as it is now.")
    return html.Div([
        html.Div([
            html.Label([html.Span("Comment", className="field-label"),
                        dcc.Input(id=ids.PV_COMMENT, type="text", className="wide")],
                       className="field", hidden=not (can_decide or can_withdraw)),
            html.Button("Approve", id=ids.PV_APPROVE, className="button primary",
                        hidden=not can_decide),
            html.Button("Reject", id=ids.PV_REJECT, className="button", hidden=not can_decide),
            html.Button("Withdraw", id=ids.PV_WITHDRAW, className="button",
                        hidden=not can_withdraw),
        ], className="form-row"),
        html.P(note, className="hint"),
        html.Div(id=ids.PV_RESULT, className="inline-error", role="alert"),
    ], className="panel")


def _execution(plan) -> html.Div:
    """Execute (an approved plan), Pause, Resume and Cancel (an executing one) for who may
    execute, and the progress bar, refreshed every two seconds while it executes. A shrink
    says what executing does on this cluster; where it cannot delete partitions it offers
    its migration, whose steps operators check off here."""
    state, p = _execution_state(plan)
    hidden = _hidden_buttons(plan, p, may(auth.current_actor(), "execute", plan.author) is None)
    buttons = [html.Button(label, id=i, className="button" + (" primary" if i == ids.PV_EXECUTE
                                                               else ""), hidden=h)
               for (label, i), h in zip(_BUTTONS, hidden, strict=True)]
    options, value = _checklist(p)
    return html.Div([
        html.H3("Execution"),
        html.P(NOT_YET, className="hint") if plan.state == "proposed" else None,
        html.P(shrink_execution.what_happens(_gateway(plan.cluster)), className="hint")
        if plan.kind == "shrink" else None,
        html.Div(buttons, className="form-row"),
        html.Div(id=ids.PV_EXEC_RESULT, className="inline-error", role="alert"),
        html.Div(progress_view(p, ids.PV_PROGRESS_BAR) if state else None,
                 id=ids.PV_PROGRESS),
        dcc.Checklist(id=ids.PV_CHECKLIST, options=options, value=value,
                      className="checklist", labelClassName="check-step"),
        html.Div(id=ids.PV_CHECK_RESULT, className="inline-error", role="alert"),
        dcc.Interval(id=ids.PV_TICK, interval=2000, disabled=plan.state != "executing"),
    ], id=ids.PV_EXECUTION, className="panel")


# said as a rule, so it stays true when the plan is approved without reloading the page
NOT_YET = ("A plan can be executed once someone other than its author has approved it, "
           "before it expires; its progress is shown here.")
_BUTTONS = (("Execute", ids.PV_EXECUTE), ("Pause", ids.PV_PAUSE), ("Resume", ids.PV_RESUME),
            ("Cancel", ids.PV_CANCEL), ("Run the migration instead", ids.PV_MIGRATE))


def _gateway(cluster: str):
    return runtime.current().gateways.get(cluster)


def _migrating(p: dict | None) -> bool:
    return ((p or {}).get("shrink") or {}).get("mode") == "migration"


def _checklist(p: dict | None) -> tuple[list[dict], list[int]]:
    """A migration's steps as checklist options (step 1 is Railyard's; done steps stay
    checked), and the steps done."""
    if not _migrating(p):
        return [], []
    s = p["shrink"]
    running = p["state"] == "running"
    return ([{"label": f" {st['step']}. {st['text']}", "value": st["step"],
              "disabled": st["done"] or st["step"] == 1 or not running} for st in s["steps"]],
            [st["step"] for st in s["steps"] if st["done"]])


def _execution_state(plan) -> tuple[str | None, dict | None]:
    p = execution.progress(runtime.current().plan_store(), plan.id)
    return (p["state"] if p else None), p


def _hidden_buttons(plan, p: dict | None, can: bool) -> list[bool]:
    """Which of Execute, Pause, Resume, Cancel and Run the migration to hide: a shrink
    cannot pause; its migration is offered where the cluster cannot delete partitions."""
    running = p["state"] if p else None
    shrink = plan.kind == "shrink"
    migration = shrink and shrink_execution.mode_on(_gateway(plan.cluster)) == "migration"
    return [not (can and plan.state == "approved"),
            not (can and not shrink and plan.state == "executing" and running == "running"),
            not (can and not shrink and plan.state == "executing"
                 and running in ("pausing", "paused")),
            not (can and plan.state == "executing"),
            not (can and migration and plan.state == "approved")]


@dash.callback(Output(ids.PV_EXEC_RESULT, "children"), Output(ids.PV_EXEC_RESULT, "className"),
               Output(ids.PV_PROGRESS, "children"), Output(ids.PV_STATE, "children",
                                                           allow_duplicate=True),
               Output(ids.PV_STATE, "className", allow_duplicate=True),
               Output(ids.PV_EXECUTE, "hidden"), Output(ids.PV_PAUSE, "hidden"),
               Output(ids.PV_RESUME, "hidden"), Output(ids.PV_CANCEL, "hidden"),
               Output(ids.PV_MIGRATE, "hidden"), Output(ids.PV_TICK, "disabled"),
               Output(ids.PV_CHECKLIST, "options"), Output(ids.PV_CHECKLIST, "value"),
               Input(ids.PV_EXECUTE, "n_clicks"), Input(ids.PV_PAUSE, "n_clicks"),
               Input(ids.PV_RESUME, "n_clicks"), Input(ids.PV_CANCEL, "n_clicks"),
               Input(ids.PV_MIGRATE, "n_clicks"),
               Input(ids.PV_TICK, "n_intervals"), State(ids.PV_PLAN, "data"),
               prevent_initial_call=True)
def run_plan(_execute, _pause, _resume, _cancel, _migrate, _tick, shown):
    """Execute, pause, resume, cancel or run a shrink's migration through the services
    (which decide whether this user may), or just refresh the progress on the timer."""
    if not shown:
        return (no_update,) * 13
    clicks = {ids.PV_EXECUTE: _execute, ids.PV_PAUSE: _pause, ids.PV_RESUME: _resume,
              ids.PV_CANCEL: _cancel, ids.PV_MIGRATE: _migrate}
    action = dash.ctx.triggered_id
    return execution_answer(action if clicks.get(action) else None, shown["id"])


def execution_answer(action: str | None, plan_id: int) -> tuple:
    """Take ``action`` (a button id; None: only refresh) and answer run_plan's outputs."""
    rt = runtime.current()
    store, who = rt.plan_store(), auth.current_actor()
    message, css = "", "inline-done"
    try:
        if action in (ids.PV_EXECUTE, ids.PV_MIGRATE):
            cluster = plan_service.get(store, plan_id).cluster
            plan_service.execute(store, who, plan_id, gateway=_gateway(cluster),
                                         topics_of=rt.topics_of,
                                         configs_of=rt.throttle_configs_of,
                                         migration=action == ids.PV_MIGRATE)
        elif action == ids.PV_PAUSE:
            execution.pause(store, who, plan_id)
        elif action == ids.PV_RESUME:
            execution.resume(store, who, plan_id)
        elif action == ids.PV_CANCEL:
            plan_service.request_cancel(store, who, plan_id)
        if action is not None:
            message = f"Done: {_BUTTONS_BY_ID[action].lower()} sent."
    except plan_views.REFUSALS as e:
        message, css = f"Refused: {e}", "inline-error"
    plan = plan_service.get(store, plan_id)
    _, p = _execution_state(plan)
    hidden = _hidden_buttons(plan, p, may(who, "execute", plan.author) is None)
    return (message, css, progress_view(p, ids.PV_PROGRESS_BAR) if p else None, plan.state,
            f"state state-{plan.state}", *hidden, plan.state != "executing",
            *(_checklist(p) if _migrating(p) else (no_update, no_update)))


@dash.callback(Output(ids.PV_CHECK_RESULT, "children"), Output(ids.PV_CHECK_RESULT, "className"),
               Output(ids.PV_CHECKLIST, "options", allow_duplicate=True),
               Output(ids.PV_CHECKLIST, "value", allow_duplicate=True),
               Input(ids.PV_CHECKLIST, "value"), State(ids.PV_PLAN, "data"),
               prevent_initial_call=True)
def check_step(value, shown):
    """An operator checks a migration step off: the service decides whether they may and
    whether it is that step's turn, and audits it."""
    store, who = runtime.current().plan_store(), auth.current_actor()
    _, p = _execution_state(plan_service.get(store, shown["id"])) if shown else (None, None)
    done = {st["step"] for st in p["shrink"]["steps"] if st["done"]} if _migrating(p) else set()
    if not set(value or []) - done:  # the refresh setting what is done: no click
        return (no_update,) * 4
    message, css = "", "inline-done"
    for step in sorted(set(value or []) - done):
        try:
            shrink_execution.check_step(store, who, shown["id"], step - 1)
            message = f"Done: step {step} checked off."
        except plan_views.REFUSALS as e:
            message, css = f"Refused: {e}", "inline-error"
            break
    _, p = _execution_state(plan_service.get(store, shown["id"]))
    return (message, css, *_checklist(p))


_BUTTONS_BY_ID = {i: label for label, i in _BUTTONS}
_BUTTONS_BY_ID[ids.PV_MIGRATE] = "Run the migration"


def _decisions(plan) -> html.Div | str:
    if not plan.decisions:
        return "No decision yet."
    frame = pd.DataFrame([{"user": d.user, "decision": d.decision, "comment": d.comment,
                           "sha256 seen": d.sha256 or "", "at": _time(d.at)}
                          for d in plan.decisions])
    return tables.grid(frame, height=140)


def _audit(plan_id: int) -> html.Div | str:
    entries = plan_service.audit_entries(runtime.current().plan_store(), plan=plan_id)
    return plan_views.audit_grid([e.to_dict() for e in entries], height=220)


def _exact_json(plan) -> html.Details:
    """The stored content as it is hashed, filled in when first opened (a reassignment's
    first JSON_ENTRIES partitions when longer: the download has every one)."""
    count = plan.preview.get("partitions") if plan.kind == "reassignment" else None
    summary = "The exact plan JSON"
    if count is not None and count > JSON_ENTRIES:
        summary += (f" (the first {JSON_ENTRIES:,} of {count:,} partitions: Download plan "
                    "JSON has all of them)")
    return html.Details([html.Summary(summary, id=ids.PV_JSON_OPEN),
                         html.Pre(id=ids.PV_JSON, className="plan-json")],
                        className="panel")


def exact_json_text(content: dict, kind: str) -> str:
    """What the exact JSON panel shows of ``content``."""
    if kind != "reassignment":
        return json.dumps(content, indent=1)
    entries = content["partitions"]
    if len(entries) <= JSON_ENTRIES:
        return plan_preview.kafka_json_text(content)
    return plan_preview.kafka_json_text({**content, "partitions": entries[:JSON_ENTRIES]})


@dash.callback(Output(ids.PV_JSON, "children"), Input(ids.PV_JSON_OPEN, "n_clicks"),
               State(ids.PV_PLAN, "data"), State(ids.PV_JSON, "children"),
               prevent_initial_call=True)
def open_json(clicks, shown, text):
    """The exact JSON, read from the store the first time the panel is opened."""
    if not clicks or not shown or text:
        return no_update
    try:
        plan = plan_service.get(runtime.current().plan_store(), shown["id"])
    except plan_views.REFUSALS as e:
        return f"Cannot show the plan: {e}"
    return exact_json_text(plan.content, plan.kind)


def _time(t) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S UTC")


@dash.callback(Output(ids.PV_RESULT, "children"), Output(ids.PV_RESULT, "className"),
               Output(ids.PV_STATE, "children"),
               Output(ids.PV_STATE, "className"), Output(ids.PV_DECISIONS, "children"),
               Output(ids.PV_AUDIT, "children"), Output(ids.PV_APPROVE, "hidden"),
               Output(ids.PV_REJECT, "hidden"), Output(ids.PV_WITHDRAW, "hidden"),
               Input(ids.PV_APPROVE, "n_clicks"), Input(ids.PV_REJECT, "n_clicks"),
               Input(ids.PV_WITHDRAW, "n_clicks"), State(ids.PV_PLAN, "data"),
               State(ids.PV_COMMENT, "value"), prevent_initial_call=True)
def decide(_approve, _reject, _withdraw, shown, comment):
    """Approve (with the sha256 this page showed), reject or withdraw; the service
    decides whether this user may, and says which rule failed when not."""
    action = dash.ctx.triggered_id
    clicked = {ids.PV_APPROVE: _approve, ids.PV_REJECT: _reject, ids.PV_WITHDRAW: _withdraw}
    if not shown or not clicked.get(action):  # buttons appearing are not clicks
        return (no_update,) * 9
    rt = runtime.current()
    store, who, comment = rt.plan_store(), auth.current_actor(), comment or ""
    try:
        if action == ids.PV_APPROVE:
            plan = plan_service.approve(store, who, shown["id"], sha256=shown["sha256"],
                                        comment=comment, topics_of=rt.topics_of,
                                        configs_of=rt.throttle_configs_of)
        elif action == ids.PV_REJECT:
            plan = plan_service.reject(store, who, shown["id"], comment=comment,
                                       sha256=shown["sha256"])
        else:
            plan = plan_service.withdraw(store, who, shown["id"])
    except plan_views.REFUSALS as e:
        return (f"Refused: {e}", "inline-error") + (no_update,) * 7
    return (f"Done: plan {plan.id} is {plan.state}.", "inline-done", plan.state,
            f"state state-{plan.state}",
            _decisions(plan), _audit(plan.id), True, True, True)
