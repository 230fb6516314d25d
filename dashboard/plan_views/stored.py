"""A stored plan's page (/plans/<id>): its facts, the decision and execution panels with
only the buttons the services allow this user now (backend/services/plan_actions), the
answers of its callbacks as named tuples, its decisions, audit trail and exact JSON."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import NamedTuple

import pandas as pd
from dash import dcc, html, no_update

from backend.errors import BadInput
from backend.services import approval_status, execution, plan_actions, shrink_execution
from backend.services import plans as plan_service
from backend.services.plan_kinds import kind_of
from backend.store.queue import PAUSED
from backend.store.store import Plan
from backend.store.workflow import TERMINAL, Actor
from components import tables
from dashboard import auth, ids, runtime
from dashboard.plan_views import kinds
from dashboard.plan_views.progress import progress_view
from dashboard.plan_views.shared import REFUSALS, audit_grid
from dashboard.plan_views.throttle import (
    NO_SWITCH,
    SWITCH_UNCHANGED,
    ThrottleView,
    switch_button,
    throttle_view,
)

AUDIT_ROWS_SHOWN = 200  # a plan's first audit rows on its page; /audit pages through all
AUDIT_SEEN = "data-rows"  # the audit panel's mark: how many rows its trail had when drawn
FACTS_STATE = "data-state"  # the facts' mark: the plan state they were drawn for (mark)
STEPS_SHOWN = "data-shown"  # the migration steps' mark: what they showed when drawn (steps_mark)
WAITING = "executing, not started"  # the mark of an executing plan the executor has not started
# said as a rule, so it stays true when the plan is approved without reloading the page
NOT_YET = ("A plan can be executed once someone other than its author has approved it, "
           "before it expires; its progress is shown here.")
# the execution panel's buttons: (label, id, the action plan_actions allows)
BUTTONS = (("Execute", ids.PV_EXECUTE, "execute"), ("Pause", ids.PV_PAUSE, "pause"),
           ("Resume", ids.PV_RESUME, "resume"), ("Cancel", ids.PV_CANCEL, "cancel"),
           ("Run the migration instead", ids.PV_MIGRATE, "migrate"))
SENT = {ids.PV_EXECUTE: "execute", ids.PV_CANCEL: "cancel", ids.PV_MIGRATE: "run the migration"}
# the clicks that start an execution: their line ("Done: execute sent.") gives way once the
# refresh shows the execution (execution_answer)
STARTS = (ids.PV_EXECUTE, ids.PV_MIGRATE)
# an executed plan's ends -> the class of the line saying so (ended_text)
ENDED = {"completed": "inline-done", "cancelled": "inline-done", "failed": "inline-error"}
BADGE_SEP = " · "  # "executing · paused": the plan's state, then its execution's
# the note under Approve once the page found the cluster changed under the plan (the
# banner above says how: plans.stale); Approve and Execute are disabled then
STALE_NOTE = ("Approve and Execute are off: the cluster changed since this plan was proposed "
              "(above), and a plan is approved and run only for the cluster it was computed "
              "on: re-propose it for the cluster as it is now.")


class Buttons(NamedTuple):
    """Which of the execution panel's buttons are hidden."""

    execute: bool
    pause: bool
    resume: bool
    cancel: bool
    migrate: bool


class NextStep(NamedTuple):
    """The button that checks a migration's next step off: its label, the step a click
    checks off (the one its label showed: a step that became next while the click was on
    its way is refused, not checked) and whether it is hidden. Like the throttle switch, it
    is never inside what the timer draws again."""

    label: object
    step: object  # the button's value: the step's number as text
    hidden: object


NO_STEP = NextStep("", "", True)
STEP_UNCHANGED = NextStep(no_update, no_update, no_update)


class ExecutionAnswer(NamedTuple):
    """What run_plan answers (its outputs, in order)."""

    message: object  # no_update on the timer's refresh: the last click's answer stays
    css: object
    progress: object
    state: str
    state_class: str
    hidden: Buttons  # spread into five outputs by ``outputs``
    tick_disabled: bool
    steps: object
    next_step: NextStep  # spread into three
    steps_shown: object  # the steps' mark (steps_mark)

    def outputs(self) -> tuple:
        """The answer as Dash's outputs: the buttons and the next step spread one by one."""
        return (*self[:5], *self.hidden, self.tick_disabled, self.steps, *self.next_step,
                self.steps_shown)

    @classmethod
    def unchanged(cls) -> tuple:
        return (no_update,) * (len(cls._fields) + len(Buttons._fields) + len(NextStep._fields)
                               - 2)


class DecisionAnswer(NamedTuple):
    """What decide answers (its outputs, in order)."""

    message: str
    css: str
    state: object = no_update
    state_class: object = no_update
    decisions: object = no_update
    audit: object = no_update
    approve_hidden: object = no_update
    reject_hidden: object = no_update
    withdraw_hidden: object = no_update
    approvals: object = no_update
    note: object = no_update
    comment_hidden: object = no_update


def load(plan_id: int) -> Plan:
    """The plan as its page paints it: a large plan (a reassignment with a stored preview)
    without its content and basis, decoded when the grid or the JSON first asks."""
    store = runtime.current().plan_store()
    plan = plan_service.summary(store, plan_id)
    if not kind_of(plan.kind).large or "partitions" not in plan.preview:
        plan = plan_service.get(store, plan.id)  # small, or proposed without a preview
    return plan


def allowed(plan: Plan, who: Actor, progress: dict | None = None) -> frozenset[str]:
    return plan_actions.allowed_actions(
        plan, who, running=progress["state"] if progress else None,
        gateway=runtime.current().gateways.get(plan.cluster))


def facts(plan: Plan, p: dict | None = None) -> html.Dl:
    """The plan's facts, the time its state has to say among them (``when``); marked with
    the state they were drawn for (FACTS_STATE, ``mark``: the page draws them again when
    the plan moves on)."""
    rows = [("Kind", plan.kind), ("Cluster", plan.cluster), ("Author", plan.author),
            ("Proposed", time_of(plan.created_at)), when(plan, p),
            # bytes/s as Kafka and the API count them, MB/s as the propose form asks them
            ("Throttle", "-" if plan.throttle is None else f"{plan.throttle:,} B/s (" + format(
                plan.throttle / 1e6, ",.6f").rstrip("0").rstrip(".") + " MB/s)" + (
                f" (adaptive: the ceiling; floor {plan.throttle_mode['floor']:,} B/s, " + format(
                    plan.throttle_mode["floor"] / 1e6, ",.6f").rstrip("0").rstrip(".")
                + " MB/s)" if plan.throttle_mode else "")),
            ("sha256", html.Code(plan.sha256, id=ids.PV_SHA)),
            ("Approvals", html.Span(approvals(plan), id=ids.PV_APPROVALS))]
    start, outside = plan_service.start_terms(runtime.current().plan_store(), plan) \
        if kind_of(plan.kind).large else (None, False)
    if outside:  # signed with the plan: it starts batches at any time
        rows.insert(5, ("Windows", "may run outside the cluster's execution windows"))
    if start is not None:  # signed with the plan: no batch starts before it
        rows.insert(5, ("Not before", time_of(datetime.fromtimestamp(start, UTC))))
    return html.Dl([part for k, v in rows for part in (html.Dt(k), html.Dd(v))],
                   className="facts", id=ids.PV_FACTS, **{FACTS_STATE: mark(plan, p)})


def when(plan: Plan, p: dict | None) -> tuple[str, str]:
    """The time a plan's state has to say, as a fact (name, time). A plan expires only
    while it waits (workflow.TRANSITIONS["expire"]: proposed or approved): a proposed plan
    expires at its expires_at unless approved by then; an approved one must be started by
    its expires_at (expiry_hours after the approval, plans.decide), or it expires. An
    executing plan no longer expires ("Expires" with a date to come read as if it could):
    it says when its execution started (``p``: its progress), or that the executor has not
    started it yet and when it was sent to execute (it starts once no other plan runs on
    its cluster: executor/thread.py). An ended plan says when it ended."""
    if plan.state in TERMINAL:
        return plan.state.capitalize(), time_of(ended_at(plan, p))
    if plan.state == "executing":
        start = started_at(p)
        return "Started", time_of(start) if start else \
            f"not yet: sent to execute {time_of(sent_at(plan))}"
    if plan.state == "approved":
        return "Start by", time_of(plan.expires_at)
    return "Expires", time_of(plan.expires_at)


def mark(plan: Plan, p: dict | None) -> str:
    """What the facts were drawn for: the plan's state, or WAITING for an executing plan
    whose execution has not started (its facts change once it has)."""
    return WAITING if plan.state == "executing" and started_at(p) is None else plan.state


def facts_now(plan_id: int) -> tuple[list, str]:
    """The facts of a plan as it is now (their rows) and their mark: the page's facts
    follow a plan that moved on while it was open."""
    plan = plan_service.summary(runtime.current().plan_store(), plan_id)
    p = progress_of(plan)
    return facts(plan, p).children, mark(plan, p)


def approvals(plan: Plan) -> str:
    """'needs 2 approvers incl. an admin: 1 of 2 so far: bob' (its cluster's approval
    rules gave it that requirement when it was proposed)."""
    status = approval_status.status(plan)
    rule = plan.progress().requirement.rule
    return status.text + ("" if rule == "default" else f" (rule '{rule}')")


def badge(plan_state: str, p: dict | None) -> tuple[str, str]:
    """The state badge's text and class: the plan's state, and the execution's while it
    pauses or is paused (the plan stays executing then; Resume puts it back)."""
    running = p["state"] if p else None
    if plan_state == "executing" and running in PAUSED:
        return (f"{plan_state}{BADGE_SEP}{running}",
                f"state state-{plan_state} state-{running}")
    return plan_state, f"state state-{plan_state}"


def settled_note(state: str) -> str:
    """The decision note of a plan past proposed (decided, executing or ended)."""
    return f"This plan is {state}: there is nothing left to decide."


def decision_note(plan: Plan, who: Actor, may: frozenset[str]) -> str:
    """What deciding means for ``who`` now, or why they cannot (also after their own
    decision, which changes it)."""
    if plan.state != "proposed":
        return settled_note(plan.state)
    if who.name == plan.author:
        return "You wrote this plan: someone else with the approver role approves it."
    if "reject" in may and "approve" not in may:  # may decide, but would not count
        return f"{plan.progress().refusal(who)}."
    if "approve" not in may:
        return f"Signed in as {who.name} ({who.role}): approvers and admins decide plans."
    return (f"Approving approves exactly the plan below, sha256 {plan.sha256[:12]}..., "
            f"for the cluster as it is now. This plan {approvals(plan)}.")


def decision_panel(plan: Plan, who: Actor, may: frozenset[str]) -> html.Div:
    """Approve/Reject (approvers, not the author) and Withdraw (the author) while the
    plan is proposed. All three are always in the page (a callback needs its inputs),
    hidden from whoever may not use them; the service refuses them anyway."""
    can_decide, can_withdraw = "approve" in may, "withdraw" in may
    return html.Div([
        html.Div([
            html.Label([html.Span("Comment (a reject needs one)", className="field-label"),
                        dcc.Input(id=ids.PV_COMMENT, type="text", className="wide")],
                       id=ids.PV_COMMENT_FIELD, className="field",
                       hidden=not (can_decide or can_withdraw)),
            html.Button("Approve", id=ids.PV_APPROVE, className="button primary",
                        hidden=not can_decide),
            html.Button("Reject", id=ids.PV_REJECT, className="button",
                        hidden="reject" not in may),
            html.Button("Withdraw", id=ids.PV_WITHDRAW, className="button",
                        hidden=not can_withdraw),
        ], className="form-row"),
        html.P(decision_note(plan, who, may), id=ids.PV_NOTE, className="hint"),
        html.Div(id=ids.PV_RESULT, className="inline-error", role="alert"),
    ], className="panel")


def execution_panel(plan: Plan, who: Actor, p: dict | None) -> html.Div:
    """Execute (an approved plan), Pause, Resume and Cancel (an executing one) for who may
    execute, and the progress ``p`` (progress_of), refreshed every two seconds while it
    executes; what executing does on this cluster where the kind says (a shrink: its
    stages, or its migration, whose steps operators check off here)."""
    may = allowed(plan, who, p)
    steps, step = migration_view(p, may)
    view = throttle_panel(plan, who) if throttled(plan) else None
    return html.Div([
        html.H3("Execution"),
        html.P(NOT_YET, className="hint") if plan.state == "proposed" else None,
        html.P(hint, className="hint") if (hint := kinds.execution_hint(plan)) else None,
        html.Div([html.Button(label, id=i, className="button" + (
            " primary" if i == ids.PV_EXECUTE else ""), hidden=h)
            for (label, i, _), h in zip(BUTTONS, buttons_hidden(may), strict=True)],
            className="form-row"),
        dcc.ConfirmDialog(id=ids.PV_CANCEL_CONFIRM, message=(
            f"Cancel plan {plan.id}? The moves in flight are stopped, the partitions moved "
            "so far stay where they are, and the throttles are put back.")),
        html.Div(id=ids.PV_EXEC_RESULT, className="inline-error", role="alert"),
        html.Div(progress_area(plan, p), id=ids.PV_PROGRESS),
        html.Div(steps, id=ids.PV_STEPS, **{STEPS_SHOWN: steps_mark(p, step)}),
        html.Button(step.label, id=ids.PV_CHECK_NEXT, value=step.step, hidden=step.hidden,
                    className="button"),
        html.Div(id=ids.PV_CHECK_RESULT, className="inline-error", role="alert"),
        dcc.Interval(id=ids.PV_TICK, interval=2000, disabled=plan.state != "executing"),
        html.Div(view.lines if view else None, id=ids.PV_THROTTLE),
        switch_button(view.switch if view else NO_SWITCH),
        html.Div(id=ids.PV_THROTTLE_RESULT, className="inline-error", role="alert"),
        html.Div(view.chart if view else None, id=ids.PV_THROTTLE_PLOT),
    ], id=ids.PV_EXECUTION, className="panel")


def throttled(plan: Plan) -> bool:
    """A plan with a throttle to show over time (and to switch)."""
    return kind_of(plan.kind).throttled and plan.throttle is not None


def throttle_panel(plan: Plan, who: Actor) -> ThrottleView:
    """The throttle over time, and the fixed/adaptive switch for who may execute."""
    h = execution.throttle_history(runtime.current().plan_store(), plan.id)
    # the execute right on an executing plan (what Cancel needs too)
    return throttle_view(h, "cancel" in allowed(plan, who))


def throttle_answer(plan_id: int, switch_to: str | None = None,
                    switch_shown: tuple[str, bool] | None = None) -> tuple:
    """Switch the throttle to ``switch_to`` (the mode the clicked button showed) or only
    refresh; the panel's outputs (ThrottleView.outputs) and the switch's message. A
    refresh leaves the message of the last switch where it is, and the switch too while
    it is the one the page showed when it asked (``switch_shown``: its mode and whether
    it was hidden): a refresh asked before a switch's click and answered after it would
    put back the button that was clicked (execution_answer's steps, likewise)."""
    rt = runtime.current()
    store, who = rt.plan_store(), auth.current_actor()
    plan = plan_service.summary(store, plan_id)
    if not throttled(plan):
        return (*ThrottleView.unchanged(), no_update)
    message = no_update
    if switch_to is not None:
        try:
            execution.switch_throttle(store, who, plan_id, switch_to)
            message = f"Done: the throttle is switched to {switch_to}."
        except REFUSALS as e:
            message = f"Refused: {e}"
    view = throttle_panel(plan, who)
    if switch_to is None and switch_shown is not None \
            and (view.switch.mode, view.switch.hidden) == tuple(switch_shown):
        view = view._replace(switch=SWITCH_UNCHANGED)
    return (*view.outputs(), message)


def buttons_hidden(may: frozenset[str]) -> Buttons:
    return Buttons(*(action not in may for _, _, action in BUTTONS))


def progress_of(plan: Plan) -> dict | None:
    """The plan's progress, with the live copy rate from the cluster's Prometheus."""
    rt = runtime.current()
    return execution.progress(rt.plan_store(), plan.id, source=rt.known_source(plan.cluster))


def progress_area(plan: Plan, p: dict | None) -> html.Div | html.P | None:
    """The execution's progress; before it starts, why it has not (the plan executing on
    the cluster first)."""
    if p is not None:
        return progress_view(p, ids.PV_PROGRESS_BAR)
    if plan.state != "executing":
        return None
    why = execution.waiting(runtime.current().plan_store(), plan.cluster)
    return html.P(f"Not started: {why}.", className="hint")


def migration_steps(p: dict | None) -> list[dict] | None:
    """A running migration's steps, or None."""
    s = (p or {}).get("shrink") or {}
    return s.get("steps")


def migration_view(p: dict | None, may: frozenset[str]) -> tuple[html.Ol | None, NextStep]:
    """A migration's steps, done ones ticked, and the button for the next one (hidden
    while step 1, Railyard's, is not done, once all are, and from who may not execute)."""
    steps = migration_steps(p)
    if steps is None:
        return None, NO_STEP
    listed = html.Ol([html.Li([html.Span("✓" if st["done"] else "", className="step-mark"),
                               st["text"]], className="step-done" if st["done"] else None)
                      for st in steps], className="migration-steps")
    todo = [st["step"] for st in steps if not st["done"]]
    if not todo or todo[0] == 1 or p["state"] != "running" or "cancel" not in may:
        return listed, NO_STEP
    return listed, NextStep(f"Step {todo[0]} is done: check it off", str(todo[0]), False)


def steps_mark(p: dict | None, following: NextStep) -> str:
    """What migration_view drew, as text: each step done or not, and the next step's
    button ('xx--|3|False'). A refresh compares it with the mark the page sent."""
    done = "".join("x" if st["done"] else "-" for st in migration_steps(p) or [])
    return f"{done}|{following.step}|{following.hidden}"


def execution_answer(action: str | None, plan_id: int, steps_shown: str | None = None,
                     said: str | None = None) -> tuple:
    """Take ``action`` (a button id; None: only refresh) through the services (which
    decide whether this user may) and answer run_plan's outputs. A refresh leaves the
    last click's answer while the plan executes (paused included); the refresh that
    finds the plan ended (it stops the timer) says how it ended instead, as "Resumed:
    the next batch starts within seconds" is no longer true of a completed plan.

    A refresh draws a migration's steps only when they differ from ``steps_shown``, the
    mark of what the page showed when it asked: on a slow server a refresh asked before
    a step's click can land after the click's answer, and would put back the steps and
    the button ('Step 2 is done') as they were before it.

    ``said``: the line the page shows; "Pausing: ..." becomes "Paused: ..." on the
    refresh that finds the execution paused (it said "Pausing" under a paused badge), and
    "Done: execute sent." (or the migration's) is cleared on the refresh that finds the
    execution started: the progress under it says how it runs (running, paused, ...), and
    the line stayed for the whole run. Before that ("Not started: ...") it stays."""
    message, css = no_update, no_update
    if action is not None:
        try:
            message, css = _act(action, plan_id), "inline-done"
        except REFUSALS as e:
            message, css = f"Refused: {e}", "inline-error"
    who = auth.current_actor()
    plan = plan_service.get(runtime.current().plan_store(), plan_id)
    p = progress_of(plan)
    if action is None and plan.state in ENDED:  # the refresh that sees it end (the last)
        message, css = ended_text(plan, p), ENDED[plan.state]
    elif action is None and p is not None and p["state"] == "paused" \
            and isinstance(said, str) and said.startswith("Pausing: "):
        message, css = PAUSED_TEXT, "inline-done"
    elif action is None and p is not None and said in map(sent_text, STARTS):
        message, css = "", "inline-done"
    may = allowed(plan, who, p)
    steps = (no_update, STEP_UNCHANGED, no_update)
    if migration_steps(p) is not None:
        listed, following = migration_view(p, may)
        shown = steps_mark(p, following)
        if action is not None or shown != steps_shown:
            steps = (listed, following, shown)
    return ExecutionAnswer(
        message, css, progress_area(plan, p),
        *badge(plan.state, p), buttons_hidden(may), plan.state != "executing",
        *steps).outputs()


def _act(action: str, plan_id: int) -> str:
    """Send ``action`` (a button id) through the services; what it does, in words."""
    rt = runtime.current()
    store, who = rt.plan_store(), auth.current_actor()
    if action == ids.PV_PAUSE:
        return paused_text(execution.pause(store, who, plan_id))
    if action == ids.PV_RESUME:
        return resumed_text(execution.resume(store, who, plan_id))
    if action == ids.PV_CANCEL:
        plan_service.request_cancel(store, who, plan_id)
    else:
        cluster = plan_service.get(store, plan_id).cluster
        plan_service.execute(store, who, plan_id, gateway=rt.gateways.get(cluster),
                             topics_of=rt.topics_of, configs_of=rt.throttle_configs_of,
                             migration=action == ids.PV_MIGRATE)
    return sent_text(action)


def sent_text(action: str) -> str:
    """What a click the executor acts on says once the service took it (a button id)."""
    return f"Done: {SENT[action]} sent."


PAUSED_TEXT = "Paused: no new batch starts until Resume."


def paused_text(p: dict) -> str:
    """What Pause does (backend/executor/loop.py): the moves in flight are not stopped;
    once they are done no new batch starts."""
    if _in_flight(p):
        return "Pausing: the batch in flight finishes, then no new batch starts until Resume."
    return "Pausing: no new batch starts until Resume."


def resumed_text(p: dict) -> str:
    """What Resume does (backend/executor/loop.py and guards.py): the executor goes on at
    its next look, a second or so; a guard or a window that still holds it pauses it
    again."""
    held = " (unless a guard or a window holds it again)"
    if _in_flight(p):
        return f"Resumed: the batch in flight carries on and the next starts once it is done{held}."
    if any(b["state"] == "pending" for b in p["per_batch"]):
        return f"Resumed: the next batch starts within seconds{held}."
    return "Resumed: nothing is left to move; the throttles are put back and the plan completes."


def ended_text(plan: Plan, p: dict | None) -> str:
    """How an executed plan ended, and when: 'Completed at 2025-01-02 03:04:05 UTC.' (a
    failure's cause is in the progress below it)."""
    return f"{plan.state.capitalize()} at {time_of(ended_at(plan, p))}."


def ended_at(plan: Plan, p: dict | None) -> datetime:
    """When an ended plan ended: its execution's end, else its last change (an expired
    plan's: when it expired)."""
    if p and p.get("ended_at"):
        return datetime.fromtimestamp(p["ended_at"], UTC)
    if plan.state == "expired":
        return min(plan.expires_at, plan.updated_at)
    return plan.updated_at


def started_at(p: dict | None) -> datetime | None:
    """When an execution started (``p``: its progress, from the execution row the
    executor writes as it starts the plan); None before it has."""
    return datetime.fromtimestamp(p["started_at"], UTC) if p and p.get("started_at") \
        else None


def sent_at(plan: Plan) -> datetime:
    """When an executing plan was sent to execute: its audit trail's execute row (the move
    to executing)."""
    store, after = runtime.current().plan_store(), None
    while True:
        page = plan_service.audit_page(store, plan=plan.id, after=after)
        sent = next((e.at for e in page.entries if e.action == "execute"), None)
        if sent is not None:
            return sent
        if page.next is None:  # no execute row (not written by the services): its
            return plan.updated_at  # last change, the move to executing
        after = page.next


def _in_flight(p: dict) -> bool:
    return any(b["state"] == "running" for b in p["per_batch"])


def check_step(step: str | None, plan_id: int) -> tuple:
    """An operator checks migration step ``step`` (the number the clicked button showed)
    off through the service, which decides whether they may and whether it is that step's
    turn, and audits it; the result's (message, css), the steps and the next step's button."""
    rt = runtime.current()
    store, who = rt.plan_store(), auth.current_actor()
    try:
        number = _step_number(step)
        checked = shrink_execution.check_step(store, who, plan_id, number - 1,
                                              topics_of=rt.topics_of,
                                              source_of=rt.known_source)["checked"]
        message = f"Done: step {number} checked off ({checked['cluster']})."
        css = "inline-done"
    except REFUSALS as e:
        message, css = f"Refused: {e}", "inline-error"
    plan = plan_service.get(store, plan_id)
    p = progress_of(plan)
    steps, following = migration_view(p, allowed(plan, who, p))
    return (message, css, steps, *following, steps_mark(p, following))


def _step_number(step: str | None) -> int:
    try:
        return int(step or "")
    except ValueError:
        raise BadInput(f"step: expected a step's number, got {str(step)[:20]!r}") from None


def decisions(plan: Plan) -> html.Div | str:
    if not plan.decisions:
        return "No decision yet."
    frame = pd.DataFrame([{"user": d.user, "role": d.role or "", "decision": d.decision,
                           "comment": d.comment,
                           "sha256 seen": d.sha256 or "", "at": time_of(d.at)}
                          for d in plan.decisions])
    return tables.grid(frame, height=140)


def audit_panel(plan_id: int) -> html.Div:
    """The audit trail's place on the page, marked with how many rows it drew from (the
    trail only grows: a refresh that finds as many draws nothing, follow_audit)."""
    rows, total = audit_rows(plan_id)
    return html.Div(rows, id=ids.PV_AUDIT, **{AUDIT_SEEN: str(total)})


def audit_refresh(plan_id: int, seen: str | None) -> tuple:
    """The audit trail drawn again and its mark (audit_panel), while a plan executes and
    once when it ends; no_update for both when it has no row the page has not drawn."""
    total = plan_service.audit_page(runtime.current().plan_store(), plan=plan_id,
                                    limit=1).total
    if str(total) == seen:
        return no_update, no_update
    rows, total = audit_rows(plan_id)
    return rows, str(total)


def audit(plan_id: int) -> html.Div | str:
    """The audit trail (audit_rows) without its count."""
    return audit_rows(plan_id)[0]


def audit_rows(plan_id: int) -> tuple[html.Div | str, int]:
    """The plan's trail from its proposal: the first rows here, and when there are more
    (a plan of many batches writes thousands) a link to all of them on /audit."""
    page = plan_service.audit_page(runtime.current().plan_store(), plan=plan_id,
                                   limit=AUDIT_ROWS_SHOWN)
    grid = audit_grid([e.to_dict() for e in page.entries], height=220)
    if page.next is None:
        return grid, page.total
    return html.Div([grid, html.P([
        f"Rows 1 to {len(page.entries):,} of {page.total:,}, from the proposal: ",
        dcc.Link("the whole trail, page by page, on Audit", href=f"/audit?plan={plan_id}")],
        className="hint")]), page.total


def exact_json_panel(plan: Plan) -> html.Details:
    """The stored content as it is hashed, filled in when first opened."""
    return html.Details([html.Summary("The exact plan JSON" + kinds.json_summary(plan),
                                      id=ids.PV_JSON_OPEN),
                         html.Pre(id=ids.PV_JSON, className="plan-json")],
                        className="panel")


def exact_json_text(content: dict, kind: str) -> str:
    """What the exact JSON panel shows of ``content``."""
    return kinds.json_text(kind, content)


def time_of(t) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S UTC")
