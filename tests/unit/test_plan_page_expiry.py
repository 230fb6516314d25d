"""The plan page's facts say the time each state has (a new user's report): every plan
not yet ended said "Expires <time>", an executing one too, though a plan expires only
while it waits (workflow.TRANSITIONS["expire"]: proposed or approved). Now a proposed
plan says when it expires, an approved one when it must be started by (expiry_hours
after its approval), an executing one when it started; and the facts follow the plan as
its badge moves on without a reload (they followed it only to its end), the start of its
execution too (the executor starts a plan sent to execute once no other plan runs on its
cluster)."""

from __future__ import annotations

from datetime import UTC, datetime

from dash import no_update

from backend.services import execution
from backend.services import plans as plan_service
from backend.services.execution import executor_thread
from backend.store.workflow import Actor
from dashboard import ids
from dashboard.plan_views.stored import FACTS_STATE, WAITING
from tests.unit import test_api
from tests.unit.test_api import basic, make_plan
from tests.unit.test_plan_page_follow import fact
from tests.unit.test_plan_page_pause import approved_alone, find, page
from tests.unit.test_plan_view import text_of

env = test_api.env  # the API tests' app on a twin, with a user per role
TIMES = ("Expires", "Start by", "Started")  # the facts only a waiting or running plan has


def utc(t: datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S UTC")


def times(layout) -> dict[str, str]:
    """The time facts a plan's page shows, by name."""
    return {name: fact(layout, name) for name in TIMES if fact(layout, name) is not None}


def execute_row(store, plan_id: int) -> datetime:
    """When the plan was sent to execute (its audit trail's execute row)."""
    rows = plan_service.audit_page(store, plan=plan_id).entries
    return next(e.at for e in rows if e.action == "execute")


def test_a_waiting_plan_says_when_it_expires_or_must_be_started_by(env):
    store = env["store"]
    proposed, approved = make_plan(env, "writer", "proposed"), make_plan(env, "writer",
                                                                         "approved")
    with env["client"].application.test_request_context("/api/v1/x",
                                                        headers=basic("operator1")):
        view = page()
        waits, ready = (view.layout(plan_id=str(i)) for i in (proposed, approved))
    assert times(waits) == {"Expires": utc(plan_service.get(store, proposed).expires_at)}
    # approved: the time it must be started by (its approval restarted the clock), not
    # "Expires" as if approving had changed nothing
    started_by = plan_service.get(store, approved).expires_at
    assert times(ready) == {"Start by": utc(started_by)}
    assert getattr(find(waits, ids.PV_FACTS), FACTS_STATE) == "proposed"
    assert getattr(find(ready, ids.PV_FACTS), FACTS_STATE) == "approved"


def test_an_executing_plan_says_when_it_started_not_when_it_expires(env):
    store, twin = env["store"], env["twin"]
    view, plan_id, thread = approved_alone(env, "expiry-test")
    with env["client"].application.test_request_context("/api/v1/x",
                                                        headers=basic("operator1")):
        view.execution_answer(ids.PV_EXECUTE, plan_id)
        # sent to execute, the executor has not started it (no execution row): not yet,
        # and when it was sent (the move to executing)
        assert execution.progress(store, plan_id) is None
        sent = view.layout(plan_id=str(plan_id))
        assert times(sent) == {
            "Started": f"not yet: sent to execute {utc(execute_row(store, plan_id))}"}
        assert getattr(find(sent, ids.PV_FACTS), FACTS_STATE) == WAITING
        thread.cycle(3e9 + twin.now_seconds)  # the executor starts it
        running = view.layout(plan_id=str(plan_id))
        started = execution.progress(store, plan_id)["started_at"]
        assert times(running) == {"Started": utc(datetime.fromtimestamp(started, UTC))}
        assert getattr(find(running, ids.PV_FACTS), FACTS_STATE) == "executing"
        view.execution_answer(ids.PV_CANCEL, plan_id)
        for _ in range(5):
            thread.cycle(3e9 + twin.now_seconds)
        assert plan_service.get(store, plan_id).state == "cancelled"
        assert times(view.layout(plan_id=str(plan_id))) == {}  # ended: when it ended
    thread.stop()


def test_the_facts_follow_the_plan_as_its_badge_moves_on(env):
    """Approve on the page, then Execute: the facts said "Expires" with the proposal's
    expiry until a reload. The timer writes the badge every two seconds while the plan
    executes: the facts are drawn again only when the plan's state is not theirs."""
    store, rt = env["store"], env["rt"]
    plan_id = make_plan(env, "writer", "proposed")
    shown = {"id": plan_id}
    with env["client"].application.test_request_context("/api/v1/x",
                                                        headers=basic("operator1")):
        view = page()
        assert view.follow_end("proposed", shown, "proposed") is no_update
        plan = plan_service.get(store, plan_id)
        plan_service.approve(store, Actor("decider", "admin"), plan_id, sha256=plan.sha256,
                             topics_of=rt.topics_of)
        rows, drawn = view.follow_end("approved", shown, "proposed")
        assert drawn == "approved"
        assert "Start by" in text_of(rows) and "Expires" not in text_of(rows)
        assert utc(plan_service.get(store, plan_id).expires_at) in text_of(rows)
        plan_service.request_execute(store, Actor("decider", "admin"), plan_id,
                                     topics_of=rt.topics_of)
        rows, drawn = view.follow_end("executing", shown, "approved")
        assert drawn == WAITING and "Start by" not in text_of(rows)
        sent = f"Started not yet: sent to execute {utc(execute_row(store, plan_id))}"
        assert sent in text_of(rows)
        # the timer's badge draws them until the executor has started the plan
        rows, drawn = view.follow_end("executing", shown, WAITING)
        assert drawn == WAITING and sent in text_of(rows)
        thread = executor_thread(store, ["demo"], rt.gateways.__getitem__, rt.snapshot_of,
                                 holder="facts-follow-test")
        thread.cycle(3e9 + env["twin"].now_seconds)
        thread.stop()
        started = execution.progress(store, plan_id)["started_at"]
        rows, drawn = view.follow_end("executing", shown, WAITING)
        assert drawn == "executing"
        assert f"Started {utc(datetime.fromtimestamp(started, UTC))}" in text_of(rows)
        # then the timer's badge, paused or not, draws nothing while the state is theirs
        assert view.follow_end("executing", shown, "executing") is no_update
        assert view.follow_end("executing · paused", shown, "executing") is no_update
        assert view.follow_end("", shown, "executing") is no_update
        assert view.follow_end("executing", None, "approved") is no_update


def test_the_facts_callback_writes_the_facts_and_their_mark(env):
    app = env["app"]
    env["client"].get("/_dash-layout")  # Dash fills callback_map at a first request
    [(key, spec)] = [(k, s) for k, s in app.callback_map.items()
                     if f"{ids.PV_FACTS}.{FACTS_STATE}" in k]
    assert {o.split("@")[0] for o in key.strip(".").split("...")} == {
        f"{ids.PV_FACTS}.children", f"{ids.PV_FACTS}.{FACTS_STATE}"}
    assert [f"{i['id']}.{i['property']}" for i in spec["inputs"]] == [
        f"{ids.PV_STATE}.children"]
    assert {f"{s['id']}.{s['property']}" for s in spec["state"]} == {
        f"{ids.PV_PLAN}.data", f"{ids.PV_FACTS}.{FACTS_STATE}"}
