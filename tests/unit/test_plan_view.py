"""Propose, the plan's own page and the audit page, through their callbacks as three
signed-in users: whoever may not is refused by the service with its rule, the approver's
approval of the sha256 shown goes through, and the audit log says who did what."""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager

import dash
import pytest
from werkzeug.security import generate_password_hash

from backend.model.io import save_snapshot
from backend.services import plans
from backend.twin.cluster import TwinCluster
from backend.twin.examples import demo_snapshot
from backend.twin.gateway import TwinGateway
from dashboard import auth, drafts, runtime, sessions
from dashboard.config import parse_config
from tests.plan_helpers import moves, settle

USERS = {"olga": "operator", "arne": "approver", "vera": "viewer"}


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    from dashboard.app import create_app

    tmp = tmp_path_factory.mktemp("plan-view")
    save_snapshot(demo_snapshot(), tmp / "demo.parquet")
    twin = TwinCluster(demo_snapshot())
    app = create_app(parse_config({
        "clusters": [{"name": "demo", "gateway": {"type": "twin", "url": "http://127.0.0.1:9"},
                      "snapshot": str(tmp / "demo.parquet")}],
        "cache": {"background_dir": str(tmp / "cache")},
        "store": {"url": f"sqlite:///{tmp / 'railyard.db'}"},
        "auth": {"secret_key_file": str(tmp / "key"), "users": [
            {"name": n, "role": r, "password_hash": generate_password_hash("x")}
            for n, r in USERS.items()]}}), gateways={"demo": TwinGateway(twin)})
    app.twin = twin
    return app


def as_user(app, name: str):
    """A request signed in as ``name`` (what the sign-in page leaves in the session)."""
    ctx = app.server.test_request_context("/")
    ctx.push()
    settings = auth.settings()
    sessions.sign_in(settings, settings.user(name))
    return ctx


def page(path: str):
    return sys.modules[next(p["module"] for p in dash.page_registry.values()
                            if path in (p["path"], p.get("path_template")))]


def text_of(component) -> str:
    """All text a Dash component tree shows: its children's, and a grid's headers and
    rows (what its columns show of each)."""
    if component is None or isinstance(component, str | int | float):
        return "" if component is None else str(component)
    if isinstance(component, list | tuple):
        return " ".join(text_of(c) for c in component)
    if getattr(component, "_type", None) == "AgGrid":
        columns = component.columnDefs
        heads = [c.get("headerName", c["field"]) for c in columns]
        rows = getattr(component, "rowData", None) or []  # an infinite grid has none here
        cells = [row.get(c["field"]) for row in rows for c in columns]
        return text_of(heads + cells)
    return text_of(getattr(component, "children", None))


def click(button: str) -> None:
    """What Dash tells a callback about the click that triggered it."""
    from dash._callback_context import context_value
    from dash._utils import AttributeDict

    context_value.set(AttributeDict(triggered_inputs=[{"prop_id": f"{button}.n_clicks",
                                                       "value": 1}]))


def preview_as(app, user: str) -> str:
    ctx = as_user(app, user)
    try:
        _, token, error, _ = page("/reassignments").preview(
            1, "generate", "drain", "9", 1.0, 1.1, None, 20, "")
    finally:
        ctx.pop()
    assert error == ""
    return token


def test_propose_approve_and_the_audit_log(app):
    from dashboard import plan_views

    token = preview_as(app, "olga")
    draft = drafts.load(token)
    ctx = as_user(app, "vera")  # a viewer: the service refuses, whatever the page shows
    try:
        href, error = plan_views.propose(1, token, "mine")
    finally:
        ctx.pop()
    assert href is dash.no_update and "viewer" in error
    ctx = as_user(app, "olga")
    try:
        assert plan_views.propose(None, token, "t") == (dash.no_update, dash.no_update)
        href, error = plan_views.propose(1, token, "drain broker 9")
    finally:
        ctx.pop()
    assert error == "" and href.startswith("/plans/")
    plan_id = int(href.rsplit("/", 1)[1])
    store = runtime.current().plan_store()
    plan = plans.get(store, plan_id)
    assert draft.preview["unresolved"]  # broker 9 keeps replicas: a title typed over a
    # partial drain still reads partial (the queue shows titles only)
    assert (plan.state, plan.author, plan.title) == ("proposed", "olga",
                                                     "partial: drain broker 9")
    assert plan.content == draft.content and plan.preview == draft.preview
    assert plan.throttle == 20_000_000

    view = page("/plans/<plan_id>")
    decide = view.decide
    shown = {"id": plan_id, "sha256": plan.sha256}
    ctx = as_user(app, "olga")  # the author
    try:
        shown_page = view.layout(plan_id=str(plan_id))
        body = text_of(shown_page)
        assert "You wrote this plan" in body and plan.sha256 in body
        assert view.NOT_YET in body  # the execution panel of a proposed plan says why empty
        token = next(c.data for c in shown_page.children if getattr(c, "id", "") == "plan-token")
        sent = plan_views.download(1, token)  # the file is the stored content, exactly
        assert sent["filename"] == f"plan-{plan_id}.json"
        assert json.loads(sent["content"]) == plan.content
        rows = plan_views.grid_rows({"startRow": 0, "endRow": 5}, token, None)
        assert rows["rowCount"] == len(plan.content["partitions"])
        click("pv-approve")
        refused = decide(1, None, None, shown, "")
    finally:
        ctx.pop()
    assert refused[0] == ("Refused: the operator role may not approve: it needs the approver "
                          "or admin role")
    ctx = as_user(app, "arne")
    try:
        wrong = decide(1, None, None, {"id": plan_id, "sha256": "0" * 64}, "")
        done = decide(1, None, None, shown, "ok")
    finally:
        ctx.pop()
    assert wrong[0].startswith("Refused: ") and "sha256" in wrong[0]
    assert done[0] == f"Done: plan {plan_id} is approved." and done[2] == "approved"
    assert done.note == "This plan is approved: there is nothing left to decide."
    # the buttons go, and so does the comment box they go with (it stayed, alone)
    assert done.approve_hidden is done.reject_hidden is done.comment_hidden is True
    plan = plans.get(store, plan_id)
    assert plan.state == "approved"
    assert [(d.user, d.decision, d.sha256) for d in plan.decisions] == [
        ("arne", "approve", shown["sha256"])]

    audit = page("/audit")
    ctx = as_user(app, "vera")
    try:
        grid, error, listed, *_ = audit.show(1, None, plan_id, "arne", None, None)
        assert error == "" and f"#{plan_id}" in text_of(listed)
        # cells: id, at, user, action, plan, "before -> after", address
        rows = [[text_of(td) for td in tr.children] for tr in grid.children[1].children]
        assert [(r[2], r[3], *r[5].split(" -> ")) for r in rows] == [
            ("arne", "approve", "proposed", "approved")]
        assert audit.show(1, None, None, None, "yesterday", None)[1] == (
            "since: could not read 'yesterday' as a date and time (e.g. 2024-05-01T12:00, "
            "UTC)")
        assert "no plan 999" in text_of(view.layout(plan_id="999"))
    finally:
        ctx.pop()


def test_the_note_under_approve_follows_the_state_shown(app):
    """Execute moves a plan on without a decision: the note follows the state the page
    shows (the demo's operator saw 'This plan is approved' under an executing plan)."""
    view = page("/plans/<plan_id>")
    assert view.follow_state("executing") == \
        "This plan is executing: there is nothing left to decide."
    assert view.follow_state("completed") == \
        "This plan is completed: there is nothing left to decide."
    assert view.follow_state("proposed") is dash.no_update  # who decided matters: decide's


def proposed_by_olga(app, title: str):
    """A plan olga previewed and proposed on the page."""
    from dashboard import plan_views

    token = preview_as(app, "olga")
    ctx = as_user(app, "olga")
    try:
        href, error = plan_views.propose(1, token, title)
    finally:
        ctx.pop()
    assert error == ""
    return plans.get(runtime.current().plan_store(), int(href.rsplit("/", 1)[1]))


@contextmanager
def leader_swapped(app, plan):
    """The cluster changes under ``plan``: its first partition's first two replicas trade
    places (a leader change is enough), and are put back afterwards."""
    first = plan.content["partitions"][0]
    snap = app.twin.assignment()
    now = snap.replicas_of(snap.partition_row(first["topic"], first["partition"]))
    settle(app.twin, moves((first["topic"], first["partition"], [now[1], now[0], *now[2:]])))
    try:
        yield
    finally:
        settle(app.twin, moves((first["topic"], first["partition"], now)))
        runtime.current().snapshot_of("demo")  # the pages' cached read sees it at once


def test_a_stale_plan_is_refused_naming_the_partition(app):
    """The cluster moves a partition the plan touches after the proposal: the approver
    is told which one and to re-propose, and the plan stays proposed."""

    plan = proposed_by_olga(app, "to go stale")
    plan_id = plan.id
    with leader_swapped(app, plan):
        ctx = as_user(app, "arne")
        try:
            click("pv-approve")
            refused = page("/plans/<plan_id>").decide(
                1, None, None, {"id": plan_id, "sha256": plan.sha256}, "")
        finally:
            ctx.pop()
    first = plan.content["partitions"][0]
    name = f"{first['topic']}-{first['partition']}"
    assert refused[0].startswith("Refused: ") and name in refused[0]
    assert "re-propose" in refused[0]
    assert plans.get(runtime.current().plan_store(), plan_id).state == "proposed"


def test_a_stale_plan_offers_no_approve_and_says_why(app):
    """The Apache Kafka demo's banner said Approve would be refused while Approve stayed
    offered under 'Approving approves exactly the plan below ... for the cluster as it is
    now'. Once the page finds the plan stale, Approve and Execute are disabled and the
    note says to re-propose; the service still refuses Approve on its own."""
    from dashboard import ids
    from dashboard.plan_views.stored import STALE_NOTE

    plan = proposed_by_olga(app, "goes stale on the page")
    plan_id = plan.id
    shown = {"id": plan_id, "sha256": plan.sha256}
    view = page("/plans/<plan_id>")
    ctx = as_user(app, "arne")
    try:
        opened = view.layout(plan_id=str(plan_id))
        fresh = view.basis_warning(shown)
    finally:
        ctx.pop()
    assert "Approving approves exactly the plan below" in text_of(opened)
    assert fresh == (None, dash.no_update, dash.no_update, dash.no_update, dash.no_update)
    with leader_swapped(app, plan):
        ctx = as_user(app, "arne")
        try:
            banner, *disabled, note = view.basis_warning(shown)
            click("pv-approve")  # sent anyway (a page from before): the service refuses
            refused = view.decide(1, None, None, shown, "")
        finally:
            ctx.pop()
    assert text_of(banner).startswith("Approve and Execute will be refused: cluster demo "
                                      f"changed since plan {plan_id} was proposed")
    assert view.STALE_OFF == (ids.PV_APPROVE, ids.PV_EXECUTE, ids.PV_MIGRATE)
    assert disabled == [True, True, True]
    assert note == STALE_NOTE and "re-propose" in note
    assert "for the cluster as it is now. This plan" not in note
    assert refused[0].startswith("Refused: ") and "re-propose" in refused[0]
    assert plans.get(runtime.current().plan_store(), plan_id).state == "proposed"
    # rejected on this page: the state it shows changes, and the warning goes (it stayed)
    app.server.test_client().get("/_dash-layout")  # Dash fills callback_map at a first request
    [spec] = [s for k, s in app.callback_map.items() if k.startswith(f"..{ids.PV_BANNERS}.")]
    assert {f"{i['id']}.{i['property']}" for i in spec["inputs"]} == {
        f"{ids.PV_PLAN}.data", f"{ids.PV_STATE}.children"}
    with leader_swapped(app, plan):
        ctx = as_user(app, "arne")
        try:
            click("pv-reject")
            assert view.decide(None, 1, None, shown, "")[0] == (
                "Refused: comment: a rejection needs a reason (what the author should change)")
            assert view.decide(None, 1, None, shown, "stale")[0].startswith("Done: ")
            assert view.basis_warning(shown, "rejected")[0] is None
        finally:
            ctx.pop()


def test_a_gateway_that_does_not_answer_is_refused_in_words(app):
    """The cluster's gateway is a twin at a closed port (real, nobody listening): Approve
    and Execute say which cluster did not answer and why, instead of checking the plan
    against the snapshot file, and the plan stays as it was."""
    from backend.gateways.twin_http import TwinHttpGateway
    from dashboard import ids, plan_views
    from tests.servers import free_port

    store, rt = runtime.current().plan_store(), runtime.current()
    made = []
    for title in ("gateway down", "to execute"):
        token = preview_as(app, "olga")
        ctx = as_user(app, "olga")
        try:
            href, error = plan_views.propose(1, token, title)
        finally:
            ctx.pop()
        assert error == ""
        made.append(int(href.rsplit("/", 1)[1]))
    proposed, approved = made
    view = page("/plans/<plan_id>")
    shown = {i: {"id": i, "sha256": plans.get(store, i).sha256} for i in (proposed, approved)}
    ctx = as_user(app, "arne")
    try:
        click("pv-approve")
        assert view.decide(1, None, None, shown[approved], "")[2] == "approved"
        live, dead = rt.gateways["demo"], f"http://127.0.0.1:{free_port()}"
        rt.gateways["demo"] = TwinHttpGateway(dead, timeout=2)
        refused = view.decide(1, None, None, shown[proposed], "")
    finally:
        rt.gateways["demo"] = live
        ctx.pop()
    ctx = as_user(app, "olga")
    try:
        rt.gateways["demo"] = TwinHttpGateway(dead, timeout=2)
        executed = view.execution_answer(ids.PV_EXECUTE, approved)
    finally:
        rt.gateways["demo"] = live
        ctx.pop()
    for message in (refused[0], executed[0]):
        assert message.startswith(f"Refused: Cluster 'demo': its gateway did not answer "
                                  f"(Twin at {dead}: unreachable")
        assert "never a snapshot file" in message
    assert executed[3] == "approved"
    assert plans.get(store, proposed).state == "proposed"
    assert plans.get(store, approved).state == "approved"


def test_the_plan_page_paints_from_its_preview_and_reads_the_content_when_asked(
        app, monkeypatch):
    """The page of a stored reassignment is drawn from the preview numbers stored with it;
    its content (megabytes at 100k moves) is read when the grid asks for rows and when
    the exact JSON is opened."""
    from dashboard import plan_views

    token = preview_as(app, "olga")
    ctx = as_user(app, "olga")
    try:
        href, _ = plan_views.propose(1, token, "lazy page")
    finally:
        ctx.pop()
    store = runtime.current().plan_store()
    plan = plans.get(store, int(href.rsplit("/", 1)[1]))
    view = page("/plans/<plan_id>")

    def whole(*_):
        raise AssertionError("the page read the whole plan before painting")

    monkeypatch.setattr(plans, "get", whole)
    ctx = as_user(app, "arne")
    try:
        shown = view.layout(plan_id=str(plan.id))
    finally:
        ctx.pop()
    monkeypatch.undo()
    body = text_of(shown)
    assert f"{plan.preview['replica_moves']:,}" in body and plan.sha256 in body
    assert f"Per-partition changes ({plan.preview['partitions']:,} partitions)" in body
    grid_token = next(c.data for c in shown.children if getattr(c, "id", "") == "plan-token")
    rows = plan_views.grid_rows({"startRow": 0, "endRow": 3}, grid_token, None)
    assert rows["rowCount"] == len(plan.content["partitions"]) and len(rows["rowData"]) == 3
    # Propose kept the draft's grid for the page; without it, the stored plan gives the same
    runtime.current().cache.delete(f"plan-grid:{plan.id}")
    again = plan_views.grid_rows({"startRow": 0, "endRow": 3}, grid_token, None)
    assert again == rows
    # the kept grid's bytes are the preview's; one built again is the cluster's now, and
    # says so (the approver of the Kafka demo's plan 1 saw 60.44 MB to move above a grid
    # of 12 x 9.82 MB)
    now_sizes = "Bytes to copy are the partitions' sizes as the cluster is now"
    assert now_sizes not in body
    runtime.current().cache.delete(f"plan-grid:{plan.id}")
    ctx = as_user(app, "arne")
    try:
        assert now_sizes in text_of(view.layout(plan_id=str(plan.id)))
    finally:
        ctx.pop()
    data = {"id": plan.id, "sha256": plan.sha256}
    text = view.open_json(1, data, None)
    assert json.loads(text) == {**plan.content,
                                "partitions": plan.content["partitions"][:view.JSON_ENTRIES]}
    assert view.open_json(2, data, text) is dash.no_update  # closing it reads nothing


def test_propose_an_adaptive_throttle_from_the_form(app):
    """issue 28: the propose form's adaptive box and floor (MB/s) freeze the mode in the
    plan (and its sha256); a floor above the throttle is refused in one line."""
    from dashboard import plan_views

    token = preview_as(app, "olga")
    ceiling = round(drafts.load(token).preview["throttle"])
    ctx = as_user(app, "olga")
    try:
        href, error = plan_views.propose(1, token, "too high", ["adaptive"],
                                         ceiling / 1e6 + 1)
        # in the form's unit, MB/s (the service's bytes/s read "99999000000" for 99999)
        assert href is dash.no_update and error.startswith(
            "adaptive throttle's floor: give a number larger than 0 and at most 20 MB/s, got")
        href, error = plan_views.propose(1, token, "adaptive drain", ["adaptive"], 0.5)
    finally:
        ctx.pop()
    assert error == ""
    plan = plans.get(runtime.current().plan_store(), int(href.rsplit("/", 1)[1]))
    assert plan.throttle == ceiling
    assert plan.throttle_mode == {"mode": "adaptive", "floor": 500_000}


def test_the_throttle_panel_compares_time_left_with_time_left():
    """issue 28's ETA 'predicted at approval vs now': at each look, the time left at the
    rates set beside the time left had the plan kept to its approval's ETA (that ETA less
    the time since the execution started), never the whole plan's ETA against what is
    left of it."""
    from dashboard.plan_views.throttle import figure, throttle_view

    broker = {"leader": 4_000_000, "follower": 4_000_000, "sent": 1e6, "received": 1e6}
    h = {"mode": "adaptive", "floor": 1_000_000, "ceiling": 4_000_000, "switched_by": None,
         "note": None, "running": True, "predicted_eta_seconds": 120.0, "started_at": 1000.0,
         "looks": [{"at": 1030.0, "brokers": {"1": broker}, "eta_seconds": 100.0},
                   {"at": 1060.0, "brokers": {"1": broker}, "eta_seconds": 48.0},
                   {"at": 1200.0, "brokers": {"1": broker}, "eta_seconds": 6.0}]}
    text = throttle_view(h, may_switch=False).lines.children[1].children
    assert text == ("Time left: 0.1 min at the rates set; 0.0 min by the ETA predicted at "
                    "approval (2.0 min in all)")
    traces = {t.name: list(t.y) for t in figure(h).data if t.name.startswith("time left")}
    assert traces == {"time left at the rates set": [100 / 60, 48 / 60, 6 / 60],
                      "time left by the ETA at approval": [90 / 60, 60 / 60, 0.0]}
    assert "time left by the ETA at approval" not in {
        t.name for t in figure({**h, "started_at": None}).data}


def test_without_looks_the_panel_says_why_by_the_throttle_s_mode():
    """Only the adaptive controller looks at the traffic: a fixed throttle's panel said
    "No adaptive look yet: the chart fills in..." on the demo's fixed plan, running and
    completed, where no chart ever came."""
    from dashboard.plan_views.throttle import throttle_view

    h = {"mode": "fixed", "floor": None, "ceiling": 20_000_000, "switched_by": None,
         "note": None, "running": True, "predicted_eta_seconds": 180.0, "started_at": 1.0,
         "looks": []}
    hints = {(mode, running): throttle_view({**h, "mode": mode, "floor": 1_000_000,
                                             "running": running}, True).chart.children
             for mode in ("fixed", "adaptive") for running in (True, False)}
    assert hints[("adaptive", True)].startswith("No adaptive look yet: the chart fills in")
    assert hints[("fixed", True)].startswith("No chart while the throttle is fixed: "
                                             "switched to adaptive, the controller charts")
    assert hints[("fixed", False)] == "No chart: the throttle stayed fixed."
    unthrottled = throttle_view({**h, "ceiling": None}, True)
    assert unthrottled.chart.children == "No chart: the plan moves its data without a " \
                                         "throttle."


def test_before_it_runs_the_panel_calls_the_rate_the_plan_s_not_the_approved():
    """The demo's proposed plan said "Throttle fixed at the approved 20.0 MB/s" before
    anyone approved it, and "No chart: the throttle stayed fixed." before it ran."""
    from dashboard.plan_views.throttle import throttle_view

    h = {"mode": "fixed", "floor": None, "ceiling": 20_000_000, "switched_by": None,
         "note": None, "running": False, "predicted_eta_seconds": 180.0, "started_at": None,
         "looks": []}
    view = throttle_view(h, True)
    assert view.lines.children[0].children == "Throttle fixed at the plan's 20 MB/s"
    assert view.chart.children.startswith("No chart: the plan has not run.")
    adaptive = throttle_view({**h, "mode": "adaptive", "floor": 1_000_000}, True)
    assert adaptive.lines.children[0].children == (
        "Throttle adaptive: between 1 MB/s and the plan's 20 MB/s, by each broker's "
        "traffic")
    ran = throttle_view({**h, "started_at": 1.0}, True)
    assert ran.lines.children[0].children == "Throttle fixed at the approved 20 MB/s"


# props an operator changes by hand: a callback fired by one must read what was done
USER_PROPS = {"n_clicks", "submit_n_clicks", "value", "contents", "selectedRows",
              "columnState"}


def _callbacks(app) -> list[tuple[set[str], set[str]]]:
    """Every callback as (its inputs, its outputs), each 'id.prop' (duplicates' marks off)."""
    app.server.test_client().get("/_dash-layout")  # Dash fills callback_map at a first request
    assert len(app.callback_map) >= 40
    return [({f"{i['id']}.{i['property']}" for i in spec["inputs"]},
             {o.split("@")[0] for o in key.strip(".").split("...")})
            for key, spec in app.callback_map.items()]


def test_no_timer_writes_what_a_click_changes(app):
    """A click during a timer's refresh must not be lost: dash-renderer holds a callback
    whose input is an output of a callback in flight, or of one that it sets off
    (getReadyCallbacks), and then runs it with what the refresh wrote. So what a timer
    writes, directly or through the callbacks it sets off, is never a prop the operator
    changes (the migration's boxes once were: a step checked during a refresh was
    unchecked by it and never sent)."""
    callbacks = _callbacks(app)
    clicked = {i for ins, _ in callbacks for i in ins if i.rsplit(".", 1)[1] in USER_PROPS}
    timers = [outs for ins, outs in callbacks if any(i.endswith(".n_intervals") for i in ins)]
    assert len(timers) >= 10  # the monitoring pages', the queue's and the plan page's
    for outs in timers:
        written, frontier = set(outs), list(outs)
        while frontier:
            out = frontier.pop()
            for ins, more in callbacks:
                if out in ins:
                    frontier += list(more - written)
                    written |= more
        assert not written & clicked, outs


def test_the_plan_pages_refreshes_hold_no_control(app):
    """What the plan page's timer draws again (the throttle's lines and chart, the
    migration's steps) holds nothing a callback reads: a control inside would be replaced
    by one that was not clicked while its click waits. The switch and the next step's
    button stay where they are; the timer only writes their labels."""
    from dashboard import ids
    from dashboard.plan_views.stored import migration_view
    from dashboard.plan_views.throttle import ThrottleView, throttle_view

    read = {i.split(".")[0] for ins, _ in _callbacks(app) for i in ins}
    assert {ids.PV_THROTTLE_SWITCH, ids.PV_CHECK_NEXT} <= read
    broker = {"leader": 4e6, "follower": 4e6, "sent": 1e6, "received": 1e6}
    h = {"mode": "adaptive", "floor": 1_000_000, "ceiling": 4_000_000, "switched_by": None,
         "note": "held", "running": True, "predicted_eta_seconds": 120.0, "started_at": 1.0,
         "looks": [{"at": 30.0, "brokers": {"1": broker}, "eta_seconds": 100.0}]}
    view = throttle_view(h, may_switch=True)
    assert view.switch == ("Switch to fixed", "fixed", False)
    assert len(view.outputs()) == len(ThrottleView.unchanged()) == 5
    p = {"state": "running", "shrink": {"steps": [
        {"step": 1, "text": "create", "done": True},
        {"step": 2, "text": "switch producers", "done": False}]}}
    steps, following = migration_view(p, frozenset({"cancel"}))
    assert following == ("Step 2 is done: check it off", "2", False)
    for drawn in (view.lines, view.chart, steps):
        assert not _ids_in(drawn) & read


def _ids_in(component) -> set[str]:
    found = {component.id} if isinstance(getattr(component, "id", None), str) else set()
    children = getattr(component, "children", None)
    for child in children if isinstance(children, list | tuple) else [children]:
        if hasattr(child, "to_plotly_json"):
            found |= _ids_in(child)
    return found


def test_a_link_value_the_page_does_not_know_is_said_not_dropped(app):
    """/queue?cluster=nope&state=bogus and /plans?state=bogus showed everything with no
    word: a typo in a shared link looked like an empty fleet's view."""
    ctx = as_user(app, "olga")
    try:
        queue = text_of(page("/queue").layout(cluster="nope", state="bogus", sort="-colour"))
        listed = text_of(page("/plans").layout(state="bogus"))
        fine = text_of(page("/queue").layout(state="proposed", sort="-id"))
    finally:
        ctx.pop()
    assert "No cluster is called 'nope' in this dashboard's config" in queue
    assert "showing all clusters." in queue
    assert "The link's state='bogus' is not one of proposed, approved," in queue
    assert "showing all states." in queue
    assert "The link's sort='colour' is not one of id, cluster," in queue
    assert "showing newest first." in queue
    assert "The link's state='bogus' is not one of" in listed and "showing every state" in listed
    assert "The link's" not in fine
