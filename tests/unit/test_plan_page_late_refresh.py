"""The plan page's controls when a refresh's answer lands after a click's. Found by CI
(2026-11-29) on a loaded machine: a refresh asked before a migration's step 2 was checked
off was answered after the clicks on steps 2, 3 and 4, and put the page back at step 1
done with "Step 2 is done: check it off"; the next click was refused, "step 2 is already
checked off". A refresh now draws the steps, and the throttle's fixed/adaptive switch,
only when they differ from what the page showed when it asked, so an answer that lands
late draws nothing over a click's."""

from __future__ import annotations

import dataclasses
import time

from dash import no_update

from backend.services import plans as plan_service
from backend.services.execution import executor_thread
from backend.services.plan_preview import from_shrink
from backend.store.executions import ExecutionRecords
from backend.store.workflow import SYSTEM, Actor
from dashboard import ids
from dashboard.plan_views.stored import check_step, throttle_answer
from tests.unit import test_api
from tests.unit.test_api import basic
from tests.unit.test_plan_page_pause import page

env = test_api.env  # the API tests' app on a twin, with a user per role
DRAWN = 5  # the steps, the next step's label, value and hidden, and the steps' mark
SWITCH = slice(2, 5)  # the switch's label, mode and hidden in throttle_answer


def test_a_refresh_draws_the_steps_only_when_they_changed_since_it_asked(env):
    store, rt, twin = env["store"], env["rt"], env["twin"]
    # as Apache Kafka: no DeletePartitions, so the shrink runs as the migration
    twin.settings = dataclasses.replace(twin.settings, delete_partition_enable=False)
    for other in plan_service.list_plans(store, state="executing"):
        plan_service.finish(store, SYSTEM, other.id, "cancelled")
    snap = rt.snapshot_of("demo")
    draft = from_shrink(snap, str(snap.topic_names[1]), 1, delay_ms=3_600_000)
    plan = plan_service.propose(store, Actor("writer", "admin"), cluster="demo", kind="shrink",
                                content=draft.content, preview=draft.preview, snapshot=snap)
    plan_service.approve(store, Actor("decider", "admin"), plan.id, sha256=plan.sha256,
                         topics_of=rt.topics_of)
    view = page()
    thread = executor_thread(store, ["demo"], rt.gateways.__getitem__, rt.snapshot_of,
                             holder="steps-test")
    try:
        with env["client"].application.test_request_context("/api/v1/x",
                                                            headers=basic("operator1")):
            assert view.execution_answer(ids.PV_MIGRATE, plan.id)[0] == \
                "Done: run the migration sent."
            for _ in range(4):  # step 1, Railyard's: the new topic
                thread.cycle(time.time())
            first = view.execution_answer(None, plan.id, None)[-DRAWN:]
            assert first[1:] == ("Step 2 is done: check it off", "2", False, "x---|2|False")
            # the page shows that; a refresh asked now and answered after a click draws
            # nothing over the click's answer
            assert view.execution_answer(None, plan.id, first[-1])[-DRAWN:] == \
                (no_update,) * DRAWN
            message, _css, *clicked = check_step("2", plan.id)
            assert message.startswith("Done: step 2 checked off")
            assert clicked[1:] == ["Step 3 is done: check it off", "3", False, "xx--|3|False"]
            assert view.execution_answer(None, plan.id, clicked[-1])[-DRAWN:] == \
                (no_update,) * DRAWN
            # a page still showing step 2 (another operator checked it off) is brought on
            assert view.execution_answer(None, plan.id, first[-1])[-DRAWN + 1:] == \
                tuple(clicked[1:])
    finally:
        thread.stop()
        twin.settings = dataclasses.replace(twin.settings, delete_partition_enable=True)


def test_a_refresh_draws_the_throttle_switch_only_when_it_changed_since_it_asked(env):
    client, store, rt, twin = env["client"], env["store"], env["rt"], env["twin"]
    for other in plan_service.list_plans(store, state="executing"):
        plan_service.finish(store, SYSTEM, other.id, "cancelled")
    made = client.post("/api/v1/plans", headers=basic("operator1"),
                       json={**env["body"], "throttle": 5_000_000}).get_json()
    decider = Actor("decider", "admin")
    plan_service.approve(store, decider, made["id"], sha256=made["sha256"],
                         topics_of=rt.topics_of)
    plan_service.request_execute(store, decider, made["id"], topics_of=rt.topics_of)
    thread = executor_thread(store, ["demo"], rt.gateways.__getitem__, rt.snapshot_of,
                             clock=lambda: 2e9 + twin.now_seconds, holder="switch-test")
    try:
        for _ in range(20):
            thread.cycle(2e9 + twin.now_seconds)
            if ExecutionRecords(store).get(made["id"]) is not None:
                break
        with env["client"].application.test_request_context("/api/v1/x",
                                                            headers=basic("operator1")):
            shown = throttle_answer(made["id"])[SWITCH]
            assert shown == ("Switch to adaptive", "adaptive", False)
            late = throttle_answer(made["id"], switch_shown=("adaptive", False))
            assert late[SWITCH] == (no_update,) * 3 and late[0] is not no_update
            switched = throttle_answer(made["id"], switch_to="adaptive")
            assert switched[-1] == "Done: the throttle is switched to adaptive."
            assert switched[SWITCH] == ("Switch to fixed", "fixed", False)
            assert throttle_answer(made["id"], switch_shown=("fixed", False))[SWITCH] == \
                (no_update,) * 3
            # a page still showing the old switch (another operator switched) is brought on
            assert throttle_answer(made["id"], switch_shown=("adaptive", False))[SWITCH] \
                == switched[SWITCH]
    finally:
        thread.stop()
