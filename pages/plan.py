"""/plans/<id>: one stored plan at a URL to share: its state, the preview it was proposed
with, the exact JSON and its sha256, the decisions and the audit trail; Approve and
Reject for approvers who did not write it (approve sends the sha256 this page showed),
Withdraw for its author, Execute and the rest for who may execute. Every rule is the
plan services'; the pieces are dashboard/plan_views' (stored, kinds).
"""

from __future__ import annotations

import dash
from dash import Input, Output, State, dcc, html, no_update

from backend.errors import NotFound, Unavailable
from backend.services import plans as plan_service
from components import banners
from dashboard import auth, ids, runtime
from dashboard.plan_views import grids, kinds, stored
from dashboard.plan_views.kinds.reassignment import JSON_ENTRIES
from dashboard.plan_views.shared import REFUSALS
from dashboard.plan_views.stored import (  # the page's own answers, for its callbacks
    NOT_YET,
    DecisionAnswer,
    ExecutionAnswer,
    execution_answer,
)

# what the page shows and answers, beside its callbacks below
__all__ = ["JSON_ENTRIES", "NOT_YET", "execution_answer"]

dash.register_page(__name__, path_template="/plans/<plan_id>", title="Railyard · Plan",
                   name="Plan")


# what the timer writes besides the progress: labels, never what a click changes (n_clicks,
# a box's value) nor a panel holding a control. dash-renderer holds a callback whose input
# is an output of one in flight (getReadyCallbacks); the refresh's answer would then put
# back a control that was not clicked, and the held click would read that.
THROTTLE_OUTPUTS = (Output(ids.PV_THROTTLE, "children"), Output(ids.PV_THROTTLE_PLOT, "children"),
                    Output(ids.PV_THROTTLE_SWITCH, "children"),
                    Output(ids.PV_THROTTLE_SWITCH, "value"),
                    Output(ids.PV_THROTTLE_SWITCH, "hidden"))
NEXT_STEP_OUTPUTS = (Output(ids.PV_STEPS, "children"), Output(ids.PV_CHECK_NEXT, "children"),
                     Output(ids.PV_CHECK_NEXT, "value"), Output(ids.PV_CHECK_NEXT, "hidden"),
                     Output(ids.PV_STEPS, stored.STEPS_SHOWN))


def _also(outputs: tuple[Output, ...]) -> tuple[Output, ...]:
    """The same outputs for a click's callback, beside the timer's that writes them."""
    return tuple(Output(o.component_id, o.component_property, allow_duplicate=True)
                 for o in outputs)


def layout(plan_id: str | None = None, **_query) -> html.Div:
    """A large plan paints from its stored preview numbers: its content and basis (a
    100k-move plan's megabytes of JSON) are decoded when the grid first asks for rows
    and when the exact JSON is opened, not before the page shows."""
    try:
        plan = stored.load(int(plan_id))
    except (ValueError, TypeError):
        return _missing(f"'{plan_id}' is not a plan number")
    except (NotFound, Unavailable) as e:
        return _missing(str(e))
    who = auth.current_actor()
    progress = stored.progress_of(plan)  # read once: the execution panel and the badge
    head = [stored.facts(plan, progress),
            stored.decision_panel(plan, who, stored.allowed(plan, who)),
            stored.execution_panel(plan, who, progress)]
    state, state_class = stored.badge(plan.state, progress)
    return html.Div([
        dcc.Store(id=ids.PLAN_TOKEN, data=grids.stored_ref(plan.id)),
        dcc.Store(id=ids.PV_PLAN, data={"id": plan.id, "sha256": plan.sha256}),
        html.H1([f"Plan {plan.id}: {plan.title} ",
                 html.Span(state, id=ids.PV_STATE, className=state_class)]),
        html.Div(id=ids.PV_BANNERS),
        *kinds.block(plan.kind, kinds.stored_draft(plan), head),
        html.Div([html.H3("Decisions"), html.Div(stored.decisions(plan), id=ids.PV_DECISIONS)],
                 className="panel"),
        html.Div([html.H3("Audit trail"), stored.audit_panel(plan.id)], className="panel"),
        stored.exact_json_panel(plan),
    ])


# what basis_warning turns off when the plan is stale (the service refuses them anyway)
STALE_OFF = (ids.PV_APPROVE, ids.PV_EXECUTE, ids.PV_MIGRATE)


@dash.callback(Output(ids.PV_BANNERS, "children"),
               *(Output(i, "disabled", allow_duplicate=True) for i in STALE_OFF),
               Output(ids.PV_NOTE, "children", allow_duplicate=True),
               Input(ids.PV_PLAN, "data"), Input(ids.PV_STATE, "children"),
               prevent_initial_call="initial_duplicate")
def basis_warning(shown, _state=None):
    """Once the page has painted, and again when the plan's state changes: whether the
    cluster still is what the plan was proposed on (approving and executing re-check it,
    and refuse a changed one). A stale plan's Approve and Execute are disabled and the
    note under Approve says why; the service still refuses them on its own. A plan past
    approving and executing (rejected on this page, say) has no such warning left."""
    fresh = (None, *(no_update,) * (len(STALE_OFF) + 1))
    if not shown:
        return fresh
    rt = runtime.current()
    try:
        why = plan_service.stale(rt.plan_store(), shown["id"], rt.topics_of,
                                 rt.throttle_configs_of)
    except (NotFound, Unavailable):  # the page says those; Approve would too
        return fresh
    if not why:
        return fresh
    return (banners.banner(f"Approve and Execute will be refused: {why}", "warning"),
            *(True,) * len(STALE_OFF), stored.STALE_NOTE)


def _missing(message: str) -> html.Div:
    return html.Div([html.H1("Plan"), banners.banner(message, "error")])


@dash.callback(Output(ids.PV_EXEC_RESULT, "children"), Output(ids.PV_EXEC_RESULT, "className"),
               Output(ids.PV_PROGRESS, "children"), Output(ids.PV_STATE, "children",
                                                           allow_duplicate=True),
               Output(ids.PV_STATE, "className", allow_duplicate=True),
               Output(ids.PV_EXECUTE, "hidden"), Output(ids.PV_PAUSE, "hidden"),
               Output(ids.PV_RESUME, "hidden"), Output(ids.PV_CANCEL, "hidden"),
               Output(ids.PV_MIGRATE, "hidden"), Output(ids.PV_TICK, "disabled"),
               *NEXT_STEP_OUTPUTS,
               Input(ids.PV_EXECUTE, "n_clicks"), Input(ids.PV_PAUSE, "n_clicks"),
               Input(ids.PV_RESUME, "n_clicks"),
               Input(ids.PV_CANCEL_CONFIRM, "submit_n_clicks"),
               Input(ids.PV_MIGRATE, "n_clicks"),
               Input(ids.PV_TICK, "n_intervals"), State(ids.PV_PLAN, "data"),
               State(ids.PV_STEPS, stored.STEPS_SHOWN),
               State(ids.PV_EXEC_RESULT, "children"), prevent_initial_call=True)
def run_plan(_execute, _pause, _resume, _cancel, _migrate, _tick, shown, steps_shown=None,
             said=None):
    """Execute, pause, resume, cancel or run a shrink's migration, or just refresh the
    progress on the timer (outputs: stored.ExecutionAnswer; ``steps_shown``: the mark of
    the migration steps the page showed when it asked, and ``said`` its result line:
    execution_answer)."""
    if not shown:
        return ExecutionAnswer.unchanged()
    clicks = {ids.PV_EXECUTE: _execute, ids.PV_PAUSE: _pause, ids.PV_RESUME: _resume,
              ids.PV_CANCEL_CONFIRM: _cancel, ids.PV_MIGRATE: _migrate}
    # a click that came with a tick is the click (triggered_id would name either)
    action = next((i for i in dash.ctx.triggered_prop_ids.values() if clicks.get(i)), None)
    if action == ids.PV_CANCEL_CONFIRM:  # Cancel is sent once its dialog is confirmed
        action = ids.PV_CANCEL
    return execution_answer(action, shown["id"], steps_shown, said)


# No refresh is sent while a click's answer is out: run_plan answers both, and
# dash-renderer drops a callback's answer once the same callback is asked again, so a
# refresh due before a slow server answered Pause would lose "Pausing: ..." for good.
# The click's answer starts the timer again (its PV_TICK ``disabled``); a click the server
# failed on (a 500, a refused request, no answer) has no such answer, and assets/railyard.js
# starts the timer again then (startPlanTimer): the page goes on following the plan.
dash.clientside_callback(
    "function () { return true; }",
    Output(ids.PV_TICK, "disabled", allow_duplicate=True),
    Input(ids.PV_EXECUTE, "n_clicks"), Input(ids.PV_PAUSE, "n_clicks"),
    Input(ids.PV_RESUME, "n_clicks"), Input(ids.PV_CANCEL_CONFIRM, "submit_n_clicks"),
    Input(ids.PV_MIGRATE, "n_clicks"), prevent_initial_call=True)


@dash.callback(Output(ids.PV_AUDIT, "children", allow_duplicate=True),
               Output(ids.PV_AUDIT, stored.AUDIT_SEEN), Input(ids.PV_TICK, "n_intervals"),
               Input(ids.PV_TICK, "disabled"), State(ids.PV_PLAN, "data"),
               State(ids.PV_AUDIT, stored.AUDIT_SEEN), prevent_initial_call=True)
def follow_audit(_tick, _stopped, shown, seen):
    """The audit trail follows the plan on the timer while it executes (execute, configs
    set, batches), drawn again only when it has new rows; and once more when run_plan
    stops the timer (the timer's ``disabled`` is run_plan's output, so this runs after
    it): the ending's rows are shown."""
    return stored.audit_refresh(shown["id"], seen) if shown else (no_update, no_update)


@dash.callback(*THROTTLE_OUTPUTS, Input(ids.PV_TICK, "n_intervals"),
               State(ids.PV_PLAN, "data"), State(ids.PV_THROTTLE_SWITCH, "value"),
               State(ids.PV_THROTTLE_SWITCH, "hidden"), prevent_initial_call=True)
def refresh_throttle(_tick, shown, mode, hidden):
    """The throttle's lines, chart and switch, drawn again while the plan executes (the
    switch only when it is not the one the page showed when it asked)."""
    return stored.throttle_answer(shown["id"], switch_shown=(mode, hidden))[:-1] if shown \
        else (no_update,) * len(THROTTLE_OUTPUTS)


@dash.callback(Output(ids.PV_NOTE, "children", allow_duplicate=True),
               Input(ids.PV_STATE, "children"), prevent_initial_call=True)
def follow_state(state):
    """The note under Approve follows the state shown: once Execute (or the executor)
    moves the plan on, it no longer says the plan is approved. A proposed plan's note is
    decide's (it depends on who decided). The note names the plan's state, not its
    execution's ("executing · paused")."""
    plan_state = (state or "").split(stored.BADGE_SEP)[0]
    return no_update if plan_state in ("", "proposed") else stored.settled_note(plan_state)


@dash.callback(Output(ids.PV_FACTS, "children"), Output(ids.PV_FACTS, stored.FACTS_STATE),
               Input(ids.PV_STATE, "children"), State(ids.PV_PLAN, "data"),
               State(ids.PV_FACTS, stored.FACTS_STATE), prevent_initial_call=True)
def follow_end(state, shown, drawn=None):
    """The facts follow the plan as its badge moves on (an approve, an Execute, a
    completion seen by the refresh, a reject, a withdraw): a proposed plan says when it
    expires, an approved one when it must be started by, an executing one when it
    started, an ended one when it ended (stored.when). The timer writes the badge every
    two seconds while the plan executes: they are drawn again only when the plan's state
    is not the one they were drawn for (``drawn``, their FACTS_STATE mark; WAITING, an
    execution not started yet, is not "executing"). Facts without the mark are drawn
    again once the plan has ended."""
    plan_state = (state or "").split(stored.BADGE_SEP)[0]
    if not shown or not plan_state or plan_state == drawn or (
            drawn is None and plan_state not in stored.TERMINAL):
        return no_update
    return stored.facts_now(shown["id"])


@dash.callback(*_also(THROTTLE_OUTPUTS), Output(ids.PV_THROTTLE_RESULT, "children"),
               Input(ids.PV_THROTTLE_SWITCH, "n_clicks"),
               State(ids.PV_THROTTLE_SWITCH, "value"), State(ids.PV_PLAN, "data"),
               prevent_initial_call=True)
def switch_throttle(clicks, mode, shown):
    """Switch a running plan's throttle to the mode its button showed. A callback of its
    own: sharing one with the refresh, a click that came with a tick was read as the tick,
    and a tick answered after the click dropped the click's answer."""
    if not shown or not clicks:
        return (no_update,) * (len(THROTTLE_OUTPUTS) + 1)
    return stored.throttle_answer(shown["id"], switch_to=mode)


@dash.callback(Output(ids.PV_CANCEL_CONFIRM, "displayed"), Input(ids.PV_CANCEL, "n_clicks"),
               prevent_initial_call=True)
def ask_cancel(clicks):
    """Cancel on an executing plan asks first: it stops the moves in flight."""
    return bool(clicks)


@dash.callback(Output(ids.PV_CHECK_RESULT, "children"), Output(ids.PV_CHECK_RESULT, "className"),
               *_also(NEXT_STEP_OUTPUTS),
               Input(ids.PV_CHECK_NEXT, "n_clicks"), State(ids.PV_CHECK_NEXT, "value"),
               State(ids.PV_PLAN, "data"), prevent_initial_call=True)
def check_step(clicks, step, shown):
    """An operator checks the migration's next step off (the one its button showed)."""
    if not shown or not clicks:
        return (no_update,) * (len(NEXT_STEP_OUTPUTS) + 2)
    return stored.check_step(step, shown["id"])


@dash.callback(Output(ids.PV_JSON, "children"), Input(ids.PV_JSON_OPEN, "n_clicks"),
               State(ids.PV_PLAN, "data"), State(ids.PV_JSON, "children"),
               prevent_initial_call=True)
def open_json(clicks, shown, text):
    """The exact JSON, read from the store the first time the panel is opened."""
    if not clicks or not shown or text:
        return no_update
    try:
        plan = plan_service.get(runtime.current().plan_store(), shown["id"])
    except REFUSALS as e:
        return f"Cannot show the plan: {e}"
    return stored.exact_json_text(plan.content, plan.kind)


@dash.callback(Output(ids.PV_RESULT, "children"), Output(ids.PV_RESULT, "className"),
               Output(ids.PV_STATE, "children"),
               Output(ids.PV_STATE, "className"), Output(ids.PV_DECISIONS, "children"),
               Output(ids.PV_AUDIT, "children"), Output(ids.PV_APPROVE, "hidden"),
               Output(ids.PV_REJECT, "hidden"), Output(ids.PV_WITHDRAW, "hidden"),
               Output(ids.PV_APPROVALS, "children"), Output(ids.PV_NOTE, "children"),
               Output(ids.PV_COMMENT_FIELD, "hidden"), Input(ids.PV_APPROVE, "n_clicks"),
               Input(ids.PV_REJECT, "n_clicks"),
               Input(ids.PV_WITHDRAW, "n_clicks"), State(ids.PV_PLAN, "data"),
               State(ids.PV_COMMENT, "value"), prevent_initial_call=True)
def decide(_approve, _reject, _withdraw, shown, comment):
    """Approve (with the sha256 this page showed), reject or withdraw; the service
    decides whether this user may, and says which rule failed when not."""
    action = dash.ctx.triggered_id
    clicked = {ids.PV_APPROVE: _approve, ids.PV_REJECT: _reject, ids.PV_WITHDRAW: _withdraw}
    if not shown or not clicked.get(action):  # buttons appearing are not clicks
        return DecisionAnswer(no_update, no_update)
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
            plan = plan_service.withdraw(store, who, shown["id"], comment=comment)
    except REFUSALS as e:
        return DecisionAnswer(f"Refused: {e}", "inline-error")
    counted = stored.approvals(plan)
    return DecisionAnswer(f"Done: plan {plan.id} is {plan.state}"
                          f"{f': it {counted}' if plan.state == 'proposed' else ''}.",
                          "inline-done", plan.state, f"state state-{plan.state}",
                          stored.decisions(plan), stored.audit(plan.id), True, True, True,
                          counted, stored.decision_note(plan, who, stored.allowed(plan, who)),
                          comment_hidden=True)  # with the buttons it goes with
