"""Pause and Resume on the plan page (found on the demo's plan 1): the state badge said
"executing" while the execution paused (the plan stays executing), and the result line
said nothing: the timer's refresh two seconds later wrote "" over the click's answer.
Now the badge says "executing · pausing" / "executing · paused" until Resume, Pause and
Resume say what the executor does (backend/executor/loop.py), a refusal says why, and a
refresh leaves the last answer where it is."""

from __future__ import annotations

import sys

import dash
from dash import no_update

from backend.services import execution
from backend.services import plans as plan_service
from backend.services.execution import executor_thread
from backend.store.workflow import SYSTEM
from dashboard import ids
from dashboard.plan_views.stored import badge, paused_text, resumed_text
from tests.unit import test_api
from tests.unit.test_api import basic, make_plan
from tests.unit.test_plan_view import text_of

env = test_api.env  # the API tests' app on a twin, with a user per role


def page():
    return sys.modules[next(p["module"] for p in dash.page_registry.values()
                            if p["path_template"] == "/plans/<plan_id>")]


def find(component, wanted: str):
    """The component with id ``wanted`` in a layout, or None."""
    if getattr(component, "id", None) == wanted:
        return component
    children = getattr(component, "children", None)
    for child in children if isinstance(children, list) else [children]:
        if child is not None and not isinstance(child, str | int | float):
            found = find(child, wanted)
            if found is not None:
                return found
    return None


def triggered(*prop_ids: str) -> None:
    """What Dash tells a callback about the inputs that changed together."""
    from dash._callback_context import context_value
    from dash._utils import AttributeDict

    context_value.set(AttributeDict(triggered_inputs=[{"prop_id": i, "value": 1}
                                                      for i in prop_ids]))


def batches(*states: str) -> dict:
    return {"per_batch": [{"state": s} for s in states]}


def test_the_badge_names_a_pause_while_the_plan_executes():
    assert badge("executing", {"state": "pausing"}) == \
        ("executing · pausing", "state state-executing state-pausing")
    assert badge("executing", {"state": "paused"}) == \
        ("executing · paused", "state state-executing state-paused")
    assert badge("executing", {"state": "running"}) == ("executing", "state state-executing")
    assert badge("executing", None) == ("executing", "state state-executing")
    assert badge("cancelled", {"state": "paused"}) == ("cancelled", "state state-cancelled")


def test_pause_and_resume_say_what_the_executor_does():
    assert paused_text(batches("done", "running", "pending")) == \
        "Pausing: the batch in flight finishes, then no new batch starts until Resume."
    assert paused_text(batches("done", "pending")) == \
        "Pausing: no new batch starts until Resume."
    assert resumed_text(batches("done", "running", "pending")) == (
        "Resumed: the batch in flight carries on and the next starts once it is done "
        "(unless a guard or a window holds it again).")
    assert resumed_text(batches("done", "pending")) == \
        "Resumed: the next batch starts within seconds (unless a guard or a window holds " \
        "it again)."
    assert resumed_text(batches("done", "done")) == \
        "Resumed: nothing is left to move; the throttles are put back and the plan completes."


def approved_alone(env, holder: str):
    """The plan page, an approved plan that is the only one to run, and an executor thread
    cycled by hand."""
    store, rt = env["store"], env["rt"]
    for other in plan_service.list_plans(store, state="executing"):
        plan_service.finish(store, SYSTEM, other.id, "cancelled")
    thread = executor_thread(store, ["demo"], rt.gateways.__getitem__, rt.snapshot_of,
                             holder=holder)
    return page(), make_plan(env, "writer", "approved"), thread


def as_operator(env):
    """A request of operator1's, in which the page's callbacks run as they would."""
    return env["client"].application.test_request_context("/api/v1/x",
                                                          headers=basic("operator1"))


def cycling(thread, twin, base: float):
    """One executor pass at ``base`` plus the twin's clock, then a simulated second (each
    test its own base: the module's tests share one store and its leases)."""
    def cycle() -> None:
        thread.cycle(base + twin.now_seconds)
        twin.advance(1.0)
    return cycle


def cancel_to_end(view, store, plan_id: int, cycle) -> None:
    """Cancel on the page, then cycle the executor until the plan has ended cancelled."""
    view.execution_answer(ids.PV_CANCEL, plan_id)
    for _ in range(20):
        cycle()
    assert plan_service.get(store, plan_id).state == "cancelled"


def run_to_end(store, plan_id: int, cycle) -> None:
    """Cycle the executor until the plan has left executing; it must have completed."""
    for _ in range(300):
        if plan_service.get(store, plan_id).state != "executing":
            break
        cycle()
    assert plan_service.get(store, plan_id).state == "completed"


def test_pause_then_resume_on_the_page(env):
    store = env["store"]
    view, plan_id, thread = approved_alone(env, "pause-test")
    with as_operator(env):
        view.execution_answer(ids.PV_EXECUTE, plan_id)
        for _ in range(3):
            thread.cycle(3e9 + env["twin"].now_seconds)
        paused = view.execution_answer(ids.PV_PAUSE, plan_id)
        assert paused[0].startswith("Pausing: ") and paused[0].endswith("until Resume.")
        assert paused[1] == "inline-done"
        assert paused[3:5] == ("executing · pausing", "state state-executing state-pausing")
        # the timer's refresh leaves the answer; the badge stays
        refreshed = view.execution_answer(None, plan_id)
        assert refreshed[0] is no_update and refreshed[1] is no_update
        assert refreshed[3] == "executing · pausing"
        opened = view.layout(plan_id=str(plan_id))  # the page as it opens
        assert (find(opened, ids.PV_STATE).children,
                find(opened, ids.PV_STATE).className) == \
            ("executing · pausing", "state state-executing state-pausing")
        again = view.execution_answer(ids.PV_PAUSE, plan_id)
        assert again[0] == (f"Refused: plan {plan_id}'s execution is pausing: it can pause "
                            "only when running")
        assert again[1] == "inline-error"
        # Resume clicked as the timer fired: one request with both, and the click counts
        triggered(f"{ids.PV_TICK}.n_intervals", f"{ids.PV_RESUME}.n_clicks")
        resumed = view.run_plan(None, None, 1, None, None, 7, {"id": plan_id})
        assert resumed[0].startswith("Resumed: ") and resumed[1] == "inline-done"
        assert resumed[3:5] == ("executing", "state state-executing")
        # the note under Approve names the plan's state, not the execution's
        assert view.follow_state("executing · paused") == \
            "This plan is executing: there is nothing left to decide."
        assert "Pausing" not in text_of(resumed[2])
        view.execution_answer(ids.PV_CANCEL, plan_id)
        for _ in range(5):  # the executor takes the cancel
            thread.cycle(3e9 + env["twin"].now_seconds)
        assert plan_service.get(store, plan_id).state == "cancelled"
        # the refresh that finds it ended says so over "Resumed: ..." and stops the timer
        ended = view.execution_answer(None, plan_id)
        assert ended[0].startswith("Cancelled at ") and ended[0].endswith(" UTC.")
        assert "Resumed" not in ended[0] and ended[1] == "inline-done"
        assert ended[3] == "cancelled" and ended[10] is True
    thread.stop()


def test_the_resume_answer_gives_way_to_the_plan_completing(env):
    """'Resumed: the next batch starts within seconds' stays while the plan executes and
    is replaced by 'Completed at ...' on the refresh that finds the plan completed (it
    stayed there, untrue, once the plan had completed)."""
    store, twin = env["store"], env["twin"]
    view, plan_id, thread = approved_alone(env, "resume-test")
    cycle = cycling(thread, twin, 4e9)
    with as_operator(env):
        view.execution_answer(ids.PV_EXECUTE, plan_id)
        for _ in range(3):
            cycle()
        assert view.execution_answer(ids.PV_PAUSE, plan_id)[0].startswith("Pausing: ")
        resumed = view.execution_answer(ids.PV_RESUME, plan_id)
        assert resumed[0].startswith("Resumed: ") and resumed[1] == "inline-done"
        # while it executes, the refresh leaves the answer where it is
        refreshed = view.execution_answer(None, plan_id)
        assert refreshed[0] is no_update and refreshed[1] is no_update
        assert refreshed[10] is False  # the timer goes on
        run_to_end(store, plan_id, cycle)
        ended = view.execution_answer(None, plan_id)
        assert ended[0].startswith("Completed at ") and ended[0].endswith(" UTC.")
        assert ended[1] == "inline-done"
        assert ended[3:5] == ("completed", "state state-completed")
        assert ended[10] is True  # the last refresh: nothing changes the line after it
    thread.stop()


def test_the_page_and_the_api_say_what_they_know_of_the_copy_rate(env):
    """While a batch copies, the plan page and GET /plans/{id} carry the live copy rate
    (execution.progress given the cluster's source); this cluster has no Prometheus, so
    both say the rate is not known and why, instead of nothing at all (the API had no
    copy_rate; the page no line)."""
    topic = str(env["twin"].assignment().topic_names[1])  # the tests above moved the first's
    view, plan_id, thread = approved_alone({**env, "body": test_api._body(env["twin"], topic)},
                                           "copy-rate-test")
    with as_operator(env):
        view.execution_answer(ids.PV_EXECUTE, plan_id)
        thread.cycle(5e9 + env["twin"].now_seconds)  # the batch starts; nothing copied yet
        shown = text_of(view.execution_answer(None, plan_id)[2])
    assert "copying now" in shown and "rate not known" in shown, shown
    answer = env["client"].get(f"/api/v1/plans/{plan_id}", headers=basic("operator1"))
    rate = answer.get_json()["execution"]["copy_rate"]
    assert rate["bytes_per_second"] is None and rate["why"], rate  # unknown, and why
    thread.stop()


def test_the_line_says_paused_once_the_execution_is(env):
    """After Pause, the line kept "Pausing: the batch in flight finishes ..." under the
    badge "executing · paused" for as long as the plan stayed paused."""
    from dashboard.plan_views.stored import PAUSED_TEXT

    store, twin = env["store"], env["twin"]
    view, plan_id, thread = approved_alone({**env, "body": test_api._body(twin)},
                                           "paused-line-test")
    cycle = cycling(thread, twin, 7e9)
    with as_operator(env):
        started = view.execution_answer(ids.PV_EXECUTE, plan_id)
        assert started[1] == "inline-done", started[0]
        for _ in range(30):  # until the executor has started it (after the plans before)
            cycle()
            if (execution.progress(store, plan_id) or {}).get("state") == "running":
                break
        said = view.execution_answer(ids.PV_PAUSE, plan_id)[0]
        assert said.startswith("Pausing: ")
        for _ in range(60):
            refreshed = view.execution_answer(None, plan_id, None, said)
            if refreshed[3] == "executing · paused":
                break
            assert refreshed[0] is no_update  # still pausing: the click's answer stays
            cycle()
        assert refreshed[3] == "executing · paused"
        assert refreshed[:2] == (PAUSED_TEXT, "inline-done")
        # a line that says something else (a refusal, say) is left as it is
        assert view.execution_answer(None, plan_id, None, "Refused: x")[0] is no_update
        cancel_to_end(view, store, plan_id, cycle)
    thread.stop()


def test_the_execute_line_gives_way_once_the_execution_shows(env):
    """After Execute, "Done: execute sent." stayed above the progress for the whole run
    (the demo's plan 1: running, paused, resumed, still "execute sent"). It stays while the
    refresh has nothing to show ("Not started: ..."), and is cleared by the refresh that
    finds the execution started: the progress says how it runs from then on."""
    store, twin = env["store"], env["twin"]
    view, plan_id, thread = approved_alone({**env, "body": test_api._body(twin)},
                                           "execute-line-test")
    cycle = cycling(thread, twin, 8e9)
    with as_operator(env):
        said, css = view.execution_answer(ids.PV_EXECUTE, plan_id)[:2]
        assert (said, css) == ("Done: execute sent.", "inline-done")
        # not started yet: the refresh has no progress to show, the line stays
        waiting = view.execution_answer(None, plan_id, None, said)
        assert execution.progress(store, plan_id) is None
        assert waiting[0] is no_update and "Not started" in text_of(waiting[2])
        for _ in range(30):
            cycle()
            if execution.progress(store, plan_id) is not None:
                break
        started = view.execution_answer(None, plan_id, None, said)
        assert started[:2] == ("", "inline-done")
        assert "batch 1 of" in text_of(started[2])  # the progress says it instead
        # any other line is left as it is
        assert view.execution_answer(None, plan_id, None, "Refused: x")[0] is no_update
        assert view.execution_answer(None, plan_id, None, "")[0] is no_update
        cancel_to_end(view, store, plan_id, cycle)
    thread.stop()


def test_the_script_that_restarts_the_timer_names_the_pages_ids():
    """assets/railyard.js starts the plan page's timer again after a click the server
    failed on (tests/e2e/test_pause_browser.py shows it in the browser): by these ids."""
    from pathlib import Path

    script = (Path(__file__).resolve().parents[2] / "assets" / "railyard.js").read_text()
    assert f'const PLAN_TIMER = "{ids.PV_TICK}";' in script
    assert f'getElementById("{ids.PV_EXECUTION}")' in script
