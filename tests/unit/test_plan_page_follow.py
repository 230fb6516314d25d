"""The plan page follows a plan as it runs and ends (found on the Apache Kafka demo): the
audit trail kept its propose and approve rows while the plan executed and completed (the
API had 31: execute, configs set, batches, complete) until a reload; and a completed or
cancelled plan still said "Expires" with a date to come."""

from __future__ import annotations

from dash import no_update

from backend.services import plan_kinds
from backend.services import plans as plan_service
from backend.store.workflow import Actor
from dashboard import ids
from dashboard.plan_views.stored import AUDIT_SEEN
from tests.unit import test_api
from tests.unit.test_api import _body, basic
from tests.unit.test_plan_page_pause import approved_alone, find, page, run_to_end
from tests.unit.test_plan_view import text_of

env = test_api.env  # the API tests' app on a twin, with a user per role


def actions(grid) -> list[str]:
    """The audit grid's action column, in order."""
    return [row["action"] for row in grid.rowData]


def fact(layout, name: str) -> str | None:
    """The value of the fact ``name`` on the plan's page, None when it has none."""
    dl = find(layout, ids.PV_FACTS).children
    terms = [text_of(c) for c in dl]
    return terms[terms.index(name) + 1] if name in terms else None


def test_the_audit_trail_follows_the_plan_while_it_runs_and_once_as_it_ends(env):
    store, twin = env["store"], env["twin"]
    view, plan_id, thread = approved_alone(env, "audit-follow-test")
    shown = {"id": plan_id}

    def cycle() -> None:
        thread.cycle(4e9 + twin.now_seconds)
        twin.advance(1.0)

    with env["client"].application.test_request_context("/api/v1/x",
                                                        headers=basic("operator1")):
        panel = find(view.layout(plan_id=str(plan_id)), ids.PV_AUDIT)
        seen = getattr(panel, AUDIT_SEEN)
        assert actions(panel.children) == ["propose", "approve"] and seen == "2"
        # a tick with nothing new draws nothing
        assert view.follow_audit(1, False, shown, seen) == (no_update, no_update)
        view.execution_answer(ids.PV_EXECUTE, plan_id)
        for _ in range(3):
            cycle()
        rows, seen = view.follow_audit(2, False, shown, seen)
        assert actions(rows)[:3] == ["propose", "approve", "execute"]
        assert seen == str(len(actions(rows)))
        assert view.follow_audit(3, False, shown, seen) == (no_update, no_update)
        run_to_end(store, plan_id, cycle)
        ended = view.execution_answer(None, plan_id)
        assert ended[10] is True  # the timer stops, and with it the refresh of the audit:
        rows, last = view.follow_audit(4, True, shown, seen)  # run_plan's disabled sets it off
        assert actions(rows)[-1] == "complete" and int(last) > int(seen)
        assert actions(rows) == [e.action for e in plan_service.audit_page(
            store, plan=plan_id).entries]
        # a completed plan says when it completed, not when it would have expired
        done = view.layout(plan_id=str(plan_id))
        assert fact(done, "Expires") is None
        assert fact(done, "Completed") + "." == ended[0].removeprefix("Completed at ")
        # and so does the page that saw it complete, once its badge says so
        assert view.follow_end("executing", shown) is no_update
        facts = text_of(view.follow_end("completed", shown))
        assert "Expires" not in facts and f"Completed {fact(done, 'Completed')}" in facts
    thread.stop()


def test_the_audit_refresh_runs_on_the_tick_and_when_the_timer_stops(env):
    """follow_audit is set off by the timer and by run_plan's stopping it (the last
    refresh, after run_plan: its input is run_plan's output), and writes the trail and its
    mark only. The timer is stopped by run_plan and, in the browser, by each of run_plan's
    clicks until their answer is in (a refresh sent meanwhile would drop the answer)."""
    app = env["app"]
    env["client"].get("/_dash-layout")  # Dash fills callback_map at a first request
    [(key, spec)] = [(k, s) for k, s in app.callback_map.items()
                     if f"{ids.PV_AUDIT}.{AUDIT_SEEN}" in k]
    assert {f"{i['id']}.{i['property']}" for i in spec["inputs"]} == {
        f"{ids.PV_TICK}.n_intervals", f"{ids.PV_TICK}.disabled"}
    assert {o.split("@")[0] for o in key.strip(".").split("...")} == {
        f"{ids.PV_AUDIT}.children", f"{ids.PV_AUDIT}.{AUDIT_SEEN}"}
    stopping = {k: s for k, s in app.callback_map.items() if f"{ids.PV_TICK}.disabled" in k}
    run_plan = [k for k in stopping if f"{ids.PV_PROGRESS}.children" in k]
    assert len(run_plan) == 1 and len(stopping) == 2
    [(held, spec)] = [(k, s) for k, s in stopping.items() if k not in run_plan]
    assert held.startswith(f"{ids.PV_TICK}.disabled@") and "callback" not in spec  # in JS
    clicks = {f"{i['id']}.{i['property']}" for i in stopping[run_plan[0]]["inputs"]}
    assert {f"{i['id']}.{i['property']}" for i in spec["inputs"]} == \
        clicks - {f"{ids.PV_TICK}.n_intervals"}


def proposed(env) -> int:
    """A plan by 'writer' moving what the twin holds now (an executed plan moved the
    API tests' own)."""
    snap = env["twin"].assignment()  # the pages' read is cached: it may predate the move
    draft = plan_kinds.draft_from_request(snap, _body(env["twin"]))
    return plan_service.propose(env["store"], Actor("writer", "admin"), cluster="demo",
                                kind=draft.kind, content=draft.content,
                                preview=draft.preview, snapshot=snap).id


def test_an_ended_plan_says_when_it_ended_not_when_it_expires(env):
    store = env["store"]
    still_proposed, withdrawn = proposed(env), proposed(env)
    plan_service.withdraw(store, Actor("writer", "admin"), withdrawn, comment="")
    with env["client"].application.test_request_context("/api/v1/x",
                                                        headers=basic("operator1")):
        view = page()
        still = view.layout(plan_id=str(still_proposed))
        gone = view.layout(plan_id=str(withdrawn))
    plan = plan_service.get(store, still_proposed)
    assert fact(still, "Expires") == plan.expires_at.strftime("%Y-%m-%d %H:%M:%S UTC")
    assert fact(gone, "Expires") is None
    assert fact(gone, "Withdrawn") == plan_service.get(store, withdrawn).updated_at.strftime(
        "%Y-%m-%d %H:%M:%S UTC")
