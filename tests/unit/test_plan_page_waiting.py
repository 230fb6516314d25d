"""A plan executed while another runs on its cluster waits for it (one plan executes at a
time on a cluster), and its page said nothing of it: no progress, no line. Found with a
plan that waited for a not-before time far off, which every later plan then queued
behind. Its page now names the plan it waits for, and says it starts when that one ends."""

from __future__ import annotations

from backend.services import execution
from dashboard import ids
from tests.unit import test_api
from tests.unit.test_api import basic, make_plan
from tests.unit.test_plan_page_pause import approved_alone, find
from tests.unit.test_plan_view import text_of

env = test_api.env  # the API tests' app on a twin, with a user per role


def test_a_plan_behind_another_names_it_on_its_page(env):
    store, twin = env["store"], env["twin"]
    view, first, thread = approved_alone(env, "waiting-test")
    other = str(twin.assignment().topic_names[1])  # the first moves the first topic's
    second = make_plan({**env, "body": test_api._body(twin, other)}, "writer", "approved")

    def cycle() -> None:
        thread.cycle(6e9 + twin.now_seconds)
        twin.advance(1.0)

    waits = (f"Not started: plan {first} executes on cluster demo first (one plan executes "
             f"at a time on a cluster): this one starts when it ends.")
    with env["client"].application.test_request_context("/api/v1/x",
                                                        headers=basic("operator1")):
        view.execution_answer(ids.PV_EXECUTE, first)
        assert text_of(view.execution_answer(None, first)[2]) == \
            "Not started: the executor starts it within a few seconds."
        cycle()
        assert execution.progress(store, first) is not None
        assert view.execution_answer(ids.PV_EXECUTE, second)[1] == "inline-done"
        assert text_of(view.execution_answer(None, second)[2]) == waits
        assert text_of(find(view.layout(plan_id=str(second)), ids.PV_PROGRESS)) == waits
        view.execution_answer(ids.PV_CANCEL, first)
        view.execution_answer(ids.PV_CANCEL, second)
        for _ in range(20):
            cycle()
    thread.stop()
